import { Card, Progress, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { LocalState } from './api';
import { formatIdle, formatRate, formatSize, percent } from './format';

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={500} aria-label={label}>
        {value}
      </Text>
    </div>
  );
}

/** What the donor is doing now: serving rate and cap, why, and what the machine is doing. */
export function StatusCard({ state }: { state: LocalState }) {
  const g = state.governor;
  const { quotaBytes, usedBytes } = state.quota;
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Now</Title>
        <SimpleGrid cols={{ base: 2, sm: 4 }}>
          <Figure label="Serving" value={formatRate(state.servingBps)} />
          <Figure label="Serving cap" value={g.capBps === 0 ? 'paused' : formatRate(g.capBps)} />
          <Figure label="Owner idle" value={formatIdle(g.ownerIdleMs)} />
          <Figure label="Why" value={g.reasons.join(', ') || '—'} />
          <Figure label="CPU (others)" value={percent(g.sample.cpu)} />
          <Figure label="Memory in use" value={percent(g.sample.memory)} />
          <Figure
            label="Disk (others)"
            value={formatRate(g.sample.diskBps ?? null).replace('unlimited', 'unknown')}
          />
          <Figure
            label="Network (others)"
            value={formatRate(g.sample.netBps ?? null).replace('unlimited', 'unknown')}
          />
        </SimpleGrid>
        <div>
          <Text size="sm">
            {formatSize(usedBytes)} stored of {formatSize(quotaBytes)} donated
          </Text>
          <Progress
            value={quotaBytes > 0 ? Math.min(100, (usedBytes / quotaBytes) * 100) : 0}
            color={usedBytes > quotaBytes ? 'orange' : 'blue'}
            aria-label="Space used"
          />
        </div>
      </Stack>
    </Card>
  );
}
