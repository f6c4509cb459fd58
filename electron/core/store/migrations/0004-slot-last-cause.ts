// The slot table of a crawl that is not running shows what bound each slot's delay and its backoff
// level at the end: kept in slot_stats beside last_delay (one row per slot), filled for older
// databases from each slot's latest response.
import type { Migration } from './migration';

export const migration0004: Migration = {
  version: 4,
  name: 'slot-last-cause',
  up(db) {
    db.exec(`
      ALTER TABLE slot_stats ADD COLUMN last_cause TEXT;
      ALTER TABLE slot_stats ADD COLUMN last_backoff INTEGER;
      UPDATE slot_stats SET (last_cause, last_backoff) = (
        SELECT r.delay_cause, r.backoff_level FROM responses r
        WHERE r.crawl_id = slot_stats.crawl_id AND r.slot_id = slot_stats.slot_id ORDER BY r.t DESC LIMIT 1);
    `);
  },
};
