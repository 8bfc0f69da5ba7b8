import { useState } from 'react';
import { Button, Code, Group, Stack, Text, Textarea, Title } from '@mantine/core';
import { ErrorAlert, Loading } from '../ui/feedback';
import { useSaveSourceAllow, useSourceAllow } from './queries';

/** One entry a line (commas work too), blanks dropped. */
function entriesOf(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((e) => e.trim())
    .filter((e) => e !== '');
}

/**
 * The hosts and networks sources may reach although they are loopback, private, link-local …:
 * imports naming other such addresses are refused (SOURCE_FORBIDDEN).
 */
export function SourceAllowList() {
  const view = useSourceAllow();
  // Here, not in the editor: a save restarts the editor, its outcome stays shown.
  const save = useSaveSourceAllow();
  if (view.isPending) return <Loading />;
  if (view.isError) return <ErrorAlert error={view.error} />;
  return (
    <Stack gap="sm">
      <Title order={3}>Allowed source hosts</Title>
      <Text size="sm" c="dimmed">
        Imports, probes and patching refuse loopback, private, link-local, multicast, unique-local,
        CGNAT and cloud-metadata addresses. Hosts and networks listed here are allowed all the same
        (a hostname, an IP address or a CIDR such as 10.20.0.0/16, one a line); donors learn the
        list with their next heartbeat.
      </Text>
      {view.data.fromEnvironment.length > 0 && (
        <Text size="sm">
          Also allowed by the manager&apos;s FREELOADER_SOURCE_ALLOW:{' '}
          <Code>{view.data.fromEnvironment.join(', ')}</Code>
        </Text>
      )}
      {/* A new saved list starts the editor afresh. */}
      <AllowEditor key={view.data.allow.join('\n')} saved={view.data.allow} save={save} />
    </Stack>
  );
}

/** The admin's entries, one a line, and Save. */
function AllowEditor({
  saved,
  save,
}: {
  saved: string[];
  save: ReturnType<typeof useSaveSourceAllow>;
}) {
  const [text, setText] = useState(saved.join('\n'));
  return (
    <form
      aria-label="allowed source hosts"
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate(entriesOf(text));
      }}
    >
      <Stack gap="xs">
        <Textarea
          label="Allowed hosts and networks"
          placeholder={'data.lab.internal\n10.20.0.0/16'}
          autosize
          minRows={3}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
        />
        {save.isError && <ErrorAlert error={save.error} title="Not saved" />}
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save allow list
          </Button>
          {save.isSuccess && (
            <Text size="sm" c="teal">
              Saved
            </Text>
          )}
        </Group>
      </Stack>
    </form>
  );
}
