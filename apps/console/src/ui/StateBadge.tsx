import { Badge } from '@mantine/core';

const COLORS: Record<string, string> = {
  ready: 'teal',
  done: 'teal',
  live: 'teal',
  running: 'blue',
  importing: 'blue',
  queued: 'gray',
  stale: 'yellow',
  deleting: 'orange',
  cancelled: 'gray',
  failed: 'red',
  dead: 'red',
  revoked: 'dark',
  offline: 'yellow',
  lost: 'red',
  leaving: 'grape',
};

/** A state (dataset, job, donor) as a coloured badge; the text is the state itself. */
export function StateBadge({ state }: { state: string }) {
  return (
    <Badge
      color={COLORS[state] ?? 'gray'}
      variant="light"
      radius="sm"
      data-testid="state"
      // Never narrower than its word: a squeezed table cell must not cut "ready" to "R…".
      style={{ minWidth: 'max-content', flex: 'none' }}
    >
      {state}
    </Badge>
  );
}
