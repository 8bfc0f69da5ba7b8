import { useState } from 'react';
import {
  Button,
  Group,
  Paper,
  SegmentedControl,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { AGENTS_PAGE_SIZE, type AgentState } from '@freeloader/protocol';
import { useAgentPage, useMe } from '../api/queries';
import { ErrorAlert, Loading } from '../ui/feedback';
import { DonorHistory } from './DonorHistory';
import { DonorTable } from './DonorTable';
import { JoinTokens } from './JoinTokens';
import { RepairQueue } from './RepairQueue';

const STATES = ['live', 'stale', 'dead', 'revoked'] as const;

/**
 * Donors (admin): live/stale/dead and offline/lost/leaving, space, serving, throttle, heartbeats;
 * the repair queue; join tokens. The table shows one page of donors at a time, searched and
 * filtered by state on the manager, so a site with 10,000 donors loads 50 of them.
 */
export function DonorsPage() {
  const me = useMe().data;
  const admin = me?.role === 'admin';
  const [q, setQ] = useState('');
  const [state, setState] = useState<AgentState | 'all'>('all');
  // Cursors of the pages seen so far: [undefined] is the first page.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors.at(-1);
  const agents = useAgentPage(
    { q, ...(state === 'all' ? {} : { state }), ...(cursor ? { cursor } : {}) },
    admin,
  );
  if (!admin) {
    return <ErrorAlert error={new Error('Only admins manage donors.')} title="Admins only" />;
  }
  const restart = () => setCursors([undefined]);
  const counts = agents.data?.counts ?? {};
  const shown = agents.data?.agents.length ?? 0;
  const from = (cursors.length - 1) * AGENTS_PAGE_SIZE;
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Donors</Title>
        <Text size="sm" c="dimmed">
          {STATES.filter((s) => counts[s])
            .map((s) => `${counts[s]} ${s}`)
            .join(' · ') || (q ? 'no donor matches' : 'none enrolled')}
        </Text>
      </Group>
      <Group gap="sm" align="flex-end">
        <TextInput
          label="Search donors"
          placeholder="name, address or id"
          value={q}
          onChange={(e) => {
            setQ(e.currentTarget.value);
            restart();
          }}
        />
        <SegmentedControl
          aria-label="donor state"
          value={state}
          onChange={(v) => {
            setState(v as AgentState | 'all');
            restart();
          }}
          data={['all', ...STATES]}
        />
      </Group>
      <Paper withBorder p="xs">
        {agents.isPending ? (
          <Loading label="Loading donors…" />
        ) : agents.isError ? (
          <ErrorAlert error={agents.error} />
        ) : (
          <DonorTable agents={agents.data.agents} />
        )}
      </Paper>
      {agents.data && agents.data.total > 0 && (
        <Group justify="space-between" aria-label="donor pages">
          <Text size="sm" c="dimmed">
            {from + 1}–{from + shown} of {agents.data.total}
          </Text>
          <Group gap="xs">
            <Button
              variant="default"
              size="xs"
              disabled={cursors.length === 1}
              onClick={() => setCursors((c) => c.slice(0, -1))}
            >
              Previous
            </Button>
            <Button
              variant="default"
              size="xs"
              disabled={!agents.data.nextCursor}
              onClick={() => setCursors((c) => [...c, agents.data.nextCursor ?? undefined])}
            >
              Next
            </Button>
          </Group>
        </Group>
      )}
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
