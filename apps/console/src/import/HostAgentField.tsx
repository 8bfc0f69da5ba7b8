import { useState } from 'react';
import { Select, TextInput } from '@mantine/core';
import { MAX_AGENTS_PAGE } from '@freeloader/protocol';
import type { GetInputPropsReturnType } from '@mantine/form';
import { useAgentPage, useMe } from '../api/queries';

export interface HostAgentFieldProps {
  inputProps: GetInputPropsReturnType;
  disabled?: boolean;
}

/**
 * Asymmetric placement keeps part of the dataset on the importing workstation's own agent.
 * Admins pick it from the live donors (searched on the manager as they type: never the whole
 * list); others (who cannot list donors) paste its id, which
 * `freeloader agent` prints and the agent's identity.json holds.
 */
export function HostAgentField({ inputProps, disabled = false }: HostAgentFieldProps) {
  const { data: me } = useMe();
  const admin = me?.role === 'admin';
  const [search, setSearch] = useState('');
  const agents = useAgentPage({ state: 'live', q: search, limit: MAX_AGENTS_PAGE }, admin);
  const label = 'Host workstation';
  const description = 'Its own agent keeps part of the data, interleaved with the donors';
  if (!admin || agents.isError) {
    return (
      <TextInput
        label={label}
        description={`${description} (agent id)`}
        placeholder="0f0e0d0c-0b0a-4908-8706-050403020100"
        disabled={disabled}
        {...inputProps}
      />
    );
  }
  const data = (agents.data?.agents ?? [])
    .filter((a) => !a.bandwidthOnly)
    .map((a) => ({ value: a.id, label: `${a.name} (${a.id.slice(0, 8)})` }));
  return (
    <Select
      label={label}
      description={description}
      placeholder={agents.isLoading ? 'Loading donors…' : 'Choose its agent'}
      data={data}
      searchable
      searchValue={search}
      onSearchChange={setSearch}
      disabled={disabled}
      {...inputProps}
    />
  );
}
