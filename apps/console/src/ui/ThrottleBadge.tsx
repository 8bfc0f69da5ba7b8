import { Badge, Group, Text, Tooltip } from '@mantine/core';
import {
  donorReasons,
  isThrottled,
  summarizeThrottle,
  type DonorThrottle,
} from '@fl-protocol/throttle-summary';
import { formatRate } from '../format';

const COLORS: Record<string, string> = { active: 'yellow', contended: 'orange', paused: 'gray' };

/** 'cap 256 KB/s' when a finite cap is known (0 or absent = unlimited). */
const capText = (d: DonorThrottle): string =>
  d.throttle !== 'paused' && d.rateCap ? `, cap ${formatRate(d.rateCap)}` : '';

/**
 * One donor's serving governor: its state as plain text while it serves freely, else a badge
 * with the reason beside it (all of it in the title and the accessible label). `quiet` shows
 * nothing for an unthrottled donor.
 *
 * @example <ThrottleBadge d={{ throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'] }} />
 *   // → [contended] cpu 0.93 > 0.75
 */
export function ThrottleBadge({ d, quiet = false }: { d: DonorThrottle; quiet?: boolean }) {
  if (!isThrottled(d.throttle)) {
    // Quiet: where the row says enough already, an unthrottled donor shows nothing here.
    if (quiet) return null;
    return (
      <Text size="sm" span>
        {d.throttle ?? 'unknown'}
      </Text>
    );
  }
  const why = donorReasons(d);
  const label = `throttled: ${d.throttle}${capText(d)}: ${why}`;
  return (
    <Group gap={6} wrap="nowrap" aria-label={label} title={label} data-testid="throttle">
      {/* The state never shrinks away in a narrow cell; the reason is cut first (title has all). */}
      <Badge color={COLORS[d.throttle!] ?? 'orange'} variant="light" radius="sm" flex="none">
        {d.throttle}
      </Badge>
      <Text size="xs" c="dimmed" truncate maw={220}>
        {why}
      </Text>
    </Group>
  );
}

/**
 * A transfer card's note when donors doing its work are throttled: '2 of 3 donors throttled',
 * the commonest reason beside it; nothing otherwise.
 */
export function ThrottleSummaryBadge({ donors }: { donors: readonly DonorThrottle[] }) {
  const sum = summarizeThrottle(donors);
  if (!sum) return null;
  const head =
    sum.total === 1 ? 'donor throttled' : `${sum.throttled} of ${sum.total} donors throttled`;
  const why = sum.others > 0 ? `${sum.reason} +${sum.others} more` : sum.reason;
  return (
    <Tooltip label={why}>
      <Badge
        color="orange"
        variant="outline"
        radius="sm"
        tt="none"
        aria-label={`${head}: ${why}`}
        data-testid="throttle-summary"
      >
        {head} ({why})
      </Badge>
    </Tooltip>
  );
}
