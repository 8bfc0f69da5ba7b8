import { EventEmitter } from 'node:events';
import type { FreeLoaderEvent } from '@freeloader/protocol';

export type EventListener = (event: FreeLoaderEvent) => void;

/**
 * Where an event goes: `cluster` (the default) to this manager's listeners and, through the
 * fan-out, to every other manager's SSE streams; `local` to this manager alone, for events
 * every manager derives by itself (soft state's live/stale/dead transitions of the shared
 * liveness view), which would otherwise reach a console once per manager.
 */
export type EventScope = 'cluster' | 'local';

/**
 * The manager's event bus: soft state, jobs and datasets publish; the SSE route relays to
 * browsers. Listeners run synchronously, so they must not throw or block.
 *
 * Events raised on other managers of the database arrive through {@link deliverRemote}; only
 * listeners registered with {@link subscribeAll} (views: SSE, throughput) see them, so work
 * done in reaction to an event (a database write) is done once, by the manager that raised it.
 *
 * @example
 *   const off = bus.subscribe((e) => console.log(e.type));
 *   bus.publish({ type: 'agent', agentId, state: 'stale' });
 *   off();
 */
export class EventBus {
  private readonly emitter = new EventEmitter();
  private fanOut: ((event: FreeLoaderEvent) => void) | undefined;

  constructor() {
    // One listener per open SSE stream: many consoles are normal, not a leak.
    this.emitter.setMaxListeners(0);
  }

  publish(event: FreeLoaderEvent, scope: EventScope = 'cluster'): void {
    this.emitter.emit('local', event);
    this.emitter.emit('any', event);
    if (scope === 'cluster') this.fanOut?.(event);
  }

  /** An event another manager published: to the {@link subscribeAll} listeners only. */
  deliverRemote(event: FreeLoaderEvent): void {
    this.emitter.emit('any', event);
  }

  /** Send cluster-scoped events to the other managers too (set by the fan-out plugin). */
  setFanOut(send: ((event: FreeLoaderEvent) => void) | undefined): void {
    this.fanOut = send;
  }

  /** Listen to this manager's own events; returns the function that removes the listener. */
  subscribe(listener: EventListener): () => void {
    this.emitter.on('local', listener);
    return () => this.emitter.off('local', listener);
  }

  /** Listen to the events of every manager of the database (this one's included). */
  subscribeAll(listener: EventListener): () => void {
    this.emitter.on('any', listener);
    return () => this.emitter.off('any', listener);
  }

  get listenerCount(): number {
    return this.emitter.listenerCount('local') + this.emitter.listenerCount('any');
  }
}
