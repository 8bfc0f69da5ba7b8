import { EventEmitter } from 'node:events';
import type { FreeLoaderEvent } from '@freeloader/protocol';

export type EventListener = (event: FreeLoaderEvent) => void;

/**
 * The manager's in-process event bus: soft state, jobs and datasets publish; the SSE route
 * relays to browsers. Listeners run synchronously, so they must not throw or block.
 *
 * @example
 *   const off = bus.subscribe((e) => console.log(e.type));
 *   bus.publish({ type: 'agent', agentId, state: 'stale' });
 *   off();
 */
export class EventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open SSE stream: many consoles are normal, not a leak.
    this.emitter.setMaxListeners(0);
  }

  publish(event: FreeLoaderEvent): void {
    this.emitter.emit('event', event);
  }

  /** Register a listener; returns the function that removes it. */
  subscribe(listener: EventListener): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  get listenerCount(): number {
    return this.emitter.listenerCount('event');
  }
}
