// Opens the history database with the settings every connection needs (WAL, busy timeout,
// foreign keys) and migrates it on a writable open, after checking that a damaged, empty or
// read-only file is refused untouched; also the cheap slow-query logger.
import { accessSync, closeSync, constants, existsSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
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
  const detail = e instanceof Error ? e.message : String(e);
  return new Error(
    `${file} is corrupt: the file is damaged (${detail}), and Slotscope does not write to a damaged file. ` +
      `Keep a copy, try \`sqlite3 ${file} .recover\` to save what is left, or use another --db file`,
    { cause: e },
  );
}

/** The error for a 0-byte file: a history is never made in a file that exists but is empty. */
export function emptyFileError(file: string): Error {
  return new Error(
    `${file} is empty (0 bytes): it holds no history, and Slotscope does not make a new one in an existing file ` +
      '(it may be a history that was lost, e.g. cut short by a full disk or a failed copy). ' +
      'If a new history is what you want there, delete it first; or use another --db file',
  );
}

/** The error for a file (or the folder of a new one) that cannot be written: a read-only filesystem or no permission. */
export function readOnlyError(file: string, e: unknown, creating = false): Error {
  const code = (e as { code?: unknown })?.code;
  const detail = (e as Error)?.message ?? String(e);
  const where = creating ? `the folder of ${file}` : file;
  const text = code === 'EACCES' || code === 'EPERM'
    ? `${file} cannot be ${creating ? 'created' : 'written'}: ${where} is read-only for this user (${detail}). ` +
      'Make it writable, or use another --db file'
    : `${file} cannot be ${creating ? 'created' : 'written'}: ${where} is on a read-only filesystem (${detail}). ` +
      'Slotscope writes its history as it crawls: remount the filesystem read-write, or use a --db file on a writable disk ' +
      '(a copy of this one carries on its crawls)';
  return new Error(text, { cause: e });
}

function isReadOnly(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_READONLY') || code === 'EROFS');
}

/** Files up to this size get a full `PRAGMA quick_check` before the first write (about 2 ms per MB). */
export const QUICK_CHECK_MAX_BYTES = 2 * 1024 ** 3;

/**
 * Before a writable open: refuses, naming the file and what to do, and without changing a byte
 * of it, an empty file, a file or folder that cannot be written (read-only filesystem), and a
 * damaged file (cut short, or failing `PRAGMA quick_check` on a read-only connection). A missing
 * file is fine (it will be created). A file that is not SQLite at all is left to the open, which names it.
 */
export function checkBeforeWriting(file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot open history database ${file}: ${(e as Error).message}`, { cause: e });
    try {
      accessSync(dirname(file), constants.W_OK);
    } catch (e2) {
      const code = (e2 as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') throw readOnlyError(file, e2, true);
      // ENOENT (no such folder): SQLite's own error names it.
    }
    return;
  }
  if (size === 0) throw emptyFileError(file);
  for (const f of [file, dirname(file)]) {
    try {
      accessSync(f, constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') throw readOnlyError(file, e);
    }
  }
  const header = Buffer.alloc(100);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  // Not an SQLite file at all: the open says "not a Slotscope history database".
  if (size < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return;
  let pageSize = header.readUInt16BE(16);
  if (pageSize === 1) pageSize = 65536;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
    throw corruptError(file, new Error(`its header gives an impossible page size, ${pageSize}`));
  }
  let walSize = 0;
  try {
    walSize = statSync(`${file}-wal`).size;
  } catch {
    /* no WAL file */
  }
  // With no WAL to complete it, the main file holds whole pages, as many as its header says.
  if (walSize === 0) {
    if (size % pageSize !== 0) {
      throw corruptError(file, new Error(`it is cut short in the middle of a page: ${size} bytes is not a whole number of ${pageSize}-byte pages`));
    }
    const pages = header.readUInt32BE(28);
    if (pages > 0 && header.readUInt32BE(92) === header.readUInt32BE(24) && size < pages * pageSize) {
      throw corruptError(file, new Error(`it is cut short: ${pages - size / pageSize} of its ${pages} pages are missing at the end`));
    }
  }
  if (size > QUICK_CHECK_MAX_BYTES) return;
  quickCheck(file);
}

/** `PRAGMA quick_check` on a read-only connection; leaves no -wal/-shm it created behind when it refuses. */
function quickCheck(file: string): void {
  const leftovers = [`${file}-wal`, `${file}-shm`].filter((f) => !existsSync(f));
  let ro: Database | null = null;
  let problem: Error | null = null;
  try {
    ro = new Sqlite(file, { readonly: true, fileMustExist: true, timeout: 5000 });
    const found = (ro.pragma('quick_check(5)') as { quick_check: string }[]).map((r) => r.quick_check);
    if (found.length !== 1 || found[0] !== 'ok') problem = corruptError(file, new Error(`PRAGMA quick_check: ${found.join('; ')}`));
  } catch (e) {
    if (isBusy(e)) problem = lockedError(file, e);
    else if (isCorrupt(e)) problem = corruptError(file, e);
    // Anything else (a WAL only a writer can recover, a schema to migrate…) is for the writable open to meet.
  } finally {
    ro?.close();
  }
  if (problem === null) return;
  // The read-only connection may have made an empty -wal and an -shm beside a WAL-mode file: not ours to leave.
  for (const f of leftovers) {
    try {
      if (existsSync(f) && (f.endsWith('-shm') || statSync(f).size === 0)) rmSync(f);
    } catch {
      /* best effort */
    }
  }
  throw problem;
}

/**
 * Opens `file` (creating it when writable) and returns a ready connection. Throws an Error naming
 * the file and what to do for a corrupt or non-SQLite file, a foreign SQLite file, a newer schema,
 * or a file another program keeps locked; in those cases the file is left exactly as it was.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Database {
  const readonly = options.readonly === true;
  if (!readonly) checkBeforeWriting(file);
  let db: Database;
  try {
    db = new Sqlite(file, { readonly, fileMustExist: readonly, timeout: 5000 });
  } catch (e) {
    if (!readonly && isReadOnly(e)) throw readOnlyError(file, e);
    throw new Error(`cannot open history database ${file}: ${(e as Error).message}`, { cause: e });
  }
  try {
    db.pragma('busy_timeout = 5000');
    let version: number;
    try {
      version = readSchemaVersion(db);
    } catch (e) {
      if (isBusy(e)) throw lockedError(file, e);
      if (readonly && isCantOpenReadOnly(file, e)) throw readOnlyReadError(file, e);
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
    if (raw !== undefined && !readonly && isReadOnly(raw)) throw readOnlyError(file, raw);
    throw e;
  }
}

/**
 * Whether a read-only open failed because SQLite could not make the -shm file a WAL-mode database
 * needs beside it (its folder is read-only), rather than because the file is damaged.
 */
function isCantOpenReadOnly(file: string, e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_CANTOPEN')) return false;
  try {
    accessSync(dirname(file), constants.W_OK);
    return false;
  } catch (e2) {
    return (e2 as NodeJS.ErrnoException).code === 'EROFS' || (e2 as NodeJS.ErrnoException).code === 'EACCES';
  }
}

function readOnlyReadError(file: string, e: unknown): Error {
  return new Error(
    `${file} cannot be read where it is: it is a WAL-mode database on a read-only filesystem (or folder), and SQLite needs to ` +
      `create ${file}-shm beside it to read it (${(e as Error).message}). Copy it to a writable folder and open the copy`,
    { cause: e },
  );
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
    // A read-only filesystem (or folder) is named as such: nothing can be written there.
    try {
      accessSync(dirname(file), constants.W_OK);
    } catch (e2) {
      const code = (e2 as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') throw readOnlyError(file, e2, !existsSync(file));
    }
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
