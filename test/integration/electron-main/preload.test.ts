// The preload's allowlist is exactly the contract's METHODS and EVENTS, and the built preload is one
// CommonJS file that requires nothing but electron and exposes only `bridge = { invoke, subscribe }`.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script, createContext, runInContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENTS, METHODS } from '../../../shared/contract';
import { createCore } from '../../../electron/core/create-core';
import { ALLOWED_EVENTS, ALLOWED_METHODS } from '../../../electron/preload/bridge';
import { EVENT_CHANNEL, INVOKE_CHANNEL } from '../../../electron/preload/channels';
import { defer, ensureBuilt, freshDir, ROOT } from '../helpers';

const PRELOAD = join(ROOT, 'dist', 'electron', 'preload.cjs');

interface Loaded {
  readonly required: string[];
  readonly exposed: Record<string, unknown>;
  readonly invoked: unknown[][];
  readonly listeners: Map<string, (event: unknown, ...args: unknown[]) => void>;
}

/** Runs the built bundle as Electron would run a sandboxed preload: CommonJS, with `require` handing out electron's two objects. */
function loadPreload(): Loaded {
  const code = readFileSync(PRELOAD, 'utf8');
  const loaded: Loaded = { required: [], exposed: {}, invoked: [], listeners: new Map() };
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => void (loaded.exposed[key] = api) },
    ipcRenderer: {
      invoke: async (...args: unknown[]) => {
        loaded.invoked.push(args);
        return { ok: true, result: `answer to ${String(args[1])}` };
      },
      on: (channel: string, listener: (event: unknown, ...args: unknown[]) => void) => void loaded.listeners.set(channel, listener),
    },
  };
  const require = (id: string) => {
    loaded.required.push(id);
    if (id === 'electron') return electron;
    throw new Error(`a sandboxed preload cannot require ${id}`);
  };
  const context = createContext({});
  const wrapper = runInContext(`(function (exports, require, module) {\n${code}\n})`, context, { filename: PRELOAD }) as
    (exports: unknown, require: (id: string) => unknown, module: { exports: unknown }) => void;
  const module = { exports: {} };
  wrapper(module.exports, require, module);
  return loaded;
}

describe('the preload allowlist', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('is exactly the contract\'s METHODS and EVENTS, each listed once', () => {
    expect(new Set(METHODS).size).toBe(METHODS.length);
    expect(new Set(EVENTS).size).toBe(EVENTS.length);
    expect([...ALLOWED_METHODS].sort()).toEqual([...METHODS].sort());
    expect([...ALLOWED_EVENTS].sort()).toEqual([...EVENTS].sort());
    expect(EVENTS).toContain('app.command');
  });

  it('lets through only methods the real core answers', async () => {
    const core = await createCore({ db: join(freshDir(), 'allowlist.sqlite') });
    defer(() => core.close());
    for (const m of ALLOWED_METHODS) {
      const r = await core.dispatch(m, {});
      expect(r.ok || r.error.code, m).not.toBe('unknown-method');
    }
  });
});

describe('the built preload (dist/electron/preload.cjs)', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('is CommonJS and requires nothing but electron', () => {
    const code = readFileSync(PRELOAD, 'utf8');
    // An ES module (import/export statements) does not even compile as a classic script.
    expect(() => new Script(code, { filename: PRELOAD })).not.toThrow();
    expect(code).not.toMatch(/\bimport\s*\(|import\.meta/);
    const requires = [...code.matchAll(/\brequire\(\s*(['"`])([^'"`]*)\1\s*\)/g)].map((m) => m[2]);
    expect(requires).toEqual(['electron']);
    // No other way to reach a require either.
    expect(code).not.toMatch(/\brequire\(\s*[^'"`\s]/);
    expect(code).not.toMatch(/createRequire|process\.binding|__non_webpack_require__/);
  });

  it('exposes window.bridge = { invoke, subscribe } and nothing else', () => {
    const p = loadPreload();
    expect(p.required).toEqual(['electron']);
    expect(Object.keys(p.exposed)).toEqual(['bridge']);
    const bridge = p.exposed.bridge as Record<string, unknown>;
    expect(Object.keys(bridge).sort()).toEqual(['invoke', 'subscribe']);
    expect([...p.listeners.keys()]).toEqual([EVENT_CHANNEL]);
  });

  it('invokes every allowed method over the one channel and refuses any other without IPC', async () => {
    const p = loadPreload();
    const bridge = p.exposed.bridge as { invoke(m: unknown, params: unknown): Promise<unknown> };
    for (const m of METHODS) expect(await bridge.invoke(m, { id: 1 })).toEqual({ ok: true, result: `answer to ${m}` });
    expect(p.invoked).toEqual(METHODS.map((m) => [INVOKE_CHANNEL, m, { id: 1 }]));
    for (const bad of ['fs.readFile', 'ipcRenderer.send', '__proto__', 'crawls.list ', '', 42, null]) {
      const r = (await bridge.invoke(bad, {})) as { ok: boolean; error: { code: string; field: string; message: string } };
      expect(r.ok).toBe(false);
      expect(r.error.code).toBe('unknown-method');
      expect(r.error.field).toBe('method');
      expect(r.error.message).toContain('known: crawls.list');
    }
    expect(p.invoked).toHaveLength(METHODS.length);
  });

  it('delivers each event to its own subscribers only, until they unsubscribe; unknown events are refused', () => {
    const p = loadPreload();
    const bridge = p.exposed.bridge as { subscribe(e: unknown, l: unknown): () => void };
    const deliver = p.listeners.get(EVENT_CHANNEL)!;
    const got: [string, unknown][] = [];
    const offs = EVENTS.map((e) => bridge.subscribe(e, (payload: unknown) => got.push([e, payload])));
    deliver({}, 'crawls.changed', { crawls: [] });
    deliver({}, 'app.command', { command: 'new-crawl' });
    deliver({}, 'no.such.event', { x: 1 });
    deliver({}, 42, { x: 1 });
    expect(got).toEqual([['crawls.changed', { crawls: [] }], ['app.command', { command: 'new-crawl' }]]);
    for (const off of offs) off();
    deliver({}, 'crawls.changed', { crawls: [] });
    expect(got).toHaveLength(2);
    expect(() => bridge.subscribe('ipc.anything', () => {})).toThrow(/unknown event "ipc.anything"; known: slots.update/);
    expect(() => bridge.subscribe('crawls.changed', 'not a function')).toThrow(/listener must be a function/);
  });
});
