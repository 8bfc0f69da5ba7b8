import { Group, Text, Tooltip } from '@mantine/core';
import { InfoIcon } from './icons';

/**
 * A label with a small info icon whose tooltip says, in plain words, what it means; keyboard
 * users reach it by tab (the icon is focusable) and screen readers read the explanation.
 *
 * @example <Hint label="Startup latency" hint="How long the source takes to answer anything" />
 */
export function Hint({ label, hint }: { label: React.ReactNode; hint: string }) {
  return (
    <Group gap={4} wrap="nowrap" component="span" style={{ display: 'inline-flex' }}>
      <span>{label}</span>
      <Tooltip
        label={hint}
        multiline
        w={280}
        withArrow
        openDelay={150}
        events={{ hover: true, focus: true, touch: true }}
      >
        <Text
          span
          c="dimmed"
          tabIndex={0}
          aria-label={hint}
          style={{ cursor: 'help', lineHeight: 0 }}
        >
          <InfoIcon size={14} />
        </Text>
      </Tooltip>
    </Group>
  );
}
