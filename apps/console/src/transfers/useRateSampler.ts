import { useEffect, useRef, useState } from 'react';
import type { TransferView } from '@freeloader/protocol';
import type { RatePoint } from '../datasets/ThroughputChart';

/**
 * Sample the summed rate of running transfers once per `everyMs`, keeping the last `keep`
 * points: the transfers page's chart, drawn from what this browser has seen since it opened.
 */
export function useRateSampler(
  transfers: readonly TransferView[] | undefined,
  everyMs = 1000,
  keep = 180,
): RatePoint[] {
  const latest = useRef(transfers);
  useEffect(() => {
    latest.current = transfers;
  }, [transfers]);
  const [points, setPoints] = useState<RatePoint[]>([]);
  useEffect(() => {
    const timer = setInterval(() => {
      const rate = (latest.current ?? []).reduce(
        (n, t) => n + (t.state === 'running' ? t.rate : 0),
        0,
      );
      setPoints((p) => [...p.slice(-(keep - 1)), { at: Date.now(), rate }]);
    }, everyMs);
    return () => clearInterval(timer);
  }, [everyMs, keep]);
  return points;
}
