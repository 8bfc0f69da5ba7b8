import { Stack, Title } from '@mantine/core';
import { AuditLog } from './AuditLog';
import { SourceAllowList } from './SourceAllowList';

/** Admins: which source hosts are allowed, and the audit log. */
export function SecurityPage() {
  return (
    <Stack gap="xl">
      <Title order={2}>Security</Title>
      <SourceAllowList />
      <AuditLog />
    </Stack>
  );
}
