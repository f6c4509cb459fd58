// Checks the parser on the newer per-host limits: rate-limit headers and Retry-After formats,
// quotas, soft blocks and failing robots.txt; defaults stay absent so old scenarios parse as before.

import { describe, expect, it } from 'vitest';
import { parseScenario, ScenarioError, SOFT_BLOCK_BODY } from '../../../electron/core/testsite';

function issuesOf(input: unknown): readonly string[] {
  try {
    parseScenario(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ScenarioError);
    return (err as ScenarioError).issues;
  }
  throw new Error('expected a ScenarioError');
}

const host = (fields: Record<string, unknown>): unknown => ({ hosts: { 'a.test': fields } });

describe('parseScenario: rate_limit options', () => {
  it('leaves the defaults out and keeps the chosen options, idempotently', () => {
    const plain = parseScenario(host({ rate_limit: { requests: 2, retry_after_format: 'seconds', headers: 'none', block_while_retry_after: false } }));
    expect(plain.hosts['a.test'].rate_limit).toEqual({ requests: 2, per_seconds: 1, status: 429, retry_after: 1 });
    expect(Object.keys(plain.hosts['a.test'].rate_limit!)).toEqual(['requests', 'per_seconds', 'status', 'retry_after']);
    const full = parseScenario(
      host({ rate_limit: { requests: 2, retry_after: 3, retry_after_format: 'http-date', headers: 'x-ratelimit', block_while_retry_after: true } }),
    );
    expect(full.hosts['a.test'].rate_limit).toEqual({
      requests: 2,
      per_seconds: 1,
      status: 429,
      retry_after: 3,
      retry_after_format: 'http-date',
      headers: 'x-ratelimit',
      block_while_retry_after: true,
    });
    expect(parseScenario(JSON.parse(JSON.stringify(full)))).toEqual(full);
  });

  it('names bad values and meaningless combinations', () => {
    expect(issuesOf(host({ rate_limit: { requests: 1, retry_after_format: 'rfc', headers: 'draft', block_while_retry_after: 'yes' } }))).toEqual([
      'hosts["a.test"].rate_limit.retry_after_format: "rfc" is not allowed (one of "seconds", "http-date")',
      'hosts["a.test"].rate_limit.headers: "draft" is not allowed (one of "none", "ratelimit", "x-ratelimit")',
      'hosts["a.test"].rate_limit.block_while_retry_after: "yes" is not allowed (true or false)',
    ]);
    expect(issuesOf(host({ rate_limit: { requests: 1, retry_after: null, retry_after_format: 'http-date' } }))).toEqual([
      'hosts["a.test"].rate_limit.retry_after_format: "http-date" is not allowed (only with a retry_after: retry_after null sends no Retry-After)',
    ]);
    expect(issuesOf(host({ rate_limit: { requests: 1, retry_after: null, block_while_retry_after: true } }))).toEqual([
      'hosts["a.test"].rate_limit.block_while_retry_after: true is not allowed (only when a Retry-After is sent: retry_after is null and there is no quota)',
    ]);
    // With a quota, its refusals announce blocks, so the option means something.
    expect(() => parseScenario(host({ rate_limit: { requests: 1, retry_after: null, block_while_retry_after: true }, quota: { units: 5 } }))).not.toThrow();
    expect(issuesOf(host({ rate_limit: { requests: 1, headers: 'ratelimit', extra: 1 } }))[0]).toMatch(
      /^hosts\["a.test"\]\.rate_limit\.extra: is not a known field \(allowed: requests, per_seconds, status, retry_after, retry_after_format, headers, block_while_retry_after\)$/,
    );
  });

  it('refuses scenario headers that a limit sets on each response', () => {
    expect(
      issuesOf(
        host({
          rate_limit: { requests: 1, headers: 'ratelimit', retry_after_format: 'http-date' },
          headers: { 'ratelimit-limit': 5, 'Retry-After': 3, 'X-RateLimit-Limit': 5 },
        }),
      ),
    ).toEqual([
      'hosts["a.test"].headers["ratelimit-limit"]: "ratelimit-limit" is not allowed as a header name (rate_limit.headers sets it on each response)',
      'hosts["a.test"].headers["Retry-After"]: "Retry-After" is not allowed as a header name (rate_limit.retry_after_format sets it on each response)',
    ]);
    expect(issuesOf(host({ quota: { units: 5, cost_header: 'X-Cost' }, headers: { 'x-cost': 1 } }))).toEqual([
      'hosts["a.test"].headers["x-cost"]: "x-cost" is not allowed as a header name (quota.cost_header sets it on each response)',
    ]);
    // A plain rate limit keeps the old rule: a scenario Retry-After replaces the limit's.
    expect(() => parseScenario(host({ rate_limit: { requests: 1 }, headers: { 'Retry-After': 9 } }))).not.toThrow();
  });
});

describe('parseScenario: quota', () => {
  it('fills defaults and keeps costs', () => {
    const s = parseScenario(host({ quota: { units: 10, costs: { '/page/1': 5, '/api/*': 3, '/': 0 } } }));
    expect(s.hosts['a.test'].quota).toEqual({ units: 10, per_seconds: 1, status: 429, costs: { '/page/1': 5, '/api/*': 3, '/': 0 } });
    const full = parseScenario(host({ quota: { units: 10, per_seconds: 60, status: 503, cost_header: 'X-Cost' } }));
    expect(full.hosts['a.test'].quota).toEqual({ units: 10, per_seconds: 60, status: 503, cost_header: 'X-Cost', costs: {} });
    expect(parseScenario(JSON.parse(JSON.stringify(full)))).toEqual(full);
    expect(parseScenario(host({})).hosts['a.test'].quota).toBeUndefined();
  });

  it('names every bad field', () => {
    expect(issuesOf(host({ quota: { per_seconds: 0, status: 200, cost_header: 'Bad Header', costs: { page: 1, '/a*b': 1, '/x': -1 } } }))).toEqual([
      'hosts["a.test"].quota.units: is required (an integer >= 1)',
      'hosts["a.test"].quota.per_seconds: 0 is not allowed (a number > 0)',
      'hosts["a.test"].quota.status: 200 is not allowed (an integer from 400 to 599)',
      'hosts["a.test"].quota.cost_header: "Bad Header" is not allowed as a header name (letters, digits and !#$%&\'*+.^_`|~-)',
      'hosts["a.test"].quota.costs["page"] (key): "page" is not allowed (a path starting with "/", or a prefix ending in "*", without "?", "#" or spaces)',
      'hosts["a.test"].quota.costs["/a*b"] (key): "/a*b" is not allowed (a path starting with "/", or a prefix ending in "*", without "?", "#" or spaces)',
      'hosts["a.test"].quota.costs["/x"]: -1 is not allowed (an integer >= 0)',
    ]);
    expect(issuesOf(host({ quota: { units: 10, costs: { '/x': 11 } } }))).toEqual([
      'hosts["a.test"].quota.costs["/x"]: 11 is not allowed (an integer from 0 to 10)',
    ]);
    expect(issuesOf(host({ quota: { units: 0, cost_header: 'Content-Length' } }))).toEqual([
      'hosts["a.test"].quota.units: 0 is not allowed (an integer >= 1)',
      'hosts["a.test"].quota.cost_header: "Content-Length" is not allowed as a header name (the server sets content-length, transfer-encoding, connection, content-encoding, keep-alive itself)',
    ]);
    expect(issuesOf(host({ quota: { units: 1, cost_header: 'retry-after' } }))).toEqual([
      'hosts["a.test"].quota.cost_header: "retry-after" is not allowed (a header name other than Retry-After, which the quota sets itself)',
    ]);
    expect(issuesOf(host({ quota: 5 }))).toEqual(['hosts["a.test"].quota: 5 is not allowed (an object)']);
  });
});

describe('parseScenario: soft_block and robots.fail_times', () => {
  it('takes exactly one trigger, with a default body', () => {
    expect(parseScenario(host({ soft_block: { after: 3 } })).hosts['a.test'].soft_block).toEqual({ after: 3, body: SOFT_BLOCK_BODY });
    expect(parseScenario(host({ soft_block: { min_gap_ms: 250, body: '<p>slow</p>' } })).hosts['a.test'].soft_block).toEqual({
      min_gap_ms: 250,
      body: '<p>slow</p>',
    });
    expect(issuesOf(host({ soft_block: { after: 1, min_gap_ms: 5 } }))).toEqual([
      'hosts["a.test"].soft_block: {"after":1,"min_gap_ms":5} is not allowed (exactly one of after and min_gap_ms)',
    ]);
    expect(issuesOf(host({ soft_block: { body: 'x' } }))).toEqual([
      'hosts["a.test"].soft_block: {"body":"x"} is not allowed (exactly one of after and min_gap_ms)',
    ]);
    expect(issuesOf(host({ soft_block: { after: -1, body: 5 } }))).toEqual([
      'hosts["a.test"].soft_block.after: -1 is not allowed (an integer >= 0)',
      'hosts["a.test"].soft_block.body: 5 is not allowed (a string)',
    ]);
    expect(issuesOf(host({ soft_block: { min_gap_ms: 0 } }))).toEqual(['hosts["a.test"].soft_block.min_gap_ms: 0 is not allowed (a number > 0)']);
  });

  it('keeps fail_times only with a failing status', () => {
    expect(parseScenario(host({ robots: { status: 503, fail_times: 2 } })).hosts['a.test'].robots).toEqual({
      status: 503,
      disallow: [],
      allow: [],
      fail_times: 2,
    });
    expect(issuesOf(host({ robots: { fail_times: 2 } }))).toEqual([
      'hosts["a.test"].robots.fail_times: 2 is not allowed (only with a robots.status other than 200: the status of the failing answers)',
    ]);
    expect(issuesOf(host({ robots: { status: 500, fail_times: 1.5 } }))).toEqual([
      'hosts["a.test"].robots.fail_times: 1.5 is not allowed (an integer >= 0)',
    ]);
  });
});
