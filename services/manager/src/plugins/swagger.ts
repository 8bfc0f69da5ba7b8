import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { ErrorBodySchema } from '@freeloader/protocol';
import { MANAGER_VERSION } from '../version.js';

/** OpenAPI document from the route schemas, browsable at `/docs` (JSON at `/docs/json`). */
export default fp(
  async (app) => {
    app.addSchema(ErrorBodySchema);
    await app.register(swagger, {
      // Name shared schemas by their $id (components/schemas/ErrorBody), not def-0, def-1...
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) =>
          typeof json.$id === 'string' ? json.$id : `def-${i}`,
      },
      openapi: {
        info: {
          title: 'FreeLoader manager',
          description: 'Namespace, placement, reservations, jobs and soft state for FreeLoader.',
          version: MANAGER_VERSION,
        },
        components: {
          securitySchemes: {
            bearer: {
              type: 'http',
              scheme: 'bearer',
              description: 'A session token, or `agent.<agentId>.<credential>` for agents',
            },
            cookie: { type: 'apiKey', in: 'cookie', name: 'fl_session' },
          },
        },
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'swagger', dependencies: ['config'] },
);
