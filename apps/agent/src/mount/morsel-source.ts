import { DonorPools } from '../client/donor-pool.js';
import { HashPool } from '../client/hash-pool.js';
import type { ManagerClient } from '../manager-client.js';
import { FsError } from './file-system.js';
import { SessionRegistry } from './session-registry.js';

/** What the file system needs to know about an open dataset. */
export interface DatasetInfo {
  id: string;
  size: number;
  morselSize: number;
  count: number;
  /** Distinct donors of the primary copy (sizes the prefetch window). */
  width: number;
}

/**
 * Where verified morsels come from. The mount reads through this so the network can run on
 * another thread ({@link import('./worker-morsel-source.js').WorkerMorselSource}) or on this one
 * ({@link InProcessMorselSource}), with the same behaviour.
 */
export interface MorselSource {
  /** Get ready to read dataset `id` (map, capability); counted until {@link release}. */
  open(id: string): Promise<DatasetInfo>;
  /** Morsel `index` of an open dataset, SHA-256 verified, in a buffer the caller owns. */
  read(id: string, index: number): Promise<Buffer>;
  release(id: string): void;
  close(): Promise<void>;
}

export interface SourceDeps {
  manager: ManagerClient;
  /** Morsel requests in flight per donor. Default 4. */
  perDonorInFlight?: number;
  log?: (message: string) => void;
}

/** Morsels fetched and verified on the calling thread, through the client library. */
export class InProcessMorselSource implements MorselSource {
  private readonly pools: DonorPools;
  private readonly hashes = new HashPool();
  private readonly sessions: SessionRegistry;

  constructor(deps: SourceDeps) {
    const perDonor = deps.perDonorInFlight ?? 4;
    this.pools = new DonorPools(Math.max(4, perDonor));
    this.sessions = new SessionRegistry({
      manager: deps.manager,
      pools: this.pools,
      hashes: this.hashes,
      perDonorInFlight: perDonor,
      ...(deps.log ? { log: deps.log } : {}),
    });
  }

  async open(id: string): Promise<DatasetInfo> {
    const s = await this.sessions.acquire(id);
    return { id, size: s.size, morselSize: s.morselSize, count: s.count, width: s.width };
  }

  async read(id: string, index: number): Promise<Buffer> {
    const session = this.sessions.peek(id);
    if (!session) throw new FsError('EBADF', `dataset ${id} is not open`);
    return (await session).readMorsel(index);
  }

  release(id: string): void {
    this.sessions.release(id);
  }

  async close(): Promise<void> {
    await this.sessions.closeAll();
    await this.hashes.close();
    await this.pools.close();
  }
}
