import { useEffect, useState } from 'react';

/** The current time in ms, refreshed every `everyMs` so "expired"/"ago" labels age on screen. */
export function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
