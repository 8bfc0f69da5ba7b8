import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { certStillServes, createCa, issueServerCert, serialHex } from './certificates.js';
import { serverNames } from './server-names.js';
import { serveHttps } from '../start.js';

describe('the manager CA and its server certificate', () => {
  const ca = createCa('test CA', 30);
  const names = ['ws-17', 'localhost', '127.0.0.1', '::1'];
  const server = issueServerCert(ca, names, 10);

  it('issues a server certificate for every name, signed by a CA that signs nothing deeper', () => {
    const cert = new X509Certificate(server.certPem);
    const caCert = new X509Certificate(ca.certPem);
    expect(caCert.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkHost('ws-17')).toBe('ws-17');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkIP('::1')).toBeDefined();
    expect(certStillServes(server.certPem, ca.certPem, names, 1)).toBe(true);
  });

  it('asks for a new certificate when a name is missing, the CA differs or expiry is near', () => {
    expect(certStillServes(server.certPem, ca.certPem, [...names, 'cache.lab'], 1)).toBe(false);
    expect(certStillServes(server.certPem, createCa('other', 30).certPem, names, 1)).toBe(false);
    expect(certStillServes(server.certPem, ca.certPem, names, 30)).toBe(false);
  });

  it('names loopback and the listen address; every interface when listening on all', () => {
    expect(serverNames('10.0.0.5', ['Cache.Lab'])).toEqual(
      expect.arrayContaining(['10.0.0.5', '127.0.0.1', '::1', 'cache.lab', 'localhost']),
    );
    expect(serverNames('0.0.0.0')).not.toContain('0.0.0.0');
  });

  it('serves HTTPS beyond loopback by default, plain HTTP on loopback unless forced', () => {
    expect(serveHttps({ tls: 'auto', host: '0.0.0.0' })).toBe(true);
    expect(serveHttps({ tls: 'auto', host: '127.0.0.1' })).toBe(false);
    expect(serveHttps({ tls: 'auto', host: 'localhost' })).toBe(false);
    expect(serveHttps({ tls: 'on', host: '127.0.0.1' })).toBe(true);
    expect(serveHttps({ tls: 'off', host: '0.0.0.0' })).toBe(false);
  });
});

describe('serialHex', () => {
  it.each([
    ['00', '01'],
    ['0025', '0125'],
    ['7e00', '7f00'],
    ['7f00', '0100'],
    ['80ff', '02ff'],
    ['ffff', '02ff'],
  ])('%s → %s: first byte in 0x01–0x7f (positive, minimal DER)', (random, want) => {
    expect(serialHex(Buffer.from(random, 'hex'))).toBe(want);
  });

  it('makes a serial OpenSSL loads when the random begins with 0x00 (once broke 1 start in 512)', () => {
    const random = Buffer.alloc(16, 0x25);
    random[0] = 0;
    expect(serialHex(random)).toMatch(/^01/);
    const ca = createCa('serial test', 1);
    expect(() => new X509Certificate(ca.certPem)).not.toThrow();
  });
});
