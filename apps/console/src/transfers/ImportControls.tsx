import { useState } from 'react';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import type { ImportControlResult } from '@freeloader/protocol';
import { ErrorAlert } from '../ui/feedback';
import { RetryIcon, StopIcon } from '../ui/icons';
import { useCancelImport, useRetryImport } from './control';

/**
 * Cancel for an import in flight (behind a confirmation: the bytes fetched so far are dropped)
 * and Retry for a failed one. The manager allows them to an admin or the import's starter and
 * says so when it refuses.
 *
 * @example <ImportControls datasetId={id} name="climate/tas.nc" state="importing" />
 */
export function ImportControls({
  datasetId,
  name,
  state,
  onRetried,
}: {
  datasetId: string;
  name: string;
  /** The dataset's (or import group's) state: running/queued/importing, or failed. */
  state: string;
  onRetried?: (res: ImportControlResult) => void;
}) {
  const cancel = useCancelImport();
  const retry = useRetryImport();
  const [confirming, setConfirming] = useState(false);
  const inFlight = state === 'importing' || state === 'running' || state === 'queued';
  if (!inFlight && state !== 'failed') return null;
  return (
    <>
      <Group gap="xs" wrap="nowrap">
        {inFlight ? (
          <Button
            size="compact-sm"
            variant="light"
            color="red"
            leftSection={<StopIcon size={14} />}
            onClick={() => setConfirming(true)}
            aria-label={`cancel import of ${name}`}
          >
            Cancel
          </Button>
        ) : (
          <Button
            size="compact-sm"
            variant="light"
            leftSection={<RetryIcon size={14} />}
            loading={retry.isPending}
            onClick={() => retry.mutate(datasetId, { onSuccess: (res) => onRetried?.(res) })}
            aria-label={`retry import of ${name}`}
          >
            Retry
          </Button>
        )}
      </Group>
      {!inFlight && retry.error && (
        <ErrorAlert error={retry.error} title="The retry did not start" />
      )}
      <Modal
        opened={confirming}
        onClose={() => setConfirming(false)}
        title="Cancel this import?"
        centered
      >
        <Stack>
          <Text size="sm">
            The donors stop fetching “{name}”, drop what they have stored and give the space back.
            The dataset stays listed as failed, so you can retry it later.
          </Text>
          <ErrorAlert error={cancel.error} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              Keep importing
            </Button>
            <Button
              color="red"
              loading={cancel.isPending}
              onClick={() => cancel.mutate(datasetId, { onSuccess: () => setConfirming(false) })}
            >
              Cancel import
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
