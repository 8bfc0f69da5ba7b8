import { Badge, Button, Code, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import type { ImportResponse } from '@freeloader/protocol';
import { formatBytes } from '../format';
import { copiesSentence } from './copies';

export interface ProbeResultProps {
  result: ImportResponse;
  name: string;
  onConfirm: () => void;
  onEdit: () => void;
  busy?: boolean;
}

/** What the manager found at the URI and how it would place it, with Confirm and Edit. */
export function ProbeResult({ result, name, onConfirm, onEdit, busy = false }: ProbeResultProps) {
  const { probe, plan } = result;
  return (
    <Paper withBorder p="md" component="section" aria-label="probe result">
      <Stack gap="sm">
        <Title order={4}>The source answered</Title>
        <SimpleGrid cols={{ base: 2, sm: 4 }}>
          <div>
            <Text size="xs" c="dimmed" fw={600} tt="uppercase">
              Size
            </Text>
            <Text data-testid="probe-size">{formatBytes(probe.size)}</Text>
          </div>
          <div>
            <Text size="xs" c="dimmed" fw={600} tt="uppercase">
              ETag
            </Text>
            {probe.etag ? <Code>{probe.etag}</Code> : <Text c="dimmed">none</Text>}
          </div>
          <div>
            <Text size="xs" c="dimmed" fw={600} tt="uppercase">
              Range requests
            </Text>
            <Badge color={probe.acceptsRanges ? 'teal' : 'orange'} variant="light">
              {probe.acceptsRanges ? 'supported' : 'not supported'}
            </Badge>
          </div>
          <div>
            <Text size="xs" c="dimmed" fw={600} tt="uppercase">
              Last modified
            </Text>
            <Text size="sm">{probe.lastModified ?? '—'}</Text>
          </div>
        </SimpleGrid>
        <Text size="sm">
          “{name}” would be cut into {plan.morsels} morsels striped {plan.width} wide (stripes of{' '}
          {plan.stripeSize}) over {plan.donors} donor{plan.donors === 1 ? '' : 's'}.
          {plan.replicas !== undefined && ` ${copiesSentence(plan)}`}
          {!probe.acceptsRanges &&
            ' Without Range support one donor reads the whole source and hands morsels to the others.'}
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={onEdit} disabled={busy}>
            Edit
          </Button>
          <Button onClick={onConfirm} loading={busy}>
            Confirm import
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}
