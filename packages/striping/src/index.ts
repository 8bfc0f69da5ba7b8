export {
  placeRoundRobin,
  type DonorSpace,
  type RoundRobinInput,
  type RoundRobinPlan,
} from './round-robin.js';
