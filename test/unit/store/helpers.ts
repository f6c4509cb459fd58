// Shared set-up for the store tests: a fresh temporary folder per test, a bundle of the history
// worker and writer built from the current sources, and sample records.
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { onTestFinished } from 'vitest';
import type { ResponseRecord } from '../../../shared/types';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** A new empty folder, removed when the current test ends. */
export function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-store-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface StoreBundle {
  readonly dir: string;
  /** The bundled worker, passed to openHistoryWriter({ workerFile }). */
  readonly workerFile: URL;
  /** The bundled read worker, passed to openHistoryReads. */
  readonly readWorkerFile: URL;
  /** The bundled writer module (for child processes, which cannot load TypeScript). */
  readonly writerModule: URL;
  remove(): void;
}

/**
 * Bundles history-worker.ts and history-writer.ts like build/build.mjs does, into a private folder
 * under <root>/.tmp (inside the package so `better-sqlite3` resolves), so tests never run a stale dist/.
 */
export async function buildStoreBundle(): Promise<StoreBundle> {
  const base = join(ROOT, '.tmp', 'store-test');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'bundle-'));
  await build({
    absWorkingDir: ROOT,
    entryPoints: {
      'history-worker': join(ROOT, 'electron/core/store/history-worker.ts'),
      'history-writer': join(ROOT, 'electron/core/store/history-writer.ts'),
      'read-worker': join(ROOT, 'electron/core/store/read-worker.ts'),
    },
    outdir: dir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'warning',
  });
  return {
    dir,
    workerFile: pathToFileURL(join(dir, 'history-worker.js')),
    readWorkerFile: pathToFileURL(join(dir, 'read-worker.js')),
    writerModule: pathToFileURL(join(dir, 'history-writer.js')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A plausible response for request number `i`, with fields overridable. */
export function sampleResponse(i: number, over: Partial<ResponseRecord> = {}): ResponseRecord {
  const t = 1_700_000_000_000 + i * 10;
  return {
    t,
    startedAt: t - 120.5,
    waitMs: 3.25,
    slot: `host${i % 7}.example`,
    url: `https://host${i % 7}.example/page/${i}?q=${i}`,
    method: 'GET',
    status: 200,
    latency: 0.1 + (i % 10) / 100,
    downloadTime: 0.0125,
    bytes: 1000 + i,
    inFlight: 1 + (i % 4),
    delayBefore: 0.5,
    delayAfter: 0.75,
    delayCause: 'autothrottle',
    backoffLevel: 0,
    reused: i % 2 === 0,
    errorKind: null,
    errorMessage: null,
    depth: i % 3,
    contentType: 'text/html; charset=utf-8',
    ...over,
  };
}
