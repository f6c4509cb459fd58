// The first schema of the history database: crawls, slots, raw samples, changes, events and
// the running aggregates (per slot, per status, per second/minute) that keep long crawls fast to query.
import type { Migration } from './migration';

/** 'SlSc' in ASCII: marks a file as a Slotscope history database (PRAGMA application_id). */
export const SLOTSCOPE_APPLICATION_ID = 0x536c5363;

export const migration0001: Migration = {
  version: 1,
  name: 'initial',
  up(db) {
    db.exec(`
      CREATE TABLE crawls (
        id            INTEGER PRIMARY KEY,
        name          TEXT NOT NULL,
        config_json   TEXT NOT NULL,
        settings_json TEXT NOT NULL,
        status        TEXT NOT NULL DEFAULT 'created',
        created_at    REAL NOT NULL,
        started_at    REAL,
        finished_at   REAL,
        summary_json  TEXT
      );

      CREATE TABLE slots (
        id       INTEGER PRIMARY KEY,
        crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        key      TEXT NOT NULL,
        UNIQUE (crawl_id, key)
      );

      -- slot_id has no foreign key on purpose: the writer guarantees it, and a declared key
      -- would make every slot delete scan these big tables (no index leads with slot_id).
      CREATE TABLE responses (
        id            INTEGER PRIMARY KEY,
        crawl_id      INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        slot_id       INTEGER NOT NULL,
        t             REAL NOT NULL,
        started_at    REAL NOT NULL,
        wait_ms       REAL NOT NULL,
        url           TEXT NOT NULL,
        method        TEXT NOT NULL,
        status        INTEGER,
        latency       REAL,
        download_time REAL,
        bytes         INTEGER NOT NULL,
        in_flight     INTEGER NOT NULL,
        delay_before  REAL NOT NULL,
        delay_after   REAL NOT NULL,
        delay_cause   TEXT NOT NULL,
        backoff_level INTEGER NOT NULL,
        reused        INTEGER,
        error_kind    TEXT,
        error_message TEXT,
        depth         INTEGER NOT NULL,
        content_type  TEXT
      );
      CREATE INDEX responses_crawl_slot_t ON responses (crawl_id, slot_id, t);
      CREATE INDEX responses_crawl_t ON responses (crawl_id, t);

      CREATE TABLE changes (
        id       INTEGER PRIMARY KEY,
        crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        t        REAL NOT NULL,
        slot_id  INTEGER,
        setting  TEXT NOT NULL,
        source   TEXT NOT NULL,
        old_json TEXT,
        new_json TEXT
      );
      CREATE INDEX changes_crawl_t ON changes (crawl_id, t);
      CREATE INDEX changes_crawl_slot_t ON changes (crawl_id, slot_id, t);

      CREATE TABLE events (
        id        INTEGER PRIMARY KEY,
        crawl_id  INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        t         REAL NOT NULL,
        slot_id   INTEGER,
        kind      TEXT NOT NULL,
        code      TEXT NOT NULL,
        text      TEXT NOT NULL,
        data_json TEXT
      );
      CREATE INDEX events_crawl_t ON events (crawl_id, t);
      CREATE INDEX events_crawl_slot_t ON events (crawl_id, slot_id, t);

      -- Running totals per slot, kept by the writer in the same transaction as the raw rows.
      -- s4xx includes 429; s429 counts 429 alone.
      CREATE TABLE slot_stats (
        crawl_id       INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        slot_id        INTEGER NOT NULL,
        requests       INTEGER NOT NULL,
        responses      INTEGER NOT NULL,
        s2xx           INTEGER NOT NULL,
        s3xx           INTEGER NOT NULL,
        s4xx           INTEGER NOT NULL,
        s5xx           INTEGER NOT NULL,
        s429           INTEGER NOT NULL,
        failures       INTEGER NOT NULL,
        latency_sum    REAL NOT NULL,
        latency_n      INTEGER NOT NULL,
        last_latency   REAL,
        last_latency_t REAL,
        last_delay     REAL NOT NULL,
        last_t         REAL NOT NULL,
        bytes          INTEGER NOT NULL,
        PRIMARY KEY (crawl_id, slot_id)
      ) WITHOUT ROWID;

      CREATE TABLE status_counts (
        crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        status   INTEGER NOT NULL,
        n        INTEGER NOT NULL,
        PRIMARY KEY (crawl_id, status)
      ) WITHOUT ROWID;

      -- Chart series: res_ms 1000 (whole crawl only, slot_id 0) and 60000 (whole crawl and per slot).
      -- bucket = start of the second/minute in epoch ms.
      CREATE TABLE series (
        crawl_id    INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        res_ms      INTEGER NOT NULL,
        slot_id     INTEGER NOT NULL,
        bucket      INTEGER NOT NULL,
        requests    INTEGER NOT NULL,
        responses   INTEGER NOT NULL,
        s2xx        INTEGER NOT NULL,
        s3xx        INTEGER NOT NULL,
        s4xx        INTEGER NOT NULL,
        s5xx        INTEGER NOT NULL,
        s429        INTEGER NOT NULL,
        failures    INTEGER NOT NULL,
        latency_sum REAL NOT NULL,
        latency_n   INTEGER NOT NULL,
        latency_max REAL,
        delay_sum   REAL NOT NULL,
        bytes       INTEGER NOT NULL,
        PRIMARY KEY (crawl_id, res_ms, slot_id, bucket)
      ) WITHOUT ROWID;
    `);
    db.pragma(`application_id = ${SLOTSCOPE_APPLICATION_ID}`);
  },
};
