import { Button, Group, NumberInput, Select, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useForm } from '@mantine/form';
import type { ImportRequest } from '@freeloader/protocol';
import {
  EMPTY_IMPORT,
  nameFromUri,
  toImportRequest,
  validateImport,
  type ImportFormValues,
} from './validate';
import { HostAgentField } from './HostAgentField';

export interface ImportFormProps {
  /** Called with a dry-run request once the form is valid. */
  onProbe: (request: ImportRequest) => void;
  initial?: Partial<ImportFormValues>;
  busy?: boolean;
  /** Locks the fields while a probe result awaits confirmation. */
  disabled?: boolean;
}

const POLICIES = [
  { value: 'auto', label: 'Automatic' },
  { value: 'round-robin', label: 'Round robin' },
  { value: 'predictive', label: 'Predictive (by donor speed)' },
  { value: 'asymmetric', label: 'Asymmetric (keep part on my workstation)' },
];

/**
 * The import form: URI, where it goes in the namespace, stripe width and size, and placement
 * policy. Everything is checked before the manager is asked to probe the source.
 */
export function ImportForm({ onProbe, initial, busy = false, disabled = false }: ImportFormProps) {
  const form = useForm<ImportFormValues>({
    mode: 'controlled',
    initialValues: { ...EMPTY_IMPORT, ...initial },
    validate: validateImport,
    validateInputOnBlur: true,
  });
  const defaultName = nameFromUri(form.values.uri);
  return (
    <form onSubmit={form.onSubmit((values) => onProbe(toImportRequest(values, true)))} noValidate>
      <Stack gap="sm">
        <TextInput
          label="Source URI"
          description="An http:// or https:// address of one file"
          placeholder="https://data.example.org/cmip6/tas_day_2020.nc"
          required
          data-autofocus
          disabled={disabled}
          {...form.getInputProps('uri')}
        />
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <TextInput
            label="Folder"
            description="Where it goes in the namespace; empty for the top level"
            placeholder="climate/cmip6"
            disabled={disabled}
            {...form.getInputProps('folder')}
          />
          <TextInput
            label="Name"
            description="Defaults to the file name in the URI"
            placeholder={defaultName || 'tas_day_2020.nc'}
            disabled={disabled}
            {...form.getInputProps('name')}
          />
        </SimpleGrid>
        <SimpleGrid cols={{ base: 1, sm: 4 }}>
          <NumberInput
            label="Stripe width"
            description="Donors read in parallel (empty: all live, up to 8)"
            placeholder="auto"
            allowDecimal={false}
            allowNegative={false}
            disabled={disabled}
            {...form.getInputProps('width')}
          />
          <NumberInput
            label="Stripe size"
            description="Consecutive 1 MiB morsels per donor (empty: 1)"
            placeholder="1"
            allowDecimal={false}
            allowNegative={false}
            disabled={disabled}
            {...form.getInputProps('stripeSize')}
          />
          <NumberInput
            label="Copies"
            description="Of each morsel, each on another donor (empty: the manager's default, 2)"
            placeholder="default"
            allowDecimal={false}
            allowNegative={false}
            disabled={disabled}
            {...form.getInputProps('replicas')}
          />
          <Select
            label="Placement policy"
            description="Automatic: by donor speed once reads were measured"
            data={POLICIES}
            allowDeselect={false}
            disabled={disabled}
            {...form.getInputProps('policy')}
          />
        </SimpleGrid>
        {form.values.policy === 'asymmetric' && (
          <HostAgentField inputProps={form.getInputProps('host')} disabled={disabled} />
        )}
        <Group justify="flex-end">
          <Button type="submit" loading={busy} disabled={disabled}>
            Probe source
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
