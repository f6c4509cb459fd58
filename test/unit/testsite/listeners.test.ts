// Checks how the test site binds and routes: a listener of its own per 127.x address, one shared
// 127.0.0.1 listener routed by Host, a fixed port, name-based URLs via resolve, and the demo.

import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import {
  curlResolveEntries,
  demoResolve,
  demoScenario,
  demoSeeds,
  resolveLookup,
  startTestSite,
  type TestSite,
} from '../../../electron/core/testsite';
import { get } from './site-helpers';

const open: TestSite[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('listeners', () => {
  it('binds a host with an address on that address only', async () => {
    const site = await startTestSite({ hosts: { 'alpha.test': { address: '127.0.0.2', pages: 3 }, 'beta.test': {} } });
    open.push(site);
    const url = new URL(site.hosts['alpha.test']);
    expect(url.hostname).toBe('127.0.0.2');
    expect(site.resolve).toEqual({ 'alpha.test': '127.0.0.2', 'beta.test': '127.0.0.1' });
    expect(site.listeners.find((l) => l.address === '127.0.0.2')).toEqual({ address: '127.0.0.2', port: Number(url.port), hosts: ['alpha.test'] });
    const page = await get(`${site.hosts['alpha.test']}/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>alpha.test home</title>');
    // Same request sent by name (Host: alpha.test:PORT) is routed the same way.
    const byName = await get(`${site.hosts['alpha.test']}/page/1`, { headers: { host: `ALPHA.test:${url.port}` } });
    expect(byName.text).toContain('<title>alpha.test page 1</title>');
    // Nothing listens on 127.0.0.1 at that port (the shared listener has its own random port).
    expect(site.ports['beta.test']).not.toBe(Number(url.port));
    await expect(request(`http://127.0.0.1:${url.port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('routes hosts without an address by the Host header on the shared 127.0.0.1 listener', async () => {
    const site = await startTestSite({ hosts: { 'one.test': { pages: 2 }, 'two.test': { pages: 5 } } }, { keepLog: true });
    open.push(site);
    expect(site.listeners).toHaveLength(1);
    expect(site.hosts['one.test']).toBe(site.origin('one.test'));
    expect(site.origin('TWO.test')).toBe(`http://two.test:${site.ports['two.test']}`);
    const at = `http://127.0.0.1:${site.ports['one.test']}`;
    expect((await get(`${at}/`, { headers: { host: 'one.test' } })).text).toContain('<title>one.test home</title>');
    expect((await get(`${at}/page/4`, { headers: { host: 'two.test.' } })).text).toContain('<title>two.test page 4</title>');
    expect((await get(`${at}/page/4`, { headers: { host: 'one.test' } })).status).toBe(404);
    expect((await get(`${at}/`)).status).toBe(404); // bare IP: no host claims 127.0.0.1
    expect(site.log.map((e) => [e.host, e.path, e.status])).toEqual([
      ['one.test', '/', 200],
      ['two.test', '/page/4', 200],
      ['one.test', '/page/4', 404],
      ['127.0.0.1', '/', 404],
    ]);
    expect(() => site.origin('three.test')).toThrow(/unknown host "three.test"/);
  });

  it('serves two hosts sharing an address by name, and neither for the bare IP', async () => {
    const site = await startTestSite({ hosts: { 'a.test': { address: '127.0.0.6' }, 'b.test': { address: '127.0.0.6' } } });
    open.push(site);
    expect(site.hosts['a.test']).toBe(site.origin('a.test'));
    const at = `http://127.0.0.6:${site.ports['a.test']}`;
    expect((await get(`${at}/`, { headers: { host: 'b.test' } })).text).toContain('b.test home');
    expect((await get(`${at}/`)).status).toBe(404);
  });

  it('binds every listener to the scenario port when it is not 0', async () => {
    const port = await freePort();
    const site = await startTestSite({ port, hosts: { 'alpha.test': { address: '127.0.0.2' }, 'beta.test': {} } });
    open.push(site);
    expect(site.listeners.map((l) => l.port)).toEqual([port, port]);
    expect(site.hosts['alpha.test']).toBe(`http://127.0.0.2:${port}`);
    expect((await get(`http://127.0.0.1:${port}/`, { headers: { host: 'beta.test' } })).status).toBe(200);
    // A second site on the same port fails to bind, and leaves nothing behind.
    await expect(startTestSite({ port, hosts: { 'x.test': { address: '127.0.0.3' }, 'y.test': {} } })).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
    await expect(request(`http://127.0.0.3:${port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('lets a real client fetch name-based URLs through resolveLookup', async () => {
    const site = await startTestSite({ hosts: { 'alpha.test': { address: '127.0.0.2' }, 'beta.test': {} } });
    open.push(site);
    const agent = new Agent({ connect: { lookup: resolveLookup(site.resolve) } });
    try {
      for (const host of ['alpha.test', 'beta.test']) {
        const page = await get(`${site.origin(host)}/page/2`, { dispatcher: agent });
        expect(page.status).toBe(200);
        expect(page.text).toContain(`<title>${host} page 2</title>`);
      }
    } finally {
      await agent.close();
    }
    expect(curlResolveEntries(site).sort()).toEqual([
      `alpha.test:${site.ports['alpha.test']}:127.0.0.2`,
      `beta.test:${site.ports['beta.test']}:127.0.0.1`,
    ]);
  });
});

describe('demo scenario', () => {
  it('describes four hosts on 127.0.0.2 … 127.0.0.5 with distinct troubles, and serves them', async () => {
    const scenario = demoScenario();
    const hosts = Object.values(scenario.hosts);
    expect(hosts.map((h) => h.address)).toEqual(['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']);
    expect(hosts.every((h) => h.pages >= 30 && h.pages <= 60)).toBe(true);
    expect(hosts.some((h) => h.rate_limit)).toBe(true);
    expect(hosts.some((h) => h.robots?.crawl_delay === 1)).toBe(true);
    expect(hosts.some((h) => (h.statuses['503'] ?? 0) > 0)).toBe(true);

    const site = await startTestSite(scenario);
    open.push(site);
    const seeds = demoSeeds(site);
    expect(seeds).toHaveLength(4);
    const pages = await Promise.all(seeds.map((url) => get(url)));
    // flaky.test may draw a 503 for its home page; the others must answer it.
    expect(pages.filter((p) => p.status === 200).length).toBeGreaterThanOrEqual(3);
    expect((await get(`${site.hosts['polite.test']}/robots.txt`)).text).toContain('Crawl-delay: 1');
    expect(demoResolve(site)).toHaveLength(4);
  });
});
