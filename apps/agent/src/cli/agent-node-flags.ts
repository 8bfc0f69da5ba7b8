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

/**
 * The same flags for a donor started by hand (`freeloader agent`), as the agent's help says:
 * V8 reads them only at process start, so NODE_OPTIONS, which every launcher (a shell, a
 * systemd unit) can set, is the way; the LAN benchmarks start their donors with it too.
 */
export const AGENT_NODE_OPTIONS = AGENT_NODE_FLAGS.join(' ');

/** `freeloader agent --help`'s note on starting a donor with the agent node flags. */
export const AGENT_NODE_OPTIONS_HELP =
  `\nMemory: \`freeloader cluster\` starts its donors with ${AGENT_NODE_OPTIONS} (a smaller V8\n` +
  `young generation); start a donor by hand the same way with\n` +
  `  NODE_OPTIONS="${AGENT_NODE_OPTIONS}" freeloader agent …\n`;
