// The browser host's gatekeeping (ARCHITECTURE convention 9): the random token, the Host and
// Origin allowlists that defeat DNS rebinding, and the headers every HTTP answer carries.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { networkInterfaces } from 'node:os';

/** The cookie that carries the token after the first page load. */
export const TOKEN_COOKIE = 'slotscope_token';

/** A fresh token: 32 random bytes, base64url. */
export function createToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares two secrets in constant time (both are hashed first, so their lengths leak nothing). */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** True for names and addresses that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True for the any-address binds (every interface). */
export function isWildcardHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || h === '::' || h === '::0';
}

/** A host as it appears in a URL or a Host header: IPv6 literals bracketed, lower case. */
export function urlHost(host: string): string {
  const h = host.toLowerCase();
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * Every `name:port` a request may carry in its Host header. Loopback names always; the bound
 * host when it is another one; for an any-address bind, this machine's interface addresses
 * (IP literals cannot be rebound by a foreign DNS name, which is the attack this check stops).
 */
export function allowedHostHeaders(bindHost: string, port: number): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  if (isWildcardHost(bindHost)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) names.add(urlHost(a.address.replace(/%.*$/, '')));
    }
  } else {
    names.add(urlHost(bindHost));
  }
  const out = new Set<string>();
  for (const n of names) {
    out.add(`${n}:${port}`);
    if (port === 80) out.add(n);
  }
  return out;
}

/** The origins a browser page of this server presents: `http://` + each allowed Host, plus extras. */
export function allowedOriginSet(hostHeaders: ReadonlySet<string>, extra: readonly string[] = []): Set<string> {
  const out = new Set<string>();
  for (const h of hostHeaders) out.add(`http://${h}`);
  for (const o of extra) out.add(o.toLowerCase().replace(/\/+$/, ''));
  return out;
}

/** The value of one cookie in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value that lets the page's later requests (assets, WebSocket) go without the query. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`;
}

export interface GatePolicy {
  readonly token: string;
  readonly hostHeaders: ReadonlySet<string>;
  readonly origins: ReadonlySet<string>;
}

export type GateResult =
  | { readonly ok: true; readonly host: string; readonly tokenInQuery: boolean }
  | { readonly ok: false; readonly status: 401 | 403 | 421; readonly reason: string; readonly host: string | null };

/**
 * The checks every HTTP request and WebSocket upgrade passes, in order: the Host header
 * (421, DNS rebinding), the Origin when present (403), then the token from `?token=` or the
 * cookie (401). `query` is the raw query string of the request target, without the `?`.
 */
export function checkRequest(headers: IncomingHttpHeaders, query: string, policy: GatePolicy): GateResult {
  const host = (headers.host ?? '').toLowerCase();
  if (!policy.hostHeaders.has(host)) {
    return { ok: false, status: 421, reason: `Host header not allowed: ${JSON.stringify(host.slice(0, 100))}`, host: null };
  }
  const origin = headers.origin;
  if (origin !== undefined && !policy.origins.has(origin.toLowerCase())) {
    return { ok: false, status: 403, reason: `Origin not allowed: ${JSON.stringify(origin.slice(0, 100))}`, host };
  }
  const fromQuery = query ? new URLSearchParams(query).get('token') : null;
  const fromCookie = readCookie(headers.cookie, TOKEN_COOKIE);
  const queryOk = fromQuery !== null && tokensEqual(fromQuery, policy.token);
  const cookieOk = fromCookie !== undefined && tokensEqual(fromCookie, policy.token);
  if (!queryOk && !cookieOk) {
    return { ok: false, status: 401, reason: fromQuery === null && fromCookie === undefined ? 'token missing' : 'token wrong', host };
  }
  return { ok: true, host, tokenInQuery: queryOk };
}

/** Headers on every HTTP answer; `wsHost` is the validated `host:port` the page talks back to. */
export function securityHeaders(wsHost: string): Record<string, string> {
  return {
    'Content-Security-Policy':
      `default-src 'self'; connect-src 'self' ws://${wsHost}; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; frame-ancestors 'none'`,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
