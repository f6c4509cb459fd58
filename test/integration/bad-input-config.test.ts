// Issue 15, "Bad input refused whole, with a named error": the crawl config's numbers are decimal
// text or refused, `resolve` maps host names (Unicode ones through their punycode form) to IP
// addresses only, a "no valid seed" error stays short, and a deeply nested document is refused.

// Loopback addresses of this file: 127.0.93.1–9.

import { describe, expect, it } from 'vitest';
import { parseCrawlConfig, type ConfigError } from '../../electron/core/engine/crawl-config';
import { crawl, crawlConfig, linkHub } from './helpers';

const SEEDS = ['http://a.test/'];

function errorsOf(input: unknown, seedText?: string): readonly ConfigError[] {
  const r = parseCrawlConfig(input, seedText);
  let label: string;
  try {
    label = String(JSON.stringify(input)).slice(0, 200);
  } catch {
    label = '(too deep to print)';
  }
  expect(r.ok, label).toBe(false);
  return r.ok ? [] : r.errors;
}

describe('follow limits are whole numbers written in decimal', () => {
  it.each(['', ' ', '0x10', '1e1', '16.5', '-1', 'ten', '0b10'])('follow.max_pages %j is refused, naming the field, the value and what is allowed', (v) => {
    for (const key of ['max_pages', 'max_depth']) {
      const errors = errorsOf({ seeds: SEEDS, follow: { [key]: v } });
      expect(errors).toHaveLength(1);
      expect(errors[0].field).toBe(`follow.${key}`);
      expect(errors[0].message.startsWith(`follow.${key}: ${JSON.stringify(v)} is not allowed (a whole number >= 0`)).toBe(true);
    }
  });

  it('accepts decimal digits as text and as numbers', () => {
    const r = parseCrawlConfig({ seeds: SEEDS, follow: { max_pages: '16', max_depth: 3 } });
    expect(r.ok).toBe(true);
    if (r.ok) expect([r.config.follow.maxPages, r.config.follow.maxDepth]).toEqual([16, 3]);
  });
});

describe('resolve maps host names to IP addresses', () => {
  it.each(['example.com', 'localhost', '', '1.2.3', '256.1.1.1', ':::::', 'abc', '::1::', '127.0.0.1 ', 42])(
    'refuses the value %j, naming the host',
    (ip) => {
      const errors = errorsOf({ seeds: SEEDS, resolve: { 'a.test': ip } });
      expect(errors).toHaveLength(1);
      expect(errors[0].field).toBe('resolve["a.test"]');
      expect(errors[0].message).toBe(`resolve["a.test"]: ${JSON.stringify(ip)} is not allowed (an IPv4 or IPv6 address)`);
    },
  );

  it.each(['a.test:80', 'http://a.test', 'a test', 'a.test/x', 'user@a.test', '[::1]', ''])('refuses the host key %j', (host) => {
    const errors = errorsOf({ seeds: SEEDS, resolve: { [host]: '127.0.0.1' } });
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(/^resolve\[.*\]: .* is not allowed \(a host name/);
  });

  it('accepts IPv4 and IPv6 addresses, and keys host names by their ASCII (punycode) form', () => {
    const r = parseCrawlConfig({ seeds: SEEDS, resolve: { 'A.Test': '127.0.93.1', 'bücher.test': '::1', 'xn--mnchen-3ya.test': '127.0.93.2' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect({ ...r.config.resolve }).toEqual({ 'a.test': '127.0.93.1', 'xn--bcher-kva.test': '::1', 'xn--mnchen-3ya.test': '127.0.93.2' });
  });

  it('a Unicode host in resolve is fetched from its address', async () => {
    const hub = await linkHub('127.0.93.3', { '/': '<html>umlaut</html>' });
    const config = crawlConfig({
      seeds: [`http://bücher.test:${hub.port}/`],
      settings: { ROBOTSTXT_OBEY: false, DOWNLOAD_DELAY: 0 },
      resolve: { 'BÜCHER.test': '127.0.93.3' },
    });
    const { records, stats } = await crawl(config, { limitMs: 10_000 });
    expect(stats.status).toBe('finished');
    expect(records).toHaveLength(1);
    expect(records[0].errorMessage).toBeNull();
    expect(records[0].status).toBe(200);
    expect(hub.served).toEqual(['/']);
  });
});

describe('a "no valid seed" error over many bad lines', () => {
  it('is short: counts and the first ten lines', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `bad line number ${i + 1} ${'x'.repeat(50)}`);
    const errors = errorsOf({ seeds: lines.slice(0, 50_000) }, lines.slice(50_000).join('\n'));
    expect(errors).toHaveLength(1);
    const m = errors[0].message;
    expect(errors[0].field).toBe('seeds');
    expect(m.length).toBeLessThan(2500);
    expect(m).toMatch(/100,000 bad lines/);
    expect(m).toContain('config seeds item 1:');
    expect(m).toContain('config seeds item 10:');
    expect(m).not.toContain('config seeds item 11:');
    expect(m).toMatch(/and 99,990 more/);
  });

  it('shows a very long bad line shortened', () => {
    for (const line of ['y'.repeat(1_000_000), `${'s'.repeat(1_000_000)}:x`]) {
      const errors = errorsOf({ seeds: `${line}\n` });
      expect(errors[0].message.length).toBeLessThan(1000);
    }
  });
});

describe('a config nested 200,000 levels deep', () => {
  it('is refused with a message, not a RangeError', () => {
    const deep = JSON.parse(`{"seeds": ["http://a.test/"], "follow": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    const errors = errorsOf(deep);
    expect(errors.map((e) => e.field)).toEqual(['follow']);
    expect(errors[0].message.length).toBeLessThan(500);
    const unknown = JSON.parse(`{"seeds": ["http://a.test/"], "extra": ${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}}`);
    expect(errorsOf(unknown).map((e) => e.field)).toEqual(['extra']);
  });
});
