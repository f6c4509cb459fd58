// The browser host's address and token, kept beside its database so `slotscope serve` restarted on
// the same data folder answers the tabs it served before (same port, same token) instead of stranding them.

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createToken } from './security';

/** The file, in the data folder: readable and writable by its owner only (0600), as the token is a secret. */
export const HOST_IDENTITY_FILE = 'browser-host.json';

export interface HostIdentity {
  /** The token every request must carry (in the URL once, then as a cookie). */
  readonly token: string;
  /** The port of the last run; null before the first. */
  readonly port: number | null;
}

const isToken = (v: unknown): v is string => typeof v === 'string' && /^[\w-]{32,128}$/.test(v);
const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0 && (v as number) <= 65535;

/** The identity kept in `dataDir`, or a new one (written at once, 0600) when there is none or it cannot be read. */
export function loadHostIdentity(dataDir: string): HostIdentity {
  const file = join(dataDir, HOST_IDENTITY_FILE);
  try {
    const j = JSON.parse(readFileSync(file, 'utf8')) as { token?: unknown; port?: unknown };
    if (isToken(j.token)) {
      // A copy made with wider permissions (a backup restored, an editor) is narrowed again.
      chmodSync(file, 0o600);
      return { token: j.token, port: isPort(j.port) ? j.port : null };
    }
  } catch {
    /* missing or unreadable: a new identity */
  }
  const fresh: HostIdentity = { token: createToken(), port: null };
  saveHostIdentity(dataDir, fresh);
  return fresh;
}

/** Writes the identity (0600, replaced whole so a crash never leaves half a file). */
export function saveHostIdentity(dataDir: string, identity: HostIdentity): void {
  const file = join(dataDir, HOST_IDENTITY_FILE);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ token: identity.token, port: identity.port })}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}
