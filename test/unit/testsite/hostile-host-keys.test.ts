// A test-site scenario whose host names are prototype member names keeps them as plain hosts
// (issue 15: never a silent drop or a TypeError), and the engine's delay pin refuses what its timers
// cannot hold.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../electron/core/testsite/scenario';
import { Crawler } from '../../../electron/core/engine/crawler';
import { parseCrawlConfig } from '../../../electron/core/engine/crawl-config';

describe('hostile keys and values', () => {
  it('a scenario keeps hosts named __proto__, constructor and toString', () => {
    const sc = parseScenario(JSON.parse('{"hosts": {"__proto__": {"address": "127.0.49.1"}, "constructor": {"address": "127.0.49.2"}, "toString": {"address": "127.0.49.3"}}}'));
    expect(Object.keys(sc.hosts).sort()).toEqual(['__proto__', 'constructor', 'tostring']); // host names are lower-cased
    expect(sc.hosts['__proto__'].address).toBe('127.0.49.1');
  });

  it('a delay pin above a day (or not a number) is refused whole, naming what is allowed', () => {
    const r = parseCrawlConfig({ seeds: ['http://pin.test/'] });
    if (!r.ok) throw new Error('config refused');
    const c = new Crawler({ config: r.config });
    expect(() => c.pinDelay('pin.test', 1e308)).toThrow(/delay pin: 1e\+308 is not allowed \(a number of seconds >= 0 and <= 86400/);
    expect(c.slot('pin.test')?.pinDelay ?? null).toBe(null);
    c.pinDelay('pin.test', 2);
    expect(c.slot('pin.test')!.pinDelay).toBe(2);
    void c.close();
  });
});
