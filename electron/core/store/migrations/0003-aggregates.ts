// Long crawls stay fast to inspect: buckets of 1 s to 1 h per slot and for the whole crawl (series,
// rebuilt from the raw rows), app-level settings (retention), derived crawls (what-if).
import type { Migration } from './migration';

export const migration0003: Migration = {
  version: 3,
  name: 'aggregates',
  up(db) {
    db.exec(`
      -- The chart series, replacing 0001's: every level for every slot (slot_id 0 = whole crawl).
      -- res_ms 1000, 10000, 60000, 600000 or 3600000; bucket = start of the bucket in epoch ms.
      -- latency_hist: the log-scale latency histogram (store/aggregates.ts) behind latency_p95.
      -- min_*/max_*: the fastest and slowest response of the bucket; odd_*: the one with the worst
      -- status (odd_sev > 0: failure 6, 5xx 5, 429 4, 4xx 3, 3xx 2, 1xx 1). delay_* are delay_after
      -- values; in_flight_* the responding slot's in-flight counts. Rows are filled from
      -- responses by the history worker; series_state.covered_id says up to which response id.
      DROP TABLE series;
      CREATE TABLE series (
        crawl_id      INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        res_ms        INTEGER NOT NULL,
        slot_id       INTEGER NOT NULL,
        bucket        INTEGER NOT NULL,
        requests      INTEGER NOT NULL,
        responses     INTEGER NOT NULL,
        s2xx          INTEGER NOT NULL,
        s3xx          INTEGER NOT NULL,
        s4xx          INTEGER NOT NULL,
        s5xx          INTEGER NOT NULL,
        s429          INTEGER NOT NULL,
        failures      INTEGER NOT NULL,
        latency_sum   REAL NOT NULL,
        latency_n     INTEGER NOT NULL,
        latency_min   REAL,
        min_t         REAL,
        min_status    INTEGER,
        min_delay     REAL,
        latency_max   REAL,
        max_t         REAL,
        max_status    INTEGER,
        max_delay     REAL,
        latency_p95   REAL,
        latency_hist  BLOB,
        odd_sev       INTEGER NOT NULL,
        odd_t         REAL,
        odd_latency   REAL,
        odd_status    INTEGER,
        odd_delay     REAL,
        delay_sum     REAL NOT NULL,
        delay_last    REAL NOT NULL,
        delay_last_t  REAL NOT NULL,
        in_flight_sum REAL NOT NULL,
        in_flight_max INTEGER NOT NULL,
        bytes         INTEGER NOT NULL,
        PRIMARY KEY (crawl_id, res_ms, slot_id, bucket)
      ) WITHOUT ROWID;

      -- 0 here makes the worker aggregate every existing response on its next open.
      CREATE TABLE series_state (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        covered_id INTEGER NOT NULL
      );
      INSERT INTO series_state (id, covered_id) VALUES (1, 0);

      -- Settings of the app and the database, not of a crawl (e.g. key 'retention').
      CREATE TABLE app_settings (
        key        TEXT PRIMARY KEY,
        value_json TEXT NOT NULL
      ) WITHOUT ROWID;

      -- A what-if replay is stored as a crawl derived from the one it replays, with the settings it used.
      ALTER TABLE crawls ADD COLUMN derived_from INTEGER REFERENCES crawls (id) ON DELETE CASCADE;
      ALTER TABLE crawls ADD COLUMN derived_json TEXT;
      CREATE INDEX crawls_derived_from ON crawls (derived_from);
    `);
  },
};
