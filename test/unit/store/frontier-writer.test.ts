// The frontier's state UPDATEs go out as one statement per run of consecutive seqs (issue 17): every
// row must still end in the state its last op of the batch gave it, whatever the order and the gaps.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../electron/core/store/database';
import { FrontierWriter, STATE_DONE, STATE_IN_FLIGHT, STATE_QUEUED } from '../../../electron/core/store/frontier-store';
import {
  F_CRAWL, F_OP, F_PRIORITY, F_RETRIES, F_SEQ, FRONTIER_STRIDE, OP_DONE, OP_QUEUED, OP_REQUEUED, OP_STARTED, type FrontierBatch,
} from '../../../electron/core/store/history-protocol';
import { freshDir } from './helpers';

type Op = readonly [crawl: number, op: number, seq: number, priority?: number, retries?: number];

function batch(ops: readonly Op[]): FrontierBatch {
  const nums = new Float64Array(ops.length * FRONTIER_STRIDE);
  const strs: (string | null)[] = [];
  ops.forEach(([crawl, op, seq, priority = 0, retries = 0], i) => {
    const o = i * FRONTIER_STRIDE;
    nums[o + F_CRAWL] = crawl;
    nums[o + F_OP] = op;
    nums[o + F_SEQ] = seq;
    nums[o + F_PRIORITY] = priority;
    nums[o + F_RETRIES] = retries;
    if (op === OP_QUEUED) strs.push(`http://h${crawl}.test/p/${seq}`, null);
  });
  return { n: ops.length, nums, strs, slotStates: [] };
}

describe('FrontierWriter.apply', () => {
  it('gives every row the state of its last op, with state updates written as runs of consecutive seqs', () => {
    const db = openDatabase(join(freshDir(), 'h.sqlite'));
    try {
      for (const name of ['a', 'b']) {
        db.prepare(`INSERT INTO crawls (name, config_json, settings_json, status, created_at) VALUES (?, '{}', '{}', 'running', 0)`).run(name);
      }
      const w = new FrontierWriter(db, () => 1);
      const apply = (ops: readonly Op[]): void => db.transaction(() => w.apply(batch(ops)))();
      const queued: Op[] = [];
      for (let seq = 0; seq < 40; seq++) queued.push([1, OP_QUEUED, seq], [2, OP_QUEUED, seq]);
      apply(queued);

      // Out of order, with gaps, both crawls, started then done in the same batch, a requeue in the middle of a run.
      const ops: Op[] = [];
      for (const seq of [5, 3, 4, 9, 7, 8, 6, 20, 21, 22, 30]) ops.push([1, OP_STARTED, seq]);
      for (const seq of [4, 3, 6, 5, 8, 20, 22, 30]) ops.push([1, OP_DONE, seq]);
      ops.push([1, OP_REQUEUED, 21, 7, 1]);
      for (const seq of [10, 11, 12, 14]) ops.push([2, OP_DONE, seq]);
      ops.push([2, OP_STARTED, 13]);
      // A row queued after state updates in the same batch: inserted with its folded state.
      ops.push([1, OP_QUEUED, 40], [1, OP_STARTED, 40], [1, OP_DONE, 41 - 1]);
      ops.push([1, OP_DONE, 9]);
      apply(ops);

      const state = (crawl: number, seq: number): unknown =>
        db.prepare(`SELECT state FROM frontier WHERE crawl_id = ? AND seq = ?`).pluck().get(crawl, seq);
      const expected1 = new Map<number, number>([
        [3, STATE_DONE], [4, STATE_DONE], [5, STATE_DONE], [6, STATE_DONE], [7, STATE_IN_FLIGHT], [8, STATE_DONE], [9, STATE_DONE],
        [20, STATE_DONE], [21, STATE_QUEUED], [22, STATE_DONE], [30, STATE_DONE], [40, STATE_DONE],
      ]);
      for (let seq = 0; seq <= 40; seq++) expect([1, seq, state(1, seq)]).toEqual([1, seq, expected1.get(seq) ?? STATE_QUEUED]);
      const expected2 = new Map<number, number>([[10, STATE_DONE], [11, STATE_DONE], [12, STATE_DONE], [13, STATE_IN_FLIGHT], [14, STATE_DONE]]);
      for (let seq = 0; seq < 40; seq++) expect([2, seq, state(2, seq)]).toEqual([2, seq, expected2.get(seq) ?? STATE_QUEUED]);
      expect(db.prepare(`SELECT priority, retries FROM frontier WHERE crawl_id = 1 AND seq = 21`).raw().get()).toEqual([7, 1]);
    } finally {
      db.close();
    }
  });

  it('inserts queued rows 32 to a statement and the rest one by one: every URL, meta, folded state and a known seq taken again', () => {
    const db = openDatabase(join(freshDir(), 'h.sqlite'));
    try {
      db.prepare(`INSERT INTO crawls (name, config_json, settings_json, status, created_at) VALUES ('a', '{}', '{}', 'running', 0)`).run();
      const w = new FrontierWriter(db, () => 1);
      const apply = (b: FrontierBatch): void => db.transaction(() => w.apply(b))();
      apply(batch(Array.from({ length: 5 }, (_, seq): Op => [1, OP_QUEUED, seq])));
      // 70 queued (seqs 0-69, the first 5 known already: a resumed crawl queues them again), some started or done in the same batch.
      const ops: Op[] = [];
      for (let seq = 0; seq < 70; seq++) ops.push([1, OP_QUEUED, seq, seq % 3, seq % 2]);
      for (const seq of [1, 33, 64, 69]) ops.push([1, OP_STARTED, seq]);
      for (const seq of [33, 65]) ops.push([1, OP_DONE, seq]);
      const b = batch(ops);
      const strs = [...b.strs];
      for (let seq = 0; seq < 70; seq++) strs[seq * 2 + 1] = seq % 10 === 0 ? JSON.stringify({ n: seq }) : null;
      apply({ ...b, strs });
      const rows = db.prepare(`SELECT seq, url, state, priority, retries, meta_json FROM frontier WHERE crawl_id = 1 ORDER BY seq`).raw().all();
      const stateOf = (seq: number): number => (seq === 33 || seq === 65 ? STATE_DONE : [1, 64, 69].includes(seq) ? STATE_IN_FLIGHT : STATE_QUEUED);
      expect(rows).toEqual(Array.from({ length: 70 }, (_, seq) => [
        // A known seq keeps its first URL and meta and takes the new state, priority and retries.
        seq, `http://h1.test/p/${seq}`, stateOf(seq), seq % 3, seq % 2, seq % 10 === 0 && seq >= 5 ? JSON.stringify({ n: seq }) : null,
      ]));
    } finally {
      db.close();
    }
  });
});
