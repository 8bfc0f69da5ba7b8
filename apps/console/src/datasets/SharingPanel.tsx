import { useState } from 'react';
import { Badge, Button, Checkbox, Group, Modal, Select, Stack, Text } from '@mantine/core';
import type { DatasetView } from '@freeloader/protocol';
import { ErrorAlert } from '../ui/feedback';
import { shareLabel, useGroups, useShare } from './sharing';

const SITE = '__site__';

/**
 * Owner and sharing of a dataset; those who may manage it get a share dialog and can remove
 * the dataset's own shares (inherited ones are removed on the folder they are set on).
 */
export function SharingPanel({ dataset: d }: { dataset: DatasetView }) {
  const [open, setOpen] = useState(false);
  const { share, unshare } = useShare(d.id);
  const shares = d.sharing ?? [];
  return (
    <Stack gap="xs" data-testid="sharing">
      <Text size="sm">
        Owner: <b>{d.owner ?? 'admins only'}</b>
      </Text>
      <Group gap="xs">
        {shares.length === 0 && (
          <Text size="sm" c="dimmed">
            Not shared: only its owner and admins can read it.
          </Text>
        )}
        {shares.map((s) => (
          <Badge
            key={`${s.groupId ?? 'site'}-${s.from}`}
            variant="light"
            rightSection={
              d.mayManage && s.from === d.path ? (
                <Button
                  size="compact-xs"
                  variant="subtle"
                  aria-label={`stop sharing with ${s.group ?? 'the site'}`}
                  onClick={() =>
                    unshare.mutate({ path: d.path, ...(s.group ? { group: s.group } : {}) })
                  }
                >
                  ×
                </Button>
              ) : undefined
            }
          >
            {shareLabel(s, d.path)}
          </Badge>
        ))}
      </Group>
      <ErrorAlert error={unshare.error} />
      {d.mayManage && (
        <Group>
          <Button variant="default" size="xs" onClick={() => setOpen(true)}>
            Share…
          </Button>
        </Group>
      )}
      <ShareDialog opened={open} onClose={() => setOpen(false)} path={d.path} share={share} />
    </Stack>
  );
}

function ShareDialog({
  opened,
  onClose,
  path,
  share,
}: {
  opened: boolean;
  onClose: () => void;
  path: string;
  share: ReturnType<typeof useShare>['share'];
}) {
  const groups = useGroups();
  const [target, setTarget] = useState<string | null>(SITE);
  const [manage, setManage] = useState(false);
  const isSite = target === SITE;
  const submit = () =>
    share.mutate({ path, ...(isSite ? {} : { group: target!, manage }) }, { onSuccess: onClose });
  return (
    <Modal opened={opened} onClose={onClose} title={`Share “${path}”`} centered>
      <Stack>
        <Select
          label="Share with"
          data={[
            { value: SITE, label: 'Everyone (site)' },
            ...(groups.data ?? []).map((g) => ({ value: g.name, label: g.name })),
          ]}
          value={target}
          onChange={setTarget}
          allowDeselect={false}
        />
        <Checkbox
          label="The group's managers may also delete, re-import, pin and re-share"
          checked={manage && !isSite}
          disabled={isSite}
          onChange={(e) => setManage(e.currentTarget.checked)}
        />
        <ErrorAlert error={share.error ?? groups.error} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button loading={share.isPending} onClick={submit}>
            Share
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
