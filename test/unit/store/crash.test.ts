// Crash safety: a child process that records and flushes is killed with SIGKILL mid-stream; every
// row committed before the kill must be readable and the database must open and check clean.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../../electron/core/store/database';
import { openHistoryWriter } from '../../../electron/core/store/history-writer';
import { openHistoryReader } from '../../../electron/core/store/queries';
import { buildStoreBundle, freshDir, type StoreBundle } from './helpers';

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
});
afterAll(() => bundle.remove());

const child = fileURLToPath(new URL('./fixtures/crash-child.mjs', import.meta.url));

it('keeps every committed row when the recording process is SIGKILLed', async () => {
  const file = join(freshDir(), 'crash.sqlite');
  const proc = spawn(process.execPath, [child, bundle.writerModule.href, bundle.workerFile.href, file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let committed = 0;
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d;
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const line of lines) committed = Number(line.split(' ')[1]);
      if (committed >= 30_000) {
        proc.kill('SIGKILL');
        resolve();
      }
    });
    proc.on('exit', () => reject(new Error(`child exited early: ${stderr}`)));
  });
  expect(await exited).toBe('SIGKILL');

  const reader = openHistoryReader(file);
  const [crawl] = reader.listCrawls();
  expect(crawl.status).toBe('running');
  const rows = reader.responses(crawl.id);
  expect(rows.length).toBeGreaterThanOrEqual(committed);
  // Rows are committed in order, so the first `committed` rows are exactly requests 0..committed-1.
  const firstMissing = rows.findIndex((r, i) => r.bytes !== i);
  expect(firstMissing === -1 || firstMissing >= committed).toBe(true);
  expect(reader.crawlSummary(crawl.id).requests).toBe(rows.length); // aggregates committed with the rows
  reader.close();

  const db = openDatabase(file);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  db.close();
  const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile });
  writer.updateCrawl(crawl.id, { status: 'interrupted' });
  await writer.close();
}, 60_000);
