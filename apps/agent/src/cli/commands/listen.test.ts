import { describe, expect, it } from 'vitest';
import { parseListen } from './listen.js';

describe('parseListen', () => {
  it.each([
    ['0.0.0.0:7401', '0.0.0.0', 7401],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['[::1]:80', '::1', 80],
    ['ws-12.lab:9000', 'ws-12.lab', 9000],
  ])('%s', (text, host, port) => expect(parseListen(text)).toEqual({ host, port }));

  it.each(['7401', 'host:', ':80', 'h:99999', 'h:x'])('rejects %j', (text) =>
    expect(() => parseListen(text)).toThrow(/HOST:PORT/),
  );

  it('names the option it parsed', () => {
    expect(() => parseListen('7402', '--settings')).toThrow(/^--settings must be HOST:PORT/);
  });
});
