// What went wrong when the history cannot be written or opened, in words that name the file and
// say what to do: a full disk, a lock held by another program, a read-only file, an I/O error, damage.

/**
 * Why the store cannot write: `full` (no space left), `locked` (another program holds the write
 * lock past the 5 s busy timeout), `read-only` (file or filesystem), `io` (the disk fails),
 * `damaged` (the file is corrupt), `other` (anything else SQLite or the OS reports about the file).
 */
export type StoreFaultKind = 'full' | 'locked' | 'read-only' | 'io' | 'damaged' | 'other';

/** SQLite's extended code (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`…) or Node's errno code of an error, if any. */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Whether a failed write is the store's condition (disk, lock, file) rather than the data's: such
 * a write is kept and retried, never dropped, because it can succeed later unchanged. Data errors
 * (a constraint, a type mismatch, a bug) cannot, and are reported instead.
 */
export function isStoreFault(e: unknown): boolean {
  return storeFaultKind(e) !== null;
}

/** The kind of store fault an error is, or null for a data error (constraint, mismatch, a bug). */
export function storeFaultKind(e: unknown): StoreFaultKind | null {
  const code = errorCode(e);
  if (code === undefined) return null;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_NOLFS') return 'full';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'locked';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'SQLITE_PERM' || code === 'EACCES' || code === 'EPERM') return 'read-only';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'damaged';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') {
    // ENOSPC surfaces as an I/O error in some paths (a WAL-index or journal that cannot grow).
    return /disk is full|no space|ENOSPC/i.test(String((e as Error)?.message)) ? 'full' : 'io';
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_NOMEM' || code === 'SQLITE_PROTOCOL' || code === 'SQLITE_AUTH') return 'other';
  return null;
}

/** What to do about each kind of fault while a crawl waits for the store. */
const ADVICE: Readonly<Record<StoreFaultKind, string>> = {
  full: 'the disk is full: free space on it (or move other files away)',
  locked: 'another program has held its write lock for more than 5 s: close the program holding it (an SQLite browser, a backup or sync tool, another Slotscope)',
  'read-only': 'the file or its filesystem is read-only: make it writable again (e.g. remount the filesystem read-write)',
  io: 'the disk reports I/O errors: check the disk and its connection',
  damaged: 'the file is damaged: stop the crawl, keep a copy of the file and try `sqlite3 FILE .recover`',
  other: 'SQLite cannot write it',
};

/**
 * One sentence naming the file, the fault and what to do, e.g. "cannot write the history to
 * /data/h.sqlite: the disk is full: free space on it (database or disk is full)".
 */
export function storeFaultText(file: string, kind: StoreFaultKind, detail: string): string {
  return `cannot write the history to ${file}: ${ADVICE[kind].replace('FILE', file)} (${detail})`;
}

/**
 * An error met while reading `file`, for a reply: names the file, and for a fault of the store
 * (damage, a lock, the disk) what to do; other errors (a bad argument, a bug) keep their own text.
 */
export function readFaultText(file: string, e: unknown): string {
  const detail = e instanceof Error ? e.message : String(e);
  const kind = storeFaultKind(e);
  return kind === null ? detail : `cannot read the history ${file}: ${ADVICE[kind].replace('FILE', file)} (${detail})`;
}
