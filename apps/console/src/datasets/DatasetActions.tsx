import { useState } from 'react';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import type { DatasetView } from '@freeloader/protocol';
import { formatBytes } from '../format';
import { ErrorAlert } from '../ui/feedback';
import { useDeleteDataset, useReimport } from './actions';

type Pending = 'delete' | 'reimport' | null;

/** Delete (evict) and re-import, each behind a confirmation dialog. */
export function DatasetActions({ dataset }: { dataset: DatasetView }) {
  const [pending, setPending] = useState<Pending>(null);
  const del = useDeleteDataset();
  const reimport = useReimport();
  const navigate = useNavigate();
  const parent = dataset.path.split('/').slice(0, -1).join('/');
  const busy = dataset.state === 'deleting' || del.isPending || reimport.isPending;

  const confirm = () => {
    if (pending === 'delete') {
      del.mutate(dataset.id, {
        onSuccess: () => {
          setPending(null);
          void navigate(parent ? `/datasets?path=${encodeURIComponent(parent)}` : '/datasets');
        },
      });
    } else if (pending === 'reimport') {
      reimport.mutate(dataset, {
        onSuccess: (res) => {
          setPending(null);
          if (res.dataset) void navigate(`/datasets/${res.dataset.id}`, { replace: true });
        },
      });
    }
  };
  const error = pending === 'delete' ? del.error : reimport.error;

  return (
    <>
      <Group gap="xs">
        <Button
          variant="default"
          disabled={busy || !dataset.sourceUri}
          onClick={() => setPending('reimport')}
        >
          Re-import
        </Button>
        <Button color="red" variant="light" disabled={busy} onClick={() => setPending('delete')}>
          Delete
        </Button>
      </Group>
      <Modal
        opened={pending !== null}
        onClose={() => setPending(null)}
        title={pending === 'delete' ? 'Delete this dataset?' : 'Re-import this dataset?'}
        centered
      >
        <Stack>
          <Text size="sm">
            {pending === 'delete'
              ? `Donors drop all ${formatBytes(dataset.sizeBytes)} of “${dataset.path}” from their disks. The source is not touched.`
              : `The cached copy of “${dataset.path}” is deleted, then imported again from ${dataset.sourceUri}.`}
          </Text>
          <ErrorAlert error={error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setPending(null)}>
              Cancel
            </Button>
            <Button
              color={pending === 'delete' ? 'red' : undefined}
              loading={del.isPending || reimport.isPending}
              onClick={confirm}
            >
              {pending === 'delete' ? 'Delete' : 'Re-import'}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
