// Decides, without requiring the `electron` package, whether `npm start` can run the desktop app
// here, and if not names the real cause and its fix; the Electron tests and benchmarks use it too.

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Why the desktop app cannot start on this machine: the package is not in node_modules, its
 * binary was never downloaded (Electron ≥ 42 has no install step: `npx install-electron` fetches
 * it), Linux has no display, or better-sqlite3 is built for another ABI than this Electron's.
 */
export const ELECTRON_CAUSES = ['not-installed', 'not-downloaded', 'no-display', 'abi-mismatch'] as const;
export type ElectronCause = (typeof ELECTRON_CAUSES)[number];

export type ElectronBinary =
  | { readonly ok: true; readonly path: string; readonly version: string }
  | { readonly ok: false; readonly cause: ElectronCause; readonly reason: string };

export interface ElectronProblem {
  readonly cause: ElectronCause;
  /** What is wrong and what to do, in words. */
  readonly reason: string;
}

export type ElectronLaunch =
  | { readonly ok: true; readonly path: string; readonly version: string }
  | { readonly ok: false; readonly problems: readonly ElectronProblem[]; readonly reason: string };

/** The machine facts the checks read; injectable so every cause can be tested on any machine. */
export interface MachineFacts {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  /** The running Node's version (`process.versions.node`). */
  readonly nodeVersion?: string;
  /** The running Node's module ABI (`process.versions.modules`). */
  readonly nodeAbi?: string;
}

/** What downloads the binary: the electron package's own `install-electron` bin. */
export const DOWNLOAD_COMMAND = 'npx install-electron';
/** What rebuilds better-sqlite3 for Electron (and what undoes it, for the CLI and the Node tests). */
export const REBUILD_FOR_ELECTRON = 'npx electron-builder install-app-deps';
export const REBUILD_FOR_NODE = 'npm rebuild better-sqlite3';

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The lowest version a `>= x.y.z` range allows, or undefined for any other range. */
function minimumOf(range: unknown): string | undefined {
  return typeof range === 'string' ? /^\s*>=\s*v?(\d+\.\d+\.\d+)\s*$/.exec(range)?.[1] : undefined;
}

function older(a: string, b: string): boolean {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) < (pb[i] ?? 0);
  return false;
}

/**
 * `<root>/node_modules/electron/dist/<path.txt>` (what the package's index.js returns) when the
 * package is installed, path.txt names a file that exists and dist/version (when there) is the
 * package's version; otherwise the cause, in words, with what to do.
 */
export function findElectronBinary(root: string, facts: MachineFacts = {}): ElectronBinary {
  const pkgDir = join(root, 'node_modules', 'electron');
  const manifest = readText(join(pkgDir, 'package.json'));
  if (manifest === undefined) {
    return {
      ok: false,
      cause: 'not-installed',
      reason: `the electron package is not installed (${pkgDir} is missing): \`npm install\` installs it ` +
        '(it is a devDependency, so an install with --omit=dev leaves it out)',
    };
  }
  const pkg = JSON.parse(manifest) as { version?: string; engines?: { node?: string } };
  const version = String(pkg.version);
  const pathFile = join(pkgDir, 'path.txt');
  const relative = readText(pathFile)?.trim();
  const binary = relative ? join(pkgDir, 'dist', relative) : undefined;
  const distVersion = readText(join(pkgDir, 'dist', 'version'))?.trim().replace(/^v/, '');
  if (binary !== undefined && existsSync(binary) && (distVersion === undefined || distVersion === version)) {
    return { ok: true, path: binary, version };
  }
  const what = relative === undefined ? `${pathFile} is missing`
    : binary === undefined || !existsSync(binary) ? `${pathFile} names ${binary ?? 'nothing'}, which does not exist`
      : `${join(pkgDir, 'dist')} holds Electron ${distVersion}, not the package's ${version}`;
  const nodeVersion = facts.nodeVersion ?? process.versions.node;
  const minimum = minimumOf(pkg.engines?.node);
  const nodeNote = minimum !== undefined && older(nodeVersion, minimum)
    ? ` under Node >= ${minimum} (electron ${version} declares engines.node "${pkg.engines?.node}"; this is Node ${nodeVersion})`
    : '';
  return {
    ok: false,
    cause: 'not-downloaded',
    reason: `Electron ${version}'s binary is not downloaded (${what}): npm does not fetch it; \`${DOWNLOAD_COMMAND}\` does${nodeNote}, from Electron's releases on GitHub`,
  };
}

/** Electron needs a display on Linux; elsewhere there always is one. */
export function hasDisplay(env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'linux' || Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/**
 * The module ABI a native addon was built for, read from the name of its registration symbol
 * (`node_register_module_v<ABI>`, which Node and Electron both look up), without loading it;
 * undefined when the file is missing or carries no such symbol (a Node-API addon).
 */
export function addonAbi(file: string): string | undefined {
  try {
    return /node_register_module_v(\d+)/.exec(readFileSync(file).toString('latin1'))?.[1];
  } catch {
    return undefined;
  }
}

/** better-sqlite3's built addon under `root`. */
export function sqliteAddon(root: string): string {
  return join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
}

/**
 * Whether `npm start` can run the desktop app: the package and its binary (findElectronBinary), a
 * display on Linux, and better-sqlite3 built for this Electron's ABI (node_modules/electron/abi_version).
 * Every problem found is named, each with its fix, so one run tells all that stands in the way;
 * `reason` joins them.
 */
export function checkElectronLaunch(root: string, facts: MachineFacts = {}): ElectronLaunch {
  const binary = findElectronBinary(root, facts);
  if (!binary.ok && binary.cause === 'not-installed') return { ok: false, problems: [binary], reason: binary.reason };
  const problems: ElectronProblem[] = binary.ok ? [] : [binary];
  const version = binary.ok ? binary.version : String(JSON.parse(readText(join(root, 'node_modules', 'electron', 'package.json')) ?? '{}').version);
  const env = facts.env ?? process.env;
  if (!hasDisplay(env, facts.platform ?? process.platform)) {
    problems.push({
      cause: 'no-display',
      reason: 'no display (neither DISPLAY nor WAYLAND_DISPLAY is set) for the desktop app: start it from a desktop session, or under `xvfb-run -a npm start`',
    });
  }
  const electronAbi = readText(join(root, 'node_modules', 'electron', 'abi_version'))?.trim();
  const builtAbi = addonAbi(sqliteAddon(root));
  if (electronAbi && builtAbi && builtAbi !== electronAbi) {
    const nodeAbi = facts.nodeAbi ?? process.versions.modules;
    const builtFor = builtAbi === nodeAbi ? `this Node (${facts.nodeVersion ?? process.versions.node}, ABI ${builtAbi})` : `ABI ${builtAbi}`;
    problems.push({
      cause: 'abi-mismatch',
      reason: `better-sqlite3 is built for ${builtFor}, and Electron ${version} needs ABI ${electronAbi}: ` +
        `\`${REBUILD_FOR_ELECTRON}\` rebuilds it for Electron (\`${REBUILD_FOR_NODE}\` goes back, for the CLI, browser mode and the tests)`,
    });
  }
  if (!binary.ok || problems.length > 0) return { ok: false, problems, reason: problems.map((p) => p.reason).join('; and ') };
  return binary;
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
