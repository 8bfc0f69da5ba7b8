import { useState } from 'react';
import {
  Button,
  Code,
  CopyButton,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import type { JoinTokenCreated } from '@freeloader/protocol';
import { useCreateToken, useRevokeToken, useTokens } from '../api/queries';
import { EmptyState, ErrorAlert, Loading } from '../ui/feedback';
import { useNow } from '../ui/useNow';

const TTLS = [
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
];

/** The command a donor runs to enroll with `token` (copy-paste ready). */
export function enrollCommand(origin: string, token: string): string {
  return `freeloader agent --manager ${origin} --token ${token} --dir ~/.freeloader/agent --quota 20GiB`;
}

function Created({ created, onClose }: { created: JoinTokenCreated; onClose: () => void }) {
  const command = enrollCommand(window.location.origin, created.token);
  return (
    <Modal opened onClose={onClose} title="Join token created" size="lg" centered>
      <Stack>
        <Text size="sm">This secret is shown only now. Run this on the donor workstation:</Text>
        <Code block data-testid="enroll-command">
          {command}
        </Code>
        <Group justify="flex-end">
          <CopyButton value={command}>
            {({ copied, copy }) => (
              <Button onClick={copy} color={copied ? 'teal' : undefined}>
                {copied ? 'Copied' : 'Copy command'}
              </Button>
            )}
          </CopyButton>
          <CopyButton value={created.token}>
            {({ copied, copy }) => (
              <Button variant="default" onClick={copy}>
                {copied ? 'Copied' : 'Copy token only'}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Create, list and revoke join tokens. */
export function JoinTokens() {
  const tokens = useTokens();
  const create = useCreateToken();
  const revoke = useRevokeToken();
  const [note, setNote] = useState('');
  const [uses, setUses] = useState<number | string>(1);
  const [ttl, setTtl] = useState<string | null>('604800');
  const [created, setCreated] = useState<JoinTokenCreated | null>(null);
  const now = useNow();
  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    create.mutate(
      {
        ttlSeconds: Number(ttl),
        maxUses: Number(uses) || 1,
        ...(note.trim() ? { note: note.trim() } : {}),
      },
      {
        onSuccess: (t) => {
          setCreated(t);
          setNote('');
        },
      },
    );
  };
  return (
    <Stack gap="sm">
      <Title order={3}>Join tokens</Title>
      <form onSubmit={submit} aria-label="create a join token">
        <Group align="end" gap="sm">
          <TextInput
            label="Note"
            placeholder="lab-ws-12"
            value={note}
            onChange={(e) => setNote(e.currentTarget.value)}
            maxLength={200}
          />
          <NumberInput
            label="Uses"
            min={1}
            max={10000}
            w={90}
            value={uses}
            onChange={setUses}
            allowDecimal={false}
          />
          <Select
            label="Expires after"
            data={TTLS}
            w={130}
            value={ttl}
            onChange={setTtl}
            allowDeselect={false}
          />
          <Button type="submit" loading={create.isPending}>
            Create token
          </Button>
        </Group>
      </form>
      <ErrorAlert error={create.error ?? revoke.error} />
      {created && <Created created={created} onClose={() => setCreated(null)} />}
      {tokens.isPending ? (
        <Loading />
      ) : tokens.isError ? (
        <ErrorAlert error={tokens.error} />
      ) : tokens.data.length === 0 ? (
        <EmptyState title="No join tokens">
          A token lets donors enroll; it is stored hashed and shown once.
        </EmptyState>
      ) : (
        <Table aria-label="join tokens" fz="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Note</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Uses</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {tokens.data.map((t) => {
              const expired = Date.parse(t.expiresAt) < now;
              const state = t.revoked
                ? 'revoked'
                : expired
                  ? 'expired'
                  : t.uses >= t.maxUses
                    ? 'used up'
                    : 'active';
              return (
                <Table.Tr key={t.id}>
                  <Table.Td>
                    {t.note ?? (
                      <Text span c="dimmed">
                        —
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{state}</Table.Td>
                  <Table.Td>
                    {t.uses}/{t.maxUses}
                  </Table.Td>
                  <Table.Td>{new Date(t.expiresAt).toLocaleString()}</Table.Td>
                  <Table.Td>
                    {state === 'active' && (
                      <Button
                        size="compact-xs"
                        variant="subtle"
                        color="red"
                        onClick={() => revoke.mutate(t.id)}
                        aria-label={`revoke token ${t.note ?? t.id}`}
                      >
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
