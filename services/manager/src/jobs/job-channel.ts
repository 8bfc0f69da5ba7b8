import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import { attachJobNotifier, detachJobNotifier, type JobNotifier } from '../db/job-notices.js';
import { JobWaiters } from './job-waiters.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Open job channels of the agents connected to this manager. */
    jobWaiters: JobWaiters;
    /**
     * Told of every job queued through this app's pool. By default the local waiters; a
     * cross-manager fan-out replaces it (and calls `jobWaiters.notify` when told by others).
     */
    jobNotifier: JobNotifier;
  }
}

/**
 * Jobs pushed, not polled (issue 16 item 4): every job queued on this app's pool wakes its
 * agent's held `GET /jobs/wait`, after the job's transaction committed; jobs queued by other
 * managers of the database arrive through the event fan-out's LISTEN session (jobs channel).
 */
export default fp(
  async (app) => {
    const waiters = new JobWaiters();
    app.decorate('jobWaiters', waiters);
    app.decorate('jobNotifier', waiters as JobNotifier);
    new Gauge({
      name: 'freeloader_job_channels_open',
      help: 'Job channel waits (GET /jobs/wait) held open on this manager',
      registers: [app.metrics],
      collect() {
        this.set(waiters.open);
      },
    });
    // Looked up at each job, so a notifier set on the app later takes over. The origin marks
    // this manager's job NOTIFYs (its waiters heard of those jobs already); the id is decorated
    // by the event fan-out, registered after this plugin, hence read when a job is queued.
    attachJobNotifier(app.pg, {
      notify: (agentId) => app.jobNotifier.notify(agentId),
      get origin() {
        return app.hasDecorator('managerId') ? app.managerId : undefined;
      },
    });
    // Held waits would keep close() waiting up to JOB_WAIT_MS: answer them now.
    app.addHook('preClose', async () =>
      app.closeSteps.time('held job waits answered', () => waiters.close()),
    );
    app.addHook('onClose', async () => detachJobNotifier(app.pg));
  },
  { name: 'job-channel', dependencies: ['postgres', 'metrics'] },
);
