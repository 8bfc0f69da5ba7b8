import { Readable } from 'node:stream';
import { isFreeLoaderError } from '@freeloader/protocol';
import { encodeFrameHeader, type BatchFrame } from '@freeloader/protocol/wire';
import type { MorselStore } from '../store/store.js';

/**
 * The next held morsel at or after `from` and before `end`; indices this donor does not hold are
 * skipped. Undefined when none is left. DATASET_NOT_FOUND and I/O errors propagate.
 */
export async function nextHeldMorsel(
  store: MorselStore,
  datasetId: string,
  from: number,
  end: number,
): Promise<BatchFrame | undefined> {
  for (let index = from; index < end; index++) {
    try {
      const { data, sha256 } = await store.get(datasetId, index);
      return { index, data, sha256 };
    } catch (err) {
      if (isFreeLoaderError(err) && err.code === 'MORSEL_NOT_FOUND') continue;
      throw err;
    }
  }
  return undefined;
}

/**
 * A Readable of batch frames that pulls one morsel from the store per `_read`, so at most about
 * one morsel beyond what the socket has taken is in memory. Header and bytes are pushed as two
 * chunks (no copy into a combined buffer). `first` is the already-fetched first frame (fetched
 * before the response started so an unknown dataset can still answer 404).
 */
export class BatchFrameStream extends Readable {
  private next: number;
  private pending: BatchFrame | undefined;
  private busy = false;

  constructor(
    private readonly store: MorselStore,
    private readonly datasetId: string,
    first: BatchFrame | undefined,
    private readonly end: number,
    private readonly onServed?: (bytes: number) => void,
  ) {
    super();
    this.pending = first;
    this.next = first ? first.index + 1 : end;
  }

  override _read(): void {
    if (this.busy) return;
    this.busy = true;
    void this.pull();
  }

  private async pull(): Promise<void> {
    let frame: BatchFrame | undefined;
    try {
      frame =
        this.pending ?? (await nextHeldMorsel(this.store, this.datasetId, this.next, this.end));
    } catch (err) {
      this.destroy(err as Error);
      return;
    }
    this.pending = undefined;
    if (frame) this.next = frame.index + 1;
    // Not busy before pushing: a push may ask for the next frame right away.
    this.busy = false;
    if (!frame) {
      this.push(null);
      return;
    }
    this.push(encodeFrameHeader(frame.index, frame.data.length, frame.sha256));
    this.push(frame.data);
    this.onServed?.(frame.data.length);
  }
}
