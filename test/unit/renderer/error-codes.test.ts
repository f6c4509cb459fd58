// The renderer's side of a refusal: every error code of the contract that a host answers must come
// out of either transport as that code (the desktop app's canceled save dialog is not a success).

import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type AppError, type Params, type Reply } from '../../../shared/contract';

/** What these tests use of the renderer's modules (the renderer is a TypeScript project of its own, with DOM types). */
interface Bridge {
  invoke(method: string, params: unknown): Promise<unknown>;
  subscribe(event: string, listener: (payload: unknown) => void): () => void;
}
interface Invoker {
  invoke(method: string, params: unknown): Promise<unknown>;
}
interface TransportModule {
  toAppError(e: unknown): AppError;
  isAppError(x: unknown): boolean;
}
interface BridgeModule {
  bridgeTransport(bridge: Bridge): Invoker;
}
interface ExportBarModule {
  exportOnHost(transport: Invoker, params: Params<'history.export'>): Promise<{ kind: 'done' | 'error'; text: string }>;
}
const load = async <T>(path: string): Promise<T> => (await import(/* @vite-ignore */ path)) as T;
const { toAppError, isAppError } = await load<TransportModule>('../../../renderer/src/transport/transport');
const { bridgeTransport } = await load<BridgeModule>('../../../renderer/src/transport/bridge-transport');
const { exportOnHost } = await load<ExportBarModule>('../../../renderer/src/views/log/export-bar');

/** The preload's bridge as the Electron host answers: every reply is data. */
const answering = (reply: Reply): Bridge => ({ invoke: async () => reply, subscribe: () => () => {} });
const refusal = (code: AppError['code']): Reply => ({ ok: false, error: { code, message: `refused: ${code}` } });
const PARAMS: Params<'history.export'> = { crawlId: 1, format: 'jsonl', exportId: 'e1' };

describe('error codes on the renderer side', () => {
  it.each(ERROR_CODES.map((c) => [c]))('a refusal with code %s is an AppError with that code', async (code) => {
    expect(isAppError({ code, message: 'x' })).toBe(true);
    const err = await bridgeTransport(answering(refusal(code))).invoke('crawls.list', {}).then(() => null, (e: unknown) => e);
    expect(err, 'the invoke rejects').not.toBeNull();
    expect(toAppError(err)).toEqual({ code, message: `refused: ${code}` });
  });

  it('a save dialog closed in the desktop app shows "Export canceled.", not a success', async () => {
    const outcome = await exportOnHost(bridgeTransport(answering(refusal('canceled'))), PARAMS);
    expect(outcome).toEqual({ kind: 'done', text: 'Export canceled.' });
  });

  it('an export the host refused shows the failure; one it wrote shows the file', async () => {
    expect(await exportOnHost(bridgeTransport(answering(refusal('not-found'))), PARAMS)).toEqual({ kind: 'error', text: 'Export failed: refused: not-found' });
    const done = await exportOnHost(bridgeTransport(answering({ ok: true, result: { exportId: 'e1', path: '/tmp/x.jsonl', rows: 1200, bytes: 34 } })), PARAMS);
    expect(done).toEqual({ kind: 'done', text: 'Saved 1,200 rows (34 bytes) to /tmp/x.jsonl' });
  });

  it('a code outside the contract is not taken for an AppError', () => {
    expect(isAppError({ code: 'no-such-code', message: 'x' })).toBe(false);
  });
});
