import { Anchor, Breadcrumbs, Button, Group, Paper, Stack, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { Link, useSearchParams } from 'react-router';
import { useListing, useSearch, useTransfers } from '../api/queries';
import { EmptyState, ErrorAlert, Loading } from '../ui/feedback';
import { DatasetTable } from './DatasetTable';
import { importProgress } from './import-progress';

/** Browse the namespace as folders, or search every dataset by path. */
export function DatasetsPage() {
  const [params, setParams] = useSearchParams();
  const path = params.get('path') ?? '';
  const query = params.get('q') ?? '';
  const [debounced] = useDebouncedValue(query.trim(), 250);
  const listing = useListing(path);
  const search = useSearch(debounced);
  const searching = debounced.length > 0;
  const progress = importProgress(useTransfers().data ?? []);

  const set = (next: { path?: string; q?: string }) => {
    const p = new URLSearchParams();
    const nextPath = next.path ?? path;
    const nextQ = next.q ?? query;
    if (nextPath) p.set('path', nextPath);
    if (nextQ) p.set('q', nextQ);
    setParams(p, { replace: next.q !== undefined });
  };
  const crumbs = path ? path.split('/') : [];
  const current = searching ? search : listing;

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={2}>Datasets</Title>
        <Button
          component={Link}
          to={path ? `/import?folder=${encodeURIComponent(path)}` : '/import'}
        >
          Import a dataset
        </Button>
      </Group>
      <Group justify="space-between" align="end">
        <Breadcrumbs aria-label="folder">
          <Anchor component="button" type="button" onClick={() => set({ path: '', q: '' })}>
            All datasets
          </Anchor>
          {crumbs.map((name, i) => (
            <Anchor
              key={i}
              component="button"
              type="button"
              onClick={() => set({ path: crumbs.slice(0, i + 1).join('/') })}
            >
              {name}
            </Anchor>
          ))}
        </Breadcrumbs>
        <TextInput
          type="search"
          placeholder="Search by path…"
          aria-label="Search datasets"
          value={query}
          onChange={(e) => set({ q: e.currentTarget.value })}
          w={{ base: '100%', xs: 280 }}
        />
      </Group>
      <Paper withBorder p="xs">
        {current.isPending ? (
          <Loading label={searching ? 'Searching…' : 'Loading the folder…'} />
        ) : current.isError ? (
          <ErrorAlert error={current.error} />
        ) : searching ? (
          search.data!.length === 0 ? (
            <EmptyState title={`No dataset matches “${debounced}”`}>
              Search looks for the text anywhere in a dataset’s path.
            </EmptyState>
          ) : (
            <DatasetTable datasets={search.data!} fullPaths progress={progress} />
          )
        ) : listing.data!.folders.length + listing.data!.datasets.length === 0 ? (
          <EmptyState title={path ? 'This folder is empty' : 'No datasets yet'}>
            Import a dataset by its URI: FreeLoader stripes it over the donors’ disks so reads come
            from many machines at once.{' '}
            <Anchor component={Link} to="/import">
              Import one now
            </Anchor>
            .
          </EmptyState>
        ) : (
          <DatasetTable
            datasets={listing.data!.datasets}
            folders={listing.data!.folders}
            onOpenFolder={(p) => set({ path: p, q: '' })}
            progress={progress}
          />
        )}
      </Paper>
    </Stack>
  );
}
