// Child processes of a benchmark: the target servers run in their own process so their CPU
// never shares the measured client's event loop (2 cores: server in one, client in the other).

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** A message-driven child: `call` sends `{ id, ...msg }` and resolves with the reply of the same id. */
export interface Child {
  readonly proc: ChildProcess;
  /** The first message the child sent (its `ready` payload). */
  readonly ready: Record<string, unknown>;
  call<T = Record<string, unknown>>(msg: Record<string, unknown>): Promise<T>;
  /** Asks the child to exit (message `exit`), killing it by pid after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Bundled files sit beside each other in .tmp/bench (run-all's esbuild outdir); this module is
 * inlined into a top-level bench bundle, so `import.meta.url` is that bundle's URL.
 */
export function benchFile(relative: string): string {
  return fileURLToPath(new URL(relative, import.meta.url));
}

/** Forks a bundled script with IPC and waits for its first message. */
export function startChild(script: string, args: readonly string[] = [], execArgv: readonly string[] = []): Promise<Child> {
  const proc = fork(script, [...args], { execArgv: [...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`${script} exited before it was ready (code ${code})`));
    proc.once('exit', onExit);
    proc.once('error', reject);
    proc.once('message', (ready: Record<string, unknown>) => {
      proc.off('exit', onExit);
      proc.on('message', (m: Record<string, unknown>) => {
        const cb = waiting.get(m.id as number);
        if (cb) {
          waiting.delete(m.id as number);
          cb(m);
        }
      });
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      resolve({
        proc,
        ready,
        call<T>(msg: Record<string, unknown>): Promise<T> {
          const id = nextId++;
          return new Promise<T>((res, rej) => {
            const onGone = (): void => rej(new Error(`${script} exited during ${String(msg.type)}`));
            proc.once('exit', onGone);
            waiting.set(id, (m) => {
              proc.off('exit', onGone);
              res(m as T);
            });
            proc.send({ ...msg, id });
          });
        },
        async stop(graceMs = 5000): Promise<void> {
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          proc.send({ type: 'exit' });
          const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(timer);
        },
      });
    });
  });
}

/** Runs a bundled script once with IPC and resolves with the one result message it sends. */
export function runOnce<T>(script: string, args: readonly string[], execArgv: readonly string[] = []): Promise<T> {
  const proc = fork(script, [...args], { execArgv: [...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise<T>((resolve, reject) => {
    let result: T | undefined;
    proc.once('message', (m: T) => (result = m));
    proc.once('error', reject);
    proc.once('exit', (code) => {
      if (result !== undefined) resolve(result);
      else reject(new Error(`${script} ${args.join(' ')} exited with code ${code} and no result`));
    });
  });
}

/** In a child: answers `{ type, id, … }` messages with `handler`, exits on `exit`. */
export function serveMessages(handler: (m: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>, onExit?: () => Promise<void>): void {
  process.on('message', (m: Record<string, unknown>) => {
    if (m.type === 'exit') {
      void (async () => {
        await onExit?.();
        process.exit(0);
      })();
      return;
    }
    void (async () => {
      try {
        const reply = await handler(m);
        process.send!({ ...reply, id: m.id });
      } catch (e) {
        process.send!({ id: m.id, error: (e as Error).stack ?? String(e) });
      }
    })();
  });
  // The parent died: do not linger.
  process.on('disconnect', () => process.exit(0));
}
