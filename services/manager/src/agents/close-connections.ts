import fp from 'fastify-plugin';

/** How often a closing manager closes the kept-alive connections that went idle since (ms). */
const IDLE_SWEEP_MS = 100;

/**
 * How long requests still running when the manager closes may take before their connections
 * are cut (ms): a claim or a heartbeat's database write takes milliseconds; a request still
 * running after this is stuck (a database gone away) and its client retries elsewhere.
 */
export const CLOSE_DRAIN_MAX_MS = 5_000;

/**
 * A closing manager lets go of every connection within {@link CLOSE_DRAIN_MAX_MS}. Node's
 * `server.close()` closes the connections idle at that instant and then waits for the others;
 * a connection whose answer was still being written (the job channel waits answered when the
 * manager closes, a heartbeat in flight) turns idle a moment later and is then kept until the
 * keep-alive timeout (72 s) or its client's: a manager holding 10,000 agents' channels took
 * more than 60 s to stop. So idle connections are closed every {@link IDLE_SWEEP_MS} from
 * `preClose` until the server has closed, and whatever remains after the bound is cut.
 */
export default fp(
  async (app, opts: { drainMaxMs?: number }) => {
    const drainMaxMs = opts.drainMaxMs ?? CLOSE_DRAIN_MAX_MS;
    let sweep: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    const stop = (): void => {
      clearInterval(sweep);
      clearTimeout(deadline);
    };
    app.addHook('preClose', (done) => {
      const server = app.server;
      // Built but never listening (tests with inject): no connections to close.
      if (!server.listening) return done();
      const t0 = performance.now();
      server.once('close', () => app.closeSteps.record('HTTP connections closed', t0));
      sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS).unref();
      deadline = setTimeout(() => {
        app.log.warn(`requests still running ${drainMaxMs} ms after close: connections cut`);
        server.closeAllConnections();
      }, drainMaxMs).unref();
      server.once('close', stop);
      done();
    });
    app.addHook('onClose', (_instance, done) => {
      stop();
      done();
    });
  },
  { name: 'close-connections' },
);
