// The part of Electron's API the main process and the preload use, declared by hand so `tsc -b`
// gives the same answer with or without node_modules/electron (see electron/main/tsconfig.json).
//
// Why not the real electron.d.ts: `electron` is an optional dependency whose install step downloads
// the binary; where that download fails (offline machines, CI without network) npm drops the whole
// package, typings included, and any project importing 'electron' stops compiling. Mapping
// 'electron' here with `paths` in the main and preload tsconfigs, always, keeps the check identical
// everywhere. Every member is a subset of Electron 41's own declaration (checked against it), so
// code written against this file also compiles against the real typings; add members as needed.

type ElectronEvent<Params extends object = {}> = { preventDefault(): void; readonly defaultPrevented: boolean } & Params;

export interface WebFrameMain {
  readonly url: string;
  readonly parent: WebFrameMain | null;
  readonly top: WebFrameMain | null;
}

export interface RenderProcessGoneDetails {
  readonly reason: string;
  readonly exitCode: number;
}

export interface HandlerDetails {
  readonly url: string;
}

export type WindowOpenHandlerResponse = { action: 'deny' };

export interface WebContents {
  readonly id: number;
  send(channel: string, ...args: any[]): void;
  setWindowOpenHandler(handler: (details: HandlerDetails) => WindowOpenHandlerResponse): void;
  on(event: 'will-navigate', listener: (details: ElectronEvent<{ url: string; isMainFrame: boolean }>) => void): this;
  on(event: 'will-redirect', listener: (details: ElectronEvent<{ url: string; isMainFrame: boolean }>) => void): this;
  on(event: 'will-attach-webview', listener: (event: ElectronEvent) => void): this;
  on(event: 'render-process-gone', listener: (event: ElectronEvent, details: RenderProcessGoneDetails) => void): this;
  on(event: 'did-finish-load', listener: () => void): this;
  loadURL(url: string): Promise<void>;
  getURL(): string;
  reload(): void;
  toggleDevTools(): void;
  isDestroyed(): boolean;
}

export interface WebPreferences {
  preload?: string;
  contextIsolation?: boolean;
  sandbox?: boolean;
  nodeIntegration?: boolean;
  nodeIntegrationInWorker?: boolean;
  nodeIntegrationInSubFrames?: boolean;
  webSecurity?: boolean;
  allowRunningInsecureContent?: boolean;
  webviewTag?: boolean;
  navigateOnDragDrop?: boolean;
  spellcheck?: boolean;
  devTools?: boolean;
}

export interface BrowserWindowConstructorOptions {
  width?: number;
  height?: number;
  minWidth?: number;
  minHeight?: number;
  show?: boolean;
  title?: string;
  backgroundColor?: string;
  webPreferences?: WebPreferences;
}

export declare class BrowserWindow {
  constructor(options?: BrowserWindowConstructorOptions);
  static getAllWindows(): BrowserWindow[];
  readonly webContents: WebContents;
  loadURL(url: string): Promise<void>;
  show(): void;
  focus(): void;
  restore(): void;
  isMinimized(): boolean;
  isDestroyed(): boolean;
  on(event: 'closed', listener: () => void): this;
  once(event: 'ready-to-show', listener: () => void): this;
}

export interface App {
  readonly isPackaged: boolean;
  setName(name: string): void;
  getPath(name: 'userData' | 'appData' | 'home' | 'temp' | 'downloads'): string;
  setPath(name: string, path: string): void;
  requestSingleInstanceLock(): boolean;
  whenReady(): Promise<void>;
  quit(): void;
  exit(exitCode?: number): void;
  on(event: 'second-instance', listener: (event: ElectronEvent) => void): this;
  on(event: 'window-all-closed', listener: () => void): this;
  on(event: 'before-quit', listener: (event: ElectronEvent) => void): this;
  on(event: 'activate', listener: () => void): this;
  on(event: 'web-contents-created', listener: (event: ElectronEvent, webContents: WebContents) => void): this;
}
export declare const app: App;

export interface IpcMainInvokeEvent {
  readonly sender: WebContents;
  readonly senderFrame: WebFrameMain | null;
}

export interface IpcMain {
  handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: any[]) => Promise<any> | any): void;
  removeHandler(channel: string): void;
}
export declare const ipcMain: IpcMain;

export interface Privileges {
  standard?: boolean;
  secure?: boolean;
  supportFetchAPI?: boolean;
  corsEnabled?: boolean;
  stream?: boolean;
  codeCache?: boolean;
}

export interface CustomScheme {
  scheme: string;
  privileges?: Privileges;
}

export interface Protocol {
  registerSchemesAsPrivileged(customSchemes: CustomScheme[]): void;
  handle(scheme: string, handler: (request: Request) => Response | Promise<Response>): void;
}
export declare const protocol: Protocol;

export type MenuItemRole = 'undo' | 'redo' | 'cut' | 'copy' | 'paste' | 'selectAll' | 'reload' | 'forceReload' | 'toggleDevTools'
  | 'resetZoom' | 'zoomIn' | 'zoomOut' | 'togglefullscreen' | 'minimize' | 'close' | 'quit' | 'about' | 'appMenu' | 'editMenu' | 'windowMenu';

export interface MenuItemConstructorOptions {
  id?: string;
  label?: string;
  role?: MenuItemRole;
  type?: 'normal' | 'separator' | 'submenu';
  accelerator?: string;
  enabled?: boolean;
  visible?: boolean;
  click?: () => void;
  submenu?: MenuItemConstructorOptions[];
}

export interface MenuItem {
  readonly id: string;
  readonly label: string;
  readonly submenu?: Menu;
}

export declare class Menu {
  static buildFromTemplate(template: MenuItemConstructorOptions[]): Menu;
  static setApplicationMenu(menu: Menu | null): void;
  readonly items: MenuItem[];
}

export interface FileFilter {
  name: string;
  extensions: string[];
}

export interface OpenDialogOptions {
  title?: string;
  defaultPath?: string;
  filters?: FileFilter[];
  properties?: Array<'openFile' | 'promptToCreate' | 'createDirectory'>;
}

export interface OpenDialogReturnValue {
  canceled: boolean;
  filePaths: string[];
}

export interface SaveDialogOptions {
  title?: string;
  defaultPath?: string;
  filters?: FileFilter[];
}

export interface SaveDialogReturnValue {
  canceled: boolean;
  filePath: string;
}

export interface Dialog {
  showOpenDialog(window: BrowserWindow, options: OpenDialogOptions): Promise<OpenDialogReturnValue>;
  showSaveDialog(window: BrowserWindow, options: SaveDialogOptions): Promise<SaveDialogReturnValue>;
  showSaveDialog(options: SaveDialogOptions): Promise<SaveDialogReturnValue>;
  showErrorBox(title: string, content: string): void;
}
export declare const dialog: Dialog;

export interface Session {
  setPermissionRequestHandler(handler: ((webContents: WebContents, permission: string, callback: (granted: boolean) => void) => void) | null): void;
  setPermissionCheckHandler(handler: ((webContents: WebContents | null, permission: string) => boolean) | null): void;
}
export declare const session: { readonly defaultSession: Session };

export interface IpcRendererEvent {
  readonly senderId: number;
}

export interface IpcRenderer {
  invoke(channel: string, ...args: any[]): Promise<any>;
  on(channel: string, listener: (event: IpcRendererEvent, ...args: any[]) => void): this;
}
export declare const ipcRenderer: IpcRenderer;

export interface ContextBridge {
  exposeInMainWorld(apiKey: string, api: any): void;
}
export declare const contextBridge: ContextBridge;
