/**
 * `get --stats`' CPU line: the client's CPU seconds during the read (every thread, hash workers
 * included), and the same per GiB read — what a read costs hardly moves with the machine's
 * load, while its MB/s does, so benchmarks compare builds by this (bench/lib/proc-stat.js reads
 * the line).
 *
 * @example
 *   cpuLine({ user: 1, system: 0.25 }, 2 ** 29)
 *   // 'client CPU during the read 1.25 s (user 1.00, system 0.25), 2.50 CPU-s per GiB (user 2.00, system 0.50)'
 */
export function cpuLine(cpu: { user: number; system: number }, bytes: number): string {
  const { user, system } = cpu;
  const line =
    `client CPU during the read ${(user + system).toFixed(2)} s ` +
    `(user ${user.toFixed(2)}, system ${system.toFixed(2)})`;
  // An empty dataset read nothing: no cost per GiB to speak of.
  if (bytes <= 0) return line;
  const gib = bytes / 2 ** 30;
  return (
    `${line}, ${((user + system) / gib).toFixed(2)} CPU-s per GiB ` +
    `(user ${(user / gib).toFixed(2)}, system ${(system / gib).toFixed(2)})`
  );
}
