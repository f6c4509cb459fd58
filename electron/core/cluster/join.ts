// `slotscope worker`: joins the shared crawl open in a Redis (waiting for one), fetches for it until
// it ends, and with --stay waits for the next one.

import { connectRedis, crawlPrefix, OPEN_KEY, closeRedis } from './redis';
import { SharedWorker } from './worker';

export interface RunWorkerOptions {
  readonly redis: string;
  readonly name: string;
  readonly concurrency?: number;
  /** Wait for the next shared crawl after one ends. */
  readonly stay?: boolean;
  readonly log: (line: string) => void;
  /** Aborting leaves: no new request, those in flight are recorded, then it returns. */
  readonly signal?: AbortSignal;
}

export async function runWorker(o: RunWorkerOptions): Promise<void> {
  const r = await connectRedis(o.redis, { name: `slotscope ${o.name}`, log: o.log });
  let current: SharedWorker | null = null;
  const onAbort = () => current?.leave();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let waiting = false;
    let last: string | null = null;
    while (!o.signal?.aborted) {
      let id: string | null = null;
      try {
        id = await r.get(OPEN_KEY);
        const status = id === null ? null : await r.hget(`${crawlPrefix(id)}meta`, 'status');
        if (id === last || (status !== 'running' && status !== 'paused')) id = null;
      } catch {
        id = null;
      }
      if (id === null) {
        if (!waiting) o.log(`${o.name}: waiting for a shared crawl to open in Redis`);
        waiting = true;
        await new Promise((res) => setTimeout(res, 200));
        continue;
      }
      waiting = false;
      o.log(`${o.name}: joined shared crawl ${id}`);
      current = new SharedWorker({ redis: r, prefix: crawlPrefix(id), name: o.name, concurrency: o.concurrency, log: o.log });
      const end = await current.run();
      o.log(`${o.name}: shared crawl ${id} ${end === 'left' ? 'left' : end}; ${current.responses} responses fetched here`);
      current = null;
      last = id;
      if (!o.stay || end === 'left') break;
    }
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    closeRedis(r);
  }
}
