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

/**
 * Most morsel hashes one `GET /datasets/:id/map?first=&count=` returns (morsels): 65,536 is
 * 2 MiB of binary hashes (4 MiB as hex), so no single answer grows with the dataset.
 */
export const MAX_MAP_HASH_RANGE = 65_536;
/**
 * Morsel hashes a reader fetches at a time (morsels): the first page comes with the map, the
 * next ones ahead of the reader. 4,096 hashes are 128 KiB binary, 4 GiB of 1 MiB morsels.
 */
export const MAP_HASH_PAGE_MORSELS = 4_096;

/** Pages of map hashes a reader keeps (pages of MAP_HASH_PAGE_MORSELS): 64 are 8 MiB. */
export const MAP_HASH_PAGES_KEPT = 64;

/** Most donors one `GET /agents?limit=` page holds (agents). */
export const MAX_AGENTS_PAGE = 500;
/** Donors per page of the console's donor table (agents). */
export const AGENTS_PAGE_SIZE = 50;

/** Longest single name (folder or dataset) in the namespace (characters). */
export const MAX_NAME_LENGTH = 255;
/** Most copies of each morsel a dataset may ask for (ThriftStore's replication level n). */
export const MAX_REPLICAS = 16;
/**
 * Morsel hashes one `GET /jobs/:id/hashes` answers at most (a fan-out import polls for the
 * hashes of the morsels it copies from other donors): 4096 × 64 hex ≈ 260 KiB of JSON.
 */
export const MAX_HASHES_PER_QUERY = 4096;
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
/**
 * How long the manager holds an agent's job channel (`GET /jobs/wait`) open before it answers
 * "nothing new" (milliseconds): under common proxies' idle timeouts, long enough that 10,000
 * idle agents cost the manager a few hundred requests a second at most.
 */
export const JOB_WAIT_MS = 25_000;
/**
 * How often an agent's job channel asks the manager to look in the database for jobs queued for
 * it (`check`), whatever it was told (milliseconds): a safety net for a wake-up lost in between
 * (say, a job queued on another manager), not the way jobs normally arrive.
 */
export const JOB_CHANNEL_CHECK_MS = 60_000;
/**
 * Longest job channel cursor (characters): a manager epoch (12 hex) and a sequence number (up to
 * 16 digits) with room to spare; anything longer is not a cursor.
 */
export const JOB_CURSOR_MAX_CHARS = 64;
/**
 * How long the manager keeps an agent credential it checked against the database in memory
 * (milliseconds; each entry between half and all of it, so entries cached together do not
 * expire together). Revocations do not wait for it: see AGENT_REVOCATION_POLL_MS.
 */
export const AGENT_AUTH_CACHE_TTL_MS = 10 * 60_000;
/**
 * How often the manager asks the database which agents were revoked lately, to drop their
 * cached credentials (milliseconds): a revocation made elsewhere (another manager, SQL by
 * hand) is refused within this; one made on this manager is refused at once.
 */
export const AGENT_REVOCATION_POLL_MS = 5_000;
/** How far back that poll looks (milliseconds): wide enough for a slow commit or a late poll. */
export const AGENT_REVOCATION_LOOKBACK_MS = 60_000;
/**
 * Rows a listing about datasets (failures, evictions, patch sessions, transfers) reads for a
 * non-admin before keeping the readable ones and cutting to the asked limit: without it a user
 * whose datasets are quiet sees an empty page because others' rows filled the limit. A bound,
 * not a guarantee (one indexed query of at most this many rows).
 */
export const READABLE_SCAN_ROWS = 1_000;
/**
 * How long one event stream (`GET /events`) trusts its answer to "may this user read dataset
 * X?" (milliseconds): a dataset's events come in bursts (progress every few hundred ms), so
 * one lookup per burst instead of one per event; a share revoked reaches open streams within it.
 */
export const EVENT_READ_CHECK_TTL_MS = 5_000;
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
/**
 * Most stripe cycles a declustered copy rotates through before it repeats (copy 1 of a stripe
 * over D donors takes D − 1 cycles, each a different rotation, so a lost donor's twins sit on
 * every other donor: D − 1 repair senders instead of 1). Caps a copy's donor list at
 * D × this entries: past 33 donors a lost donor's twins still spread over 32 senders, which
 * already outruns any one receiver's b many times over.
 */
export const DECLUSTER_MAX_CYCLES = 32;
/** Cap B on repair reads from a dataset's source (bytes/s) unless set by REPAIR_SOURCE_RATE. */
export const REPAIR_SOURCE_RATE_BPS = 16 * 1024 * 1024;
/**
 * A donor that served a client's morsel read this recently is serving a foreground read
 * (milliseconds): its repair traffic yields. A `get` keeps a donor's connection busy with a
 * morsel every ~0.3 s at the benchmark's rates, so 500 ms holds repair back for the whole read
 * and lets it run again half a second after the last morsel.
 */
export const FOREGROUND_QUIET_MS = 500;
/**
 * Repair rate of a donor while it serves foreground reads, both ways (bytes/s): b / 32, about
 * 2 % of a 100 Mbit/s uplink. Not 0, so a donor read all day still repairs (slowly) instead of
 * leaving data under-replicated. Measured in the repair benchmark: at full b a foreground get
 * kept 0.72 of its rate; at b / 8 (8 % of the uplink, with the hold below at 2 s) 0.61–0.80.
 */
export const REPAIR_YIELD_RATE_BPS = REPAIR_DONOR_RATE_BPS / 32;
/**
 * Longest a sending donor holds one repair read to yield (milliseconds): under the readers'
 * stall timeout (10 s, DONOR_STALL_TIMEOUT_MS), so a held repair read is never taken for a
 * stalled donor. It bounds the yield: a repair job reads from its sender on one connection, so
 * one 1 MiB morsel per hold gets through (0.25 MiB/s at 4 s; at 2 s the hold, not the yield
 * rate, set repair's share of a busy donor's uplink).
 */
export const REPAIR_YIELD_MAX_HOLD_MS = 4_000;

/**
 * Bytes of repair units grouped into one repair job (one destination, one claim): 32 s at the
 * default b, so the seconds between a job's end and the next one's start (a scheduler pass, a
 * claim) cost a few percent of the rate; at 64 MiB they cost a third in the repair benchmark.
 * A crash loses at most one commit batch of a job, not the job.
 */
export const REPAIR_JOB_BYTES = 256 * 1024 * 1024;

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
/** Lifetime of the CA the manager creates at first start (days): it is pinned by every agent. */
export const MANAGER_CA_VALIDITY_DAYS = 20 * 365;
/** Lifetime of the manager's own server certificate (days); reissued from the same CA. */
export const MANAGER_CERT_VALIDITY_DAYS = 825;
/** A server certificate this close to expiry is reissued at start (days). */
export const MANAGER_CERT_RENEW_BEFORE_DAYS = 30;
/**
 * How long the manager's HTTPS port waits for a new connection's first byte, which tells a TLS
 * handshake from a plain-HTTP request (milliseconds); a silent connection is then dropped.
 */
export const TLS_FIRST_BYTE_TIMEOUT_MS = 30_000;
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
 * Largest event payload one manager sends the others through PostgreSQL NOTIFY (bytes): the
 * server refuses payloads of 8000 bytes or more; the rest is room for the envelope.
 */
export const MAX_EVENT_NOTIFY_BYTES = 7_800;
/** Longest free-text field (an error, a reason) an event keeps when fanned out (characters). */
export const MAX_EVENT_TEXT_CHARS = 1_000;

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

/**
 * How often the agent's and the manager's event-loop delay histograms sample (milliseconds).
 * prom-client's default, 10 ms, is a timer that wakes a process 100 times a second for ever: an
 * idle agent measured 195 epoll wake-ups a second and 0.85 % of a core, most of it this timer. A
 * blocked loop still shows as the delay of the next sample, so the lag figures stay.
 */
export const EVENT_LOOP_SAMPLE_MS = 1_000;

/** Length of a SHA-256 digest (bytes). */
export const SHA256_BYTES = 32;

/** Largest morsel body a PUT may carry (bytes). */
export function maxMorselBody(morselSize: number = MAX_MORSEL_SIZE): number {
  return morselSize + MORSEL_BODY_SLACK;
}
