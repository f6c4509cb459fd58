// The Electron host's security rules as plain data and pure functions (ARCHITECTURE convention 9):
// the app's own origin, which URLs and IPC senders belong to it, and the renderer's CSP.

/** The privileged scheme the built renderer is served from (a standard, secure origin; never file://). */
export const APP_SCHEME = 'app';
/** The one host of that scheme. */
export const APP_HOST = 'slotscope';
/** Where the window loads the renderer. */
export const APP_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * The renderer's Content-Security-Policy, sent as a header with every file of the app scheme:
 * scripts and styles of the bundle only (React sets element styles through the CSSOM, Chart.js
 * inline styles, hence `'unsafe-inline'` for styles but never for scripts), no network at all
 * (the core is reached over IPC), no plug-ins, no framing, no forms posting anywhere.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** True when `url` is a page of the app itself: `app://slotscope/…`, nothing else (no userinfo, no port). */
export function isAppUrl(url: string | null | undefined): boolean {
  if (typeof url !== 'string' || url === '') return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === `${APP_SCHEME}:` && u.host.toLowerCase() === APP_HOST && u.username === '' && u.password === '';
}

/** What ipc.ts knows about the frame an invoke came from. */
export interface SenderInfo {
  /** The sending frame's URL; undefined when Electron no longer has the frame. */
  readonly frameUrl: string | undefined;
  /** False for a subframe (an iframe), which may never call the core. */
  readonly isMainFrame: boolean;
  /** True when the sending webContents is the app window's. */
  readonly fromAppWindow: boolean;
}

/** Why a sender is refused, or null when it may call the core. */
export function refuseSender(s: SenderInfo): string | null {
  if (!s.fromAppWindow) return 'the request did not come from the app window';
  if (!s.isMainFrame) return 'the request came from a subframe';
  if (!isAppUrl(s.frameUrl)) return `the request came from ${JSON.stringify(String(s.frameUrl ?? 'a frame that is gone').slice(0, 200))}, not from the app (${APP_SCHEME}://${APP_HOST}/)`;
  return null;
}

/** The raw path of an app-scheme request (`/index.html`, `/assets/x.js`), still percent-encoded; null for any other origin. */
export function appRequestPath(url: string): string | null {
  if (!isAppUrl(url)) return null;
  return new URL(url).pathname;
}
