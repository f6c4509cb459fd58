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

/** SQLite's "another connection holds the lock" codes. */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function isCorrupt(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB'));
}

/** The error for a database another program keeps locked, saying what to do. */
export function lockedError(file: string, e: unknown): Error {
  return new Error(
    `${file} is locked by another program (${(e as Error)?.message ?? e}): close the program holding it ` +
      `(another Slotscope, an SQLite browser, a backup tool) and try again, or use another --db file`,
    { cause: e },
  );
}

/** The error for a damaged database, saying what to do. */
export function corruptError(file: string, e: unknown): Error {
  return new Error(
    `${file} is corrupt (${(e as Error)?.message ?? e}): Slotscope cannot use it. Keep a copy, try ` +
      `\`sqlite3 ${file} .recover\` to save what is left, or use another --db file`,
    { cause: e },
  );
}

/**
 * Opens `file` (creating it when writable) and returns a ready connection. Throws an Error naming
 * the file and what to do for a corrupt or non-SQLite file, a foreign SQLite file, a newer schema,
 * or a file another program keeps locked; in those cases the file is left exactly as it was.
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
      if (isBusy(e)) throw lockedError(file, e);
      throw new Error(`${file} is not a Slotscope history database (not an SQLite file, or corrupt): ${(e as Error).message}; ` +
        'use another --db file, or move this one away to start a new history', {
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
    if (!readonly) {
      // A program holding the write lock would make every later batch fail: refuse now instead.
      db.exec('BEGIN IMMEDIATE');
      db.exec('ROLLBACK');
      migrate(db, file, version);
      // A cheap read of the crawl table: a damaged file fails here, not in the middle of a crawl.
      db.prepare('SELECT count(*) FROM crawls').pluck().get();
    }
    return db;
  } catch (e) {
    db.close();
    // SQLite's own errors (raw, or wrapped by a failed migration) get the message that says what to do.
    const raw = (e as { code?: unknown })?.code !== undefined ? e
      : String((e as Error)?.message).startsWith('migration ') ? (e as Error).cause : undefined;
    if (raw !== undefined && isBusy(raw)) throw lockedError(file, raw);
    if (raw !== undefined && isCorrupt(raw)) throw corruptError(file, raw);
    throw e;
  }
}

/** A held writer lock on a history database; release() gives it up (process exit does too). */
export interface HistoryLock {
  readonly file: string;
  release(): void;
}

/**
 * Takes the one-writer lock of `file`: an exclusive SQLite lock on `FILE.lock` beside it, held
 * until release() or the process ends (the OS drops it even on kill -9, so a crash leaves no stale
 * lock). Throws, naming the file and what to do, when another Slotscope already writes it.
 * The lock file is left in place: removing it could let two writers in.
 */
export function lockHistoryFile(file: string): HistoryLock {
  const lockFile = `${file}.lock`;
  let db: Database;
  try {
    db = new Sqlite(lockFile, { timeout: 0 });
  } catch (e) {
    throw new Error(`cannot create the lock file ${lockFile} of history database ${file}: ${(e as Error).message}`, { cause: e });
  }
  try {
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if (isBusy(e)) {
      throw new Error(
        `${file} is in use by another Slotscope (a crawl or the app is writing it; its lock ${lockFile} is held): ` +
          'wait for that crawl to end or close that Slotscope, or use another --db file',
        { cause: e },
      );
    }
    throw new Error(`cannot lock history database ${file} (lock file ${lockFile}): ${(e as Error).message}`, { cause: e });
  }
  return {
    file: lockFile,
    release() {
      if (!db.open) return;
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
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
