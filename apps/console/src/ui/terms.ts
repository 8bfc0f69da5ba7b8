/**
 * Plain-language explanations of the model's terms (seed 002) and the donors' throttle states,
 * for tooltips next to the short labels the console shows.
 */
export const TERMS = {
  startupLatency:
    'Startup latency (the model’s L): how long the source takes to answer a request before any ' +
    'data flows. High latency makes caching a longer prefix worthwhile.',
  clientRate:
    'Client read rate (the model’s R_client): how fast each reader pulls data out of the cache, ' +
    'measured after its reads. The cache keeps enough of a dataset that the rest can be ' +
    'fetched from the source before a reader this fast gets there.',
  patchRate: 'How fast the donors together fetch the uncached part from the source on demand.',
  throttle:
    'How the donor limits serving to protect its owner: idle (owner away, full speed), ' +
    'active (owner working, capped), contended (the machine is busy with other work, so ' +
    'serving backs off), paused (the owner paused donating).',
} as const;
