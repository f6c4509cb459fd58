// "Import Scrapy log…" of the crawl list: a log written with AUTOTHROTTLE_DEBUG is read in the
// page and sent to the host, which stores it as a finished crawl the history views chart like any other.

import { useRef, useState } from 'react';
import type { ImportReport } from '../../../../shared/contract';
import type { Transport } from '../../transport/transport';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { OFFLINE_TITLE, useHostOnline } from '../../components/connection-notice';

type State = { readonly kind: 'idle' } | { readonly kind: 'busy'; readonly name: string } | { readonly kind: 'done' | 'error'; readonly text: string };

/**
 * Sends the file to the host: in a browser a streamed upload to the host's /import route (any size;
 * a WebSocket message is limited to 1 MiB), in Electron the contract's 'history.importScrapyLog'.
 */
async function upload(transport: Transport, file: File): Promise<ImportReport> {
  if (transport.kind === 'websocket') {
    const r = await fetch(`import?${new URLSearchParams({ name: file.name })}`, {
      method: 'POST', credentials: 'same-origin', body: file, headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    });
    if (!r.ok) throw new Error((await r.text()).trim() || `the host refused it (HTTP ${r.status})`);
    return (await r.json()) as ImportReport;
  }
  return transport.invoke('history.importScrapyLog', { name: file.name, text: await file.text() });
}

/** The report in words: what was read, what was skipped. */
export function describeImport(file: string, r: ImportReport): string {
  const version = r.scrapyVersion ? ` (Scrapy ${r.scrapyVersion})` : '';
  const skipped = r.unreadable ? `; ${formatCount(r.unreadable)} unreadable line${r.unreadable === 1 ? '' : 's'} skipped` +
    (r.firstUnreadable[0] ? ` (first: line ${r.firstUnreadable[0].line}, ${r.firstUnreadable[0].reason})` : '') : '';
  const slots = `${formatCount(r.slots)} slot${r.slots === 1 ? '' : 's'}`;
  // The list counts a response when it has a status; a log at INFO level has no Crawled line to give one.
  const what = r.withStatus === r.debugLines ? `${formatCount(r.debugLines)} responses over ${slots}`
    : r.withStatus === 0 ? `${formatCount(r.debugLines)} requests over ${slots}, no status for any (the log has no "Crawled (200)" lines: Scrapy writes them at DEBUG level)`
      : `${formatCount(r.debugLines)} requests over ${slots}, ${formatCount(r.withStatus)} of them responses with a status`;
  return `Imported ${file}${version}: ${what}${skipped}.`;
}

export function ImportLogButton({ onImported }: { onImported: (crawlId: number) => void }) {
  const { transport } = useApp();
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<State>({ kind: 'idle' });
  const online = useHostOnline();

  const onFile = async (file: File) => {
    setState({ kind: 'busy', name: file.name });
    try {
      const r = await upload(transport, file);
      setState({ kind: 'done', text: describeImport(file.name, r) });
      if (r.crawlId !== null) onImported(r.crawlId);
    } catch (e) {
      setState({ kind: 'error', text: `Importing ${file.name} failed: ${toAppError(e).message}` });
    } finally {
      if (input.current) input.current.value = '';
    }
  };

  return (
    <span className="import-log">
      <input ref={input} type="file" accept=".log,.txt,text/plain" hidden data-testid="import-log-file" aria-label="Scrapy log file"
        onChange={(e) => { const f = e.target.files?.[0]; if (f) void onFile(f); }} />
      <button type="button" className="btn btn-small" onClick={() => input.current?.click()} disabled={state.kind === 'busy' || !online}
        title={online ? 'Open a Scrapy log written with AUTOTHROTTLE_DEBUG = True as a crawl of this history' : OFFLINE_TITLE}>
        {state.kind === 'busy' ? `Importing ${state.name}…` : 'Import Scrapy log…'}
      </button>
      {state.kind === 'done' && <span className="muted" role="status" data-testid="import-status">{state.text}</span>}
      {state.kind === 'error' && <span className="bad-text" role="alert" data-testid="import-status">{state.text}</span>}
    </span>
  );
}
