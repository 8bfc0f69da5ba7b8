import type { ReactNode } from 'react';
import { Alert, Center, Loader, Stack, Text } from '@mantine/core';
import { ApiError } from '../api/client';

/** Plain-language titles for the error codes people meet in the console. */
const TITLES: Record<string, string> = {
  BAD_URI: 'That is not a URI FreeLoader can read',
  UNSUPPORTED_SCHEME: 'FreeLoader cannot import from that kind of URI',
  SOURCE_UNREACHABLE: 'The source could not be reached',
  SOURCE_ERROR: 'The source refused the request',
  SOURCE_FORBIDDEN: 'Sources may not reach that address',
  RATE_LIMITED: 'Too many attempts; wait a moment',
  NO_DONORS: 'No donor is available',
  NO_SPACE: 'The cache has no room for this dataset',
  ALREADY_EXISTS: 'That name is taken',
  FORBIDDEN: 'You may not do that',
  UNAUTHENTICATED: 'Your session has ended',
  VALIDATION_FAILED: 'Some input was not accepted',
  UNAVAILABLE: 'The manager is unreachable',
};

/** An error as a red alert: a plain title, the manager's message and its code. */
export function ErrorAlert({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : undefined;
  const message =
    error instanceof Error
      ? error.message
      : typeof error === 'string'
        ? error
        : JSON.stringify(error);
  return (
    <Alert
      color="red"
      variant="light"
      title={title ?? (code && TITLES[code]) ?? 'Something went wrong'}
      role="alert"
    >
      <Text size="sm">{message}</Text>
      {code && (
        <Text size="xs" c="dimmed" mt={4}>
          code {code}
        </Text>
      )}
    </Alert>
  );
}

/** A centred spinner with a label screen readers announce. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Stack align="center" gap="xs">
        <Loader size="sm" />
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Stack>
    </Center>
  );
}

/** What an empty list shows instead: a title, a hint, maybe an action. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Center py="xl">
      <Stack align="center" gap={6} maw={420}>
        <Text fw={600}>{title}</Text>
        {children && (
          <Text size="sm" c="dimmed" ta="center" component="div">
            {children}
          </Text>
        )}
      </Stack>
    </Center>
  );
}
