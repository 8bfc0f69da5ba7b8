import { Group, Stack, Text, Title } from '@mantine/core';
import type { HistoryResponse } from '@freeloader/protocol';
import { useHistory } from '../api/history';
import { usePrincipalNames } from '../api/principals';
import { seriesColor, TimeChart, type TimeSeries } from '../charts/TimeChart';
import { formatBytes, formatPercent, formatRate } from '../format';
import { ErrorAlert } from '../ui/feedback';
import { uptimeByDonor } from './uptime';

/** One line per donor of a sampled series, named, in a stable colour order. */
function donorSeries(
  res: HistoryResponse | undefined,
  nameOf: (id: string) => string,
  order: readonly string[],
): TimeSeries[] {
  return (res?.subjects ?? [])
    .filter((s) => s.subject)
    .map((s) => ({
      key: `d${order.indexOf(s.subject!)}`,
      label: nameOf(s.subject!),
      color: seriesColor(order.indexOf(s.subject!)),
      points: s.points.map((p) => ({ at: Date.parse(p.at), value: p.value })),
    }));
}

/**
 * The donors over the last day, from the manager's sampled history (kept in PostgreSQL, so a
 * reload or a manager restart loses nothing): space used, serving rate, and uptime.
 */
export function DonorHistory() {
  const used = useHistory('donor_used');
  const serving = useHistory('donor_serving');
  const up = useHistory('donor_up');
  const nameOf = usePrincipalNames();
  const error = used.error ?? serving.error ?? up.error;
  if (error) return <ErrorAlert error={error} />;
  const ids = [
    ...new Set((used.data?.subjects ?? []).flatMap((s) => (s.subject ? [s.subject] : []))),
  ].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  const stepMs = (used.data?.sampleIntervalS ?? 30) * 1000;
  const uptime = uptimeByDonor(up.data);
  return (
    <Stack gap="md">
      <Title order={4}>History (last 24 hours)</Title>
      <Group gap="lg" aria-label="uptime" data-testid="uptime">
        {ids.map((id) => {
          const f = uptime.get(id);
          return (
            <Text size="sm" key={id}>
              <Text span fw={600}>
                {nameOf(id)}
              </Text>{' '}
              up {f === null || f === undefined ? '—' : formatPercent(f)}
            </Text>
          );
        })}
      </Group>
      <div aria-label="space used over time">
        <Text size="sm" fw={600}>
          Space used
        </Text>
        <TimeChart
          title="space used"
          format={formatBytes}
          minStepMs={stepMs}
          series={donorSeries(used.data, nameOf, ids)}
          emptyHint="The manager samples each donor’s used space every few seconds to minutes."
        />
      </div>
      <div aria-label="serving rate over time">
        <Text size="sm" fw={600}>
          Serving rate
        </Text>
        <TimeChart
          title="serving rate"
          format={formatRate}
          minStepMs={stepMs}
          series={donorSeries(serving.data, nameOf, ids)}
          emptyHint="How fast each donor served reads, as sampled by the manager."
        />
      </div>
      <div aria-label="online over time">
        <Text size="sm" fw={600}>
          Online (1 = up)
        </Text>
        <TimeChart
          title="uptime"
          height={120}
          format={(v) => (v >= 0.5 ? 'up' : 'down')}
          minStepMs={stepMs}
          series={donorSeries(up.data, nameOf, ids)}
          emptyHint="Whether each donor was heartbeating when the manager sampled it."
        />
      </div>
    </Stack>
  );
}
