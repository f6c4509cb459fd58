// The browser host's token and port kept beside the database (issue 16): the same data folder gives
// the same token back, the file is its owner's only (0600), and a damaged file is replaced.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOST_IDENTITY_FILE, loadHostIdentity, saveHostIdentity } from '../../../electron/server/host-identity';

const dirs: string[] = [];
const folder = () => {
  const d = mkdtempSync(join(tmpdir(), 'slotscope-identity-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('host identity', () => {
  it('creates a token once, owner-only, and gives it back on every later start', () => {
    const dir = folder();
    const first = loadHostIdentity(dir);
    expect(first.token).toMatch(/^[\w-]{43}$/);
    expect(first.port).toBeNull();
    const file = join(dir, HOST_IDENTITY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    saveHostIdentity(dir, { token: first.token, port: 47001 });
    expect(loadHostIdentity(dir)).toEqual({ token: first.token, port: 47001 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('narrows a copy with wider permissions, and replaces a file it cannot read', () => {
    const dir = folder();
    const { token } = loadHostIdentity(dir);
    const file = join(dir, HOST_IDENTITY_FILE);
    chmodSync(file, 0o644);
    expect(loadHostIdentity(dir).token).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, '{"token": "short"', { mode: 0o600 });
    const fresh = loadHostIdentity(dir);
    expect(fresh.token).not.toBe(token);
    expect(JSON.parse(readFileSync(file, 'utf8')).token).toBe(fresh.token);
  });
});
