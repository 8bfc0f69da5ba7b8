import { Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useAgents, useMe } from '../api/queries';
import { ErrorAlert, Loading } from '../ui/feedback';
import { DonorHistory } from './DonorHistory';
import { DonorTable } from './DonorTable';
import { JoinTokens } from './JoinTokens';
import { RepairQueue } from './RepairQueue';

/**
 * Donors (admin): live/stale/dead and offline/lost/leaving, space, serving, throttle, heartbeats;
 * the repair queue; join tokens.
 */
export function DonorsPage() {
  const me = useMe().data;
  const admin = me?.role === 'admin';
  const agents = useAgents(admin);
  if (!admin) {
    return <ErrorAlert error={new Error('Only admins manage donors.')} title="Admins only" />;
  }
  const counts = (agents.data ?? []).reduce<Record<string, number>>(
    (c, a) => ({ ...c, [a.state]: (c[a.state] ?? 0) + 1 }),
    {},
  );
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Donors</Title>
        <Text size="sm" c="dimmed">
          {['live', 'stale', 'dead', 'revoked']
            .filter((s) => counts[s])
            .map((s) => `${counts[s]} ${s}`)
            .join(' · ') || 'none enrolled'}
        </Text>
      </Group>
      <Paper withBorder p="xs">
        {agents.isPending ? (
          <Loading label="Loading donors…" />
        ) : agents.isError ? (
          <ErrorAlert error={agents.error} />
        ) : (
          <DonorTable agents={agents.data} />
        )}
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="repair">
        <RepairQueue />
      </Paper>
      <Paper withBorder p="md" component="section" aria-label="donor history">
        <DonorHistory />
      </Paper>
      {/* Long enrollment commands scroll inside the card, never the page (phones). */}
      <Paper withBorder p="md" style={{ overflowX: 'auto' }}>
        <JoinTokens />
      </Paper>
    </Stack>
  );
}
