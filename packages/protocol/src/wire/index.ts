/**
 * The morsel wire, both ends in one place (as Syncthing's lib/protocol): paths, header names,
 * the batch-frame codec, the lean morsel GET, and the lean HTTP/1.1 client pieces (head reader,
 * direct socket) that the donor client and the source range client share. Node only: imported
 * as `@freeloader/protocol/wire`, never from the package root the console uses.
 */
export * from './headers.js';
export * from './morsel-paths.js';
export * from './batch-frame.js';
export * from './lean-morsel-get.js';
export {
  HeadReader,
  LEAN_READ_BUFFER_BYTES,
  MAX_RESPONSE_HEAD_BYTES,
  parseResponseHead,
  type ResponseHead,
} from './http-head.js';
export { connectDirect, type DirectSocketOptions } from './direct-socket.js';
