import { Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import type { Api, LocalState } from './api';
import { formatPause } from './format';
import type { Act } from './SettingsPage';

/** Pause donating for an hour, until tomorrow, or until resumed. */
export function PauseCard({ state, api, act }: { state: LocalState; api: Api; act: Act }) {
  const pause = state.governor.pause;
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Pause donating</Title>
        <Text size="sm" data-testid="pause-state">
          {formatPause(pause)}
        </Text>
        <Group>
          <Button variant="light" onClick={() => void act(() => api.pause('1h'))}>
            Pause for 1 hour
          </Button>
          <Button variant="light" onClick={() => void act(() => api.pause('tomorrow'))}>
            Pause until tomorrow
          </Button>
          <Button variant="light" onClick={() => void act(() => api.pause('indefinite'))}>
            Pause until resumed
          </Button>
          {pause && <Button onClick={() => void act(() => api.resume())}>Resume</Button>}
        </Group>
      </Stack>
    </Card>
  );
}
