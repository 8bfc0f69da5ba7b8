import { Alert, Badge, Container, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { useCallback, useEffect, useState } from 'react';
import { ApiError, type Api, type LocalState } from './api';
import { BandwidthCard } from './BandwidthCard';
import { EnrollCard } from './EnrollCard';
import { LeaveCard } from './LeaveCard';
import { STATE_LABEL } from './format';
import { PauseCard } from './PauseCard';
import { QuotaCard } from './QuotaCard';
import { ScheduleCard } from './ScheduleCard';
import { StatusCard } from './StatusCard';

/** Run an action against the agent; the page shows its answer or its error. */
export type Act = (what: () => Promise<LocalState>) => Promise<boolean>;

const POLL_MS = 1_000;

export function SettingsPage({ api, onUnauthorized }: { api: Api; onUnauthorized: () => void }) {
  const [state, setState] = useState<LocalState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [offline, setOffline] = useState(false);

  const fail = useCallback(
    (e: unknown) => {
      // Only the local token's refusal signs out: a join token the manager refused is also a 401
      // upstream, but comes back as a validation error with its own words.
      if (e instanceof ApiError && e.status === 401 && e.code === 'UNAUTHENTICATED') {
        onUnauthorized();
      }
      return e instanceof Error ? e.message : String(e);
    },
    [onUnauthorized],
  );

  useEffect(() => {
    let live = true;
    const poll = async () => {
      try {
        const s = await api.state();
        if (live) {
          setState(s);
          setOffline(false);
        }
      } catch (e) {
        if (live) {
          fail(e);
          setOffline(true);
        }
      }
    };
    void poll();
    const timer = setInterval(() => void poll(), POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- one poller per token
  }, []);

  const act: Act = async (what) => {
    try {
      setState(await what());
      setError(null);
      return true;
    } catch (e) {
      setError(fail(e));
      return false;
    }
  };

  if (!state) {
    return (
      <Container py="xl">
        {offline ? <Alert color="red">The agent does not answer.</Alert> : <Loader />}
      </Container>
    );
  }
  const badge = !state.enrolled
    ? { label: 'Not joined', color: 'gray' }
    : (STATE_LABEL[state.governor.state] ?? { label: state.governor.state, color: 'gray' });
  return (
    <Container size="md" py="lg">
      <Stack>
        <Group justify="space-between">
          <div>
            <Title order={2}>FreeLoader donor</Title>
            <Text c="dimmed" size="sm">
              {state.name ?? 'not enrolled'} · {state.status}
            </Text>
          </div>
          <Badge size="lg" color={badge.color} data-testid="governor-state">
            {badge.label}
          </Badge>
        </Group>
        {offline && <Alert color="red">The agent stopped answering; showing the last state.</Alert>}
        {error && (
          <Alert
            color="red"
            title="That did not work"
            withCloseButton
            onClose={() => setError(null)}
          >
            {error}
          </Alert>
        )}
        {state.enrolled ? (
          <>
            <StatusCard state={state} />
            <PauseCard state={state} api={api} act={act} />
            <QuotaCard state={state} api={api} act={act} />
            <BandwidthCard state={state} api={api} act={act} />
            <ScheduleCard state={state} api={api} act={act} />
            <LeaveCard state={state} api={api} act={act} />
          </>
        ) : (
          // First run: nothing to set until this computer has joined a cache.
          <EnrollCard state={state} api={api} onState={setState} />
        )}
      </Stack>
    </Container>
  );
}
