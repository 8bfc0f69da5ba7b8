import cookie from '@fastify/cookie';
import fp from 'fastify-plugin';

/** Cookie parsing for the console's `fl_session` session cookie. */
export default fp(
  async (app) => {
    await app.register(cookie);
  },
  { name: 'cookie' },
);
