// The "⋯" menu of a slot row (SPEC 6 live control): pin the delay or the concurrency, clear the
// pins, reset the backoff, open the slot's history. One menu for the whole grid, outside its rows.

import { useCallback, useEffect, useLayoutEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { DEFAULT_SETTINGS, type Settings } from '../../../../shared/settings';
import { OFFLINE_TITLE, useHostOnline } from '../../components/connection-notice';
import type { SlotControl } from '../../store/app-state';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { cell, type SlotTableStore } from '../../store/slot-table-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { formatSeconds } from '../format';

export interface RowActionsMenuProps {
  readonly table: SlotTableStore;
  readonly crawlId: number;
  readonly slotKey: string;
  /** The "⋯" button the menu opened from (it is placed beside it and gets the focus back). */
  readonly anchor: HTMLElement;
  /** The crawl runs (or is paused): slot controls are possible. */
  readonly live: boolean;
  readonly onClose: () => void;
  /** Opens the slot's history; without it the menu says the view comes later. */
  readonly onOpenHistory?: (slotKey: string) => void;
  /** Opens the Requests tab on the slot: its requests done, or its queue. */
  readonly onOpenRequests?: (slotKey: string, mode: 'requests' | 'queue') => void;
  /** Shows a line of text above the grid. */
  readonly onNote: (text: string) => void;
}

type Form = 'delay' | 'concurrency' | null;

/** Reads a pin typed in the menu: a number of seconds >= 0, or a whole number >= 1. */
export function parsePin(form: 'delay' | 'concurrency', text: string): { readonly value: number } | { readonly error: string } {
  const t = text.trim();
  const what = form === 'delay' ? 'Delay' : 'Concurrency';
  const allowed = form === 'delay' ? 'a number of seconds >= 0' : 'a whole number >= 1';
  if (t === '') return { error: `${what}: type ${allowed}` };
  const n = Number(t);
  const ok = form === 'delay' ? Number.isFinite(n) && n >= 0 : Number.isInteger(n) && n >= 1;
  return ok ? { value: n } : { error: `${what}: ${JSON.stringify(t)} is not allowed (${allowed})` };
}

/**
 * The longest delay the crawl's own throttle would use (the larger of BACKOFF_MAX_DELAY and
 * AUTOTHROTTLE_MAX_DELAY): a pin above it is most likely a slip of the keyboard, so it asks first.
 */
export function pinAboveBounds(seconds: number, s: Settings): string | null {
  const bounds = [['BACKOFF_MAX_DELAY', s.BACKOFF_MAX_DELAY], ['AUTOTHROTTLE_MAX_DELAY', s.AUTOTHROTTLE_MAX_DELAY]] as const;
  if (bounds.every(([, v]) => seconds <= v)) return null;
  const over = bounds.filter(([, v]) => seconds > v).map(([n, v]) => `${n} (${v} s)`);
  const pin = seconds < 60 ? `${seconds} s` : `${seconds} s (${formatSeconds(seconds)})`;
  return `A pin of ${pin} is above this crawl's ${over.join(' and ')}, the longest ${over.length === 1 ? 'delay' : 'delays'} its own throttle ` +
    `would use: the slot would start one request every ${formatSeconds(seconds)}.`;
}

const settingsOf = (s: CrawlLogStore) => s.settings();

export const HISTORY_LATER = 'The history view of a slot comes in a later version of Slotscope; until then its records are in the crawl\'s SQLite file.';

export function RowActionsMenu({ table, crawlId, slotKey, anchor, live, onClose, onOpenHistory, onOpenRequests, onNote }: RowActionsMenuProps) {
  const { commands, stores } = useApp();
  const row = useStore(table, useCallback((t: SlotTableStore) => t.row(slotKey), [slotKey]));
  const settings = useStore(stores.crawlLogs.get(crawlId), settingsOf) ?? DEFAULT_SETTINGS;
  const online = useHostOnline();
  /** A long delay pin waiting for its confirmation, with why it asks. */
  const [confirm, setConfirm] = useState<{ readonly seconds: number; readonly why: string } | null>(null);
  const ref = useRef<HTMLDivElement>(null);
  const [form, setForm] = useState<Form>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [place, setPlace] = useState<{ top: number; left: number } | null>(null);

  const close = useCallback((refocus: boolean) => {
    onClose();
    if (refocus && anchor.isConnected) anchor.focus();
  }, [anchor, onClose]);

  // Beside the button, inside the window (above it when there is no room below), again when the window is resized.
  useLayoutEffect(() => {
    const placeIt = () => {
      const el = ref.current;
      if (!el) return;
      const r = anchor.getBoundingClientRect();
      const w = el.offsetWidth;
      const h = el.offsetHeight;
      const below = r.bottom + 4;
      const top = below + h > window.innerHeight - 8 ? Math.max(8, r.top - h - 4) : below;
      const left = Math.min(Math.max(8, r.right - w), window.innerWidth - w - 8);
      setPlace((p) => (p && p.top === top && p.left === left ? p : { top, left }));
    };
    placeIt();
    window.addEventListener('resize', placeIt);
    return () => window.removeEventListener('resize', placeIt);
  }, [anchor, form, error, confirm]);

  // Focus the first item when opened.
  useEffect(() => {
    ref.current?.querySelector<HTMLElement>('[role="menuitem"]:not(:disabled)')?.focus();
  }, []);

  // A press outside closes it.
  useEffect(() => {
    const onDown = (e: PointerEvent) => {
      const t = e.target as Node;
      if (!ref.current?.contains(t) && !anchor.contains(t)) onClose();
    };
    document.addEventListener('pointerdown', onDown, true);
    return () => document.removeEventListener('pointerdown', onDown, true);
  }, [anchor, onClose]);

  const run = async (control: SlotControl) => {
    setBusy(true);
    setError(null);
    const r = await commands.slotControl(crawlId, slotKey, control);
    setBusy(false);
    if (r.ok) close(true);
    else setError(`Refused: ${r.error.message}`);
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!form) return;
    const parsed = parsePin(form, text);
    if ('error' in parsed) {
      setError(parsed.error);
      setConfirm(null);
      return;
    }
    if (form === 'delay' && confirm?.seconds !== parsed.value) {
      const why = pinAboveBounds(parsed.value, settings);
      if (why !== null) {
        setError(null);
        setConfirm({ seconds: parsed.value, why });
        return;
      }
    }
    void run(form === 'delay' ? { kind: 'pinDelay', seconds: parsed.value } : { kind: 'pinConcurrency', value: parsed.value });
  };

  const openForm = (f: 'delay' | 'concurrency') => {
    setForm(f);
    setError(null);
    setConfirm(null);
    const current = row ? (f === 'delay' ? cell(row, 'pinDelay') ?? cell(row, 'delay') : cell(row, 'pinConcurrency') ?? cell(row, 'concurrency')) : null;
    setText(current === null ? '' : String(current));
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close(true);
      return;
    }
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    if ((e.target as HTMLElement).tagName === 'INPUT') return;
    const items = [...(ref.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not(:disabled)') ?? [])];
    if (items.length === 0) return;
    e.preventDefault();
    const i = items.indexOf(document.activeElement as HTMLElement);
    const next = e.key === 'ArrowDown' ? (i + 1) % items.length : (i - 1 + items.length) % items.length;
    items[next].focus();
  };

  const pinned = row !== undefined && (cell(row, 'pinDelay') !== null || cell(row, 'pinConcurrency') !== null);
  const backoff = row !== undefined && (cell(row, 'backoffLevel') > 0 || cell(row, 'state') === 'blocked');
  const off = !live || busy || row === undefined || !online;
  const offTitle = !online ? OFFLINE_TITLE : live ? undefined : 'Slot controls act on a running crawl';

  return (
    <div ref={ref} className="row-menu" role="menu" aria-label={`Actions for slot ${slotKey}`} data-testid="row-menu" onKeyDown={onKeyDown}
      style={place ? { top: place.top, left: place.left } : { top: -9999, left: -9999 }}>
      <div className="row-menu-title" title={slotKey}>{slotKey}</div>
      <button type="button" role="menuitem" className="row-menu-item" disabled={off} title={offTitle} onClick={() => openForm('delay')}>
        Pin delay…
        {row && cell(row, 'pinDelay') !== null && <span className="muted"> (now {formatSeconds(cell(row, 'pinDelay')!)})</span>}
      </button>
      {form === 'delay' && <PinForm form="delay" slotKey={slotKey} text={text} setText={(t) => { setText(t); setConfirm(null); }} onSubmit={submit} busy={busy} />}
      {form === 'delay' && confirm && (
        <div className="row-menu-confirm" role="alert" data-testid="pin-confirm">
          <p>{confirm.why} Pin it anyway?</p>
          <div className="toolbar">
            <button type="button" className="btn btn-small btn-danger-solid" disabled={busy || !online} onClick={() => void run({ kind: 'pinDelay', seconds: confirm.seconds })}>
              Pin {formatSeconds(confirm.seconds)}
            </button>
            <button type="button" className="btn btn-small" onClick={() => setConfirm(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <button type="button" role="menuitem" className="row-menu-item" disabled={off} title={offTitle} onClick={() => openForm('concurrency')}>
        Pin concurrency…
        {row && cell(row, 'pinConcurrency') !== null && <span className="muted"> (now {cell(row, 'pinConcurrency')})</span>}
      </button>
      {form === 'concurrency' && <PinForm form="concurrency" slotKey={slotKey} text={text} setText={setText} onSubmit={submit} busy={busy} />}
      <button type="button" role="menuitem" className="row-menu-item" disabled={off || !pinned} title={offTitle ?? (pinned ? undefined : 'Nothing is pinned')}
        onClick={() => void run({ kind: 'clearPins' })}>
        Clear pins
      </button>
      <button type="button" role="menuitem" className="row-menu-item" disabled={off || !backoff}
        title={offTitle ?? (backoff ? 'Back to level 0, and any Retry-After block lifted' : 'The slot is not backing off')}
        onClick={() => void run({ kind: 'resetBackoff' })}>
        Reset backoff
      </button>
      {onOpenRequests && (
        <>
          <button type="button" role="menuitem" className="row-menu-item" onClick={() => { close(true); onOpenRequests(slotKey, 'requests'); }}>
            Show its requests
          </button>
          <button type="button" role="menuitem" className="row-menu-item" onClick={() => { close(true); onOpenRequests(slotKey, 'queue'); }}>
            Show its queue
          </button>
        </>
      )}
      <button type="button" role="menuitem" className="row-menu-item" onClick={() => {
        close(true);
        if (onOpenHistory) onOpenHistory(slotKey);
        else onNote(HISTORY_LATER);
      }}>
        Open history
      </button>
      {error && (
        <div className="field-error row-menu-error" role="alert" data-testid="row-menu-error">
          {error}
        </div>
      )}
    </div>
  );
}

function PinForm({ form, slotKey, text, setText, onSubmit, busy }: {
  form: 'delay' | 'concurrency'; slotKey: string; text: string; setText: (t: string) => void; onSubmit: (e: FormEvent) => void; busy: boolean;
}) {
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const label = form === 'delay' ? `Pinned delay for ${slotKey}, seconds` : `Pinned concurrency for ${slotKey}`;
  return (
    <form className="row-menu-form" onSubmit={onSubmit}>
      <input ref={input} className="input" inputMode={form === 'delay' ? 'decimal' : 'numeric'} aria-label={label} value={text}
        onChange={(e) => setText(e.target.value)} placeholder={form === 'delay' ? 'seconds' : 'requests'} />
      <span className="muted">{form === 'delay' ? 's' : 'at once'}</span>
      <button type="submit" className="btn btn-small btn-primary" disabled={busy}>
        Pin
      </button>
    </form>
  );
}
