import {
  MAX_EVENT_NOTIFY_BYTES,
  MAX_EVENT_TEXT_CHARS,
  type FreeLoaderEvent,
} from '@freeloader/protocol';

/** What travels on the NOTIFY channel: the sending manager and its event. */
export interface NotifyEnvelope {
  /** The sending manager's id, so it ignores its own notifications. */
  from: string;
  event: FreeLoaderEvent;
}

/**
 * The NOTIFY payload for `event` sent by manager `from`, under PostgreSQL's 8000-byte limit:
 * events are ids and numbers, but an error or a reason is free text, cut to
 * MAX_EVENT_TEXT_CHARS; undefined when even that does not fit (the event stays local).
 *
 * @example
 *   encodeNotify('m1', { type: 'dataset', datasetId: id, state: 'ready' })
 *   // '{"from":"m1","event":{"type":"dataset","datasetId":"…","state":"ready"}}'
 */
export function encodeNotify(from: string, event: FreeLoaderEvent): string | undefined {
  const cut = (s: string): string =>
    s.length > MAX_EVENT_TEXT_CHARS ? `${s.slice(0, MAX_EVENT_TEXT_CHARS - 1)}…` : s;
  let sent: FreeLoaderEvent = event;
  if (sent.type === 'transfer' && sent.error) sent = { ...sent, error: cut(sent.error) };
  if (sent.type === 'fault') sent = { ...sent, reason: cut(sent.reason) };
  const payload = JSON.stringify({ from, event: sent } satisfies NotifyEnvelope);
  return Buffer.byteLength(payload) < MAX_EVENT_NOTIFY_BYTES ? payload : undefined;
}

/**
 * The envelope in a NOTIFY payload, or undefined when it is not one (another program on the
 * channel, a newer manager's event of a shape this one does not know is still relayed).
 *
 * @example decodeNotify('{"from":"m1","event":{"type":"dataset",…}}')?.from // 'm1'
 */
export function decodeNotify(payload: string | undefined): NotifyEnvelope | undefined {
  try {
    const v = JSON.parse(payload ?? '') as Partial<NotifyEnvelope>;
    if (typeof v.from !== 'string' || typeof v.event?.type !== 'string') return undefined;
    return v as NotifyEnvelope;
  } catch {
    return undefined;
  }
}
