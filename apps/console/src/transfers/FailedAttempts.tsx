import { Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import { usePrincipalNames } from '../api/principals';
import { EmptyState, ErrorAlert, Loading } from '../ui/feedback';
import { TimedList } from '../ui/TimedList';
import { useFailedAttempts } from './control';

/**
 * Failed jobs, newest first: when, on which donor, for which dataset, and the donor's message.
 * With `datasetId`, only that dataset's (its earlier attempts survive a retry).
 */
export function FailedAttempts({ datasetId }: { datasetId?: string }) {
  const failures = useFailedAttempts(datasetId);
  const nameOf = usePrincipalNames();
  if (failures.isPending) return <Loading label="Loading failed attempts…" />;
  if (failures.isError) return <ErrorAlert error={failures.error} />;
  if (failures.data.length === 0) {
    return (
      <EmptyState title="No failed attempts">
        When a donor cannot fetch or store its part of an import, its error shows up here.
      </EmptyState>
    );
  }
  return (
    <TimedList
      label="failed attempts"
      testId="failed-attempt"
      detailColor="red"
      items={failures.data}
      keyOf={(f) => f.jobId}
      atOf={(f) => f.at}
      head={(f) => (
        <>
          <Text span fw={600}>
            {f.agentName ?? nameOf(f.agentId)}
          </Text>
          {!datasetId && f.datasetId && (
            <>
              {' · '}
              <Anchor component={Link} to={`/datasets/${f.datasetId}`} size="sm">
                {f.datasetPath ?? f.datasetId.slice(0, 8)}
              </Anchor>
            </>
          )}
          {' · '}
          {f.kind}
        </>
      )}
      detail={(f) => f.error}
    />
  );
}
