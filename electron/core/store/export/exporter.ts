// The core's side of exports ('history.export' and the browser download): flush the history first,
// keep track of running exports so closing the app cancels them, and pick or check the file path.
import { randomUUID } from 'node:crypto';
import { mkdir, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { Writable } from 'node:stream';
import { EXPORT_EXTENSIONS, type AppEvents, type Params, type Result } from '../../../../shared/contract';
import { ExportError, exportHistory, exportToFile, type ExportProgress, type ExportQuery, type ExportResult } from './index';

/**
 * Set by the desktop app's main process on a 'history.export' whose `path` the user chose in the
 * save dialog, with that path as its value: such a file may be written anywhere. A renderer cannot
 * set it (a Symbol key crosses neither IPC nor JSON), so every other path stays inside exports/.
 */
export const CHOSEN_BY_USER: unique symbol = Symbol('export path chosen in the save dialog');

export interface CoreExporter {
  /**
   * Runs a 'history.export' request: to `path`, which must lie inside `<db folder>/exports/`
   * (symbolic links followed) unless the save dialog chose it (CHOSEN_BY_USER), or to a new file
   * there when it has none.
   */
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

/**
 * `path` with its folder's symbolic links resolved, when that folder is `folder` (the data folder's
 * exports/) or inside it; else an ExportError naming the path and the folder.
 */
async function insideExports(path: string, folder: string): Promise<string> {
  const allowed = `a file inside ${folder}, the data folder's exports folder (the desktop app's save dialog can write elsewhere)`;
  await mkdir(folder, { recursive: true });
  const root = await realpath(folder);
  let parent: string;
  try {
    parent = await realpath(dirname(path));
  } catch (e) {
    throw new ExportError('path', path, `${allowed}; ${(e as Error).message}`);
  }
  const rel = relative(root, parent);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new ExportError('path', path, allowed);
  return join(parent, basename(path));
}

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
      const folder = join(dirname(o.db), 'exports');
      const chosen = p.path !== undefined && (p as { [CHOSEN_BY_USER]?: unknown })[CHOSEN_BY_USER] === p.path;
      const path = p.path === undefined
        ? join(folder, `crawl-${p.crawlId}-${new Date().toISOString().replace(/[:.]/g, '-')}${EXPORT_EXTENSIONS[p.format][0]}`)
        : chosen ? p.path : await insideExports(p.path, folder);
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
