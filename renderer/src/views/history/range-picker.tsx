// The time range of the history charts and the log: the last 5 minutes, the last hour, the whole
// crawl, or a custom range (typed here: it applies when a field is left or Enter is pressed, and an
// inverted or unreadable range is refused saying why; or set by zooming and panning a chart).

import { useEffect, useRef, useState, type FocusEvent } from 'react';
import type { RangeChoice } from './history-source';

const PRESETS: readonly { readonly id: string; readonly label: string; readonly choice: RangeChoice }[] = [
  { id: '5m', label: 'Last 5 min', choice: { kind: 'last', ms: 5 * 60_000 } },
  { id: '1h', label: 'Last 1 h', choice: { kind: 'last', ms: 3_600_000 } },
  { id: 'all', label: 'All', choice: { kind: 'all' } },
];

function presetId(r: RangeChoice): string {
  if (r.kind === 'all') return 'all';
  if (r.kind === 'last') return r.ms === 300_000 ? '5m' : r.ms === 3_600_000 ? '1h' : 'custom';
  return 'custom';
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Epoch ms → the value of a datetime-local input (local time, seconds). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getFullYear())}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A typed range: the range, or why it cannot be one. */
export function checkRange(from: string, to: string): { readonly ok: true; readonly from: number; readonly to: number } | { readonly ok: false; readonly message: string } {
  const f = new Date(from).getTime();
  const t = new Date(to).getTime();
  if (from.trim() === '' || !Number.isFinite(f)) return { ok: false, message: `From: “${from}” is not a date and time` };
  if (to.trim() === '' || !Number.isFinite(t)) return { ok: false, message: `To: “${to}” is not a date and time` };
  if (t === f) return { ok: false, message: 'From and To are the same moment: the range would be empty. Move To later.' };
  if (t < f) return { ok: false, message: `To (${to.replace('T', ' ')}) is before From (${from.replace('T', ' ')}): the range would run backwards. Swap them, or move one.` };
  return { ok: true, from: f, to: t };
}

export function RangePicker({ value, shown, onChange, presets = true }: {
  value: RangeChoice; shown: { from: number; to: number }; onChange: (r: RangeChoice) => void;
  /** Show the Last 5 min / Last 1 h / All buttons (off where only a custom range makes sense). */
  presets?: boolean;
}) {
  const active = presetId(value);
  const [from, setFrom] = useState(() => toLocalInput(shown.from));
  const [to, setTo] = useState(() => toLocalInput(shown.to));
  const [error, setError] = useState<string | null>(null);
  // What the user is typing is not overwritten by the range shown moving on (a live crawl's window).
  const editing = useRef(false);
  useEffect(() => {
    if (editing.current) return;
    setFrom(toLocalInput(shown.from));
    setTo(toLocalInput(shown.to));
  }, [shown.from, shown.to]);

  const apply = (f = from, t = to) => {
    editing.current = false;
    const r = checkRange(f, t);
    if (!r.ok) return setError(r.message);
    setError(null);
    if (value.kind === 'custom' && value.from === r.from && value.to === r.to) return;
    onChange({ kind: 'custom', from: r.from, to: r.to });
  };
  // Leaving a field applies what it says, unless focus only moved to the other field of the range.
  const onBlur = (e: FocusEvent<HTMLInputElement>) => {
    const next = e.relatedTarget as HTMLElement | null;
    if (next?.dataset.rangeField) return;
    if (editing.current) apply();
  };
  const field = (which: 'From' | 'To', v: string, set: (x: string) => void) => (
    <label className="range-field">
      <span className="muted">{which}</span>
      <input className="input" type="datetime-local" step={1} value={v} aria-label={which} data-range-field={which} aria-invalid={error !== null}
        aria-describedby={error ? 'range-error' : undefined}
        onChange={(e) => { editing.current = true; set(e.target.value); }}
        onBlur={onBlur}
        onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); apply(); } }} />
    </label>
  );

  return (
    <div className="range-picker" role="group" aria-label="Time range">
      <span className="segmented">
        {presets && PRESETS.map((p) => (
          <button key={p.id} type="button" className={`seg${active === p.id ? ' active' : ''}`} aria-pressed={active === p.id}
            onClick={() => { editing.current = false; setError(null); onChange(p.choice); }}>
            {p.label}
          </button>
        ))}
        <button type="button" className={`seg${active === 'custom' ? ' active' : ''}`} aria-pressed={active === 'custom'} onClick={() => apply()} title="Show the range typed on the right">
          Custom
        </button>
      </span>
      {field('From', from, setFrom)}
      {field('To', to, setTo)}
      {error && <span className="field-error" role="alert" id="range-error" data-testid="range-error">{error}</span>}
    </div>
  );
}
