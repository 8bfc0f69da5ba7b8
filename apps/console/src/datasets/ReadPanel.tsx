import { ActionIcon, Code, CopyButton, Group, Stack, Text, Tooltip } from '@mantine/core';
import type { DatasetView } from '@freeloader/protocol';
import { CheckIcon, CopyIcon } from '../ui/icons';
import { readCommands } from './read-commands';

function Command({ label, command }: { label: string; command: string }) {
  return (
    <Stack gap={2}>
      <Text size="sm">{label}</Text>
      <Group gap={4} wrap="nowrap" align="start">
        <Code
          block
          style={{ flex: 1, minWidth: 0, whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}
        >
          {command}
        </Code>
        <CopyButton value={command}>
          {({ copied, copy }) => (
            <Tooltip label={copied ? 'Copied' : 'Copy'} withArrow>
              <ActionIcon variant="subtle" onClick={copy} aria-label={`copy: ${command}`}>
                {copied ? <CheckIcon /> : <CopyIcon />}
              </ActionIcon>
            </Tooltip>
          )}
        </CopyButton>
      </Group>
    </Stack>
  );
}

/**
 * How to read a dataset: the exact `freeloader get` and `mount` commands for it and this
 * manager, each with a copy button. (A browser download needs an HTTP gateway, which the
 * manager does not have: it never carries data.)
 */
export function ReadPanel({ dataset }: { dataset: DatasetView }) {
  const c = readCommands(dataset.path, window.location.origin);
  if (dataset.state !== 'ready') {
    return (
      <Text size="sm" c="dimmed">
        This dataset can be read once it is ready (it is {dataset.state}).
      </Text>
    );
  }
  return (
    <Stack gap="sm">
      <Text size="sm">
        Reads go straight to the donors, in parallel, verified, with the <Code>freeloader</Code>{' '}
        command on your workstation. Sign it in once:
      </Text>
      <Command label="Sign in (once per machine)" command={c.login} />
      <Command label="Copy the dataset into a local file" command={c.get} />
      <Command label="Or mount every dataset as read-only files" command={c.mount} />
      <Text size="sm">
        then open <Code>{c.mountedPath}</Code> with any program;{' '}
        <Code>freeloader unmount ~/freeloader</Code> ends the mount.
      </Text>
    </Stack>
  );
}
