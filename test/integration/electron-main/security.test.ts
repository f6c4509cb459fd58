// The Electron host's security rules, without the Electron binary: which URLs are the app's, which
// IPC senders may call the core, and a CSP the built renderer runs under.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_URL, CONTENT_SECURITY_POLICY, appRequestPath, isAppUrl, refuseSender } from '../../../electron/main/security';
import { ensureBuilt, ROOT } from '../helpers';

const FOREIGN = [
  'https://example.com/',
  'http://slotscope/index.html',
  'file:///etc/passwd',
  'file:///work/main/dist/renderer/index.html',
  'app://evil/index.html',
  'app://slotscope.evil.example/index.html',
  'app://user@slotscope/index.html',
  'app://slotscope:8080/index.html',
  'devtools://devtools/bundled/inspector.html',
  'chrome://settings',
  'about:blank',
  'data:text/html,<script>1</script>',
  'javascript:alert(1)',
  'not a url',
  '',
];

const parseCsp = (csp: string) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));

describe('app URLs', () => {
  it('the app\'s own pages are app://slotscope/…', () => {
    expect(isAppUrl(APP_URL)).toBe(true);
    expect(isAppUrl('app://slotscope/')).toBe(true);
    expect(isAppUrl('app://slotscope/assets/index-abc.js?x=1#y')).toBe(true);
    expect(isAppUrl('APP://SLOTSCOPE/index.html')).toBe(true);
  });
  it.each(FOREIGN)('%s is not the app', (url) => {
    expect(isAppUrl(url)).toBe(false);
  });
  it('only app URLs map to a path of the renderer folder', () => {
    expect(appRequestPath('app://slotscope/assets/a.js?v=2')).toBe('/assets/a.js');
    expect(appRequestPath('app://slotscope/')).toBe('/');
    expect(appRequestPath('app://other/assets/a.js')).toBeNull();
    // Dot segments are resolved by the URL parser before the path is looked up: no way out of /.
    expect(appRequestPath('app://slotscope/assets/../../../etc/passwd')).toBe('/etc/passwd');
    expect(appRequestPath('app://slotscope/%2e%2e/%2e%2e/etc/passwd')).toBe('/etc/passwd');
  });
});

describe('IPC sender check', () => {
  const ok = { frameUrl: APP_URL, isMainFrame: true, fromAppWindow: true };
  it('lets the app window\'s main frame call the core', () => {
    expect(refuseSender(ok)).toBeNull();
  });
  it.each(FOREIGN)('refuses a frame at %s', (url) => {
    const why = refuseSender({ ...ok, frameUrl: url });
    expect(why).toMatch(/not from the app \(app:\/\/slotscope\/\)/);
  });
  it('refuses a frame that is gone, a subframe of the app, and any other webContents', () => {
    expect(refuseSender({ ...ok, frameUrl: undefined })).toMatch(/a frame that is gone/);
    expect(refuseSender({ ...ok, isMainFrame: false })).toMatch(/subframe/);
    expect(refuseSender({ ...ok, fromAppWindow: false })).toMatch(/did not come from the app window/);
  });
});

describe('Content-Security-Policy', () => {
  const csp = parseCsp(CONTENT_SECURITY_POLICY);
  it('allows the bundle\'s own scripts only: no inline script, no eval, no remote code', () => {
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('form-action')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-eval|https?:|ws:|\*/);
    for (const [name, values] of csp) if (name !== 'style-src') expect(values, name).not.toContain("'unsafe-inline'");
  });

  describe('and the built renderer runs under it', () => {
    beforeAll(() => ensureBuilt(), 180_000);
    it('dist/renderer/index.html loads every script and style from its own folder, nothing inline', () => {
      const file = join(ROOT, 'dist', 'renderer', 'index.html');
      expect(existsSync(file), `${file} is not built`).toBe(true);
      const html = readFileSync(file, 'utf8');
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [, attrs, body] of scripts) {
        expect(body.trim(), 'inline script').toBe('');
        expect(attrs).toMatch(/\bsrc="\.\/[^"]+"/);
      }
      for (const [, href] of html.matchAll(/<link\b[^>]*\bhref="([^"]+)"/g)) expect(href).toMatch(/^\.\//);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      expect(html).not.toMatch(/https?:\/\//);
    });
  });
});
