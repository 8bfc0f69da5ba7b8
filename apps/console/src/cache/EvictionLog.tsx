import { Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import type { EvictionLogEntry } from '@freeloader/protocol';
import { formatBytes } from '../format';
import { EmptyState, ErrorAlert, Loading } from '../ui/feedback';
import { TimedList } from '../ui/TimedList';
import { useEvictionLog } from './queries';

const WHAT: Record<EvictionLogEntry['kind'], string> = {
  trim: 'trimmed to its prefix',
  evict: 'evicted',
  extend: 'extended',
};

/** Why a cut happened, in words, naming the import (and its user) that needed the room. */
export function evictionWhy(e: EvictionLogEntry): string {
  if (e.kind === 'extend') return 'read often, and the cache had room';
  switch (e.reason) {
    case 'import':
      return `to make room for ${e.forPath ?? 'an import'}${e.forUserName ? ` (imported by ${e.forUserName})` : ''}`;
    case 'watermark':
      return 'the cache passed its high watermark';
    case 'admin':
      return `cut by ${e.forUserName ?? 'an admin'}`;
    default:
      return 'reason not recorded';
  }
}

/** The eviction log: what was cut, when, how much, and why (for which import, by whom). */
export function EvictionLog() {
  const log = useEvictionLog();
  if (log.isPending) return <Loading label="Loading the eviction log…" />;
  if (log.isError) return <ErrorAlert error={log.error} />;
  if (log.data.length === 0) {
    return (
      <EmptyState title="Nothing evicted yet">
        When an import needs room or the cache fills past its high watermark, the least recently
        read datasets are trimmed or evicted; each cut is listed here with its reason.
      </EmptyState>
    );
  }
  return (
    <TimedList
      label="eviction log"
      testId="eviction"
      detailTestId="eviction-why"
      items={log.data}
      keyOf={(e) => e.id}
      atOf={(e) => e.at}
      head={(e) => (
        <>
          {e.datasetId ? (
            <Anchor component={Link} to={`/datasets/${e.datasetId}`} size="sm" fw={600}>
              {e.datasetPath ?? e.datasetId.slice(0, 8)}
            </Anchor>
          ) : (
            <Text span fw={600}>
              {e.datasetPath ?? 'a deleted dataset'}
            </Text>
          )}{' '}
          {WHAT[e.kind]} ({formatBytes(e.bytes)})
        </>
      )}
      detail={evictionWhy}
    />
  );
}
