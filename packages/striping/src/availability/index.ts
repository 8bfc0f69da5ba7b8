export { chainUnavailability, unavailability, type RepairRatios } from './unavailability.js';
export { chainRates, perYear, repairRatios, type ChainRates, type RepairSetting } from './rates.js';
export { MAX_REPLICAS, replicasFor } from './replicas-for.js';
