import { useEffect, useRef, useState } from 'react';
import type { TransferView } from '@freeloader/protocol';
import type { TimePoint } from '../charts/time-axis';

/**
 * Sample the summed rate of running transfers once per `everyMs`, keeping the last `keep`
 * points: the fine-grained recent part of the transfers page's chart.
 */
export function useRateSampler(
  transfers: readonly TransferView[] | undefined,
  everyMs = 1000,
  keep = 180,
): TimePoint[] {
  const latest = useRef(transfers);
  useEffect(() => {
    latest.current = transfers;
  }, [transfers]);
  const [points, setPoints] = useState<TimePoint[]>([]);
  useEffect(() => {
    const timer = setInterval(() => {
      const value = (latest.current ?? []).reduce(
        (n, t) => n + (t.state === 'running' ? t.rate : 0),
        0,
      );
      setPoints((p) => [...p.slice(-(keep - 1)), { at: Date.now(), value }]);
    }, everyMs);
    return () => clearInterval(timer);
  }, [everyMs, keep]);
  return points;
}
