// The core's side of the read worker: each chart or log read is a message to a thread of its own
// with its own read connection, answered asynchronously (the scheduler's loop only posts and waits).

import { Worker } from 'node:worker_threads';
import type { HistoryReader } from './queries';
import type { ReadMethod, ReadReply, ReadRequest, ReadWorkerInit } from './read-protocol';
import { resolveWorkerFile } from './history-writer';

export interface HistoryReads {
  /** Runs `method` of a HistoryReader in the read worker. */
  read<M extends ReadMethod>(method: M, ...args: Parameters<HistoryReader[M]>): Promise<ReturnType<HistoryReader[M]>>;
  close(): Promise<void>;
}

/** Starts the read worker on the history file `file` (already created and migrated by the writer). */
export function openHistoryReads(file: string, workerFile: string | URL = resolveWorkerFile(import.meta.url, 'read-worker')): HistoryReads {
  const init: ReadWorkerInit = { file };
  const worker = new Worker(workerFile, { workerData: init });
  worker.unref();
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  let dead: Error | null = null;
  const failAll = (e: Error) => {
    dead = e;
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  worker.on('message', (m: ReadReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(new Error(m.message));
  });
  worker.on('error', (e) => failAll(new Error(`history read worker failed: ${e.message}`, { cause: e })));
  worker.on('exit', (code) => failAll(new Error(`history read worker exited (code ${code})`)));
  return {
    read(method, ...args) {
      if (dead) return Promise.reject(dead);
      const id = next++;
      const msg: ReadRequest = { id, method, args } as ReadRequest;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        if (pending.size === 1) worker.ref();
        worker.postMessage(msg);
      }).finally(() => {
        if (pending.size === 0) worker.unref();
      }) as never;
    },
    async close() {
      if (dead) return;
      const exited = new Promise<void>((r) => worker.once('exit', () => r()));
      worker.postMessage('close');
      await exited;
    },
  };
}
