// The default data folder on each platform, and the database file path that creates it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { defaultDatabaseFile, defaultDataDir } from '../../../electron/core/store/data-dir';
import { freshDir } from './helpers';

it('follows each platform convention', () => {
  expect(defaultDataDir('Slotscope', { platform: 'linux', env: {}, home: '/home/ann' })).toBe('/home/ann/.local/share/slotscope');
  expect(defaultDataDir('Slotscope', { platform: 'linux', env: { XDG_DATA_HOME: '/data/x' }, home: '/home/ann' })).toBe('/data/x/slotscope');
  expect(defaultDataDir('Slotscope', { platform: 'linux', env: { XDG_DATA_HOME: 'relative' }, home: '/home/ann' })).toBe(
    '/home/ann/.local/share/slotscope',
  );
  expect(defaultDataDir('Slotscope', { platform: 'darwin', env: {}, home: '/Users/ann' })).toBe('/Users/ann/Library/Application Support/Slotscope');
  expect(defaultDataDir('Slotscope', { platform: 'win32', env: { APPDATA: 'C:\\Users\\ann\\AppData\\Roaming' }, home: 'C:\\Users\\ann' })).toBe(
    'C:\\Users\\ann\\AppData\\Roaming\\Slotscope',
  );
  expect(defaultDataDir('Other', { platform: 'freebsd', env: {}, home: '/u' })).toBe('/u/.local/share/other');
});

it('creates the folder for the default database file', () => {
  const dir = join(freshDir(), 'a', 'b');
  expect(defaultDatabaseFile(dir)).toBe(join(dir, 'history.sqlite'));
  expect(existsSync(dir)).toBe(true);
});
