// The preload of the app window (bundled to one CommonJS file, dist/electron/preload.cjs, as a
// sandboxed preload must be): `window.bridge = { invoke, subscribe }` through contextBridge.

import { contextBridge, ipcRenderer } from 'electron';
import { createBridge } from './bridge';

contextBridge.exposeInMainWorld('bridge', createBridge(ipcRenderer));
