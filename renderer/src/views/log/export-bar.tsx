// Export buttons for a crawl's history (scrapy-debug, JSONL, CSV, HAR) for the whole crawl, one
// slot or a time range: in a browser a download from the host's /export route, in Electron
// 'history.export' (the host writes the file) with its progress events.

import { useEffect, useState } from 'react';
import { EXPORT_FORMATS, type ExportFormat, type Params } from '../../../../shared/contract';
import { toAppError, type Transport } from '../../transport/transport';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { clock } from '../../charts/time-format';

/** What one export covers: the whole crawl, or narrowed to a slot and/or a time range [from, to). */
export interface ExportScope {
  readonly id: string;
  readonly label: string;
  readonly slot?: string;
  readonly from?: number;
  readonly to?: number;
  /** Why the scope cannot be chosen now (e.g. no slot filter set). */
  readonly unavailable?: string;
}

export const FORMAT_WORDS: Readonly<Record<ExportFormat, string>> = {
  'scrapy-debug': 'Scrapy debug log',
  jsonl: 'JSONL',
  csv: 'CSV',
  har: 'HAR',
};

/** The browser host's download address of an export. */
export function exportUrl(crawlId: number, format: ExportFormat, scope: ExportScope): string {
  const q = new URLSearchParams({ crawlId: String(crawlId), format });
  if (scope.slot) q.set('slot', scope.slot);
  if (scope.from !== undefined) q.set('from', String(Math.floor(scope.from)));
  if (scope.to !== undefined) q.set('to', String(Math.ceil(scope.to)));
  return `export?${q.toString()}`;
}

type State =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly exportId: string; readonly rows: number; readonly total: number }
  | { readonly kind: 'done'; readonly text: string }
  | { readonly kind: 'error'; readonly text: string };

let exportCounter = 0;

/** How a host-side export ended, in the bar's words (its 'done' or 'error' state). */
export type ExportOutcome = Extract<State, { readonly kind: 'done' | 'error' }>;

/**
 * Runs 'history.export' on the host (the desktop app: the host writes the file, its save dialog
 * supplies the path) and says how it ended. A refusal arrives as a rejected invoke with the host's
 * AppError; `canceled` (the save dialog closed without a file) is neither a success nor a failure.
 */
export async function exportOnHost(transport: Pick<Transport, 'invoke'>, params: Params<'history.export'>): Promise<ExportOutcome> {
  try {
    const r = await transport.invoke('history.export', params);
    return { kind: 'done', text: `Saved ${formatCount(r.rows)} rows (${formatCount(r.bytes)} bytes) to ${r.path}` };
  } catch (e) {
    const err = toAppError(e);
    // The desktop app's save dialog closed without a file: nothing was written, nothing failed.
    return err.code === 'canceled' ? { kind: 'done', text: 'Export canceled.' } : { kind: 'error', text: `Export failed: ${err.message}` };
  }
}

export function ExportBar({ crawlId, scopes }: { crawlId: number; scopes: readonly ExportScope[] }) {
  const { transport } = useApp();
  const [format, setFormat] = useState<ExportFormat>('scrapy-debug');
  const [scopeId, setScopeId] = useState(scopes[0]?.id ?? 'crawl');
  const [state, setState] = useState<State>({ kind: 'idle' });
  const scope = scopes.find((s) => s.id === scopeId) ?? scopes[0];
  const runningId = state.kind === 'running' ? state.exportId : null;

  // Progress of a host-side export (Electron): rows written of about `total`.
  useEffect(() => {
    if (!runningId) return;
    return transport.subscribe('history.exportProgress', (p) => {
      if (p.exportId === runningId) setState((s) => (s.kind === 'running' ? { ...s, rows: p.rows, total: p.total } : s));
    });
  }, [transport, runningId]);

  const run = async () => {
    if (!scope || scope.unavailable) return;
    if (transport.kind === 'websocket') {
      // A browser download through the host's route: check the query first so a refusal shows here, in words.
      const url = exportUrl(crawlId, format, scope);
      try {
        const head = await fetch(url, { method: 'HEAD', credentials: 'same-origin' });
        if (!head.ok) {
          const why = head.status === 404 ? 'nothing to export there (unknown crawl or slot)' : `the host refused it (HTTP ${head.status})`;
          const body = await fetch(url, { method: 'GET', credentials: 'same-origin' }).then((r) => (r.ok ? '' : r.text()), () => '');
          setState({ kind: 'error', text: `Export refused: ${body.trim() || why}` });
          return;
        }
      } catch (e) {
        setState({ kind: 'error', text: `Export failed: ${e instanceof Error ? e.message : String(e)}` });
        return;
      }
      const a = document.createElement('a');
      a.href = url;
      a.download = '';
      document.body.appendChild(a);
      a.click();
      a.remove();
      setState({ kind: 'done', text: `Downloading the ${FORMAT_WORDS[format]} export of ${scope.label.toLowerCase()} (see the browser’s downloads).` });
      return;
    }
    const exportId = `gui-${Date.now().toString(36)}-${++exportCounter}`;
    setState({ kind: 'running', exportId, rows: 0, total: 0 });
    setState(await exportOnHost(transport, {
      crawlId, format, exportId,
      ...(scope.slot ? { slot: scope.slot } : {}),
      ...(scope.from !== undefined ? { from: Math.floor(scope.from) } : {}),
      ...(scope.to !== undefined ? { to: Math.ceil(scope.to) } : {}),
    }));
  };

  return (
    <div className="export-bar" role="group" aria-label="Export the history" data-testid="export-bar">
      <span className="muted">Export</span>
      <select className="input" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)} aria-label="Export format">
        {EXPORT_FORMATS.map((f) => <option key={f} value={f}>{FORMAT_WORDS[f]}</option>)}
      </select>
      <select className="input" value={scope?.id} onChange={(e) => setScopeId(e.target.value)} aria-label="What to export">
        {scopes.map((s) => (
          <option key={s.id} value={s.id} disabled={s.unavailable !== undefined} title={s.unavailable}>
            {s.label}
            {s.from !== undefined && s.to !== undefined ? ` (${clock(s.from)}–${clock(s.to)})` : ''}
          </option>
        ))}
      </select>
      <button type="button" className="btn btn-small" onClick={() => void run()} disabled={!scope || scope.unavailable !== undefined || state.kind === 'running'}
        data-testid="export-button">
        {transport.kind === 'websocket' ? 'Download' : 'Export'}
      </button>
      {state.kind === 'running' && (
        <>
          <progress className="export-progress" max={state.total || 1} value={state.total ? state.rows : 0} aria-label="Export progress" />
          <span className="muted" role="status">
            {formatCount(state.rows)}
            {state.total ? ` of ${formatCount(state.total)}` : ''} rows
          </span>
        </>
      )}
      {state.kind === 'done' && <span className="muted" role="status" data-testid="export-status">{state.text}</span>}
      {state.kind === 'error' && <span className="bad-text" role="alert" data-testid="export-status">{state.text}</span>}
    </div>
  );
}
