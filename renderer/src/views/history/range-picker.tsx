// The time range of the history charts: the last 5 minutes, the last hour, the whole crawl, or a
// custom range (typed here, or set by zooming and panning a chart).

import { useEffect, useState } from 'react';
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
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function RangePicker({ value, shown, onChange }: { value: RangeChoice; shown: { from: number; to: number }; onChange: (r: RangeChoice) => void }) {
  const active = presetId(value);
  const [from, setFrom] = useState(() => toLocalInput(shown.from));
  const [to, setTo] = useState(() => toLocalInput(shown.to));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setFrom(toLocalInput(shown.from));
    setTo(toLocalInput(shown.to));
  }, [shown.from, shown.to]);

  const apply = () => {
    const f = new Date(from).getTime();
    const t = new Date(to).getTime();
    if (!Number.isFinite(f)) return setError(`From: “${from}” is not a date and time`);
    if (!Number.isFinite(t)) return setError(`To: “${to}” is not a date and time`);
    if (t <= f) return setError('To must be after From');
    setError(null);
    onChange({ kind: 'custom', from: f, to: t });
  };

  return (
    <div className="range-picker" role="group" aria-label="Time range">
      <span className="segmented">
        {PRESETS.map((p) => (
          <button key={p.id} type="button" className={`seg${active === p.id ? ' active' : ''}`} aria-pressed={active === p.id} onClick={() => onChange(p.choice)}>
            {p.label}
          </button>
        ))}
        <button type="button" className={`seg${active === 'custom' ? ' active' : ''}`} aria-pressed={active === 'custom'} onClick={apply} title="Show the range typed on the right">
          Custom
        </button>
      </span>
      <label className="range-field">
        <span className="muted">From</span>
        <input className="input" type="datetime-local" step={1} value={from} onChange={(e) => setFrom(e.target.value)} aria-label="From" />
      </label>
      <label className="range-field">
        <span className="muted">To</span>
        <input className="input" type="datetime-local" step={1} value={to} onChange={(e) => setTo(e.target.value)} aria-label="To"
          onKeyDown={(e) => e.key === 'Enter' && apply()} />
      </label>
      {error && <span className="field-error" role="alert">{error}</span>}
    </div>
  );
}
