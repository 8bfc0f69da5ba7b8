import { useState } from 'react';
import { Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import type { Api, LocalState } from './api';
import { formatSize } from './format';
import type { Act } from './SettingsPage';

/**
 * Leave the cache gracefully: the manager re-creates this computer's copies on other donors
 * (reading them from here meanwhile), then releases it and the store is emptied.
 */
export function LeaveCard({ state, api, act }: { state: LocalState; api: Api; act: Act }) {
  const [confirming, setConfirming] = useState(false);
  const leave = state.leave;
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Leave this cache</Title>
        {leave ? (
          <Text size="sm" data-testid="leave-state">
            {leave.released
              ? 'Left: every copy lives elsewhere; this computer is released.'
              : `Leaving: ${leave.remainingMorsels} morsels (${formatSize(leave.remainingBytes)}) still to move to other donors. Keep this computer on until it is done.`}
          </Text>
        ) : (
          <Text size="sm" c="dimmed">
            Stop donating for good. What is stored here is copied to other donors first, so nothing
            is lost; then this computer is released and its store emptied.
          </Text>
        )}
        {!leave && (
          <Group>
            {confirming ? (
              <>
                <Button color="red" onClick={() => void act(() => api.leave())}>
                  Yes, leave
                </Button>
                <Button variant="default" onClick={() => setConfirming(false)}>
                  Cancel
                </Button>
              </>
            ) : (
              <Button color="red" variant="light" onClick={() => setConfirming(true)}>
                Leave…
              </Button>
            )}
          </Group>
        )}
      </Stack>
    </Card>
  );
}
