import { LineChart } from '@mantine/charts';
import { Text } from '@mantine/core';
import { EmptyState } from '../ui/feedback';
import { gapThreshold, seriesRows, tickLabel, timeTicks, type TimePoint } from './time-axis';

export interface TimeSeries {
  /** Key in the chart data (no "/" or spaces: Mantine makes CSS variables of it). */
  key: string;
  label: string;
  color: string;
  points: readonly TimePoint[];
}

const COLORS = ['indigo.6', 'teal.6', 'orange.6', 'grape.6', 'cyan.6', 'red.6', 'lime.7', 'pink.6'];

/** A colour per series index, cycling through a readable palette. */
export const seriesColor = (i: number) => COLORS[i % COLORS.length]!;

/**
 * A line chart whose x-axis is real time: ticks at round times, a gap between samples drawn as
 * wide as the time it lasted and left empty (not bridged) when longer than a few sampling steps.
 *
 * @example <TimeChart title="used space" series={[{ key: 'd1', label: 'lab-1', color: 'indigo.6', points }]} format={formatBytes} />
 */
export function TimeChart({
  title,
  series,
  format,
  emptyHint,
  height = 180,
  minStepMs = 1000,
}: {
  title: string;
  series: readonly TimeSeries[];
  format: (v: number) => string;
  emptyHint: string;
  height?: number;
  /** The sampling step the data was taken at (a gap is a few of these). */
  minStepMs?: number;
}) {
  const all = series.flatMap((s) => s.points);
  const drawn = all.filter((p) => p.value !== null);
  if (drawn.length < 2)
    return <EmptyState title={`No ${title} recorded yet`}>{emptyHint}</EmptyState>;
  const min = Math.min(...all.map((p) => p.at));
  const max = Math.max(...all.map((p) => p.at));
  const { step, ticks } = timeTicks(min, max);
  const maxGap = gapThreshold(all, minStepMs);
  const data = seriesRows(Object.fromEntries(series.map((s) => [s.key, s.points])), maxGap);
  const peak = Math.max(...drawn.map((p) => p.value!));
  return (
    <div
      role="img"
      aria-label={`${title} chart over time, peak ${format(peak)}`}
      data-testid="time-chart"
    >
      <LineChart
        h={height}
        data={data}
        dataKey="at"
        series={series.map((s) => ({ name: s.key, label: s.label, color: s.color }))}
        connectNulls={false}
        withDots={false}
        curveType="linear"
        tickLine="x"
        gridAxis="y"
        withLegend={series.length > 1}
        lineProps={{ isAnimationActive: false }}
        valueFormatter={format}
        yAxisProps={{ width: 80, tickFormatter: format }}
        xAxisProps={{
          type: 'number',
          scale: 'time',
          domain: [min, max],
          ticks,
          tickFormatter: (t: number) => tickLabel(t, step),
        }}
        tooltipProps={{
          labelFormatter: (t: unknown) => new Date(Number(t)).toLocaleString(),
        }}
      />
      <Text size="xs" c="dimmed" ta="right">
        peak {format(peak)}
      </Text>
    </div>
  );
}
