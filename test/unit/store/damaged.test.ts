// Damaged and unusable history files (issue 15): a file truncated mid-page, a 0-byte file and a
// read-only filesystem are refused with a message naming the file, the fault and what to do; the file is never modified.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../electron/core/store/database';
import { openHistoryWriter } from '../../../electron/core/store/history-writer';
import { openHistoryReader } from '../../../electron/core/store/queries';
import { openHistoryReads } from '../../../electron/core/store/read-client';
import { buildStoreBundle, freshDir, ROOT, sampleResponse, type StoreBundle } from './helpers';

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
});
afterAll(() => bundle.remove());

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A closed history with one crawl of `n` responses (its WAL checkpointed into the file). */
async function history(file: string, n: number): Promise<void> {
  const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile });
  const id = await writer.createCrawl('c', {}, {});
  writer.updateCrawl(id, { status: 'paused' });
  for (let i = 0; i < n; i++) writer.recordResponse(id, sampleResponse(i));
  await writer.close();
}

/** Every file of the history (main, -wal, -shm) with its bytes, to prove nothing changed. */
function snapshot(file: string): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) out[f] = existsSync(f) ? readFileSync(f).toString('base64') : null;
  return out;
}

/** A tmpfs at a new folder, or null when mount is refused (not root). */
function tmpfs(mb: number): { dir: string; remountRo(): void; umount(): void } | null {
  const dir = freshDir();
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return {
    dir,
    remountRo: () => {
      const ro = spawnSync('mount', ['-o', 'remount,ro', dir], { encoding: 'utf8' });
      if (ro.status !== 0) throw new Error(`remount ro failed: ${ro.stderr}`);
    },
    umount: () => void spawnSync('umount', ['-l', dir]),
  };
}

/** The read worker bundled from the current sources (as build/build.mjs does), in a folder removed afterwards. */
async function readWorkerBundle(): Promise<URL> {
  mkdirSync(join(ROOT, '.tmp', 'store-test'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.tmp', 'store-test', 'read-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  await build({
    absWorkingDir: ROOT,
    entryPoints: { 'read-worker': join(ROOT, 'electron/core/store/read-worker.ts') },
    outdir: dir, bundle: true, platform: 'node', target: 'node20', format: 'esm', packages: 'external',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'warning',
  });
  return pathToFileURL(join(dir, 'read-worker.js'));
}

describe('damaged history files', () => {
  it('refuses a file truncated mid-page, naming it and what to do, and does not modify it', async () => {
    const file = join(freshDir(), 'truncated.sqlite');
    await history(file, 3000);
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(40 * 4096);
    truncateSync(file, Math.floor(size / 2) + 1000); // mid-page
    const before = snapshot(file);

    const message = new RegExp(`${esc(file)} is corrupt: the file is damaged[^]*(\\.recover|another --db)`);
    await expect(openHistoryWriter(file, { workerFile: bundle.workerFile })).rejects.toThrow(message);
    expect(() => openDatabase(file)).toThrow(message);
    expect(snapshot(file)).toEqual(before);
  });

  it('refuses a file truncated at a page boundary (pages missing at the end) without modifying it', async () => {
    const file = join(freshDir(), 'short.sqlite');
    await history(file, 3000);
    const size = statSync(file).size;
    truncateSync(file, Math.floor(size / 4096 / 2) * 4096);
    const before = snapshot(file);
    await expect(openHistoryWriter(file, { workerFile: bundle.workerFile })).rejects.toThrow(new RegExp(`${esc(file)} is corrupt: the file is damaged`));
    expect(snapshot(file)).toEqual(before);
  });

  it('refuses a file damaged in the middle (a page overwritten) without modifying it', async () => {
    const file = join(freshDir(), 'scribbled.sqlite');
    await history(file, 3000);
    const bytes = readFileSync(file);
    const page = Math.floor(bytes.length / 4096 / 2);
    for (let i = 0; i < 4096; i++) bytes[page * 4096 + i] = (i * 131) & 0xff;
    writeFileSync(file, bytes);
    const before = snapshot(file);
    await expect(openHistoryWriter(file, { workerFile: bundle.workerFile })).rejects.toThrow(new RegExp(`${esc(file)} is corrupt: the file is damaged[^]*\\.recover`));
    expect(snapshot(file)).toEqual(before);
  });

  it('refuses a 0-byte file instead of making a new history in it; a missing file is still created', async () => {
    const dir = freshDir();
    const empty = join(dir, 'empty.sqlite');
    writeFileSync(empty, '');
    const message = new RegExp(`${esc(empty)} is empty \\(0 bytes\\)[^]*delete it`);
    await expect(openHistoryWriter(empty, { workerFile: bundle.workerFile })).rejects.toThrow(message);
    expect(() => openDatabase(empty)).toThrow(message);
    expect(statSync(empty).size).toBe(0);
    expect(existsSync(`${empty}-wal`)).toBe(false);

    const missing = join(dir, 'new.sqlite');
    const writer = await openHistoryWriter(missing, { workerFile: bundle.workerFile });
    await writer.createCrawl('fresh', {}, {});
    await writer.close();
    expect(statSync(missing).size).toBeGreaterThan(0);
  });

  it('names a read-only filesystem as such (not as corrupt), for an existing and for a new file', async ({ skip }) => {
    const fs = tmpfs(4);
    if (fs === null) return skip('mount -t tmpfs refused: this test needs root');
    try {
      const file = join(fs.dir, 'history.sqlite');
      await history(file, 200);
      mkdirSync(join(fs.dir, 'sub'));
      fs.remountRo();
      const before = snapshot(file);
      const existing = new RegExp(`${esc(file)}[^]*read-only`);
      let error: Error | null = null;
      try {
        const w = await openHistoryWriter(file, { workerFile: bundle.workerFile });
        await w.close();
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message).toMatch(existing);
      expect(error?.message).not.toMatch(/corrupt|damaged|not a Slotscope/i);
      expect(() => openDatabase(file)).toThrow(existing);
      expect(snapshot(file)).toEqual(before);
      // Reading it: SQLite cannot read a WAL-mode file where it cannot create its -shm, and says so in those words.
      let readError: Error | null = null;
      try {
        const reader = openHistoryReader(file);
        expect(reader.listCrawls()).toHaveLength(1);
        reader.close();
      } catch (e) {
        readError = e as Error;
      }
      if (readError !== null) {
        expect(readError.message).toMatch(new RegExp(`${esc(file)} cannot be read where it is: [^]*read-only filesystem[^]*Copy it to a writable folder`));
        expect(readError.message).not.toMatch(/corrupt|damaged|not a Slotscope/i);
      }
      expect(snapshot(file)).toEqual(before);

      const fresh = join(fs.dir, 'sub', 'new.sqlite');
      const created = await openHistoryWriter(fresh, { workerFile: bundle.workerFile }).then((w) => w.close().then(() => null), (e: Error) => e);
      expect(created?.message).toMatch(new RegExp(`${esc(fresh)}[^]*read-only`));
      expect(created?.message).not.toMatch(/corrupt|damaged/i);
    } finally {
      fs.umount();
    }
  });

  it('a damaged page met by a read (the read worker) names the file and what to do', async () => {
    const worker = await readWorkerBundle();
    const file = join(freshDir(), 'read.sqlite');
    await history(file, 3000);
    // The reader opens on a sound file; the damage comes after (a disk going bad under a running app).
    const reads = openHistoryReads(file, worker);
    expect(await reads.read('changes', 1)).toEqual([]);
    const bytes = readFileSync(file);
    const pages = bytes.length / 4096;
    for (let p = 1; p < pages; p++) for (let i = 0; i < 4096; i++) bytes[p * 4096 + i] = (i * 131 + p) & 0xff;
    writeFileSync(file, bytes);
    try {
      await expect(reads.read('slotSummaries', 1)).rejects.toThrow(new RegExp(`cannot read the history ${esc(file)}: the file is damaged[^]*\\.recover`));
    } finally {
      await reads.close();
    }
  });
});
