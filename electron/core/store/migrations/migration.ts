// The shape of one schema step, apart from the list that runs them (migrate.ts imports every
// migration; a migration importing migrate.ts back would make an import cycle).

import type { Database } from 'better-sqlite3';

/** One schema step. Never edit a released migration: append a new one. */
export interface Migration {
  /** 1, 2, 3, … in order without gaps; stored in PRAGMA user_version once applied. */
  readonly version: number;
  readonly name: string;
  /** Runs inside the migration's transaction. */
  up(db: Database): void;
}
