import { DatasetSession, type SessionDeps } from './dataset-session.js';

interface Slot {
  session: Promise<DatasetSession>;
  refs: number;
  idle?: NodeJS.Timeout;
}

/**
 * One {@link DatasetSession} per dataset however many times it is open, kept for `idleMs` after
 * the last close so a tool that opens a file again and again (`file`, then `head`, then a
 * reader) fetches the map once.
 */
export class SessionRegistry {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly deps: SessionDeps,
    private readonly idleMs = 30_000,
  ) {}

  /** The session of dataset `id`, counted as used until {@link release}. */
  async acquire(id: string): Promise<DatasetSession> {
    let slot = this.slots.get(id);
    if (!slot) {
      slot = { session: DatasetSession.open(this.deps, id), refs: 0 };
      this.slots.set(id, slot);
      const s = slot;
      s.session.catch(() => {
        if (this.slots.get(id) === s) this.slots.delete(id);
      });
    }
    clearTimeout(slot.idle);
    slot.refs++;
    try {
      return await slot.session;
    } catch (e) {
      slot.refs--;
      throw e;
    }
  }

  /** The session of dataset `id` when it is open or kept, without counting a use. */
  peek(id: string): Promise<DatasetSession> | undefined {
    return this.slots.get(id)?.session;
  }

  release(id: string): void {
    const slot = this.slots.get(id);
    if (!slot || --slot.refs > 0) return;
    slot.idle = setTimeout(() => {
      if (slot.refs > 0 || this.slots.get(id) !== slot) return;
      this.slots.delete(id);
      void slot.session.then((s) => s.close()).catch(() => undefined);
    }, this.idleMs);
    slot.idle.unref();
  }

  /** Datasets open now or recently. */
  get size(): number {
    return this.slots.size;
  }

  async closeAll(): Promise<void> {
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(
      slots.map(async (slot) => {
        clearTimeout(slot.idle);
        await (await slot.session.catch(() => undefined))?.close();
      }),
    );
  }
}
