import { Anchor, Code, Group, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { Link, useNavigate, useParams } from 'react-router';
import type { DatasetView } from '@freeloader/protocol';
import { historyPoints, useHistory } from '../api/history';
import { usePrincipalNames } from '../api/principals';
import { useDataset, usePlacement, useThroughput, useTransfers } from '../api/queries';
import { TimeChart } from '../charts/TimeChart';
import { formatBytes, formatRate, formatSince } from '../format';
import { FailedAttempts } from '../transfers/FailedAttempts';
import { ImportControls } from '../transfers/ImportControls';
import { TransferList } from '../transfers/TransferList';
import { ErrorAlert, Loading } from '../ui/feedback';
import { BackIcon } from '../ui/icons';
import { StateBadge } from '../ui/StateBadge';
import { cachedLabel } from './CachedBar';
import { DatasetActions } from './DatasetActions';
import { healthText, healthTone, TONE_COLOR } from './health-label';
import { PlacementMap } from './PlacementMap';
import { ReadPanel } from './ReadPanel';
import { SharingPanel } from './SharingPanel';
import { mergeRatePoints } from './throughput-points';

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div" style={{ wordBreak: 'break-all' }}>
        {children}
      </Text>
    </div>
  );
}

function Facts({ d }: { d: DatasetView }) {
  return (
    <SimpleGrid cols={{ base: 2, md: 4 }} spacing="sm">
      <Fact label="Size">{formatBytes(d.sizeBytes)}</Fact>
      <Fact label="Cached">
        {cachedLabel(d)} ({formatBytes(d.cachedBytes)})
      </Fact>
      <Fact label="Donors">{d.donorCount ?? '—'}</Fact>
      <Fact label="Placement">{d.policy ?? '—'}</Fact>
      <Fact label="Copies">
        <Text size="sm" c={TONE_COLOR[healthTone(d)]} data-testid="dataset-health">
          {healthText(d)}
        </Text>
      </Fact>
      <Fact label="Morsel size">{formatBytes(d.morselSize)}</Fact>
      <Fact label="Last access">{formatSince(d.lastAccessAt)}</Fact>
      <Fact label="Imported">{new Date(d.createdAt).toLocaleString()}</Fact>
      <Fact label="ETag">{d.etag ? <Code>{d.etag}</Code> : '—'}</Fact>
      <Fact label="Last modified">{d.lastModified ?? '—'}</Fact>
    </SimpleGrid>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Paper withBorder p="md" component="section" aria-label={title}>
      <Title order={4} mb="sm">
        {title}
      </Title>
      {children}
    </Paper>
  );
}

/** One dataset: facts, actions, placement map, throughput history and its transfers. */
export function DatasetPage() {
  const id = useParams().id!;
  const dataset = useDataset(id);
  const placement = usePlacement(id);
  const importing = dataset.data?.state === 'importing';
  const throughput = useThroughput(id, importing);
  const persisted = useHistory('dataset_rate', id, importing ? 5_000 : 60_000);
  const transfers = useTransfers();
  const navigate = useNavigate();
  const nameOf = usePrincipalNames();
  if (dataset.isPending) return <Loading label="Loading the dataset…" />;
  if (dataset.isError) return <ErrorAlert error={dataset.error} />;
  const d = dataset.data;
  const mine = (transfers.data ?? []).filter((t) => t.datasetId === id);
  const parent = d.path.split('/').slice(0, -1).join('/');
  return (
    <Stack gap="md">
      <Group justify="space-between" align="start">
        <Stack gap={4}>
          <Anchor
            component={Link}
            to={parent ? `/datasets?path=${encodeURIComponent(parent)}` : '/datasets'}
            size="sm"
          >
            <BackIcon size={14} /> {parent || 'All datasets'}
          </Anchor>
          <Group gap="sm" wrap="nowrap" align="start">
            <Title order={2} style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
              {d.path}
            </Title>
            <StateBadge state={d.state} />
          </Group>
          <Text size="sm" c="dimmed" style={{ wordBreak: 'break-all' }}>
            from {d.sourceUri ?? 'no source'}
          </Text>
        </Stack>
        {/* Only those who may manage it (owner, its group's managers, admins) see these. */}
        {d.mayManage !== false && (
          <Group gap="xs">
            <ImportControls
              datasetId={d.id}
              name={d.path}
              state={d.state}
              onRetried={(res) => void navigate(`/datasets/${res.datasetId}`, { replace: true })}
            />
            <DatasetActions dataset={d} />
          </Group>
        )}
      </Group>
      {d.error && <ErrorAlert error={new Error(d.error)} title="The last import failed" />}
      <Paper withBorder p="md">
        <Facts d={d} />
      </Paper>
      <Section title="Owner and sharing">
        <SharingPanel dataset={d} />
      </Section>
      <Section title="How to read this dataset">
        <ReadPanel dataset={d} />
      </Section>
      <Section title="Placement">
        {placement.isPending ? (
          <Loading />
        ) : placement.isError ? (
          <ErrorAlert error={placement.error} />
        ) : (
          <PlacementMap placement={placement.data} />
        )}
      </Section>
      <Section title="Throughput">
        <TimeChart
          title="throughput"
          format={formatRate}
          minStepMs={(persisted.data?.sampleIntervalS ?? 1) * 1000}
          series={[
            {
              key: 'rate',
              label: 'import rate',
              color: 'indigo.6',
              points: mergeRatePoints(
                historyPoints(persisted.data, id),
                (throughput.data?.samples ?? []).map((s) => ({
                  at: Date.parse(s.at),
                  value: s.rate,
                })),
              ),
            },
          ]}
          emptyHint="The manager samples import throughput while the dataset imports; it is kept across restarts."
        />
      </Section>
      <Section title="Transfers">
        <TransferList
          transfers={mine}
          datasetNames={{ [id]: d.path }}
          donorNames={Object.fromEntries(
            (mine.map((t) => t.agentId).filter(Boolean) as string[]).map((a) => [a, nameOf(a)]),
          )}
        />
      </Section>
      <Section title="Failed attempts">
        <FailedAttempts datasetId={id} />
      </Section>
    </Stack>
  );
}
