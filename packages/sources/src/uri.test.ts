import { describe, expect, it } from 'vitest';
import { MAX_URI_LENGTH } from '@freeloader/protocol';
import { parseSourceUri, redactUri } from './uri.js';

describe('parseSourceUri', () => {
  it.each([
    ['http://127.0.0.1:8080/a/b.h5', {}, 'http://127.0.0.1:8080/a/b.h5'],
    ['https://data.example.org/run%2042.h5?v=2', {}, 'https://data.example.org/run%2042.h5?v=2'],
    ['https://bob:pw@data.example.org/x', {}, 'https://bob:pw@data.example.org/x'],
    ['file:///data/x.h5', { allowFile: true }, 'file:///data/x.h5'],
    ['file://localhost/data/x.h5', { allowFile: true }, 'file:///data/x.h5'],
    ['s3://bucket/key', { schemes: ['s3'] }, 's3://bucket/key'],
  ])('accepts %s', (text, opts, href) => {
    expect(parseSourceUri(text, opts).href).toBe(href);
  });

  it.each([
    ['', {}, 'BAD_URI', /empty/],
    ['not a uri', {}, 'BAD_URI', /not a valid URI/],
    ['http://', {}, 'BAD_URI', /not a valid URI/],
    ['file://otherhost/x', { allowFile: true }, 'BAD_URI', /remote host/],
    ['ftp://h/x', {}, 'UNSUPPORTED_SCHEME', /unsupported scheme "ftp"; supported: http, https$/],
    [
      'file:///etc/passwd',
      {},
      'UNSUPPORTED_SCHEME',
      /^file:\/\/ sources are off; an admin allows them by starting the manager and its agents with FREELOADER_ALLOW_FILE_URIS=true \(supported now: http, https\)$/,
    ],
    ['sftp://h/x', { schemes: ['http', 'sftp'] }, null, null],
    ['gopher://h/x', { schemes: ['http', 'sftp'] }, 'UNSUPPORTED_SCHEME', /supported: http, sftp/],
  ])('%s → %s', (text, opts, code, message) => {
    if (code === null) return void expect(() => parseSourceUri(text, opts)).not.toThrow();
    expect(() => parseSourceUri(text, opts)).toThrow(expect.objectContaining({ code }));
    expect(() => parseSourceUri(text, opts)).toThrow(message);
  });

  it('rejects URIs over MAX_URI_LENGTH', () => {
    const long = 'https://h/' + 'a'.repeat(MAX_URI_LENGTH);
    expect(() => parseSourceUri(long)).toThrow(/longer than 8192 characters/);
    expect(() => parseSourceUri(long.slice(0, MAX_URI_LENGTH))).not.toThrow();
  });

  it('never echoes a password in an error', () => {
    const text = 'https://bob:s3cret@ bad host/x';
    expect(() => parseSourceUri(text)).toThrow(/bob:\*\*\*@/);
    expect(() => parseSourceUri(text)).not.toThrow(/s3cret/);
  });
});

describe('redactUri', () => {
  it.each([
    ['https://h/x', 'https://h/x'],
    ['https://bob:hunter2@h/x', 'https://bob:***@h/x'],
    ['https://bob@h/x', 'https://bob@h/x'],
    [
      'https://h/x?X-Amz-Signature=abc&X-Amz-Credential=AK%2F1&part=1',
      'https://h/x?X-Amz-Signature=***&X-Amz-Credential=***&part=1',
    ],
    ['https://h/x?sig=1&token=2&apikey=3&n=4', 'https://h/x?sig=***&token=***&apikey=***&n=4'],
    ['not a url://bob:pw@h/x?token=t', 'not a url://bob:***@h/x?token=***'],
  ])('%s → %s', (uri, redacted) => {
    expect(redactUri(uri)).toBe(redacted);
  });

  it('accepts a URL object and leaves it untouched', () => {
    const url = new URL('https://a:b@h/');
    expect(redactUri(url)).toBe('https://a:***@h/');
    expect(url.password).toBe('b');
  });
});
