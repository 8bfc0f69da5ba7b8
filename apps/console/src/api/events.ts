import { useEffect, useState } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import type { FreeLoaderEvent, TransferView } from '@freeloader/protocol';
import { keys } from './queries';

type TransferEvent = Extract<FreeLoaderEvent, { type: 'transfer' }>;

/**
 * Patch the cached transfer list with one event: a known job is updated in place, an unknown
 * one (a job created since the last fetch) makes the list refetch.
 */
export function applyTransferEvent(qc: QueryClient, e: TransferEvent): void {
  let known = false;
  qc.setQueryData<TransferView[]>(keys.transfers, (rows) =>
    rows?.map((r) => {
      if (r.jobId !== e.jobId) return r;
      known = true;
      return {
        ...r,
        state: e.state as TransferView['state'],
        doneBytes: e.doneBytes,
        totalBytes: e.totalBytes,
        rate: e.rate,
        etaSeconds: e.etaSeconds ?? null,
        error: e.error,
        updatedAt: new Date().toISOString(),
      };
    }),
  );
  if (!known) void qc.invalidateQueries({ queryKey: keys.transfers });
}

/** What each event makes stale besides the transfer list. */
function invalidate(qc: QueryClient, e: FreeLoaderEvent): void {
  if (e.type === 'agent') {
    void qc.invalidateQueries({ queryKey: keys.agents });
    return;
  }
  const datasetId = e.datasetId;
  if (e.type === 'transfer') {
    applyTransferEvent(qc, e);
    // Progress reports are frequent: only finishing ones change the dataset row.
    if (e.state === 'running' || !datasetId) return;
  }
  if (datasetId) {
    void qc.invalidateQueries({ queryKey: keys.dataset(datasetId) });
    void qc.invalidateQueries({ queryKey: keys.placement(datasetId) });
  }
  void qc.invalidateQueries({ queryKey: ['listing'] });
  void qc.invalidateQueries({ queryKey: ['search'] });
}

export type StreamState = 'connecting' | 'open' | 'closed';

/**
 * Subscribe to the manager's event stream (`/api/v1/events`, server-sent events) while signed
 * in, keeping the query caches live. The browser reconnects by itself after a drop.
 */
export function useEventStream(enabled: boolean): StreamState {
  const qc = useQueryClient();
  const [state, setState] = useState<StreamState>(enabled ? 'connecting' : 'closed');
  useEffect(() => {
    if (!enabled || typeof EventSource === 'undefined') return;
    const source = new EventSource('/api/v1/events', { withCredentials: true });
    const onEvent = (msg: MessageEvent<string>) => {
      try {
        invalidate(qc, JSON.parse(msg.data) as FreeLoaderEvent);
      } catch {
        // A malformed record is skipped; the next poll corrects the view.
      }
    };
    for (const type of ['agent', 'transfer', 'dataset']) source.addEventListener(type, onEvent);
    source.onopen = () => setState('open');
    source.onerror = () =>
      setState(source.readyState === EventSource.CLOSED ? 'closed' : 'connecting');
    return () => {
      source.close();
      setState('closed');
    };
  }, [enabled, qc]);
  return state;
}
