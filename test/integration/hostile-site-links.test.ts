// Hostile sites, link extraction (issue 15): a page of deeply nested elements or a huge page never
// blocks the scheduler (bounded, streaming work per page), and the per-page caps are said.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { LINK_SCAN_LIMITS } from '../../electron/core/engine/links';
import { arrivals, crawl, crawlConfig, gaps, site } from './helpers';

// Loopback addresses of this file: 127.0.92.40 – 127.0.92.59.

/** Longest event-loop stall allowed: far below what one blocking parse costs, with room for a loaded machine (two shared cores). */
const STALL_MS = 1500;

/** Event-loop lag while `fn` runs: the longest stall and the p99, in ms. */
async function lagDuring<T>(fn: () => Promise<T>): Promise<{ result: T; maxMs: number; p99Ms: number }> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  try {
    const result = await fn();
    return { result, maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 };
  } finally {
    h.disable();
  }
}

describe('link extraction never blocks the scheduler', () => {
  it('a page of 200,000 nested <div>s costs no stall, and its last link is followed', async () => {
    const s = await site({
      hosts: {
        'nested.test': {
          address: '127.0.92.40',
          pages: 0,
          bodies: { '/': { head: '<!doctype html><html><body><a href="/first">first</a>', fill: '<div>', tail: '<a href="/deep">deep</a></body></html>', bytes: 1_000_000 } },
        },
        'normal.test': { address: '127.0.92.41', pages: 60 },
      },
    });
    const config = crawlConfig({
      seeds: [`${s.origin('nested.test')}/`, `${s.origin('normal.test')}/`],
      settings: { CONCURRENT_REQUESTS_PER_DOMAIN: 1, DOWNLOAD_DELAY: 0.02, RANDOMIZE_DOWNLOAD_DELAY: false, ROBOTSTXT_OBEY: false },
      resolve: s.resolve,
    });
    const { result, maxMs } = await lagDuring(() => crawl(config));
    expect(result.stats.status).toBe('finished');
    expect(arrivals(s, 'nested.test').map((e) => e.path).sort()).toEqual(['/', '/deep', '/first']);
    // htmlparser2's Parser shifts its element stack on every open tag: about 10 s of one blocked turn
    // for this page. The bound leaves room for a busy shared machine, not for that.
    expect(maxMs).toBeLessThan(STALL_MS);
    // The normal host kept its pace: no gap far beyond its 20 ms delay.
    expect(Math.max(...gaps(arrivals(s, 'normal.test')))).toBeLessThan(STALL_MS);
  });

  it(`scans at most ${LINK_SCAN_LIMITS.bytes} bytes of a page, in slices, and says so`, async () => {
    const s = await site({
      hosts: {
        'huge.test': {
          address: '127.0.92.42',
          pages: 0,
          bodies: {
            '/': {
              head: '<html><body><a href="/early">early</a>',
              fill: '<p><a href="#x">same page</a> filler text filler text</p>\n',
              tail: '<a href="/late">late</a></body></html>',
              bytes: LINK_SCAN_LIMITS.bytes * 3,
            },
          },
        },
      },
    });
    const config = crawlConfig({ seeds: [`${s.origin('huge.test')}/`], settings: { DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false }, resolve: s.resolve });
    const { result, maxMs } = await lagDuring(() => crawl(config));
    expect(result.stats.status).toBe('finished');
    const paths = arrivals(s, 'huge.test').map((e) => e.path);
    expect(paths).toContain('/early');
    expect(paths).not.toContain('/late');
    const note = result.events.find((e) => e.code === 'links-capped');
    expect(note?.text).toContain(`${LINK_SCAN_LIMITS.bytes} bytes`);
    expect(maxMs).toBeLessThan(STALL_MS);
  });

  it(`keeps at most ${LINK_SCAN_LIMITS.links} links of one page`, async () => {
    const n = LINK_SCAN_LIMITS.links + 500;
    const links = Array.from({ length: n }, (_, i) => `<a href="/l/${i}">${i}</a>`).join('\n');
    const s = await site({ hosts: { 'many.test': { address: '127.0.92.43', pages: 0, bodies: { '/': { head: `<html><body>${links}</body></html>` } } } } });
    // Only the links around the cap are fetched (include), so the crawl stays short.
    const last = LINK_SCAN_LIMITS.links - 1;
    const config = crawlConfig({
      seeds: [`${s.origin('many.test')}/`],
      follow: { include: [`/l/(0|${last}|${last + 1}|${n - 1})$`] },
      settings: { DOWNLOAD_DELAY: 0, ROBOTSTXT_OBEY: false },
      resolve: s.resolve,
    });
    const { result, maxMs } = await lagDuring(() => crawl(config));
    expect(result.stats.status).toBe('finished');
    const fetched = arrivals(s, 'many.test').map((e) => e.path).filter((p) => p.startsWith('/l/'));
    expect(fetched.sort()).toEqual(['/l/0', `/l/${last}`]);
    expect(result.events.find((e) => e.code === 'links-capped')?.text).toContain(`${LINK_SCAN_LIMITS.links} links`);
    expect(maxMs).toBeLessThan(STALL_MS);
  });
});
