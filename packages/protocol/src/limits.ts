/**
 * Named limits shared by every process. Units are in each comment; sizes are bytes unless named.
 */

/** 1 KiB in bytes. */
export const KiB = 1024;
/** 1 MiB in bytes. */
export const MiB = 1024 * KiB;
/** 1 GiB in bytes. */
export const GiB = 1024 * MiB;
/** 1 TiB in bytes. */
export const TiB = 1024 * GiB;

/** Default morsel size (bytes): the unit of storage, placement and transfer. */
export const MORSEL_SIZE = 1 * MiB;
/** Smallest morsel size a dataset may use (bytes). */
export const MIN_MORSEL_SIZE = 64 * KiB;
/** Largest morsel size a dataset may use (bytes). */
export const MAX_MORSEL_SIZE = 16 * MiB;
/** A dataset's data key (bytes): AES-256, made by the manager per dataset import. */
export const DATA_KEY_BYTES = 32;
/** AES-256-GCM authentication tag per sealed morsel (bytes), kept in the map beside its hash. */
export const MORSEL_TAG_BYTES = 16;
/** AES-256-GCM nonce (bytes), derived from the morsel index (see morsel-seal.ts). */
export const MORSEL_NONCE_BYTES = 12;
/** Largest dataset FreeLoader accepts (bytes): 64 TiB. */
export const MAX_DATASET_SIZE = 64 * TiB;
/** Largest morsel index + 1 a dataset can have at the smallest morsel size. */
export const MAX_MORSELS_PER_DATASET = MAX_DATASET_SIZE / MIN_MORSEL_SIZE;

/** Longest single name (folder or dataset) in the namespace (characters). */
export const MAX_NAME_LENGTH = 255;
/** Most copies of each morsel a dataset may ask for (ThriftStore's replication level n). */
export const MAX_REPLICAS = 16;
/** Copies of each morsel when neither the request nor the manager's REPLICAS_DEFAULT says. */
export const DEFAULT_REPLICAS = 2;
/** Longest full namespace path, slashes included (characters). */
export const MAX_PATH_LENGTH = 4096;
/** Deepest namespace path (folders + dataset name). */
export const MAX_PATH_DEPTH = 32;
/** Longest source URI (characters). */
export const MAX_URI_LENGTH = 8192;
/** Longest agent display name (characters). */
export const MAX_AGENT_NAME_LENGTH = 128;

/** How often an agent heartbeats (milliseconds). */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/** Missed-heartbeat time after which an agent is stale: not read from, not placed on (milliseconds). */
export const STALE_AFTER_MS = 15_000;
/** Silence after which an agent is dead (milliseconds). */
export const DEAD_AFTER_MS = 120_000;
/**
 * How long a claimed job stays its agent's without news (milliseconds): the agent renews the
 * lease with every heartbeat that lists the job and every progress report; once it lapses the
 * manager re-queues the job (or fails it after MAX_JOB_ATTEMPTS).
 */
export const JOB_LEASE_MS = 60_000;
/** Claims of one job before a lapsed lease fails it instead of re-queuing it. */
export const MAX_JOB_ATTEMPTS = 3;
/** Job ids one heartbeat may list as running (an agent runs a handful at a time). */
export const MAX_HEARTBEAT_JOBS = 64;
/**
 * How long a manager starting on an external PostgreSQL (DATABASE_URL) waits for it to accept
 * connections, retrying with backoff, before it gives up (milliseconds).
 */
export const DATABASE_STARTUP_WAIT_MS = 5 * 60_000;
/**
 * How long `import --wait` and `get` wait for a manager that went away (restart, database
 * down) before they give up (milliseconds).
 */
export const MANAGER_OUTAGE_PATIENCE_MS = 10 * 60_000;
/** Default time a finished (done, failed, cancelled) job is kept before it is pruned (ms). */
export const JOB_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * Silence after which an offline donor is *lost* and its copies are repaired, when too few
 * outages have been observed to size the threshold from them (milliseconds). Desktops sleep
 * overnight; repairing every night's sleepers would cost more than the risk it removes.
 */
export const REPAIR_AFTER_FALLBACK_MS = 4 * 3600_000;
/** REPAIR_AFTER_MS sized from observed outages is clamped to [min, max] (milliseconds). */
export const REPAIR_AFTER_MIN_MS = 15 * 60_000;
export const REPAIR_AFTER_MAX_MS = 24 * 3600_000;
/** Outages needed before their distribution sizes REPAIR_AFTER_MS (else the fallback). */
export const REPAIR_AFTER_MIN_OUTAGES = 20;
/** Percentile of observed outage durations REPAIR_AFTER_MS is set to (ThriftStore §3.2). */
export const REPAIR_AFTER_PERCENTILE = 0.95;
/** Per-donor repair bandwidth cap b (bytes/s) unless the admin sets REPAIR_DONOR_RATE. */
export const REPAIR_DONOR_RATE_BPS = 8 * 1024 * 1024;
/** Cap B on repair reads from a dataset's source (bytes/s) unless set by REPAIR_SOURCE_RATE. */
export const REPAIR_SOURCE_RATE_BPS = 16 * 1024 * 1024;
/** Bytes of repair units grouped into one repair job (one destination, one claim). */
export const REPAIR_JOB_BYTES = 64 * 1024 * 1024;

/** Most reasons a donor reports for its serving throttle ('owner active', 'cpu 0.93 > 0.75', …). */
export const MAX_THROTTLE_REASONS = 8;
/** Longest single throttle reason (characters); longer ones are cut by the sender. */
export const MAX_THROTTLE_REASON_LENGTH = 80;

/** Lifetime of a read/write capability the manager signs for morsel access (seconds). */
export const CAPABILITY_TTL_S = 15 * 60;
/** Clock skew tolerated when agents check a capability's expiry (seconds). */
export const CAPABILITY_CLOCK_SKEW_S = 30;
/** Default lifetime of an uncommitted space reservation (seconds). */
export const RESERVATION_TTL_S = 10 * 60;
/** Default lifetime of a join token (seconds): 7 days. */
export const JOIN_TOKEN_TTL_S = 7 * 24 * 3600;
/** Lifetime of a console/CLI session (seconds): 12 hours. */
export const SESSION_TTL_S = 12 * 3600;
/**
 * Login rate limit, a fixed window per key: failed logins from one address in
 * LOGIN_WINDOW_S seconds before that address gets 429 until the window ends.
 */
export const LOGIN_FAILURES_PER_ADDRESS = 10;
/**
 * Failed logins for one user name (from any address) per window: higher than the per-address
 * limit, so one guesser cannot lock the real user out, yet a guesser spread over many
 * addresses is still slowed.
 */
export const LOGIN_FAILURES_PER_USER = 50;
/** Length of the login rate-limit window (seconds). */
export const LOGIN_WINDOW_S = 15 * 60;
/** Most entries (hosts and CIDRs) in the admin's source allow list. */
export const MAX_SOURCE_ALLOW_ENTRIES = 256;
/** Audit entries per page at most (`GET /api/v1/audit?limit=`). */
export const MAX_AUDIT_PAGE = 500;

/** Framing allowance on top of the morsel size for a morsel PUT body (bytes). */
export const MORSEL_BODY_SLACK = 64 * KiB;
/** Largest JSON body the manager accepts (bytes). */
export const MAX_JSON_BODY = 1 * MiB;
/** Most morsels one batch read may ask for. */
export const MAX_BATCH_MORSELS = 64;

/**
 * Scrub (issue 15 item 4): a donor re-hashes everything it stores once per period (milliseconds),
 * 14 days by default, at the rate that takes (stored bytes / period), kept between a floor (a
 * nearly empty donor still finishes a pass quickly) and a ceiling (a huge donor never scrubs
 * at disk speed behind its owner's back).
 */
export const SCRUB_PERIOD_MS = 14 * 24 * 3600 * 1000;
/** Slowest scrub rate (bytes/s): 64 KiB/s, about 5 GiB a day. */
export const SCRUB_MIN_BYTES_PER_S = 64 * KiB;
/** Fastest scrub rate at the default period (bytes/s): 8 MiB/s. */
export const SCRUB_MAX_BYTES_PER_S = 8 * MiB;
/** How often the scrub persists its position (milliseconds): a restart re-hashes at most this much. */
export const SCRUB_CHECKPOINT_MS = 10_000;
/** Most faults one report may carry (agent scrub/start-up batches, client bad-hash reports). */
export const MAX_FAULTS_PER_REPORT = 1024;
/** Most bad-hash reports a client (user or agent principal) may file per minute. */
export const CLIENT_FAULT_REPORTS_PER_MIN = 60;

/** Default TCP port of the manager's HTTP API. */
export const DEFAULT_MANAGER_PORT = 7400;
/** Default TCP port of an agent's morsel service. */
export const DEFAULT_AGENT_PORT = 7401;
/** Default port of the embedded PostgreSQL server (not 5432, to stay clear of a system server). */
export const DEFAULT_EMBEDDED_PG_PORT = 7432;

/** Length of a SHA-256 digest (bytes). */
export const SHA256_BYTES = 32;

/** Largest morsel body a PUT may carry (bytes). */
export function maxMorselBody(morselSize: number = MAX_MORSEL_SIZE): number {
  return morselSize + MORSEL_BODY_SLACK;
}
