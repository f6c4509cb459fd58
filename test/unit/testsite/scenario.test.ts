// Checks the scenario parser: defaults, normalisation, and that every error names the field
// path, the value and what is allowed (people write these files by hand).

import { describe, expect, it } from 'vitest';
import { parseScenario, ScenarioError } from '../../../electron/core/testsite';

function issuesOf(input: unknown): readonly string[] {
  try {
    parseScenario(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ScenarioError);
    return (err as ScenarioError).issues;
  }
  throw new Error('expected a ScenarioError');
}

describe('parseScenario', () => {
  it('fills defaults, lower-cases host names and keeps the example scenario', () => {
    const s = parseScenario({
      hosts: {
        'Alpha.TEST': {
          address: '127.0.0.2',
          pages: 200,
          page_bytes: 2000,
          latency_ms: { base: 50, jitter: 10, per_inflight: 20 },
          statuses: { '503': 0.02 },
          rate_limit: { requests: 10, per_seconds: 1, status: 429, retry_after: 2 },
          robots: { crawl_delay: 2, disallow: ['/private/'] },
          headers: { Age: '100' },
        },
        'beta.test': {},
      },
      port: 0,
      seed: 1,
    });
    expect(Object.keys(s.hosts)).toEqual(['alpha.test', 'beta.test']);
    const a = s.hosts['alpha.test'];
    expect(a.address).toBe('127.0.0.2');
    expect(a.latency_ms).toEqual({ base: 50, jitter: 10, per_inflight: 20 });
    expect(a.rate_limit).toEqual({ requests: 10, per_seconds: 1, status: 429, retry_after: 2 });
    expect(a.robots).toEqual({ status: 200, crawl_delay: 2, disallow: ['/private/'], allow: [] });
    const b = s.hosts['beta.test'];
    expect(b.address).toBeUndefined();
    expect(b.pages).toBe(20);
    expect(b.page_bytes).toBe(1000);
    expect(b.latency_ms).toEqual({ base: 0, jitter: 0, per_inflight: 0 });
    expect(b.robots).toBeUndefined();
    expect(s.port).toBe(0);
    expect(s.seed).toBe(1);
  });

  it('is idempotent: a parsed scenario parses to itself', () => {
    const once = parseScenario({
      hosts: {
        'a.test': {
          latency_ms: 30,
          redirects: { '/old': '/page/1', '/tmp': { to: 'http://b.test/', status: 307 } },
          rate_limit: { requests: 2, retry_after: null },
          big: { '/big': 5000 },
          hang: ['/hang'],
          reset: ['/reset'],
          gzip: true,
        },
      },
    });
    expect(once.hosts['a.test'].latency_ms.base).toBe(30);
    expect(once.hosts['a.test'].redirects['/old']).toEqual({ to: '/page/1', status: 301 });
    expect(once.hosts['a.test'].rate_limit?.retry_after).toBeNull();
    expect(parseScenario(JSON.parse(JSON.stringify(once)))).toEqual(once);
  });

  it('names the path, the value and what is allowed', () => {
    const issues = issuesOf({
      hosts: {
        'alpha.test': {
          latency_ms: { base: -1, jitter: 'x' },
          pages: 2.5,
          statuses: { '503': 1.5, abc: 0.1 },
          rate_limit: { per_seconds: 0 },
          address: '10.0.0.1',
          headers: { 'Content-Length': '3', 'X-Ok': 'a\nb' },
          hang: ['no-slash'],
          robots: { crawl_delay: -2, disallow: ['private'] },
          latency: 3,
        },
      },
      port: 70000,
      seed: 'one',
      extra: true,
    });
    const expected = [
      'hosts["alpha.test"].latency_ms.base: -1 is not allowed (a number >= 0)',
      'hosts["alpha.test"].latency_ms.jitter: "x" is not allowed (a number >= 0)',
      'hosts["alpha.test"].pages: 2.5 is not allowed (an integer from 0 to 10000000)',
      'hosts["alpha.test"].statuses["503"]: 1.5 is not allowed (a number from 0 to 1)',
      'hosts["alpha.test"].rate_limit.requests: is required (an integer >= 1)',
      'hosts["alpha.test"].rate_limit.per_seconds: 0 is not allowed (a number > 0)',
      'hosts["alpha.test"].address: "10.0.0.1" is not allowed (a loopback IPv4 address 127.x.x.x)',
      'hosts["alpha.test"].hang[0]: "no-slash" is not allowed (a path starting with "/", without "?", "#" or spaces)',
      'hosts["alpha.test"].robots.crawl_delay: -2 is not allowed (a number >= 0)',
      'port: 70000 is not allowed (an integer from 0 to 65535)',
      'seed: "one" is not allowed (an integer)',
    ];
    for (const line of expected) expect(issues).toContain(line);
    const text = issues.join('\n');
    expect(text).toContain('hosts["alpha.test"].statuses["abc"]');
    expect(text).toContain('hosts["alpha.test"].headers["Content-Length"]');
    expect(text).toContain('hosts["alpha.test"].headers["X-Ok"]');
    expect(text).toContain('hosts["alpha.test"].robots.disallow[0]: "private" is not allowed');
    expect(text).toMatch(/hosts\["alpha.test"\]\.latency: is not a known field \(allowed: address, pages, /);
    expect(text).toMatch(/^extra: is not a known field/m);
  });

  it('puts every issue in the message too', () => {
    expect(() => parseScenario({ hosts: { 'a.test': { page_bytes: -5 } } })).toThrow(
      'hosts["a.test"].page_bytes: -5 is not allowed (an integer from 0 to 50000000)',
    );
  });

  it('refuses non-loopback and malformed addresses', () => {
    for (const address of ['0.0.0.0', '192.168.1.2', '::1', '127.0.0.256', '127.1', 'localhost', 127]) {
      const issues = issuesOf({ hosts: { 'a.test': { address } } });
      expect(issues).toEqual([`hosts["a.test"].address: ${JSON.stringify(address)} is not allowed (a loopback IPv4 address 127.x.x.x)`]);
    }
    expect(parseScenario({ hosts: { 'a.test': { address: '127.255.0.9' } } }).hosts['a.test'].address).toBe('127.255.0.9');
  });

  it('refuses probabilities adding up to more than 1', () => {
    const issues = issuesOf({ hosts: { 'a.test': { statuses: { '503': 0.7, '500': 0.5 } } } });
    expect(issues[0]).toMatch(/^hosts\["a.test"\]\.statuses: \{"500":0.5,"503":0.7\} is not allowed \(probabilities adding up to at most 1, these add up to 1.2\)$/);
  });

  it('refuses bad top-level shapes, duplicate and invalid host names, overlapping paths', () => {
    expect(issuesOf(null)).toEqual(['scenario: null is not allowed (an object)']);
    expect(issuesOf({})).toEqual(['hosts: is required (an object mapping host names to hosts)']);
    expect(issuesOf({ hosts: {} })).toEqual(['hosts: {} is not allowed (at least one host)']);
    expect(issuesOf({ hosts: { 'a.test': {}, 'A.test': {} } })[0]).toMatch(/^hosts\["A.test"\]: "A.test" is not allowed \(host names are case-insensitive/);
    expect(issuesOf({ hosts: { 'bad host': {} } })[0]).toMatch(/^hosts\["bad host"\]: "bad host" is not allowed as a host name/);
    expect(issuesOf({ hosts: { 'a.test': { hang: ['/x'], reset: ['/x'] } } })[0]).toMatch(
      /^hosts\["a.test"\]\.hang: "\/x" is not allowed \(already listed under reset/,
    );
    expect(issuesOf({ hosts: { 'a.test': { redirects: { '/a': { to: '/b', status: 200 } } } } })).toEqual([
      'hosts["a.test"].redirects["/a"].status: 200 is not allowed (301, 302, 303, 307, 308)',
    ]);
  });
});
