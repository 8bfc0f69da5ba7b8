import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { renderUi } from '../test/render';
import { ImportForm } from './ImportForm';

type Fill = Partial<
  Record<'Source URI' | 'Folder' | 'Name' | 'Stripe width' | 'Stripe size', string>
>;

async function fillAndProbe(fill: Fill) {
  const onProbe = vi.fn();
  const user = userEvent.setup({ delay: null });
  renderUi(<ImportForm onProbe={onProbe} />);
  for (const [label, value] of Object.entries(fill)) {
    const input = screen.getByRole('textbox', { name: new RegExp(`^${label}`) });
    await user.clear(input);
    if (value) await user.type(input, value);
  }
  await user.click(screen.getByRole('button', { name: 'Probe source' }));
  return onProbe;
}

describe('ImportForm validation', () => {
  it.each<[string, Fill, RegExp]>([
    ['an empty URI', {}, /Enter the URI of the dataset/],
    [
      'a URI without a scheme',
      { 'Source URI': 'data.example.org/x.nc' },
      /Start the URI with its scheme/,
    ],
    [
      'an unsupported scheme',
      { 'Source URI': 'gopher://host/x.nc' },
      /imports from http:\/\/ or https:\/\/ URIs, not gopher:/,
    ],
    ['spaces in the URI', { 'Source URI': 'https://host/my file.nc' }, /cannot contain spaces/],
    ['a folder URI', { 'Source URI': 'https://host/data/' }, /must name a file/],
    [
      'an empty folder segment',
      { 'Source URI': 'https://h/x.nc', Folder: 'a//b' },
      /Empty folder names/,
    ],
    [
      'a ".." folder',
      { 'Source URI': 'https://h/x.nc', Folder: 'a/..' },
      /"\." and "\.\." are not allowed/,
    ],
    [
      'a slash in the name',
      { 'Source URI': 'https://h/x.nc', Name: 'a/b' },
      /the name has no "\/"/,
    ],
    [
      'a zero stripe width',
      { 'Source URI': 'https://h/x.nc', 'Stripe width': '0' },
      /Stripe width must be a whole number from 1 to 64/,
    ],
    [
      'a huge stripe size',
      { 'Source URI': 'https://h/x.nc', 'Stripe size': '5000' },
      /Stripe size must be a whole number from 1 to 1024/,
    ],
  ])('refuses %s with a message next to the field', async (_what, fill, message) => {
    const onProbe = await fillAndProbe(fill);
    expect(await screen.findByText(message)).toBeInTheDocument();
    expect(onProbe).not.toHaveBeenCalled();
  });

  it.each<[string, Fill, object]>([
    [
      'a bare URI, named after its file at the top level',
      { 'Source URI': 'https://data.example.org/cmip6/tas%202020.nc' },
      {
        uri: 'https://data.example.org/cmip6/tas%202020.nc',
        name: 'tas 2020.nc',
        dryRun: true,
      },
    ],
    [
      'folder, name and stripes',
      {
        'Source URI': ' http://h:8080/d.bin ',
        Folder: '/climate/cmip6/',
        Name: 'run42.h5',
        'Stripe width': '3',
        'Stripe size': '4',
      },
      {
        uri: 'http://h:8080/d.bin',
        name: 'climate/cmip6/run42.h5',
        width: 3,
        stripeSize: 4,
        dryRun: true,
      },
    ],
  ])('asks the manager to probe %s', async (_what, fill, request) => {
    const onProbe = await fillAndProbe(fill);
    expect(onProbe).toHaveBeenCalledTimes(1);
    expect(onProbe).toHaveBeenCalledWith(request);
    expect(screen.queryByRole('alert')).toBeNull();
  });
});

describe('ImportForm hints', () => {
  // file:// is an admin opt-in (off by default): the form must not offer it to every user.
  it('the URI hint names http:// and https:// and never file://', () => {
    renderUi(<ImportForm onProbe={vi.fn()} />);
    const uri = screen.getByRole('textbox', { name: /^Source URI/ });
    const hint = document.getElementById(uri.getAttribute('aria-describedby')!.split(' ')[0]!);
    expect(hint?.textContent).toMatch(/http:\/\/ or https:\/\//);
    expect(document.body.textContent).not.toContain('file://');
  });
});
