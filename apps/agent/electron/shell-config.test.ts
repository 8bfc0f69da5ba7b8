import { describe, expect, it } from 'vitest';
import { defaultShellConfig, parseShellConfig } from './shell-config.js';

const d = defaultShellConfig('/u/.config/FreeLoader', '/u');

describe('parseShellConfig', () => {
  it.each([
    ['defaults are opt-in for login start', '{}', d],
    [
      'known fields override',
      '{"startAtLogin":true,"dir":"/data/fl"}',
      { ...d, startAtLogin: true, dir: '/data/fl' },
    ],
    ['wrong types are ignored', '{"startAtLogin":"yes","dir":7}', d],
    ['a damaged file falls back to defaults', '{"startAt', d],
  ])('%s', (_name, text, expected) => {
    expect(parseShellConfig(text, d)).toEqual(expected);
  });

  it('puts the agent under the app data directory and the drive in home', () => {
    expect(d).toEqual({
      dir: '/u/.config/FreeLoader/agent',
      startAtLogin: false,
      startMinimized: true,
      mountDir: '/u/FreeLoader',
    });
  });
});
