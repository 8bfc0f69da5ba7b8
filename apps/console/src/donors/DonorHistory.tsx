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
      {[
        {
          label: 'space used',
          heading: 'Space used',
          data: used.data,
          format: formatBytes,
          hint: 'The manager samples each donor’s used space every few seconds to minutes.',
        },
        {
          label: 'serving rate',
          heading: 'Serving rate',
          data: serving.data,
          format: formatRate,
          hint: 'How fast each donor served reads, as sampled by the manager.',
        },
        {
          label: 'online',
          heading: 'Online (1 = up)',
          title: 'uptime',
          height: 120,
          data: up.data,
          format: (v: number) => (v >= 0.5 ? 'up' : 'down'),
          hint: 'Whether each donor was heartbeating when the manager sampled it.',
        },
      ].map((chart) => (
        <div key={chart.label} aria-label={`${chart.label} over time`}>
          <Text size="sm" fw={600}>
            {chart.heading}
          </Text>
          <TimeChart
            title={chart.title ?? chart.label}
            {...(chart.height ? { height: chart.height } : {})}
            format={chart.format}
            minStepMs={stepMs}
            series={donorSeries(chart.data, nameOf, ids)}
            emptyHint={chart.hint}
          />
        </div>
      ))}
    </Stack>
  );
}
