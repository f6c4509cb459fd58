// The History tab of a crawl: pick a slot (or arrive from the slot table's "Open history"), then
// its detail view; the picked slot is the crawl panel's state so switching tabs keeps it. A slot the
// crawl never had is refused with a message, not drawn as empty charts.

import { useCallback, useState } from 'react';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { SlotDetail } from './slot-detail';
import { useBusiest, useSlotKeys } from './slot-keys';

export function HistoryTab({ crawlId, slot, focus, onSlot }: {
  crawlId: number; slot: string | null; focus?: { readonly t: number; readonly seq: number } | null; onSlot: (slot: string) => void;
}) {
  const { stores } = useApp();
  const keys = useSlotKeys(crawlId);
  const busiest = useBusiest(crawlId, 5);
  const [typed, setTyped] = useState<string | null>(null);
  // A slot is known when the slot table lists it or the crawl's changes or warnings name it.
  const named = useStore(stores.crawlLogs.get(crawlId), useCallback((l: CrawlLogStore) => (slot === null ? false
    : l.changes().some((c) => c.slot === slot) || l.allWarnings().some((w) => w.slot === slot)), [slot]));
  const unknown = slot !== null && keys.length > 0 && !named && !keys.includes(slot);
  const shown = unknown ? null : slot;
  const listId = `history-slots-${crawlId}`;
  return (
    <div className="history-tab" data-testid="history-tab">
      <form className="history-pick" onSubmit={(e) => { e.preventDefault(); if (typed?.trim()) onSlot(typed.trim()); }}>
        <label className="field-row">
          <span className="muted">Slot</span>
          <input className="input slot-input" list={listId} value={typed ?? shown ?? ''} placeholder={busiest[0] ?? 'a slot key, e.g. example.com'}
            onChange={(e) => setTyped(e.target.value)} onBlur={() => typed?.trim() && typed.trim() !== shown && onSlot(typed.trim())}
            aria-label="Slot to show" data-testid="history-slot-input" />
        </label>
        <datalist id={listId}>
          {keys.slice(0, 500).map((k) => <option key={k} value={k} />)}
        </datalist>
        <button type="submit" className="btn btn-small">Show</button>
        {busiest.length > 0 && (
          <span className="history-quick muted">
            Busiest:{' '}
            {busiest.map((k) => (
              <button key={k} type="button" className={`link${k === shown ? ' strong' : ''}`} onClick={() => { setTyped(null); onSlot(k); }}>
                {k}
              </button>
            ))}
          </span>
        )}
      </form>
      {unknown && (
        <p className="field-error history-unknown" role="alert" data-testid="history-unknown">
          This crawl has no slot “{slot}”: it has {keys.length === 1 ? 'one slot' : `${keys.length.toLocaleString('en-US')} slots`}
          {keys.length <= 5 ? ` (${keys.join(', ')})` : `, e.g. ${keys.slice(0, 3).join(', ')}`}. Pick one from the list.
        </p>
      )}
      {shown ? (
        <SlotDetail key={`${crawlId}|${shown}|${focus?.seq ?? 0}`} crawlId={crawlId} slot={shown} focusT={focus?.t} />
      ) : unknown ? null : (
        <p className="empty">Pick a slot above, or use “History” on a row of the slot table, to see its latency, delays, backoff and marks over time.</p>
      )}
    </div>
  );
}
