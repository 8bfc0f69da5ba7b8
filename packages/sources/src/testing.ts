/** Test helpers for other packages' integration tests: `@freeloader/sources/testing`. */
export {
  startTestServer,
  type SeenRequest,
  type TestServer,
  type TestServerOptions,
} from './test-server.js';
export { generateContent, selfSignedCert, type TestCert } from './test-content.js';
export { LOOPBACK_SOURCES } from './test-policy.js';
