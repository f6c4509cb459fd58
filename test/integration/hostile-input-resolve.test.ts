// Issue 15, "Bad input refused whole": a host named like one of Object's properties is a host
// like any other. In the resolve map, __proto__ was silently dropped (assigning it to a plain
// object sets the prototype), and a host the map does not name, like constructor, was "found"
// there (Object's constructor), breaking its connection set-up.

// Loopback addresses of this file: 127.0.48.x.

import { describe, expect, it } from 'vitest';
import { crawl, crawlConfig, linkHub } from './helpers';

const FAST = { ROBOTSTXT_OBEY: false, DOWNLOAD_DELAY: 0 };

describe('host names that are Object property names', () => {
  it('a host named __proto__ in the resolve map is fetched from its address', async () => {
    const hub = await linkHub('127.0.48.1', { '/': '<html>proto</html>' });
    // As a config file says it: JSON.parse makes "__proto__" an own key.
    const config = crawlConfig(JSON.parse(`{
      "seeds": ["http://__proto__:${hub.port}/"],
      "settings": ${JSON.stringify(FAST)},
      "resolve": {"__proto__": "127.0.48.1", "constructor": "127.0.48.1"}
    }`));
    const { records, stats } = await crawl(config, { limitMs: 10_000 });
    expect(stats.status).toBe('finished');
    expect(records).toHaveLength(1);
    expect(records[0].status).toBe(200);
    expect(records[0].slot).toBe('__proto__');
    expect(hub.served).toEqual(['/']);
  });

  it('a host named constructor that the resolve map does not name is looked up in DNS, and its failure recorded', async () => {
    const hub = await linkHub('127.0.48.2', { '/': '<html>a</html>' });
    const config = crawlConfig({
      seeds: [`http://a.test:${hub.port}/`, `http://constructor:${hub.port}/`, `http://tostring:${hub.port}/`],
      settings: FAST,
      resolve: { 'a.test': '127.0.48.2' },
    });
    const { records, stats } = await crawl(config, { limitMs: 10_000 });
    expect(stats.status).toBe('finished');
    const byHost = new Map(records.map((r) => [new URL(r.url).hostname, r]));
    expect(byHost.get('a.test')?.status).toBe(200);
    for (const host of ['constructor', 'tostring']) {
      const r = byHost.get(host);
      expect(r, host).toBeDefined();
      expect(r!.status, host).toBe(null);
      expect(r!.errorKind, `${host}: ${r!.errorMessage}`).toBe('dns');
    }
    expect(hub.served).toEqual(['/']);
  });
});
