/**
 * Young-generation cap of a donor daemon (MiB per semi-space). V8's default (16 MiB, so 32 MiB
 * of new space) filled up on every active donor of the repair benchmark and made new space the
 * largest item a donor could trim (docs/memory.md); 4 MiB caps it at 8 MiB. A donor's hot path
 * allocates little on the JavaScript heap (morsels live in reused off-heap buffers), so the
 * extra scavenges are cheap: measured in loopback-get's donor CPU per GiB.
 */
const AGENT_SEMI_SPACE_MIB = 4;

/** Node options the launchers this CLI owns (`freeloader cluster`) start a donor daemon with. */
export const AGENT_NODE_FLAGS: readonly string[] = [
  `--max-semi-space-size=${AGENT_SEMI_SPACE_MIB}`,
];
