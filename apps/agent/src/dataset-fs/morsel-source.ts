import { DonorPools } from '../client/donor-pool.js';
import { HashPool, type SharedMemory } from '../client/hash-pool.js';
import type { ManagerClient } from '../manager-client.js';
import { FsError } from './file-system.js';
import type { MorselBuffer } from './morsel-cache.js';
import { SessionRegistry } from './session-registry.js';

/** What the file system needs to know about an open dataset. */
export interface DatasetInfo {
  id: string;
  size: number;
  morselSize: number;
  count: number;
  /** Distinct donors of the primary copy (sizes the prefetch window). */
  width: number;
  /** Default read-ahead of a sequential reader, in morsels (the reader's stripe window). */
  window: number;
}

/**
 * Where verified morsels come from. The file system reads through this so the network can run on
 * another thread ({@link import('./worker-morsel-source.js').WorkerMorselSource}) or on this one
 * ({@link InProcessMorselSource}), with the same behaviour.
 */
export interface MorselSource {
  /** Get ready to read dataset `id` (map, capability); counted until {@link release}. */
  open(id: string): Promise<DatasetInfo>;
  /**
   * Morsel `index` of an open dataset, SHA-256 verified, written to the start of `into` (given
   * its memory first when it has none); resolves with its length once nothing writes to `into`
   * any more (also when it fails).
   */
  read(id: string, index: number, into: MorselBuffer): Promise<number>;
  /** `buffer` will not be read into again: let go of anything kept for it. */
  forget(buffer: MorselBuffer): void;
  release(id: string): void;
  /** Resolves once reads are served without start-up delay (a thread loaded, say). */
  ready?(): Promise<void>;
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
    // One pipelined connection per donor, as `get` uses: on a shaped 100 Mbit/s link several
    // TCP flows overflow its queue and stall on retransmits (see DonorLanes).
    this.pools = new DonorPools();
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
    return {
      id,
      size: s.size,
      morselSize: s.morselSize,
      count: s.count,
      width: s.width,
      window: s.window,
    };
  }

  read(id: string, index: number, into: MorselBuffer): Promise<number> {
    if (!into.memory) into.attach(new SharedArrayBuffer(into.size));
    return this.readInto(id, index, into as SharedMemory);
  }

  /** {@link read} into memory shared as it is (how the morsel worker reads). */
  async readInto(id: string, index: number, into: SharedMemory): Promise<number> {
    const session = this.sessions.peek(id);
    if (!session) throw new FsError('EBADF', `dataset ${id} is not open`);
    return (await session).readInto(index, into);
  }

  forget(buffer: MorselBuffer | SharedMemory): void {
    if (buffer.memory) this.hashes.forget(buffer as SharedMemory);
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
