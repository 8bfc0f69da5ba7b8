import { Button, Card, Stack, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { parseSize } from '@fl-protocol/size.js';
import type { Api } from './api';
import type { Act } from './SettingsPage';

/** First run: join a FreeLoader cache with its manager's URL and a join token. */
export function EnrollCard({ api, act }: { api: Api; act: Act }) {
  const [managerUrl, setManagerUrl] = useState('http://');
  const [token, setToken] = useState('');
  const [quota, setQuota] = useState('20 GiB');
  const enroll = () =>
    void act(() => api.enroll({ managerUrl, token: token.trim(), quotaBytes: parseSize(quota) }));
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Join a FreeLoader cache</Title>
        <TextInput
          label="Manager URL"
          value={managerUrl}
          onChange={(e) => setManagerUrl(e.currentTarget.value)}
        />
        <TextInput
          label="Join token"
          value={token}
          onChange={(e) => setToken(e.currentTarget.value)}
        />
        <TextInput
          label="Space to donate"
          value={quota}
          onChange={(e) => setQuota(e.currentTarget.value)}
        />
        <Button onClick={enroll} disabled={!token.trim()}>
          Join
        </Button>
      </Stack>
    </Card>
  );
}
