// The connection to the Redis a shared crawl lives in (issue 18): the URL checked, the server's
// version checked, the scripts loaded, and each failure said in words that name what was wrong.

import { Redis } from 'ioredis';
import { isIP } from 'node:net';
import * as S from './scripts';

/** Bad input for a shared crawl (a wrong URL, a refused password, a Redis too old, an unknown crawl): exit 2. */
export class SharedCrawlError extends Error {
  override readonly name = 'SharedCrawlError';
}

/** The lowest Redis major version a shared crawl runs on (scripts with TIME, XAUTOCLAIM, HSET with many fields). */
export const REDIS_MAJOR = 7;

/** The key of the open shared crawl's id, and of the id counter. */
export const OPEN_KEY = 'ss:open';
const CRAWL_COUNTER = 'ss:crawls';
/** Hash: `<database file>#<crawl id>` → shared crawl id (what `crawl --resume ID --redis` looks up). */
export const BY_DB_KEY = 'ss:bydb';

/** All keys of shared crawl `id` start with this; the hash tag keeps them on one cluster shard. */
export function crawlPrefix(id: string): string {
  return `ss:c:{${id}}:`;
}

/** A new shared crawl id. */
export async function newCrawlId(r: Redis): Promise<string> {
  return String(await r.incr(CRAWL_COUNTER));
}

const SCRIPTS = {
  ssReserve: S.RESERVE, ssStarted: S.STARTED, ssSent: S.SENT, ssLock: S.LOCK, ssCommit: S.COMMIT, ssAdd: S.ADD,
  ssRecord: S.RECORD, ssSweep: S.SWEEP, ssFinish: S.FINISH, ssHeartbeat: S.HEARTBEAT, ssJoin: S.JOIN, ssUnlease: S.UNLEASE,
} as const;
export type ScriptName = keyof typeof SCRIPTS;

/** Runs one of the shared crawl's scripts (EVALSHA, loading it when Redis does not have it). */
export function script(r: Redis, name: ScriptName, args: readonly (string | number)[]): Promise<unknown> {
  return (r as unknown as Record<ScriptName, (...a: (string | number)[]) => Promise<unknown>>)[name](...args);
}

/** The URL without its password, for messages. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.href;
  } catch {
    return url;
  }
}

/** Checks a --redis value: redis:// or rediss://, a host, a port and a database number if given. */
export function checkRedisUrl(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SharedCrawlError(`--redis: ${JSON.stringify(url)} is not a URL (allowed: redis://[:password@]host:port[/db] or rediss:// for TLS)`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new SharedCrawlError(`--redis: ${JSON.stringify(shownUrl(url))} has the scheme ${u.protocol.slice(0, -1)} (allowed: redis:// or rediss:// for TLS)`);
  }
  if (!u.hostname) throw new SharedCrawlError(`--redis: ${JSON.stringify(shownUrl(url))} names no host`);
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db)) throw new SharedCrawlError(`--redis: the database ${JSON.stringify(db)} of ${JSON.stringify(shownUrl(url))} is not a number from 0 to 15`);
  return u;
}

export interface ConnectOptions {
  /** A name for Redis's CLIENT LIST. */
  readonly name: string;
  /** Seconds to wait for the first connection (default 5). */
  readonly connectSeconds?: number;
  /** TLS options for rediss:// (e.g. a CA for a self-signed server). */
  readonly tls?: { readonly ca?: string | Buffer; readonly rejectUnauthorized?: boolean };
  /** Said once per outage: Redis lost, and found again. */
  readonly log?: (line: string) => void;
}

/**
 * Connects, checks the server's version, and loads the scripts. Commands fail at once while Redis is
 * unreachable (no offline queue): a worker that cannot reach Redis starts nothing. The client
 * reconnects by itself, every 50 to 500 ms.
 */
export async function connectRedis(url: string, o: ConnectOptions): Promise<Redis> {
  const u = checkRedisUrl(url);
  const shown = shownUrl(url);
  // An IP address is not a TLS server name (RFC 6066): the certificate is then checked against the IP.
  const tls = u.protocol === 'rediss:' ? { ...(o.tls ?? {}), ...(isIP(u.hostname.replace(/^\[|\]$/g, '')) ? {} : { servername: u.hostname }) } : undefined;
  const r = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: (o.connectSeconds ?? 5) * 1000,
    connectionName: o.name.replace(/[^\w.:-]/g, '_').slice(0, 60),
    retryStrategy: (times) => Math.min(50 * times, 500),
    ...(tls ? { tls } : {}),
  });
  for (const [name, lua] of Object.entries(SCRIPTS)) r.defineCommand(name, { numberOfKeys: 0, lua });
  let lastError = '';
  r.on('error', (e: Error) => void (lastError = e.message));
  try {
    await r.connect();
  } catch (e) {
    r.disconnect();
    // The cause (a refused password, a certificate) comes as an 'error' event; the rejection only says the connection closed.
    const msg = lastError || (e as Error).message;
    if (/NOAUTH/.test(msg)) throw new SharedCrawlError(`--redis: Redis at ${shown} needs a password; give it as redis://:PASSWORD@host:port`);
    if (/WRONGPASS|invalid password|invalid username-password/i.test(msg)) {
      throw new SharedCrawlError(`--redis: Redis at ${shown} refused the password (${msg.trim()}); give it as redis://:PASSWORD@host:port`);
    }
    throw new SharedCrawlError(`--redis: cannot connect to Redis at ${shown}: ${msg || 'no answer'}`);
  }
  try {
    const info = await r.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '';
    const major = Number(version.split('.')[0]);
    if (!(major >= REDIS_MAJOR)) {
      throw new SharedCrawlError(`--redis: Redis at ${shown} is version ${version || 'unknown'}; a shared crawl needs Redis ${REDIS_MAJOR} or newer`);
    }
  } catch (e) {
    r.disconnect();
    if (e instanceof SharedCrawlError) throw e;
    const msg = (e as Error).message;
    if (/NOAUTH|WRONGPASS/i.test(msg)) throw new SharedCrawlError(`--redis: Redis at ${shown} needs a password (${msg.trim()}); give it as redis://:PASSWORD@host:port`);
    throw new SharedCrawlError(`--redis: Redis at ${shown} did not answer INFO: ${msg}`);
  }
  let down = false;
  r.on('close', () => {
    if (closing.has(r)) return;
    if (!down) o.log?.(`Redis at ${shown} is unreachable: no new request starts until it is back`);
    down = true;
  });
  r.on('ready', () => {
    if (down) o.log?.(`Redis at ${shown} is back`);
    down = false;
  });
  return r;
}

const closing = new WeakSet<Redis>();

/** Closes a connection on purpose: not said as Redis becoming unreachable. */
export function closeRedis(r: Redis): void {
  closing.add(r);
  r.disconnect();
}

/** Whether an error is Redis being unreachable (retry later), not a refusal. */
export function isConnectionError(e: unknown): boolean {
  const m = (e as Error)?.message ?? '';
  return /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|enableOfflineQueue|LOADING|max retries|Reached the max retries/i.test(m);
}
