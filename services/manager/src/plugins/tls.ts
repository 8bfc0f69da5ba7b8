import fp from 'fastify-plugin';

/** The CA agents and the CLI pin for this manager, and whether it serves HTTPS. */
export interface ManagerTrust {
  caPem: string;
  /** `sha256:<hex>` of the CA certificate: join tokens carry it. */
  fingerprint: string;
  https: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when the app was built without TLS material (tests driving `app.inject`). */
    managerTrust: ManagerTrust | null;
  }
}

/** Makes the manager's CA (see tls/tls-material.ts) available as `app.managerTrust`. */
export default fp<{ trust: ManagerTrust | null }>(
  async (app, opts) => {
    app.decorate('managerTrust', opts.trust);
  },
  { name: 'tls' },
);
