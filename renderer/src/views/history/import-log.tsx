// "Import Scrapy log…" of the crawl list: a log written with AUTOTHROTTLE_DEBUG is read in the
// page and sent to the host, which stores it as a finished crawl the history views chart like any other.

import { useRef, useState } from 'react';
import type { Method } from '../../../../shared/contract';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { invokeIfPresent } from './history-api';

/** The contract method that stores an uploaded Scrapy log, when the host has one. */
export const IMPORT_METHOD = 'history.importScrapyLog';

/** What an import answers (the fields the list shows; others are ignored). */
interface ImportAnswer {
  readonly crawlId?: number;
  readonly crawl?: { readonly id: number };
  readonly responses?: number;
  readonly lines?: number;
  readonly unreadable?: number;
}

type State = { readonly kind: 'idle' } | { readonly kind: 'busy'; readonly name: string } | { readonly kind: 'done' | 'error'; readonly text: string };

export function ImportLogButton({ onImported }: { onImported: (crawlId: number) => void }) {
  const { transport } = useApp();
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<State>({ kind: 'idle' });

  const onFile = async (file: File) => {
    setState({ kind: 'busy', name: file.name });
    try {
      const text = await file.text();
      const r = (await invokeIfPresent(transport, IMPORT_METHOD as Method, { name: file.name, text } as never)) as ImportAnswer | null;
      if (r === null) {
        setState({ kind: 'error', text: 'This host cannot import Scrapy logs from the window (no history.importScrapyLog method): use `slotscope import --scrapy-log FILE`.' });
        return;
      }
      const id = r.crawlId ?? r.crawl?.id;
      const skipped = r.unreadable ? `, ${formatCount(r.unreadable)} unreadable lines skipped` : '';
      setState({ kind: 'done', text: `Imported ${file.name}${r.responses !== undefined ? `: ${formatCount(r.responses)} responses` : ''}${skipped}.` });
      if (id !== undefined) onImported(id);
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
      <button type="button" className="btn btn-small" onClick={() => input.current?.click()} disabled={state.kind === 'busy'}
        title="Open a Scrapy log written with AUTOTHROTTLE_DEBUG = True as a crawl of this history">
        {state.kind === 'busy' ? `Importing ${state.name}…` : 'Import Scrapy log…'}
      </button>
      {state.kind === 'done' && <span className="muted" role="status" data-testid="import-status">{state.text}</span>}
      {state.kind === 'error' && <span className="bad-text" role="alert" data-testid="import-status">{state.text}</span>}
    </span>
  );
}
