// The Requests tab and the Scrapy stats panel (issue 16): each response row says which attempt of its
// request it was; the rows worth finding among millions (3xx, 4xx, 429, 5xx, failed downloads) have
// an index of their own; each slot's running totals count retries, robots.txt fetches and the deepest page.
import type { Migration } from './migration';

export const migration0005: Migration = {
  version: 5,
  name: 'request-view',
  up(db) {
    db.exec(`
      -- Retries before this attempt: 0 for a first attempt (and for every row recorded before this column).
      ALTER TABLE responses ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;

      -- Only the rows that are not a 2xx answer (failed downloads have status NULL): a filter on
      -- 429, 5xx or failures pages through these in time order without reading the 2xx millions,
      -- and a 2xx row costs nothing more to write. The request view's queries repeat the WHERE
      -- clause word for word so SQLite can use it.
      CREATE INDEX responses_odd ON responses (crawl_id, status, t) WHERE status IS NULL OR status >= 300;

      -- Kept by the writer with the other totals: rows with attempt > 0, rows fetching /robots.txt,
      -- and the largest depth of the other rows. Older rows have no attempt (0); the rest is counted once here.
      ALTER TABLE slot_stats ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE slot_stats ADD COLUMN robots INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE slot_stats ADD COLUMN depth_max INTEGER NOT NULL DEFAULT 0;
      UPDATE slot_stats SET (robots, depth_max) = (
        SELECT count(*) FILTER (WHERE r.url GLOB '*/robots.txt'), coalesce(max(r.depth) FILTER (WHERE NOT r.url GLOB '*/robots.txt'), 0)
        FROM responses r WHERE r.crawl_id = slot_stats.crawl_id AND r.slot_id = slot_stats.slot_id);
    `);
  },
};
