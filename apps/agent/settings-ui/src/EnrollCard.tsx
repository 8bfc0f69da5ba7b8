import { Alert, Button, Card, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { parseSize } from '@fl-protocol/size.js';
import type { Api, LocalState } from './api';
import { formatSize } from './format';

/** Form suggestion for the donated space when the agent was started without --quota. */
const DEFAULT_QUOTA = '20 GiB';

/**
 * First run: join a FreeLoader cache with its manager's URL and a join token. The agent tries
 * at once (the same enrollment as `freeloader agent --token`); a refused token or an
 * unreachable manager is shown here, in the form, and the owner can correct and try again.
 */
export function EnrollCard({
  state,
  api,
  onState,
}: {
  state: LocalState;
  api: Api;
  onState: (s: LocalState) => void;
}) {
  const [managerUrl, setManagerUrl] = useState(state.managerUrl ?? 'http://');
  const [token, setToken] = useState('');
  const [quota, setQuota] = useState(
    state.quota.quotaBytes > 0 ? formatSize(state.quota.quotaBytes) : DEFAULT_QUOTA,
  );
  const [quotaError, setQuotaError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const enroll = async () => {
    let quotaBytes = 0;
    if (!state.bandwidthOnly) {
      try {
        quotaBytes = parseSize(quota);
      } catch (e) {
        setQuotaError(e instanceof Error ? e.message : String(e));
        return;
      }
    }
    setQuotaError(null);
    setBusy(true);
    try {
      onState(await api.enroll({ managerUrl: managerUrl.trim(), token: token.trim(), quotaBytes }));
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Join a FreeLoader cache</Title>
        <Text size="sm" c="dimmed">
          This computer has not joined a cache yet. Ask the cache&apos;s admin for its manager
          address and a join token (`freeloader token create`).
        </Text>
        <TextInput
          label="Manager URL"
          value={managerUrl}
          onChange={(e) => setManagerUrl(e.currentTarget.value)}
        />
        <TextInput
          label="Join token"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.currentTarget.value)}
        />
        {!state.bandwidthOnly && (
          <TextInput
            label="Space to donate"
            value={quota}
            error={quotaError}
            onChange={(e) => setQuota(e.currentTarget.value)}
          />
        )}
        {error && (
          <Alert color="red" title="Could not join" data-testid="enroll-error">
            {error}
          </Alert>
        )}
        <Button onClick={() => void enroll()} loading={busy} disabled={!token.trim()}>
          Join
        </Button>
      </Stack>
    </Card>
  );
}
