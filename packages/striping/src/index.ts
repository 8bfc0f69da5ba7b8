export {
  placeRoundRobin,
  type DonorSpace,
  type RoundRobinInput,
  type RoundRobinPlan,
} from './round-robin.js';
export {
  DEFAULT_MAX_CYCLE,
  exactStripes,
  placePredictive,
  predictiveShares,
  type PredictiveInput,
  type PredictivePlan,
  type RatedDonor,
} from './predictive.js';
export { modelThroughput, optimalLocalShare } from './throughput-model.js';
export {
  DEFAULT_MAX_RATIO_CYCLE,
  chooseLocalShare,
  placeAsymmetric,
  ratioCycle,
  type AsymmetricInput,
  type AsymmetricPlan,
  type LocalShare,
  type LocalShareInput,
  type RatioCycle,
} from './asymmetric.js';
export {
  IMPACT_WIDEN_FACTOR,
  MIN_IMPACT_WIDTH,
  chooseWidth,
  type DonorActivity,
  type WidthChoice,
  type WidthInput,
} from './width-choice.js';
export { extentShares, interleave, scaleUnits, tally } from './pattern.js';
export {
  modelPrefixBytes,
  prefixBytes,
  prefixRatio,
  type PrefixModelInput,
} from './prefix-model.js';
export {
  bytesOverWatermark,
  planEviction,
  type CachedDataset,
  type EvictionPlan,
  type EvictionStep,
} from './prefix-eviction.js';
export { auditCover } from './coverage.js';
export {
  auditReplicas,
  declusterCycles,
  placeReplicas,
  rotatedSlot,
  slotShares,
  tallyCopies,
  type ReplicaInput,
  type ReplicaPlan,
} from './replicas.js';
export {
  MAX_REPLICAS,
  chainRates,
  chainUnavailability,
  perYear,
  repairRatios,
  replicasFor,
  unavailability,
  type ChainRates,
  type RepairRatios,
  type RepairSetting,
} from './availability/index.js';
