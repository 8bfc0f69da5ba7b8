import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { certStillServes, createCa, issueServerCert } from './certificates.js';
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
