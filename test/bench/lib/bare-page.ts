// A page in Debian's Chromium driven over a bare DevTools connection that never enables the
// Network domain. Playwright enables it on every page it drives, so Chromium copies each
// WebSocket frame's payload into a DevTools event, pipes it to the driving process and has it
// parsed there: a 640 KB slot update then costs the renderer tens of ms outside any script, and
// the host process the parsing of its copy. No user's window pays that, so the console's frame
// figures are measured through this driver. It speaks only Target, Page, Runtime, Emulation,
// Input, Profiler and Tracing, all over one WebSocket (the `ws` package).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';

type Params = Record<string, unknown>;
type Listener = (params: Params) => void;

interface Pending {
  readonly resolve: (v: Params) => void;
  readonly reject: (e: Error) => void;
  readonly method: string;
}

/** One DevTools connection to the browser; sessions of pages ride on it (flat mode). */
class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; method?: string; params?: Params; result?: Params; error?: { message: string }; sessionId?: string };
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
        else p.resolve(msg.result ?? {});
        return;
      }
      for (const l of this.listeners.get(`${msg.sessionId ?? ''}:${msg.method}`) ?? []) l(msg.params ?? {});
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error(`${p.method}: the DevTools connection closed`));
      this.pending.clear();
    });
  }

  send(method: string, params: Params = {}, sessionId?: string): Promise<Params> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  on(method: string, listener: Listener, sessionId?: string): () => void {
    const k = `${sessionId ?? ''}:${method}`;
    let set = this.listeners.get(k);
    if (!set) this.listeners.set(k, (set = new Set()));
    set.add(listener);
    return () => void set.delete(listener);
  }

  once(method: string, sessionId?: string): Promise<Params> {
    return new Promise((resolve) => {
      const off = this.on(method, (p) => {
        off();
        resolve(p);
      }, sessionId);
    });
  }

  close(): void {
    this.ws.close();
  }
}

export interface BarePageOptions {
  readonly width: number;
  readonly height: number;
  readonly colorScheme: 'light' | 'dark';
  /** Evaluated in every document before its own scripts. */
  readonly initScript?: string;
  /** Uncaught page errors. */
  readonly onError?: (message: string) => void;
}

const KEYS: Readonly<Record<string, { code: string; keyCode: number }>> = {
  Backspace: { code: 'Backspace', keyCode: 8 },
  Enter: { code: 'Enter', keyCode: 13 },
  Escape: { code: 'Escape', keyCode: 27 },
};

export class BarePage {
  constructor(private readonly conn: Connection, private readonly session: string, readonly targetId: string) {}

  private send(method: string, params: Params = {}): Promise<Params> {
    return this.conn.send(method, params, this.session);
  }

  async goto(url: string): Promise<void> {
    const loaded = this.conn.once('Page.loadEventFired', this.session);
    const r = await this.send('Page.navigate', { url });
    if (typeof r.errorText === 'string' && r.errorText) throw new Error(`navigating to ${url}: ${r.errorText}`);
    await loaded;
  }

  /** The value of a script expression (a promise is awaited); a thrown error is rethrown here. */
  async evaluate<T = unknown>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true })) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) throw new Error(`in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value as T;
  }

  /** A real mouse click (moved, pressed, released) at the middle of the first element matching `selector`. */
  async click(selector: string): Promise<void> {
    const at = await this.evaluate<{ x: number; y: number } | null>(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (!el) return null;
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = el.getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
    })()`);
    if (!at) throw new Error(`nothing in the page matches ${selector}`);
    await this.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at.x, y: at.y });
    await this.send('Input.dispatchMouseEvent', { type: 'mousePressed', x: at.x, y: at.y, button: 'left', buttons: 1, clickCount: 1 });
    await this.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x: at.x, y: at.y, button: 'left', buttons: 0, clickCount: 1 });
  }

  /** Types `text` into the focused element, a key at a time, `delayMs` apart. */
  async type(text: string, delayMs = 0): Promise<void> {
    for (const ch of text) {
      await this.send('Input.dispatchKeyEvent', { type: 'keyDown', key: ch, text: ch, unmodifiedText: ch });
      await this.send('Input.dispatchKeyEvent', { type: 'keyUp', key: ch });
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    }
  }

  /** Presses a named key (Backspace, Enter, Escape). */
  async press(key: keyof typeof KEYS): Promise<void> {
    const k = KEYS[key];
    const common = { key, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode };
    await this.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...common });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...common });
  }

  /** Starts V8's sampling profiler in the page; `stop()` answers the profile. */
  async startProfile(intervalUs: number): Promise<{ stop: () => Promise<unknown> }> {
    await this.send('Profiler.enable');
    await this.send('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.send('Profiler.start');
    return { stop: async () => (await this.send('Profiler.stop')).profile };
  }

  async close(): Promise<void> {
    await this.conn.send('Target.closeTarget', { targetId: this.targetId }).catch(() => {});
  }
}

export class BareBrowser {
  private constructor(private readonly proc: ChildProcess, private readonly conn: Connection, private readonly dataDir: string, readonly version: string) {}

  /** Starts Chromium with `args` plus a DevTools port and a fresh profile folder. */
  static async launch(executable: string, args: readonly string[]): Promise<BareBrowser> {
    if (!existsSync(executable)) throw new Error(`Chromium not found at ${executable}: install it (apt-get install chromium) or set SLOTSCOPE_CHROMIUM`);
    const dataDir = mkdtempSync(join(tmpdir(), 'slotscope-bare-chromium-'));
    const proc = spawn(executable, [...args, '--remote-debugging-port=0', `--user-data-dir=${dataDir}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const endpoint = await new Promise<string>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`Chromium printed no DevTools address within 30 s:\n${seen}`)), 30_000);
      proc.stderr!.on('data', (d: Buffer) => {
        seen += String(d);
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Chromium exited (${code}) before listening:\n${seen}`));
      });
    });
    proc.stderr!.resume();
    const ws = new WebSocket(endpoint, { perMessageDeflate: false, maxPayload: 512 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const conn = new Connection(ws);
    const v = (await conn.send('Browser.getVersion')) as { product: string };
    return new BareBrowser(proc, conn, dataDir, v.product);
  }

  async newPage(o: BarePageOptions): Promise<BarePage> {
    const { targetId } = (await this.conn.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.conn.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const s = (method: string, params: Params = {}) => this.conn.send(method, params, sessionId);
    await s('Page.enable');
    await s('Runtime.enable');
    if (o.onError) {
      const onError = o.onError;
      this.conn.on('Runtime.exceptionThrown', (p) => {
        const d = p.exceptionDetails as { text: string; exception?: { description?: string } };
        onError(d.exception?.description ?? d.text);
      }, sessionId);
    }
    await s('Emulation.setDeviceMetricsOverride', { width: o.width, height: o.height, deviceScaleFactor: 1, mobile: false, screenWidth: o.width, screenHeight: o.height });
    await s('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: o.colorScheme }] });
    if (o.initScript) await s('Page.addScriptToEvaluateOnNewDocument', { source: o.initScript });
    return new BarePage(this.conn, sessionId, targetId);
  }

  /** Records a Chromium trace of `categories` while `during` runs, written to `file` (JSON). */
  async trace<T>(file: string, categories: readonly string[], during: () => Promise<T>): Promise<T> {
    const events: unknown[] = [];
    const off = this.conn.on('Tracing.dataCollected', (p) => void events.push(...(p.value as unknown[])));
    await this.conn.send('Tracing.start', { transferMode: 'ReportEvents', traceConfig: { includedCategories: [...categories] } });
    try {
      return await during();
    } finally {
      const done = this.conn.once('Tracing.tracingComplete');
      await this.conn.send('Tracing.end');
      await done;
      off();
      writeFileSync(file, JSON.stringify({ traceEvents: events }));
    }
  }

  async close(): Promise<void> {
    await this.conn.send('Browser.close').catch(() => {});
    this.conn.close();
    if (this.proc.exitCode === null) {
      const exited = new Promise((r) => this.proc.once('exit', r));
      const kill = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(kill);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
