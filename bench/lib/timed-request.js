/**
 * One HTTP request through an undici dispatcher with the moments a latency is made of: `sentAt`
 * when undici writes it to a socket (its handler's `onConnect`, called just before the request
 * line is written), `firstByteAt` when the answer's headers arrive, `doneAt` when its body has.
 * The time from the call to `sentAt` is the load generator's own queue (a pool with no free
 * connection), which must not be counted as the manager's latency, nor hidden.
 *
 * @typedef {object} TimedAnswer
 * @property {number} statusCode
 * @property {string} text
 * @property {number} calledAt performance.now() ms
 * @property {number} sentAt
 * @property {number} firstByteAt
 * @property {number} doneAt
 *
 * @param {import('undici').Dispatcher} dispatcher
 * @param {import('undici').Dispatcher.DispatchOptions} opts
 * @returns {Promise<TimedAnswer>}
 * @example const a = await timedRequest(pool, { method: 'GET', path: '/health' }); a.doneAt - a.sentAt
 */
export function timedRequest(dispatcher, opts) {
  const calledAt = performance.now();
  return new Promise((resolve, reject) => {
    let sentAt = NaN;
    let firstByteAt = NaN;
    let statusCode = 0;
    /** @type {Buffer[]} */
    const chunks = [];
    dispatcher.dispatch(opts, {
      onConnect() {
        sentAt = performance.now();
      },
      onHeaders(status) {
        firstByteAt = performance.now();
        statusCode = status;
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        resolve({
          statusCode,
          text: Buffer.concat(chunks).toString('utf8'),
          calledAt,
          sentAt,
          firstByteAt,
          doneAt: performance.now(),
        });
      },
      onError(err) {
        reject(err);
      },
    });
  });
}
