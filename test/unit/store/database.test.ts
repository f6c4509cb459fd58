// Opening and migrating the history database: versions, idempotence, and the refusals of a
// newer, corrupt or foreign file, which must leave that file untouched.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../electron/core/store/database';
import { LATEST_SCHEMA_VERSION, migrate } from '../../../electron/core/store/migrate';
import { SLOTSCOPE_APPLICATION_ID } from '../../../electron/core/store/migrations/0001-initial';
import { openHistoryWriter } from '../../../electron/core/store/history-writer';
import { openHistoryReader } from '../../../electron/core/store/queries';
import { buildStoreBundle, freshDir, type StoreBundle } from './helpers';

let bundle: StoreBundle;
beforeAll(async () => {
  bundle = await buildStoreBundle();
});
afterAll(() => bundle.remove());

const tables = (db: Sqlite.Database): string[] =>
  db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[];

describe('openDatabase', () => {
  it('migrates a new file, sets user_version, WAL and the connection pragmas', () => {
    const file = join(freshDir(), 'h.sqlite');
    const db = openDatabase(file);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(db.pragma('application_id', { simple: true })).toBe(SLOTSCOPE_APPLICATION_ID);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(tables(db)).toEqual(
      ['app_settings', 'changes', 'crawls', 'events', 'frontier', 'responses', 'series', 'series_state', 'slot_stats', 'slots', 'status_counts'].sort(),
    );
    db.close();
  });

  it('is idempotent on reopen and on a repeated migrate()', () => {
    const file = join(freshDir(), 'h.sqlite');
    const first = openDatabase(file);
    first.prepare(`INSERT INTO crawls (name, config_json, settings_json, created_at) VALUES ('a', '{}', '{}', 1)`).run();
    const before = tables(first);
    first.close();

    const again = openDatabase(file);
    expect(again.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(migrate(again, file)).toBe(LATEST_SCHEMA_VERSION);
    expect(tables(again)).toEqual(before);
    expect(again.prepare(`SELECT count(*) FROM crawls`).pluck().get()).toBe(1);
    again.close();

    const ro = openDatabase(file, { readonly: true });
    expect(ro.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    ro.close();
  });

  it('refuses a newer schema with a clear message and leaves the file unchanged', async () => {
    const file = join(freshDir(), 'newer.sqlite');
    const newer = LATEST_SCHEMA_VERSION + 5;
    const make = new Sqlite(file);
    make.exec(`CREATE TABLE crawls (id INTEGER PRIMARY KEY, future TEXT)`);
    make.pragma(`application_id = ${SLOTSCOPE_APPLICATION_ID}`);
    make.pragma(`user_version = ${newer}`);
    make.close();
    const bytes = readFileSync(file);
    const message = `database schema version ${newer} is newer than this Slotscope (knows up to ${LATEST_SCHEMA_VERSION}); upgrade Slotscope`;

    expect(() => openDatabase(file)).toThrow(message);
    expect(() => openDatabase(file, { readonly: true })).toThrow(message);
    expect(() => openHistoryReader(file)).toThrow(message);
    await expect(openHistoryWriter(file, { workerFile: bundle.workerFile })).rejects.toThrow(message);

    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(existsSync(`${file}-wal`)).toBe(false);
    const check = new Sqlite(file, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(newer);
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();
  });

  it('gives a clear error naming the file for a garbage file, and does not touch it', async () => {
    const file = join(freshDir(), 'garbage.sqlite');
    const garbage = Buffer.alloc(8192);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919) % 251;
    writeFileSync(file, garbage);

    const expected = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a Slotscope history database \\(not an SQLite file, or corrupt\\)`);
    expect(() => openDatabase(file)).toThrow(expected);
    expect(() => openDatabase(file, { readonly: true })).toThrow(expected);
    await expect(openHistoryWriter(file, { workerFile: bundle.workerFile })).rejects.toThrow(expected);
    expect(readFileSync(file).equals(garbage)).toBe(true);
  });

  it('refuses an SQLite file that belongs to something else', () => {
    const file = join(freshDir(), 'other.sqlite');
    const other = new Sqlite(file);
    other.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`);
    other.close();
    expect(() => openDatabase(file)).toThrow(`${file} is an SQLite database but not a Slotscope history database`);

    const tagged = join(freshDir(), 'tagged.sqlite');
    const t = new Sqlite(tagged);
    t.pragma('user_version = 1');
    t.close();
    expect(() => openDatabase(tagged)).toThrow(/not a Slotscope history database \(wrong application_id\)/);
  });

  it('names the file when a read-only open finds nothing', () => {
    const file = join(freshDir(), 'missing.sqlite');
    expect(() => openDatabase(file, { readonly: true })).toThrow(`cannot open history database ${file}`);
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a read-only open of a file that needs migrating', () => {
    const file = join(freshDir(), 'empty.sqlite');
    writeFileSync(file, '');
    expect(() => openDatabase(file, { readonly: true })).toThrow(/holds no Slotscope history yet \(schema version 0\)/);
  });
});
