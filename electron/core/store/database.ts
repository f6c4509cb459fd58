// Opens the history database with the settings every connection needs (WAL, busy timeout,
// foreign keys) and migrates it on a writable open; also the cheap slow-query logger.
import Sqlite from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { assertUsableSchema, migrate, readSchemaVersion } from './migrate';

export type { Database } from 'better-sqlite3';

export interface OpenDatabaseOptions {
  /** Open read-only: no migration, no pragma that writes; refuses a schema that needs migrating. */
  readonly readonly?: boolean;
}

/** Statements or transactions slower than this are logged with console.warn. */
export const SLOW_QUERY_MS = 50;

/**
 * Opens `file` (creating it when writable) and returns a ready connection. Throws an Error naming
 * the file for a corrupt or non-SQLite file, a foreign SQLite file, or a newer schema; in those
 * cases the file is left exactly as it was.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Database {
  const readonly = options.readonly === true;
  let db: Database;
  try {
    db = new Sqlite(file, { readonly, fileMustExist: readonly, timeout: 5000 });
  } catch (e) {
    throw new Error(`cannot open history database ${file}: ${(e as Error).message}`, { cause: e });
  }
  try {
    db.pragma('busy_timeout = 5000');
    let version: number;
    try {
      version = readSchemaVersion(db);
    } catch (e) {
      throw new Error(`${file} is not a Slotscope history database (not an SQLite file, or corrupt): ${(e as Error).message}`, {
        cause: e,
      });
    }
    assertUsableSchema(db, file, version, readonly);
    if (!readonly) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') console.warn(`[slotscope:sqlite] ${file}: WAL mode unavailable (journal_mode=${String(mode)})`);
    }
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    if (!readonly) migrate(db, file, version);
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Runs `fn` and logs it with console.warn when it took longer than `thresholdMs`. Two clock reads. */
export function timed<T>(label: string, fn: () => T, thresholdMs: number = SLOW_QUERY_MS): T {
  const t0 = performance.now();
  try {
    return fn();
  } finally {
    const ms = performance.now() - t0;
    if (ms > thresholdMs) console.warn(`[slotscope:sqlite] slow ${label}: ${ms.toFixed(1)} ms`);
  }
}
