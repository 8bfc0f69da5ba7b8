/**
 * Default port of the local settings page (loopback only): the morsel service's default port + 1. Its own module so `freeloader agent --help`
 * and the CLI's other commands can name it without loading the settings server (Fastify).
 */
export const DEFAULT_SETTINGS_PORT = 7402;
