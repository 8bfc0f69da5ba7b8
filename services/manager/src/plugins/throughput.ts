import fp from 'fastify-plugin';
import { ThroughputRecorder } from '../throughput.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Recent per-dataset import throughput, fed by the event bus (memory only). */
    throughput: ThroughputRecorder;
  }
}

/** Record every transfer event into the in-memory throughput history. */
export default fp(
  async (app) => {
    const recorder = new ThroughputRecorder();
    app.decorate('throughput', recorder);
    const unsubscribe = app.events.subscribeAll((e) => recorder.record(e));
    app.addHook('onClose', async () => unsubscribe());
  },
  { name: 'throughput', dependencies: ['soft-state'] },
);
