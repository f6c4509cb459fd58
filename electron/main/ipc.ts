// The only file of the app that imports ipcMain (ARCHITECTURE convention 3): one invoke channel
// that hands the renderer's requests to the core's dispatch, after checking who sent them.

import { ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import type { Dispatcher, Reply } from '../../shared/contract';
import { INVOKE_CHANNEL } from '../preload/channels';
import { refuseSender } from './security';

export interface IpcOptions {
  /** The core answering now (it changes when the user opens another database). */
  readonly dispatcher: () => Dispatcher;
  /** The app window's webContents, or null while there is none. */
  readonly appContents: () => WebContents | null;
  readonly log: (line: string) => void;
  /** Runs before dispatch (the export save dialog): new params, or the reply itself. */
  readonly prepare?: (method: string, params: unknown) => Promise<{ readonly params: unknown } | { readonly reply: Reply }>;
}

/** Registers the invoke handler; returns the function that removes it. */
export function installIpc(o: IpcOptions): () => void {
  ipcMain.handle(INVOKE_CHANNEL, async (event: IpcMainInvokeEvent, method: unknown, params: unknown): Promise<Reply> => {
    const frame = event.senderFrame;
    const contents = o.appContents();
    const refusal = refuseSender({
      frameUrl: frame?.url,
      isMainFrame: frame !== null && frame.parent === null,
      fromAppWindow: contents !== null && !contents.isDestroyed() && event.sender.id === contents.id,
    });
    if (refusal !== null) {
      o.log(`ipc: refused ${JSON.stringify(String(method).slice(0, 60))}: ${refusal}`);
      return { ok: false, error: { code: 'invalid', field: 'sender', message: `refused: ${refusal}` } };
    }
    // The core validates the method and its params (dispatch is the trust boundary) and answers with data.
    const name = typeof method === 'string' ? method : String(method);
    const ready = o.prepare ? await o.prepare(name, params) : { params };
    return 'reply' in ready ? ready.reply : o.dispatcher().dispatch(name, ready.params);
  });
  return () => ipcMain.removeHandler(INVOKE_CHANNEL);
}
