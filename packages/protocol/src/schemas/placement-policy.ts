import { Type, type Static } from '@sinclair/typebox';

/**
 * How an import spreads stripes over donors (seed 000 §4.1.2):
 * - `round-robin`: equal shares over the donors with most free space;
 * - `predictive`: shares in proportion to each donor's predicted delivery rate;
 * - `asymmetric`: part of the dataset on the importing workstation's own agent (the host),
 *   interleaved with the rest striped over remote donors, in the ratio the throughput model picks.
 */
export const PlacementPolicy = Type.Union([
  Type.Literal('round-robin'),
  Type.Literal('predictive'),
  Type.Literal('asymmetric'),
]);
export type PlacementPolicy = Static<typeof PlacementPolicy>;
