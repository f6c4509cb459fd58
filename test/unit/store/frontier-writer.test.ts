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
import { mulberry32 } from '../../../electron/core/testsite/random';

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

/**
 * Batches shaped as the engine sends them (each seq queued once, then started, requeued or done in
 * later ops, the ops of a row in order), applied one by one, against applying every op in order to
 * a plain model. The shapes reach every way the writer indexes and groups a batch: one crawl with
 * close seqs (indexed by seq), seqs far apart or several crawls (a Map), ascending and shuffled
 * runs (gathered, or sorted), and many crawls in one batch.
 */
describe('FrontierWriter.apply against a model', () => {
  interface Row { state: number; priority: number; retries: number }
  const shapes = [
    { name: 'one crawl, close seqs, in order', crawls: 1, spread: 1, shuffle: false },
    { name: 'one crawl, close seqs, shuffled', crawls: 1, spread: 1, shuffle: true },
    { name: 'one crawl, seqs far apart', crawls: 1, spread: 100_000, shuffle: true },
    { name: 'two crawls', crawls: 2, spread: 1, shuffle: true },
    { name: 'six crawls', crawls: 6, spread: 3, shuffle: true },
  ];
  for (const shape of shapes) {
    it(shape.name, () => {
      const rnd = mulberry32(17 + shape.crawls * 31 + shape.spread);
      const db = openDatabase(join(freshDir(), 'h.sqlite'));
      try {
        for (let c = 1; c <= shape.crawls; c++) {
          db.prepare(`INSERT INTO crawls (name, config_json, settings_json, status, created_at) VALUES (?, '{}', '{}', 'running', 0)`).run(`c${c}`);
        }
        const w = new FrontierWriter(db, () => 1);
        const model = new Map<string, Row>();
        // Per row, what it will do next: 0 to queue, then started, then done or requeued (and started again).
        const live: { crawl: number; seq: number; step: number }[] = [];
        let nextSeq = 0;
        for (let b = 0; b < 40; b++) {
          const ops: Op[] = [];
          const fresh = Math.floor(rnd() * 60);
          for (let k = 0; k < fresh; k++) live.push({ crawl: 1 + Math.floor(rnd() * shape.crawls), seq: nextSeq++ * shape.spread, step: 0 });
          const order = shape.shuffle ? live.map((r) => ({ r, k: rnd() })).sort((x, y) => x.k - y.k).map((x) => x.r) : [...live];
          for (const r of order) {
            // Zero to three steps of this row in this batch, in its order.
            for (let steps = Math.floor(rnd() * 4); steps > 0 && r.step >= 0; steps--) {
              const p = Math.floor(rnd() * 5);
              const t = Math.floor(rnd() * 3);
              if (r.step === 0) {
                ops.push([r.crawl, OP_QUEUED, r.seq, p, t]);
                model.set(`${r.crawl}/${r.seq}`, { state: STATE_QUEUED, priority: p, retries: t });
                r.step = 1;
              } else if (r.step === 1) {
                ops.push([r.crawl, OP_STARTED, r.seq]);
                model.get(`${r.crawl}/${r.seq}`)!.state = STATE_IN_FLIGHT;
                r.step = 2;
              } else if (rnd() < 0.3) {
                ops.push([r.crawl, OP_REQUEUED, r.seq, p, t]);
                model.set(`${r.crawl}/${r.seq}`, { state: STATE_QUEUED, priority: p, retries: t });
                r.step = 1;
              } else {
                ops.push([r.crawl, OP_DONE, r.seq]);
                model.get(`${r.crawl}/${r.seq}`)!.state = STATE_DONE;
                r.step = -1;
              }
            }
          }
          db.transaction(() => w.apply(batch(ops)))();
          for (let i = live.length - 1; i >= 0; i--) if (live[i].step < 0) live.splice(i, 1);
        }
        const rows = db.prepare(`SELECT crawl_id, seq, state, priority, retries FROM frontier`).raw().all() as number[][];
        expect(rows.length).toBe(model.size);
        expect(model.size).toBeGreaterThan(500);
        const states = new Set<number>();
        for (const [crawl, seq, state, priority, retries] of rows) {
          const m = model.get(`${crawl}/${seq}`);
          states.add(state);
          // Priority and retries matter to a row that will be fetched again (a done row's are not read).
          expect([crawl, seq, state, ...(state === STATE_QUEUED ? [priority, retries] : [])])
            .toEqual([crawl, seq, m?.state, ...(m?.state === STATE_QUEUED ? [m.priority, m.retries] : [])]);
        }
        expect([...states].sort()).toEqual([STATE_QUEUED, STATE_IN_FLIGHT, STATE_DONE]);
      } finally {
        db.close();
      }
    });
  }
});
