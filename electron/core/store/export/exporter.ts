// The core's side of exports ('history.export' and the browser download): flush the history first,
// keep track of running exports so closing the app cancels them, and pick or check the file path.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { EXPORT_EXTENSIONS, type AppEvents, type Params, type Result } from '../../../../shared/contract';
import { ExportError, exportHistory, exportToFile, type ExportProgress, type ExportQuery, type ExportResult } from './index';

export interface CoreExporter {
  /** Runs a 'history.export' request: to `path`, or to `<db folder>/exports/` when it has none. */
  toFile(p: Params<'history.export'>, progress: (e: AppEvents['history.exportProgress']) => void): Promise<Result<'history.export'>>;
  /** Streams an export to `out` (the browser download route); `out` is ended when done. */
  toStream(q: ExportQuery, out: Writable, onProgress?: (p: ExportProgress) => void): Promise<ExportResult>;
  /** Cancels running exports (their partial files are removed) and waits for them to stop. */
  close(): Promise<void>;
}

export interface ExporterOptions {
  /** The history database. */
  readonly db: string;
  /** Commits everything recorded so far, so an export of a running crawl is up to date. */
  readonly flush: () => Promise<void>;
}

const FS_CODES = new Set(['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'EROFS', 'EEXIST', 'ENAMETOOLONG']);

export function createExporter(o: ExporterOptions): CoreExporter {
  const running = new Map<AbortController, Promise<unknown>>();
  let closed = false;

  async function tracked<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (closed) throw new Error('the history is closing; no new export can start');
    await o.flush().catch(() => undefined);
    const controller = new AbortController();
    const p = run(controller.signal);
    running.set(controller, p.catch(() => undefined));
    try {
      return await p;
    } finally {
      running.delete(controller);
    }
  }

  return {
    async toFile(p, progress) {
      const exportId = p.exportId ?? randomUUID();
      const path = p.path ?? join(dirname(o.db), 'exports',
        `crawl-${p.crawlId}-${new Date().toISOString().replace(/[:.]/g, '-')}${EXPORT_EXTENSIONS[p.format][0]}`);
      if (p.path === undefined) await mkdir(dirname(path), { recursive: true });
      try {
        const r = await tracked((signal) => exportToFile(o.db, { crawlId: p.crawlId, slot: p.slot, from: p.from, to: p.to, format: p.format }, path, {
          signal,
          onProgress: (e) => progress({ exportId, rows: e.rows, total: e.total }),
        }));
        return { exportId, path, rows: r.rows, bytes: r.bytes };
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code && FS_CODES.has(code)) throw new ExportError('path', path, `a file Slotscope can write: ${(e as Error).message}`);
        throw e;
      }
    },
    toStream: (q, out, onProgress) => tracked((signal) => exportHistory(o.db, q, out, { signal, onProgress })),
    async close() {
      closed = true;
      for (const c of running.keys()) c.abort(new Error('the export was cancelled: the history is closing'));
      await Promise.all(running.values());
    },
  };
}
