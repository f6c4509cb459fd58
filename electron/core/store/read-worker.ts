// The history's reads for charts and the log, on a thread of their own: a heavy query (a long
// crawl's series, its log's tail) never holds up the scheduler's event loop while a crawl runs.
// One read connection; requests are answered in order, each by name of a HistoryReader method.

import { parentPort, workerData } from 'node:worker_threads';
import { openHistoryReader } from './queries';
import type { ReadRequest, ReadReply, ReadWorkerInit } from './read-protocol';
import { READ_METHODS } from './read-protocol';
import { readFaultText } from './store-faults';
import { nameThisThread } from './thread-priority';

nameThisThread('slotscope-read');
const { file } = workerData as ReadWorkerInit;
const reader = openHistoryReader(file);
const allowed: ReadonlySet<string> = new Set(READ_METHODS);

parentPort!.on('message', (m: ReadRequest | 'close') => {
  if (m === 'close') {
    reader.close();
    parentPort!.close();
    return;
  }
  let reply: ReadReply;
  try {
    if (!allowed.has(m.method)) throw new Error(`not a read method: ${m.method}`);
    const fn = reader[m.method] as (...args: unknown[]) => unknown;
    reply = { id: m.id, ok: true, value: fn.apply(reader, m.args as unknown[]) };
  } catch (e) {
    // A damaged page, a lock or a failing disk is named with the file and what to do.
    reply = { id: m.id, ok: false, message: readFaultText(file, e) };
  }
  parentPort!.postMessage(reply);
});
