// The browser host's gate, over real loopback HTTP and WebSocket: token on every request, Host and
// Origin allowlists (DNS rebinding), static files without traversal, and the security headers.

import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpGet, openSocket, startTestServer, staticFixture, upgradeStatus } from './fixtures';

describe('token', () => {
  it('refuses HTTP without the token or with a wrong one (401)', async () => {
    const { server } = await startTestServer({ staticDir: staticFixture().dir });
    expect((await httpGet(server.port, '/')).status).toBe(401);
    expect((await httpGet(server.port, '/?token=nope')).status).toBe(401);
    expect((await httpGet(server.port, `/?token=${server.token}x`)).status).toBe(401);
    expect((await httpGet(server.port, '/assets/app.js')).status).toBe(401);
    expect((await httpGet(server.port, '/', { cookie: 'slotscope_token=nope' })).status).toBe(401);
    const refused = await httpGet(server.port, '/');
    expect(refused.body).not.toContain('Slotscope</title>');
    expect(refused.headers['set-cookie']).toBeUndefined();
  });

  it('refuses the WebSocket upgrade without the token or with a wrong one (401)', async () => {
    const { server, origin } = await startTestServer();
    const base = `ws://127.0.0.1:${server.port}/ws`;
    expect(await upgradeStatus(base)).toBe(401);
    expect(await upgradeStatus(`${base}?token=wrong`)).toBe(401);
    expect(await upgradeStatus(base, { origin })).toBe(401);
    expect(await upgradeStatus(base, { headers: { cookie: 'slotscope_token=wrong' } })).toBe(401);
  });

  it('serves the page with the token in the query, sets an HttpOnly SameSite=Strict cookie, then takes the cookie alone', async () => {
    const { server, origin } = await startTestServer({ staticDir: staticFixture().dir });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const page = await httpGet(server.port, `/?token=${server.token}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>Slotscope</title>');
    const setCookie = String(page.headers['set-cookie']);
    expect(setCookie).toContain(`slotscope_token=${server.token}`);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);

    const cookie = `theme=dark; slotscope_token=${server.token}`;
    const asset = await httpGet(server.port, '/assets/app.js', { cookie });
    expect(asset.status).toBe(200);
    expect(asset.headers['set-cookie']).toBeUndefined();
    expect((await httpGet(server.port, '/', { cookie })).status).toBe(200);

    const ws = await openSocket(`ws://127.0.0.1:${server.port}/ws`, { origin, headers: { cookie } });
    expect((await ws.request('crawls.list', {})).ok).toBe(true);
  });

  it('uses a given token', async () => {
    const { server } = await startTestServer({ token: 'given-token' });
    expect(server.token).toBe('given-token');
    expect((await httpGet(server.port, '/?token=given-token')).status).toBe(200);
  });
});

describe('Host and Origin', () => {
  it('refuses a foreign Host header even with the right token (DNS rebinding)', async () => {
    const { server } = await startTestServer({ staticDir: staticFixture().dir });
    const q = `/?token=${server.token}`;
    for (const host of [`evil.example:${server.port}`, 'evil.example', `127.0.0.1:${server.port + 1}`, `localhost.evil.example:${server.port}`, '']) {
      const r = await httpGet(server.port, q, { host });
      expect([403, 421], host).toContain(r.status);
      expect(r.body).not.toContain('<title>Slotscope</title>');
    }
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, `LOCALHOST:${server.port}`, `[::1]:${server.port}`]) {
      expect((await httpGet(server.port, q, { host })).status, host).toBe(200);
    }
    const ws = `ws://127.0.0.1:${server.port}/ws?token=${server.token}`;
    expect([403, 421]).toContain(await upgradeStatus(ws, { headers: { host: `evil.example:${server.port}` } }));
  });

  it('refuses a WebSocket from a foreign Origin and accepts the page\'s own', async () => {
    const { server, wsUrl } = await startTestServer({ allowedOrigins: ['http://localhost:5173'] });
    expect(await upgradeStatus(wsUrl, { origin: 'http://evil.example' })).toBe(403);
    expect(await upgradeStatus(wsUrl, { origin: `http://evil.example:${server.port}` })).toBe(403);
    expect(await upgradeStatus(wsUrl, { origin: 'null' })).toBe(403);
    expect(await upgradeStatus(wsUrl, { origin: `https://127.0.0.1:${server.port}` })).toBe(403);
    expect(await upgradeStatus(wsUrl, { origin: `http://127.0.0.1:${server.port}` })).toBe(101);
    expect(await upgradeStatus(wsUrl, { origin: `http://localhost:${server.port}` })).toBe(101);
    expect(await upgradeStatus(wsUrl, { origin: 'http://localhost:5173' })).toBe(101);
    // A non-browser client sends no Origin: the token alone lets it in.
    expect(await upgradeStatus(wsUrl)).toBe(101);
  });

  it('refuses an HTTP request from a foreign Origin', async () => {
    const { server } = await startTestServer();
    const r = await httpGet(server.port, `/?token=${server.token}`, { origin: 'http://evil.example' });
    expect(r.status).toBe(403);
  });
});

describe('static files', () => {
  it('serves files with their content types and the security headers', async () => {
    const { server } = await startTestServer({ staticDir: staticFixture().dir });
    const cookie = `slotscope_token=${server.token}`;
    const page = await httpGet(server.port, `/?token=${server.token}`);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toBe(
      `default-src 'self'; connect-src 'self' ws://127.0.0.1:${server.port}; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; frame-ancestors 'none'`,
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');

    const viaLocalhost = await httpGet(server.port, '/', { cookie, host: `localhost:${server.port}` });
    expect(viaLocalhost.headers['content-security-policy']).toContain(`connect-src 'self' ws://localhost:${server.port};`);

    const types: Record<string, string> = {
      '/index.html': 'text/html; charset=utf-8',
      '/assets/app.js': 'text/javascript; charset=utf-8',
      '/assets/app.css': 'text/css; charset=utf-8',
      '/assets/logo.svg': 'image/svg+xml',
    };
    for (const [path, type] of Object.entries(types)) {
      const r = await httpGet(server.port, path, { cookie });
      expect(r.status, path).toBe(200);
      expect(r.headers['content-type'], path).toBe(type);
      expect(r.headers['x-content-type-options'], path).toBe('nosniff');
    }
    expect((await httpGet(server.port, '/assets/app.js', { cookie })).body).toBe('console.log("app");');
    const head = await httpGet(server.port, '/assets/app.js', { cookie }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('19');
    // Errors carry the headers too.
    expect((await httpGet(server.port, '/')).headers['x-content-type-options']).toBe('nosniff');
  });

  it('refuses path traversal, plain and encoded, and hides dotfiles and directories', async () => {
    const { dir, secret } = staticFixture();
    symlinkSync(secret, join(dir, 'link.txt'));
    const { server } = await startTestServer({ staticDir: dir });
    const cookie = `slotscope_token=${server.token}`;
    const climbs = [
      '/../secret.txt', '/%2e%2e/secret.txt', '/%2E%2E/secret.txt', '/%2e%2e%2fsecret.txt', '/..%2fsecret.txt', '/assets/../../secret.txt',
      '/assets/%2e%2e/%2e%2e/secret.txt', '/..%5csecret.txt', '/%2e%2e%5csecret.txt', '/../package.json', '/%2e%2e/%2e%2e/package.json',
      '/assets%2f..%2f..%2fsecret.txt', '/%00/secret.txt', '/%E0%A4%A', '/.env', '/assets/', '/assets', '//secret.txt', '/link.txt',
    ];
    for (const path of climbs) {
      const r = await httpGet(server.port, path, { cookie });
      expect([400, 403, 404], path).toContain(r.status);
      expect(r.body, path).not.toContain('TOP-SECRET');
      expect(r.body, path).not.toContain('HIDDEN');
      expect(r.body, path).not.toContain('"name"');
    }
    expect((await httpGet(server.port, '/nope.js', { cookie })).status).toBe(404);
  });

  it('explains how to build the renderer when there is none, and answers /ws over plain HTTP with 426', async () => {
    const { server } = await startTestServer({ staticDir: '/nonexistent/slotscope-renderer' });
    const page = await httpGet(server.port, `/?token=${server.token}`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain("isn't built");
    expect(page.body).toContain('npm run build');
    expect(page.headers['set-cookie']).toBeDefined();
    const cookie = `slotscope_token=${server.token}`;
    expect((await httpGet(server.port, '/assets/app.js', { cookie })).status).toBe(404);
    expect((await httpGet(server.port, '/ws', { cookie })).status).toBe(426);
    expect((await httpGet(server.port, '/', { cookie }, 'POST')).status).toBe(405);

    const none = await startTestServer();
    expect((await httpGet(none.server.port, `/?token=${none.server.token}`)).body).toContain('npm run build');
  });
});

describe('binding', () => {
  it('binds 127.0.0.1 by default without a warning', async () => {
    const { server, logs } = await startTestServer();
    expect(server.url.startsWith('http://127.0.0.1:')).toBe(true);
    expect(logs.join('\n')).not.toMatch(/WARNING/);
  });

  it('warns when bound to a non-loopback address and still works through 127.0.0.1', async () => {
    const { server, logs, wsUrl, origin } = await startTestServer({ host: '0.0.0.0' });
    expect(logs.some((l) => /WARNING/.test(l) && /network/.test(l) && /token/.test(l))).toBe(true);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    expect((await httpGet(server.port, `/?token=${server.token}`)).status).toBe(200);
    expect((await httpGet(server.port, `/?token=${server.token}`, { host: `evil.example:${server.port}` })).status).toBe(421);
    const ws = await openSocket(wsUrl, { origin });
    expect((await ws.request('crawls.list', {})).ok).toBe(true);
  });
});
