// A crawl opened as a shared crawl (issue 18) says so in its row: which shared crawl of which Redis
// holds its frontier, so a restarted console resumes it there and never as a one-process crawl.
import type { Migration } from './migration';

export const migration0006: Migration = {
  version: 6,
  name: 'shared-crawl',
  up(db) {
    db.exec(`
      -- JSON {"sid": the shared crawl's id in Redis, "redis": the Redis URL without its password}; NULL: not shared.
      ALTER TABLE crawls ADD COLUMN shared_json TEXT;
    `);
  },
};
