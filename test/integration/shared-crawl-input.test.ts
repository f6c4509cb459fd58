// Issue 18, bad input to a shared crawl: each refused with a clear error naming it, exit 2; and a
// Redis with a password, and one over TLS, that work.

import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defer, ensureBuilt, externalSite, freshDir, waitFor } from './helpers';
import { configFile, freePort, hasRedis, slotscope, startRedis, summaryOf } from './redis-helpers';

// Loopback addresses of this file: 127.0.108.x.

beforeAll(ensureBuilt, 120_000);

const crawlJson = () => configFile({ name: 'x', seeds: ['http://127.0.108.1:9/'], settings: { ROBOTSTXT_OBEY: false } });

async function refused(args: string[]): Promise<string> {
  const p = slotscope(args);
  const code = await p.exited;
  expect(code, p.stderr).toBe(2);
  return p.stderr;
}

/** A server that answers like a Redis of another major version (INFO says so). */
async function fakeRedis(version: string): Promise<number> {
  const server: Server = createServer((socket) => {
    socket.on('data', (d) => {
      for (const m of d.toString('latin1').matchAll(/\*\d+\r\n\$\d+\r\n(\w+)/g)) {
        const cmd = m[1]!.toUpperCase();
        if (cmd === 'INFO') {
          const body = `# Server\r\nredis_version:${version}\r\nloading:0\r\n`;
          socket.write(`$${body.length}\r\n${body}\r\n`);
        } else if (cmd === 'CLIENT' || cmd === 'SELECT') socket.write('+OK\r\n');
        else socket.write(`-ERR unknown command '${cmd}'\r\n`);
      }
    });
    socket.on('error', () => undefined);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  defer(() => new Promise<void>((r) => server.close(() => r())));
  return port;
}

describe.skipIf(!hasRedis)('a shared crawl refuses bad input', () => {
  it('a --redis that is not a Redis URL, or names no reachable Redis', async () => {
    const db = join(freshDir(), 'h.sqlite');
    expect(await refused(['crawl', '--config', crawlJson(), '--db', db, '--redis', 'http://127.0.0.1:6379'])).toMatch(/--redis: "http:\/\/127\.0\.0\.1:6379\/?" has the scheme http \(allowed: redis:\/\/ or rediss:\/\/ for TLS\)/);
    expect(await refused(['crawl', '--config', crawlJson(), '--db', db, '--redis', 'not a url'])).toMatch(/--redis: "not a url" is not a URL/);
    expect(await refused(['crawl', '--config', crawlJson(), '--db', db, '--redis', 'redis://127.0.0.1:6379/x'])).toMatch(/the database "x" .* is not a number from 0 to 15/);
    const dead = await freePort();
    expect(await refused(['worker', '--redis', `redis://127.0.0.1:${dead}/0`])).toMatch(new RegExp(`cannot connect to Redis at redis://127\\.0\\.0\\.1:${dead}/0`));
    expect(await refused(['crawl', '--config', crawlJson(), '--db', db, '--no-fetch'])).toMatch(/--no-fetch is for a shared crawl: add --redis URL/);
  }, 60_000);

  it('a refused password, a missing one, and a Redis of the wrong major version', async () => {
    const redis = await startRedis({ password: 's3cret' });
    const db = join(freshDir(), 'h.sqlite');
    const wrong = await refused(['crawl', '--config', crawlJson(), '--db', db, '--redis', `redis://:nope@127.0.0.1:${redis.port}/0`]);
    expect(wrong).toMatch(/refused the password/);
    expect(wrong).not.toMatch(/nope/);
    expect(await refused(['worker', '--redis', `redis://127.0.0.1:${redis.port}/0`])).toMatch(/needs a password/);
    const old = await fakeRedis('6.2.14');
    expect(await refused(['worker', '--redis', `redis://127.0.0.1:${old}/0`])).toMatch(/is version 6\.2\.14; a shared crawl needs Redis 7 or newer/);
  }, 60_000);

  it('a crawl id that does not exist, or is not a shared crawl; a setting a shared crawl cannot honour', async () => {
    const redis = await startRedis();
    const db = join(freshDir(), 'h.sqlite');
    expect(await refused(['crawl', '--db', db, '--resume', '99', '--redis', redis.url])).toMatch(/cannot resume: crawl 99 does not exist/);
    const unsupported = configFile({ name: 'x', seeds: ['http://127.0.108.1:9/'], settings: { DOWNLOAD_DELAY_PER_SLOT: 0.5 } });
    expect(await refused(['crawl', '--config', unsupported, '--db', db, '--redis', redis.url])).toMatch(/cannot honour: DOWNLOAD_DELAY_PER_SLOT 0\.5 \(allowed in a shared crawl: 0\)/);
    // Nothing was half-applied: no crawl opened in Redis.
    expect(redis.cli('GET', 'ss:open')).toBe('');
  }, 60_000);
});

describe.skipIf(!hasRedis)('a shared crawl on a Redis that is run safely', () => {
  async function smallCrawl(url: string, env: NodeJS.ProcessEnv = {}) {
    const ext = await externalSite({ hosts: { 'safe.test': { address: '127.0.108.20', pages: 10, latency_ms: 5 } } });
    // 10 pages 0.1 s apart: the worker, started first, joins the crawl before it ends.
    const config = configFile({ name: 'safe', seeds: [`${ext.origin('safe.test')}/`], follow: { scope: 'host' }, resolve: ext.resolve, settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false } });
    const db = join(freshDir(), 'h.sqlite');
    const w = slotscope(['worker', '--redis', url, '--name', 'w'], env);
    await waitFor(() => /waiting for a shared crawl/.test(w.stderr) || w.child.exitCode !== null, 'the worker to wait', 15_000);
    const rec = slotscope(['crawl', '--config', config, '--db', db, '--redis', url, '--name', 'rec'], env);
    expect(await rec.exited, rec.stderr).toBe(0);
    expect(await w.exited, w.stderr).toBe(0);
    await ext.finish();
    return { summary: summaryOf(rec), stderr: rec.stderr };
  }

  it('with a password (redis://:secret@…), never printed', async () => {
    const redis = await startRedis({ password: 'pa ss/word' });
    const { summary, stderr } = await smallCrawl(redis.url);
    expect(summary.responses).toBe(10);
    expect(stderr).not.toMatch(/pa(%20| )ss/);
  }, 60_000);

  const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
  it.skipIf(!hasOpenssl)('over TLS (rediss://), the server checked against a CA', async () => {
    const dir = freshDir('slotscope-tls-');
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const port = await freePort();
    await startRedis({ port: await freePort(), args: ['--tls-port', String(port), '--tls-cert-file', cert, '--tls-key-file', key, '--tls-ca-cert-file', cert, '--tls-auth-clients', 'no'] });
    const url = `rediss://127.0.0.1:${port}/0`;
    // Without the CA the server's certificate is refused, saying so.
    expect(await refused(['worker', '--redis', url])).toMatch(/cannot connect to Redis at rediss:\/\/127\.0\.0\.1:\d+\/0: .*(self[- ]signed|certificate)/i);
    const { summary } = await smallCrawl(url, { NODE_EXTRA_CA_CERTS: cert });
    expect(summary.responses).toBe(10);
  }, 60_000);
});
