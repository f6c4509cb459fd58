// A store that cannot write (another connection holding the write lock, for real): the writer keeps
// every write in order and retries, says it is blocked and why, bounds what waits, and never drops a record.
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHistoryWriter, type HistoryWriter, type StoreBlock } from '../../../electron/core/store/history-writer';
import { buildStoreBundle, freshDir, sampleResponse, type StoreBundle } from './helpers';

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
});
afterAll(() => bundle.remove());

function count(file: string, sql: string): number {
  const db = new Sqlite(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

/** Resolves with the next 'blocked' of `kind` (or 'unblocked'). */
function next(writer: HistoryWriter, event: 'blocked' | 'unblocked', kind?: string): Promise<StoreBlock> {
  return new Promise((resolve) => {
    const on = (b: StoreBlock): void => {
      if (kind !== undefined && b.kind !== kind) return;
      writer.off(event, on);
      resolve(b);
    };
    writer.on(event, on);
  });
}

describe('a store that cannot write', () => {
  it('keeps every write under another program\'s lock, says why, answers flush at once, and commits all once the lock goes', async () => {
    const file = join(freshDir(), 'h.sqlite');
    const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile });
    const id = await writer.createCrawl('locked', {}, {});
    writer.updateCrawl(id, { status: 'running' });
    for (let i = 0; i < 10; i++) writer.recordResponse(id, sampleResponse(i));
    await writer.flush();

    const holder = new Sqlite(file);
    holder.exec('BEGIN IMMEDIATE');
    const blocked = next(writer, 'blocked', 'locked');
    for (let i = 10; i < 210; i++) writer.recordResponse(id, sampleResponse(i));
    writer.updateCrawl(id, { status: 'finished' });
    const b = await blocked;
    expect(b.text).toContain(file);
    expect(b.text).toMatch(/write lock for more than 5 s: close the program holding it/);
    expect(writer.blocked?.kind).toBe('locked');
    // Nothing of it is written, and nothing is lost: a plain flush says why at once…
    const t0 = Date.now();
    await expect(writer.flush()).rejects.toThrow(/history not flushed: cannot write the history to .*records wait to be written/);
    expect(Date.now() - t0).toBeLessThan(1000);
    await expect(writer.createCrawl('another', {}, {})).rejects.toThrow(/createCrawl refused: cannot write the history/);
    // …and a waiting one waits.
    let waited = false;
    const waiting = writer.flush({ wait: true }).then(() => (waited = true));
    expect(count(file, 'SELECT count(*) FROM responses')).toBe(10);
    expect(holder.prepare('SELECT status FROM crawls WHERE id = ?').pluck().get(id)).toBe('running');

    const unblocked = next(writer, 'unblocked');
    holder.exec('COMMIT');
    holder.close();
    await unblocked;
    await waiting;
    expect(waited).toBe(true);
    expect(writer.blocked).toBeNull();
    expect(count(file, 'SELECT count(*) FROM responses')).toBe(210);
    expect(count(file, `SELECT count(*) FROM crawls WHERE status = 'finished'`)).toBe(1);
    // The aggregates agree with the rows.
    expect(count(file, 'SELECT sum(requests) FROM slot_stats')).toBe(210);
    await writer.close();
  }, 30_000);

  it('past its bound of waiting records it is blocked as behind, and unblocked below half of it', async () => {
    const file = join(freshDir(), 'h.sqlite');
    const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile, maxPendingRecords: 2000 });
    const id = await writer.createCrawl('slow', {}, {});
    const holder = new Sqlite(file);
    holder.exec('BEGIN IMMEDIATE');
    const behind = next(writer, 'blocked', 'behind');
    let seen: StoreBlock | null = null;
    void behind.then((b) => (seen = b));
    for (let i = 0; i < 3000 && seen === null; i++) {
      writer.recordResponse(id, sampleResponse(i));
      if (i % 100 === 99) await new Promise((r) => setTimeout(r, 0));
    }
    const b = await behind;
    expect(b.pending).toBeGreaterThan(2000);
    expect(b.text).toMatch(/records behind/);
    const recorded = count(file, 'SELECT count(*) FROM responses') + writer.waiting;
    const unblocked = next(writer, 'unblocked');
    holder.exec('COMMIT');
    holder.close();
    await unblocked;
    await writer.flush();
    expect(count(file, 'SELECT count(*) FROM responses')).toBe(recorded);
    await writer.close();
  }, 30_000);

  it('closing while it cannot write says what was not written and that the crawl stays resumable; the file keeps what was committed', async () => {
    const file = join(freshDir(), 'h.sqlite');
    const writer = await openHistoryWriter(file, { workerFile: bundle.workerFile });
    const id = await writer.createCrawl('quit', {}, {});
    writer.updateCrawl(id, { status: 'running' });
    writer.recordResponse(id, sampleResponse(0));
    await writer.flush();
    const holder = new Sqlite(file);
    holder.exec('BEGIN IMMEDIATE');
    const blocked = next(writer, 'blocked', 'locked');
    for (let i = 1; i < 50; i++) writer.recordResponse(id, sampleResponse(i));
    writer.updateCrawl(id, { status: 'finished' });
    await blocked;
    await expect(writer.close()).rejects.toThrow(new RegExp(`49 history records .*could not be written before closing: cannot write the history to .*crawl ${id} stays resumable`));
    holder.exec('COMMIT');
    holder.close();
    expect(count(file, 'SELECT count(*) FROM responses')).toBe(1);
    // Not finished: the next open finds it running (its process gone) and makes it interrupted, resumable.
    const again = await openHistoryWriter(file, { workerFile: bundle.workerFile });
    expect(again.interrupted).toEqual([id]);
    await again.close();
  }, 30_000);
});
