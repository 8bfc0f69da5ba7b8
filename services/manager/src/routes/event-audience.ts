import type { FastifyRequest } from 'fastify';
import { EVENT_READ_CHECK_TTL_MS, type FreeLoaderEvent } from '@freeloader/protocol';
import { loadPrincipal, readableIds } from '../auth/access.js';

/**
 * The dataset an event is about; `null` for events about no dataset (agents' states), which
 * every stream carries; `gone` for a transfer whose dataset is deleted, which only admins see
 * (as in aboutReadable: its error text is all that is left of it).
 */
function datasetOf(event: FreeLoaderEvent): { id: string } | null | 'gone' {
  if (event.type === 'agent') return null;
  return event.datasetId === null ? 'gone' : { id: event.datasetId };
}

/**
 * Which events one SSE stream may carry: an admin every event; a user only those about
 * datasets they may read, plus agent state changes (no dataset in them). Answers are kept per
 * dataset for EVENT_READ_CHECK_TTL_MS; a dataset this stream could read that is gone since
 * (deleted) stays readable, so its owner still sees the last events of its deletion. Shares and
 * group memberships changed while the stream is open count from the next check.
 *
 * `deliver` is called in publish order: checks run one after another on a chain.
 *
 * @example
 *   const send = eventAudience(req, (e) => res.write(format(e)));
 *   bus.subscribeAll(send);
 */
export function eventAudience(
  req: FastifyRequest,
  deliver: (event: FreeLoaderEvent) => void,
): (event: FreeLoaderEvent) => void {
  if (req.user?.role === 'admin') return deliver;
  const known = new Map<string, { ok: boolean; at: number }>();
  let chain: Promise<void> = Promise.resolve();

  async function mayRead(datasetId: string): Promise<boolean> {
    const cached = known.get(datasetId);
    if (cached && Date.now() - cached.at < EVENT_READ_CHECK_TTL_MS) return cached.ok;
    // Memberships read afresh: a stream outlives group changes.
    const readable = await readableIds(req, [datasetId], await loadPrincipal(req));
    let ok = readable === 'all' || readable.has(datasetId);
    if (!ok && cached?.ok) ok = (await req.server.namespaceRepo.get(datasetId)) === null;
    known.set(datasetId, { ok, at: Date.now() });
    return ok;
  }

  return (event) => {
    const about = datasetOf(event);
    chain = chain
      .then(async () => {
        if (about === 'gone') return;
        if (about === null || (await mayRead(about.id))) deliver(event);
      })
      // A failed lookup (database away) drops this event for this stream, never the stream.
      .catch((err: unknown) => req.log.warn({ err, event }, 'event permission check failed'));
  };
}
