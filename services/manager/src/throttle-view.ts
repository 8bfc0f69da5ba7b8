import type { Heartbeat, ThrottleState } from '@freeloader/protocol';

/** A donor's serving governor as views show it: state, reasons and cap (each absent when unknown). */
export interface ThrottleFields {
  throttle?: ThrottleState;
  throttleReasons?: string[];
  rateCap?: number;
}

/**
 * The throttle fields of a view from the agent's last heartbeat; `stored` is the state last
 * flushed to the agents table, used when no heartbeat arrived since this manager started (its
 * reasons and cap live in soft state only).
 *
 * @example
 *   throttleFields({ …, throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'], rateCap: 262144 })
 *   // → { throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'], rateCap: 262144 }
 */
export function throttleFields(
  hb: Heartbeat | undefined,
  stored: string | null = null,
): ThrottleFields {
  const throttle = (hb?.throttle ?? stored ?? undefined) as ThrottleState | undefined;
  return {
    ...(throttle ? { throttle } : {}),
    ...(hb?.throttleReasons?.length ? { throttleReasons: hb.throttleReasons } : {}),
    ...(hb?.rateCap !== undefined ? { rateCap: hb.rateCap } : {}),
  };
}
