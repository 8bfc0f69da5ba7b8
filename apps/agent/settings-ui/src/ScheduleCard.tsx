import {
  ActionIcon,
  Button,
  Card,
  Chip,
  Group,
  NumberInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import type { Api, LocalState } from './api';
import type { Act } from './SettingsPage';

type Window = LocalState['governor']['settings']['schedule'][number];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MB = 1e6;

/** Weekly windows with their own cap (0 MB/s: do not serve then), in local time. */
export function ScheduleCard({ state, api, act }: { state: LocalState; api: Api; act: Act }) {
  const [windows, setWindows] = useState<Window[]>(state.governor.settings.schedule);
  const change = (i: number, patch: Partial<Window>) =>
    setWindows(windows.map((w, k) => (k === i ? { ...w, ...patch } : w)));
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Weekly schedule</Title>
        <Text size="xs" c="dimmed">
          Inside a window the lower of its cap and the caps above applies; 0 MB/s pauses serving. An
          end before the start runs past midnight.
        </Text>
        {windows.length === 0 && <Text size="sm">No windows: the caps above apply all week.</Text>}
        {windows.map((w, i) => (
          <Group key={i} align="end" aria-label={`Window ${i + 1}`} role="group">
            <Chip.Group
              multiple
              value={w.days.map(String)}
              onChange={(v) => change(i, { days: v.map(Number).sort() })}
            >
              <Group gap={4}>
                {DAYS.map((d, k) => (
                  <Chip key={d} value={String(k)} size="xs">
                    {d}
                  </Chip>
                ))}
              </Group>
            </Chip.Group>
            <TextInput
              label="From"
              type="time"
              value={w.start}
              onChange={(e) => change(i, { start: e.currentTarget.value })}
              w={110}
            />
            <TextInput
              label="To"
              type="time"
              value={w.end}
              onChange={(e) => change(i, { end: e.currentTarget.value })}
              w={110}
            />
            <NumberInput
              label="Cap (MB/s)"
              value={w.capBps / MB}
              min={0}
              decimalScale={1}
              onChange={(v) => change(i, { capBps: Math.round(Number(v) * MB) })}
              w={110}
            />
            <ActionIcon
              variant="subtle"
              color="red"
              aria-label={`Remove window ${i + 1}`}
              onClick={() => setWindows(windows.filter((_, k) => k !== i))}
              mb={4}
            >
              ✕
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button
            variant="light"
            onClick={() =>
              setWindows([
                ...windows,
                { days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00', capBps: 0 },
              ])
            }
          >
            Add window
          </Button>
          <Button onClick={() => void act(() => api.update({ governor: { schedule: windows } }))}>
            Save schedule
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
