// Numbered, append-only schema migrations tracked in PRAGMA user_version, each run in one
// transaction; also the checks that refuse a newer or foreign database before anything is written.
import type { Database } from 'better-sqlite3';
import { migration0001, SLOTSCOPE_APPLICATION_ID } from './migrations/0001-initial';
import { migration0002 } from './migrations/0002-frontier';
import { migration0003 } from './migrations/0003-aggregates';
import { migration0004 } from './migrations/0004-slot-last-cause';
import { migration0005 } from './migrations/0005-request-view';
import { migration0006 } from './migrations/0006-shared-crawl';
import type { Migration } from './migrations/migration';

export type { Migration } from './migrations/migration';

/** Every known migration, oldest first. Append new ones here. */
export const MIGRATIONS: readonly Migration[] = [migration0001, migration0002, migration0003, migration0004, migration0005, migration0006];

/** The schema version this build of Slotscope writes and reads. */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1].version;

MIGRATIONS.forEach((m, i) => {
  if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
});

/** Reads PRAGMA user_version (0 for a new, empty file). */
export function readSchemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Throws a clear Error, without touching the file, when the database cannot be used by this
 * build: a newer schema, a SQLite file that belongs to something else, or (read-only) a schema
 * that still needs migrating.
 */
export function assertUsableSchema(db: Database, file: string, version: number, readonly: boolean): void {
  if (version > LATEST_SCHEMA_VERSION) {
    throw new Error(
      `database schema version ${version} is newer than this Slotscope (knows up to ${LATEST_SCHEMA_VERSION}); ` +
        `upgrade Slotscope (file: ${file})`,
    );
  }
  if (version === 0) {
    const tables = db.prepare(`SELECT count(*) FROM sqlite_master`).pluck().get() as number;
    if (tables > 0) throw new Error(`${file} is an SQLite database but not a Slotscope history database`);
  } else if ((db.pragma('application_id', { simple: true }) as number) !== SLOTSCOPE_APPLICATION_ID) {
    throw new Error(`${file} is an SQLite database but not a Slotscope history database (wrong application_id)`);
  }
  if (readonly && version < LATEST_SCHEMA_VERSION) {
    throw new Error(
      version === 0
        ? `${file} holds no Slotscope history yet (schema version 0); open it for writing first`
        : `database schema version ${version} of ${file} is older than this Slotscope (${LATEST_SCHEMA_VERSION}); ` +
            `open it for writing once to upgrade it`,
    );
  }
}

/** Applies every migration above `fromVersion`, each in its own transaction. Returns the new version. */
export function migrate(db: Database, file: string, fromVersion: number = readSchemaVersion(db)): number {
  assertUsableSchema(db, file, fromVersion, false);
  for (const m of MIGRATIONS) {
    if (m.version <= fromVersion) continue;
    const step = db.transaction(() => {
      // Re-read inside the write transaction: another process may have migrated meanwhile.
      if (readSchemaVersion(db) >= m.version) return;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    });
    try {
      step.immediate();
    } catch (e) {
      throw new Error(`migration ${m.version} (${m.name}) failed on ${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  return readSchemaVersion(db);
}
