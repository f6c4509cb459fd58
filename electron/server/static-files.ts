// Serves the built renderer to a browser: files under one folder only, with their content types,
// no listings, no dotfiles, and every way of climbing out of the folder refused.

import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** Content types by file extension; anything else is served as bytes. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

export type StaticTarget =
  | { readonly kind: 'file'; readonly file: string; readonly size: number; readonly type: string }
  | { readonly kind: 'not-built' }
  | { readonly kind: 'bad-path' }
  | { readonly kind: 'not-found' };

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Maps a raw request path (before `?`, still percent-encoded) to a file under `staticDir`.
 * `..` and `.` segments (plain or encoded), backslashes and NULs are `bad-path`; dotfiles,
 * directories other than `/`, and anything a symlink leads out of the folder are `not-found`.
 */
export async function resolveStatic(staticDir: string | undefined, rawPath: string): Promise<StaticTarget> {
  if (!rawPath.startsWith('/')) return { kind: 'bad-path' };
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return { kind: 'bad-path' };
  }
  if (path.includes('\0') || path.includes('\\')) return { kind: 'bad-path' };
  const segments = path.split('/').slice(1);
  if (segments.some((s) => s === '..' || s === '.')) return { kind: 'bad-path' };
  if (segments.some((s) => s.startsWith('.'))) return { kind: 'not-found' };

  if (staticDir === undefined || !(await isDirectory(staticDir))) return path === '/' ? { kind: 'not-built' } : { kind: 'not-found' };
  if (path.endsWith('/') && path !== '/') return { kind: 'not-found' };

  const root = resolve(staticDir);
  const file = resolve(root, path === '/' ? 'index.html' : `.${path}`);
  if (!file.startsWith(root + sep)) return { kind: 'bad-path' };
  try {
    const [realRoot, realFile] = await Promise.all([realpath(root), realpath(file)]);
    if (!realFile.startsWith(realRoot + sep)) return { kind: 'not-found' };
    const st = await stat(realFile);
    if (!st.isFile()) return { kind: 'not-found' };
    return { kind: 'file', file: realFile, size: st.size, type: CONTENT_TYPES[extname(realFile).toLowerCase()] ?? 'application/octet-stream' };
  } catch {
    // `/` of a folder without index.html is a renderer that is not built (yet).
    return path === '/' ? { kind: 'not-built' } : { kind: 'not-found' };
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page `/` shows when there is no built renderer to serve. */
export function notBuiltPage(staticDir: string | undefined): string {
  const where = staticDir ? `<p>Looked for <code>${escapeHtml(resolve(staticDir))}/index.html</code>.</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Slotscope: renderer not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
<h1>The Slotscope renderer isn't built yet</h1>
<p>The server is running and the WebSocket endpoint <code>/ws</code> answers, but there is no user interface to show.</p>
<p>Build it from the repository root with <code>npm run build</code>, then reload this page.</p>
${where}
</body></html>
`;
}

/** Streams a resolved file (headers already chosen by the caller); HEAD gets the headers only. */
export async function sendFile(req: IncomingMessage, res: ServerResponse, target: Extract<StaticTarget, { kind: 'file' }>, headers: Record<string, string>): Promise<void> {
  res.writeHead(200, { ...headers, 'Content-Type': target.type, 'Content-Length': String(target.size) });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  await pipeline(createReadStream(target.file), res);
}
