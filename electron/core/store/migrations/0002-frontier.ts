// Crash-safe resume: the frontier of every crawl (each accepted URL with its state) and each slot's
// learned throttle state, so a crawl killed or quit mid-way continues where it was.
import type { Migration } from './migration';

export const migration0002: Migration = {
  version: 2,
  name: 'frontier',
  up(db) {
    db.exec(`
      -- One row per URL the crawl accepted (seed, link or redirect target); robots.txt is not in it.
      -- seq is the engine's acceptance number within the crawl.
      -- state: 0 queued, 1 in flight, 2 done (committed with its response row), 3 given up
      -- (in flight at two interrupted runs). crashes counts the interrupted runs it was in flight at.
      CREATE TABLE frontier (
        crawl_id  INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
        seq       INTEGER NOT NULL,
        url       TEXT NOT NULL,
        state     INTEGER NOT NULL,
        depth     INTEGER NOT NULL,
        priority  INTEGER NOT NULL,
        redirects INTEGER NOT NULL,
        retries   INTEGER NOT NULL,
        crashes   INTEGER NOT NULL DEFAULT 0,
        meta_json TEXT,
        PRIMARY KEY (crawl_id, seq)
      ) WITHOUT ROWID;

      -- A slot's learned throttle state (AutoThrottle delay, backoff, Retry-After block, Crawl-delay,
      -- pins, pause) as of state_t, as JSON; restored when the crawl resumes.
      ALTER TABLE slots ADD COLUMN state_json TEXT;
      ALTER TABLE slots ADD COLUMN state_t REAL;
    `);
  },
};
