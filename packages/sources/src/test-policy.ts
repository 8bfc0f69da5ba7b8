/**
 * The source allow list for tests whose sources are test servers on this machine: loopback by
 * address and by name. Tests pass it on purpose (`policy: new SourcePolicy(LOOPBACK_SOURCES)`,
 * `FREELOADER_SOURCE_ALLOW`), so production keeps refusing loopback.
 */
export const LOOPBACK_SOURCES: readonly string[] = ['127.0.0.0/8', '::1', 'localhost'];
