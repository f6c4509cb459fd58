// Finds the Electron binary the optional `electron` package downloaded, without requiring the
// package: `npm start`, the Electron tests and benchmarks decide between Electron and browser mode.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ElectronBinary =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly reason: string };

/**
 * `<root>/node_modules/electron/dist/<path.txt>` (what the package's index.js returns) when
 * path.txt exists and names a file that exists; otherwise why not, in words.
 */
export function findElectronBinary(root: string): ElectronBinary {
  const pkg = join(root, 'node_modules', 'electron');
  const pathFile = join(pkg, 'path.txt');
  if (!existsSync(pathFile)) {
    return { ok: false, reason: `no Electron binary: ${pathFile} is missing (the optional electron package or its download failed)` };
  }
  const relative = readFileSync(pathFile, 'utf8').trim();
  const binary = join(pkg, 'dist', relative);
  if (relative === '' || !existsSync(binary)) {
    return { ok: false, reason: `no Electron binary: ${pathFile} names ${binary}, which does not exist` };
  }
  return { ok: true, path: binary };
}

/** Electron needs a display on Linux; elsewhere there always is one. */
export function hasDisplay(env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'linux' || Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** Exit code of the Electron main when the core cannot load its native module (better-sqlite3 built for Node, not Electron). */
export const EXIT_NATIVE_MODULE = 3;

/**
 * Runs the Electron app (`binary main.js`) with this terminal, passing SIGINT/SIGTERM on, and
 * resolves with its exit code once it has quit (a signal death counts as 1).
 */
export function runElectron(binary: string, mainJs: string): Promise<number> {
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  const child = spawn(binary, [mainJs], { stdio: 'inherit', env });
  const forward = (signal: NodeJS.Signals) => () => void child.kill(signal);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code ?? 1);
    });
  });
}
