import { Alert, Button, Card, Group, Progress, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { parseSize } from '@fl-protocol/size.js';
import type { Api, LocalState } from './api';
import { formatSize } from './format';
import type { Act } from './SettingsPage';

/** Donated space and store location; a cut below what is stored shows the relocation. */
export function QuotaCard({ state, api, act }: { state: LocalState; api: Api; act: Act }) {
  const [text, setText] = useState(formatSize(state.quota.quotaBytes));
  const [invalid, setInvalid] = useState<string | null>(null);
  const r = state.relocation;
  const save = () => {
    let quotaBytes: number;
    try {
      quotaBytes = parseSize(text);
    } catch (e) {
      setInvalid(e instanceof Error ? e.message : String(e));
      return;
    }
    setInvalid(null);
    void act(() => api.update({ quotaBytes }));
  };
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Donated space</Title>
        <Group align="end">
          <TextInput
            label="Donated space"
            description="e.g. 20 GiB; lowering it below what is stored moves data to other donors"
            value={text}
            error={invalid}
            disabled={state.bandwidthOnly}
            onChange={(e) => setText(e.currentTarget.value)}
            w={320}
          />
          <Button onClick={save} disabled={state.bandwidthOnly}>
            Save space
          </Button>
        </Group>
        <Text size="sm" c="dimmed">
          Store location: <span data-testid="store-dir">{state.dir}</span> (change it by restarting
          the agent with another --dir)
        </Text>
        {r.state !== 'idle' && (
          <Alert
            color={r.state === 'failed' ? 'red' : 'blue'}
            title="Moving data off this computer"
          >
            <Text size="sm" data-testid="relocation">
              {r.state === 'relocating' ? 'moving' : r.state}: {formatSize(r.doneBytes)} of{' '}
              {formatSize(r.totalBytes)}
              {r.evicted > 0 && `, ${r.evicted} dataset(s) evicted (their source still has them)`}
              {r.unplacedBytes > 0 &&
                `, ${formatSize(r.unplacedBytes)} waiting for space elsewhere`}
              {r.retainedBytes > 0 &&
                `; ${formatSize(r.retainedBytes)} of old copies kept a few minutes for readers that started before the move`}
              {r.error && ` — ${r.error}`}
            </Text>
            <Progress value={r.totalBytes > 0 ? (r.doneBytes / r.totalBytes) * 100 : 100} mt="xs" />
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
