// What-if: pick other throttle settings (checked with the shared settings schema as typed), replay
// the slot's (or the crawl's) recorded responses through the policy on the host, overlay the delays.

import { memo, useEffect, useMemo, useState } from 'react';
import type { SettingDescription } from '../../../../shared/contract';
import { applySettings, type Settings } from '../../../../shared/settings';
import type { XY } from '../../charts/chart-handle';
import type { SchemaStore } from '../../store/app-state';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { useStore } from '../../store/use-store';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { parseInput, showValue } from '../setting-value';
import { fetchSeries, invokeIfPresent } from './history-api';
import type { HistorySource } from './history-source';
import type { SlotCharts } from './slot-charts';

/** The settings most worth trying, in the order shown; anything else goes in the JSON box. */
export const WHAT_IF_SETTINGS: readonly (keyof Settings)[] = [
  'AUTOTHROTTLE_ENABLED', 'AUTOTHROTTLE_TARGET_CONCURRENCY', 'AUTOTHROTTLE_START_DELAY', 'AUTOTHROTTLE_MAX_DELAY', 'DOWNLOAD_DELAY',
  'CONCURRENT_REQUESTS_PER_DOMAIN', 'BACKOFF_MIN_DELAY', 'BACKOFF_MAX_DELAY',
];

const schemaOf = (s: SchemaStore) => s.current();
const settingsOf = (s: CrawlLogStore) => s.settings();

type Outcome =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running' }
  | { readonly kind: 'done'; readonly derived: number; readonly replayed: number; readonly realMean: number | null; readonly whatIfMean: number | null; readonly points: number }
  | { readonly kind: 'error'; readonly message: string };

export const WhatIfPanel = memo(function WhatIfPanel({ crawlId, slot, charts, source }: { crawlId: number; slot: string; charts: SlotCharts; source: HistorySource }) {
  const { transport, stores } = useApp();
  const schema = useStore(stores.schema, schemaOf);
  const settings = useStore(stores.crawlLogs.get(crawlId), settingsOf);
  const [drafts, setDrafts] = useState<Readonly<Record<string, string>>>({});
  const [json, setJson] = useState('');
  const [onlySlot, setOnlySlot] = useState(true);
  const [outcome, setOutcome] = useState<Outcome>({ kind: 'idle' });
  const fields = useMemo(() => WHAT_IF_SETTINGS.map((n) => schema?.find((d) => d.name === n)).filter((d): d is SettingDescription => d !== undefined), [schema]);

  // A new slot or crawl starts without an overlay.
  useEffect(() => {
    charts.setWhatIf([]);
    setOutcome({ kind: 'idle' });
  }, [charts, crawlId, slot]);

  /** The change set as typed, checked whole against the crawl's settings (nothing is sent when a value is refused). */
  const check = useMemo(() => {
    const patch: Record<string, unknown> = {};
    const errors: Record<string, string> = {};
    if (!settings) return { patch, errors, ok: false };
    for (const d of fields) {
      const text = drafts[d.name];
      if (text === undefined) continue;
      const p = parseInput(d, settings[d.name], text);
      if (!p.ok) errors[d.name] = p.message;
      else patch[d.name] = p.value;
    }
    if (json.trim() !== '') {
      try {
        const extra = JSON.parse(json) as unknown;
        if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) errors.json = 'More settings: an object of SETTING_NAME: value';
        else Object.assign(patch, extra);
      } catch (e) {
        errors.json = `More settings: not valid JSON (${e instanceof Error ? e.message : String(e)})`;
      }
    }
    if (Object.keys(errors).length === 0) {
      const r = applySettings(patch, settings);
      if (!r.ok) for (const e of r.errors) errors[WHAT_IF_SETTINGS.includes(e.setting as keyof Settings) ? e.setting : 'json'] = e.message;
    }
    return { patch, errors, ok: Object.keys(errors).length === 0 && Object.keys(patch).length > 0 };
  }, [drafts, json, settings, fields]);

  const run = async () => {
    if (!check.ok) return;
    setOutcome({ kind: 'running' });
    try {
      const params = { crawlId, ...(onlySlot ? { slot } : {}), settings: check.patch };
      const r = await invokeIfPresent(transport, 'history.whatIf', params);
      if (r === null) {
        setOutcome({ kind: 'error', message: 'This host has no history.whatIf method yet: the replay cannot run here.' });
        return;
      }
      const shown = source.current();
      const from = shown.from;
      const to = shown.to;
      const [real, derived] = await Promise.all([
        Promise.resolve(shown.points),
        fetchSeries(transport, { crawlId: r.crawlId, slot, from, to: to + 1 }),
      ]);
      const points: XY[] = derived.map((p) => ({ x: p.t, y: p.avgDelay }));
      charts.setWhatIf(points);
      setOutcome({ kind: 'done', derived: r.crawlId, replayed: r.responses, realMean: mean(real.map((p) => p.avgDelay)), whatIfMean: mean(points.map((p) => p.y ?? 0)), points: points.length });
    } catch (e) {
      setOutcome({ kind: 'error', message: toAppError(e).message });
    }
  };

  return (
    <section className="what-if" aria-labelledby="what-if-title" data-testid="what-if">
      <div className="what-if-head">
        <h4 id="what-if-title">What if?</h4>
        <span className="muted">Replays the recorded latencies and statuses through the throttle with other settings; the delays it would have used are drawn dashed on the latency chart.</span>
      </div>
      {!settings || !schema ? (
        <p className="muted">Loading the crawl’s settings…</p>
      ) : (
        <form className="what-if-form" onSubmit={(e) => { e.preventDefault(); void run(); }}>
          {fields.map((d) => {
            const error = check.errors[d.name];
            return (
              <label key={d.name} className="what-if-field" title={d.help}>
                <span className="setting-name">{d.name}</span>
                <input className="input" value={drafts[d.name] ?? showValue(settings[d.name])} aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `whatif-err-${d.name}` : undefined}
                  onChange={(e) => setDrafts((x) => ({ ...x, [d.name]: e.target.value }))} />
                {error && <span className="field-error" id={`whatif-err-${d.name}`}>{error}</span>}
              </label>
            );
          })}
          <label className="what-if-field what-if-json">
            <span className="setting-name">More settings (JSON)</span>
            <input className="input mono" placeholder='{"BACKOFF_DELAY_FACTOR": 3}' value={json} onChange={(e) => setJson(e.target.value)} aria-invalid={check.errors.json ? true : undefined} />
            {check.errors.json && <span className="field-error">{check.errors.json}</span>}
          </label>
          <div className="what-if-actions">
            <label className="check">
              <input type="checkbox" checked={onlySlot} onChange={(e) => setOnlySlot(e.target.checked)} /> only this slot
            </label>
            <button type="submit" className="btn btn-primary btn-small" disabled={!check.ok || outcome.kind === 'running'}>
              {outcome.kind === 'running' ? 'Replaying…' : 'Replay'}
            </button>
            {outcome.kind === 'done' && (
              <button type="button" className="btn btn-small" onClick={() => { charts.setWhatIf([]); setOutcome({ kind: 'idle' }); }}>
                Clear overlay
              </button>
            )}
            <span role="status" className="muted" data-testid="what-if-status">
              {outcome.kind === 'done' && `Replayed ${outcome.replayed} responses into crawl ${outcome.derived}: mean delay ${fmt(outcome.whatIfMean)} instead of ${fmt(outcome.realMean)} (${outcome.points} buckets).`}
              {outcome.kind === 'error' && <span className="bad-text">{outcome.message}</span>}
              {outcome.kind !== 'error' && Object.keys(check.patch).length === 0 && outcome.kind !== 'done' && 'Change a value to replay.'}
            </span>
          </div>
        </form>
      )}
    </section>
  );
});

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

const fmt = (s: number | null) => (s === null ? '—' : `${s.toFixed(3)} s`);
