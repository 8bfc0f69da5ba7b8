import { AreaChart } from '@mantine/charts';
import { Text } from '@mantine/core';
import { EmptyState } from '../ui/feedback';

export interface RatePoint {
  /** Milliseconds since the epoch. */
  at: number;
  /** Bytes/s. */
  rate: number;
}

const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** Throughput over time in MB/s (an area chart), or a note when there is nothing to draw. */
export function ThroughputChart({
  points,
  emptyHint,
}: {
  points: readonly RatePoint[];
  emptyHint: string;
}) {
  if (points.length < 2) return <EmptyState title="No throughput recorded">{emptyHint}</EmptyState>;
  // Series keys become CSS variable names in Mantine charts: no "/" in them.
  const data = points.map((p) => ({ time: clock(p.at), rate: Math.round(p.rate / 1e4) / 100 }));
  const peak = Math.max(...points.map((p) => p.rate));
  return (
    <div role="img" aria-label={`throughput chart, peak ${(peak / 1e6).toFixed(1)} MB/s`}>
      <AreaChart
        h={180}
        data={data}
        dataKey="time"
        series={[{ name: 'rate', label: 'MB/s', color: 'indigo.6' }]}
        areaProps={{ isAnimationActive: false }}
        curveType="monotone"
        withDots={false}
        tickLine="none"
        gridAxis="y"
        unit=" MB/s"
        yAxisProps={{ width: 70 }}
      />
      <Text size="xs" c="dimmed" ta="right">
        peak {(peak / 1e6).toFixed(1)} MB/s
      </Text>
    </div>
  );
}
