import { useState } from 'react';
import { Stack, Text, Title } from '@mantine/core';
import { useNavigate, useSearchParams } from 'react-router';
import type { ImportRequest, ImportResponse } from '@freeloader/protocol';
import { useImport } from '../api/queries';
import { ErrorAlert } from '../ui/feedback';
import { ImportForm } from './ImportForm';
import { ProbeResult } from './ProbeResult';

/**
 * Import in two steps: the form is checked, the manager probes the source (size, ETag, Range
 * support) and plans placement without creating anything; the user then confirms.
 */
export function ImportPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const probe = useImport();
  const start = useImport();
  const [probed, setProbed] = useState<{ request: ImportRequest; result: ImportResponse } | null>(
    null,
  );

  const onProbe = (request: ImportRequest) => {
    setProbed(null);
    start.reset();
    probe.mutate(request, { onSuccess: (result) => setProbed({ request, result }) });
  };
  const onConfirm = () => {
    if (!probed) return;
    start.mutate(
      { ...probed.request, dryRun: false },
      { onSuccess: () => void navigate('/transfers') },
    );
  };

  return (
    <Stack gap="md" maw={900}>
      <div>
        <Title order={2}>Import a dataset</Title>
        <Text size="sm" c="dimmed">
          Donors fetch the dataset from its source in 1 MiB morsels, striped so that reads come from
          many disks at once.
        </Text>
      </div>
      <ImportForm
        onProbe={onProbe}
        busy={probe.isPending}
        disabled={probed !== null}
        initial={{ folder: params.get('folder') ?? '', uri: params.get('uri') ?? '' }}
      />
      <ErrorAlert error={probe.error} />
      {probed && (
        <ProbeResult
          result={probed.result}
          name={probed.request.name ?? probed.result.probe.uri}
          busy={start.isPending}
          onConfirm={onConfirm}
          onEdit={() => {
            setProbed(null);
            start.reset();
          }}
        />
      )}
      <ErrorAlert error={start.error} title="The import could not start" />
    </Stack>
  );
}
