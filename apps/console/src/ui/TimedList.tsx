import { Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';

/**
 * A newest-first list of things that happened (evictions, failed attempts): each item a line
 * starting with its local time, then `head`, and a second line `detail`.
 *
 * @example <TimedList label="eviction log" testId="eviction" items={log}
 *            keyOf={(e) => e.id} atOf={(e) => e.at} head={(e) => e.datasetPath} detail={(e) => why(e)} />
 */
export function TimedList<T>(props: {
  label: string;
  testId: string;
  items: readonly T[];
  keyOf: (item: T) => string | number;
  atOf: (item: T) => string;
  head: (item: T) => ReactNode;
  detail: (item: T) => ReactNode;
  detailColor?: string;
  detailTestId?: string;
}) {
  return (
    <Stack
      gap={6}
      component="ol"
      style={{ listStyle: 'none', padding: 0, margin: 0 }}
      aria-label={props.label}
    >
      {props.items.map((item) => (
        <li key={props.keyOf(item)} data-testid={props.testId}>
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            <Text span c="dimmed" size="xs">
              {new Date(props.atOf(item)).toLocaleString()}
            </Text>{' '}
            {props.head(item)}
          </Text>
          <Text
            size={props.detailColor ? 'sm' : 'xs'}
            c={props.detailColor ?? 'dimmed'}
            style={{ overflowWrap: 'anywhere' }}
            data-testid={props.detailTestId}
          >
            {props.detail(item)}
          </Text>
        </li>
      ))}
    </Stack>
  );
}
