// Messages between the core and the read worker (read-worker.ts): a HistoryReader method by name
// with its arguments, answered with its value or its error's message.

import type { HistoryReader } from './queries';

/** The reads that go to the worker: the charts', the log's, the Requests tab's and the stats panel's. */
export const READ_METHODS = ['history', 'scatter', 'events', 'changes', 'slotSummaries', 'requestPage', 'savedQueue', 'scrapyStats'] as const;
export type ReadMethod = (typeof READ_METHODS)[number];

export interface ReadWorkerInit {
  readonly file: string;
}

export interface ReadRequest {
  readonly id: number;
  readonly method: ReadMethod;
  readonly args: Parameters<HistoryReader[ReadMethod]>;
}

export type ReadReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string };
