// The baseline: plain undici with nothing of the engine around it. The same GETs, the same
// concurrency, the same keep-alive Agent and resolve map, bodies read to the end.

import { Agent, type Dispatcher } from 'undici';

export type RawMode = 'dispatch' | 'request';

export interface RawTarget {
  readonly origin: string;
  readonly path: string;
}

export interface RawRun {
  readonly ok: number;
  readonly failed: number;
  readonly bytes: number;
  readonly ms: number;
  readonly firstError: string | null;
}

/** The engine's request headers, so both sides send the same bytes. */
export const HEADERS = {
  'user-agent': 'slotscope-bench',
  accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'accept-encoding': 'gzip, deflate, br',
};

export function makeAgent(resolve: Readonly<Record<string, string>>, connections: number): Agent {
  return new Agent({
    keepAliveTimeout: 30_000,
    connections,
    connect: {
      lookup(hostname: string, _options: unknown, cb: (err: Error | null, addresses: { address: string; family: number }[]) => void) {
        const ip = resolve[hostname.toLowerCase()];
        if (ip) cb(null, [{ address: ip, family: 4 }]);
        else cb(new Error(`bench: ${hostname} is not in the resolve map`), []);
      },
    },
  } as Agent.Options);
}

/** Minimal dispatch handler: counts body bytes, reports once at the end. */
export class Sink implements Dispatcher.DispatchHandler {
  status = 0;
  bytes = 0;
  constructor(private readonly done: (err: Error | null, status: number, bytes: number) => void) {}
  onRequestStart(): void {}
  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }
  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
  }
  onResponseEnd(): void {
    this.done(null, this.status, this.bytes);
  }
  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.done(err, 0, this.bytes);
  }
}

/** Issues every target once with `inFlight` requests outstanding, in list order; resolves when all ended. */
export async function runRaw(agent: Agent, targets: readonly RawTarget[], inFlight: number, mode: RawMode): Promise<RawRun> {
  let next = 0;
  let ok = 0;
  let failed = 0;
  let bytes = 0;
  let firstError: string | null = null;
  const t0 = performance.now();
  const record = (err: Error | null, status: number, n: number): void => {
    bytes += n;
    if (err || status !== 200) {
      failed++;
      firstError ??= err ? `${(err as { code?: string }).code ?? ''} ${err.message}` : `status ${status}`;
    } else ok++;
  };
  if (mode === 'dispatch') {
    await new Promise<void>((resolve) => {
      let active = 0;
      const launch = (): void => {
        while (active < inFlight && next < targets.length) {
          const t = targets[next++];
          active++;
          agent.dispatch({ origin: t.origin, path: t.path, method: 'GET', headers: HEADERS }, new Sink((err, status, n) => {
            record(err, status, n);
            active--;
            if (next < targets.length) launch();
            else if (active === 0) resolve();
          }));
        }
      };
      launch();
    });
  } else {
    const lane = async (): Promise<void> => {
      while (next < targets.length) {
        const t = targets[next++];
        try {
          const res = await agent.request({ origin: t.origin, path: t.path, method: 'GET', headers: HEADERS });
          const body = await res.body.arrayBuffer();
          record(null, res.statusCode, body.byteLength);
        } catch (e) {
          record(e as Error, 0, 0);
        }
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
  }
  return { ok, failed, bytes, ms: performance.now() - t0, firstError };
}
