import {
  Button,
  Card,
  Checkbox,
  Group,
  NumberInput,
  SegmentedControl,
  Stack,
  Switch,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import type { Api, LocalState } from './api';
import type { Act } from './SettingsPage';

const MB = 1e6;

/** Caps while away and while at the machine, how soon "away" starts, how touchy, when to pause. */
export function BandwidthCard({ state, api, act }: { state: LocalState; api: Api; act: Act }) {
  const s = state.governor.settings;
  const [unlimited, setUnlimited] = useState(s.idleCapBps === null);
  const [idleCap, setIdleCap] = useState<number | string>((s.idleCapBps ?? 100 * MB) / MB);
  const [activeCap, setActiveCap] = useState<number | string>(s.activeCapBps / MB);
  const [idleAfter, setIdleAfter] = useState<number | string>(s.idleAfterMs / 1000);
  const [sensitivity, setSensitivity] = useState<string>(s.sensitivity);
  const [battery, setBattery] = useState(s.pauseOnBattery);
  const [metered, setMetered] = useState(s.pauseOnMetered);
  const save = () =>
    void act(() =>
      api.update({
        governor: {
          idleCapBps: unlimited ? null : Math.round(Number(idleCap) * MB),
          activeCapBps: Math.round(Number(activeCap) * MB),
          idleAfterMs: Math.round(Number(idleAfter) * 1000),
          sensitivity: sensitivity as 'low' | 'medium' | 'high',
          pauseOnBattery: battery,
          pauseOnMetered: metered,
        },
      }),
    );
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={4}>Bandwidth</Title>
        <Group align="end">
          <NumberInput
            label="Cap while you are away (MB/s)"
            value={idleCap}
            onChange={setIdleCap}
            disabled={unlimited}
            min={0.3}
            decimalScale={1}
            w={240}
          />
          <Checkbox
            label="Unlimited"
            checked={unlimited}
            onChange={(e) => setUnlimited(e.currentTarget.checked)}
            mb={8}
          />
        </Group>
        <Group>
          <NumberInput
            label="Cap while you use this computer (MB/s)"
            value={activeCap}
            onChange={setActiveCap}
            min={0.3}
            decimalScale={1}
            w={280}
          />
          <NumberInput
            label="Away after no input for (seconds)"
            value={idleAfter}
            onChange={setIdleAfter}
            min={1}
            max={3600}
            w={260}
          />
        </Group>
        <div>
          <Text size="sm" fw={500} id="sensitivity-label">
            Throttle sensitivity
          </Text>
          <Text size="xs" c="dimmed">
            How readily your own programs&apos; CPU, disk and network use slows FreeLoader down
          </Text>
          <SegmentedControl
            aria-labelledby="sensitivity-label"
            value={sensitivity}
            onChange={setSensitivity}
            data={[
              { value: 'low', label: 'Low' },
              { value: 'medium', label: 'Medium' },
              { value: 'high', label: 'High' },
            ]}
          />
        </div>
        <Switch
          label="Pause on battery"
          checked={battery}
          onChange={(e) => setBattery(e.currentTarget.checked)}
        />
        <Switch
          label="Pause on a metered network (where the OS tells)"
          checked={metered}
          onChange={(e) => setMetered(e.currentTarget.checked)}
        />
        <Group>
          <Button onClick={save}>Save bandwidth</Button>
        </Group>
      </Stack>
    </Card>
  );
}
