// Electron's save dialog for exports, kept free of `electron` so it can be tested in Node: a
// 'history.export' from the window without a path asks the user where to write the file (the
// browser host downloads instead); a cancelled dialog answers 'canceled' and writes nothing.

import { join } from 'node:path';
import { EXPORT_EXTENSIONS, EXPORT_FORMATS, type ExportFormat, type Reply } from '../../shared/contract';
import { exportFileName } from '../server/export-route';
import { CHOSEN_BY_USER } from '../core/store/export/exporter';

/** What the dialog is opened with (a subset of Electron's SaveDialogOptions). */
export interface SaveOptions {
  readonly title: string;
  readonly defaultPath: string;
  readonly filters: readonly { readonly name: string; readonly extensions: readonly string[] }[];
}

const FORMAT_NAMES: Readonly<Record<ExportFormat, string>> = {
  'scrapy-debug': 'Scrapy debug log',
  jsonl: 'JSON Lines',
  csv: 'CSV',
  har: 'HAR 1.2',
};

/** The dialog's options for an export of `params` (crawl, format, slot), suggested in `folder`. */
export function exportSaveOptions(params: { crawlId: number; format: ExportFormat; slot?: string; from?: number; to?: number }, folder: string): SaveOptions {
  return {
    title: `Export ${FORMAT_NAMES[params.format]}`,
    defaultPath: join(folder, exportFileName({ crawlId: params.crawlId, format: params.format, slot: params.slot, from: params.from, to: params.to })),
    filters: [{ name: FORMAT_NAMES[params.format], extensions: EXPORT_EXTENSIONS[params.format].map((e) => e.slice(1)) }],
  };
}

/**
 * Before a request reaches the core: a 'history.export' without `path` gets one from `pick` (the
 * save dialog), with the format's extension added when the user typed none, marked CHOSEN_BY_USER
 * so the core may write it anywhere; null from `pick` (cancelled) answers 'canceled'. Other
 * requests, and exports that name a path (the core keeps those inside exports/), pass unchanged.
 */
export async function withExportPath(
  method: string, params: unknown, folder: string, pick: (o: SaveOptions) => Promise<string | null>,
): Promise<{ readonly params: unknown } | { readonly reply: Reply }> {
  if (method !== 'history.export' || typeof params !== 'object' || params === null) return { params };
  const p = params as { crawlId?: unknown; format?: unknown; slot?: unknown; path?: unknown; from?: unknown; to?: unknown };
  if (p.path !== undefined) return { params };
  // A bad crawl id or format is the core's to refuse, in its words: no dialog for it.
  if (typeof p.crawlId !== 'number' || !EXPORT_FORMATS.includes(p.format as ExportFormat)) return { params };
  const format = p.format as ExportFormat;
  const time = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const chosen = await pick(exportSaveOptions({ crawlId: p.crawlId, format, slot: typeof p.slot === 'string' ? p.slot : undefined, from: time(p.from), to: time(p.to) }, folder));
  if (chosen === null || chosen === '') return { reply: { ok: false, error: { code: 'canceled', message: 'export canceled: no file was chosen', field: 'path' } } };
  const exts = EXPORT_EXTENSIONS[format];
  const path = exts.some((e) => chosen.toLowerCase().endsWith(e)) ? chosen : `${chosen}${exts[0]}`;
  // Marked as the user's choice: the core writes a path from a client only inside the data folder's exports/.
  return { params: { ...p, path, [CHOSEN_BY_USER]: path } };
}
