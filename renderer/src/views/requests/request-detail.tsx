// One row of the Requests tab in full: every recorded field, its phases as a large waterfall, the
// AutoThrottle debug line it renders to, and the settings in force for its slot when it ended
// (rebuilt from the crawl's recorded changes); with a jump to that moment in the slot's history.

import { useMemo, useState, type ReactNode } from 'react';
import type { RequestRow } from '../../../../shared/contract';
import { recordDebugLine } from '../../../../shared/debug-line';
import type { Settings } from '../../../../shared/settings';
import { concurrencyLimit, scopeAutoThrottle, scopeConfig } from '../../../../shared/throttle-rules';
import type { ChangeRecord } from '../../../../shared/types';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { CAUSE_WORDS, DASH, formatCount } from '../format';
import { settingsEpochs, slotDelayFloors, valueAt } from '../history/settings-timeline';
import { formatBytes } from '../slot-table/columns';
import { clockMs, phasesOf, statusWords } from './request-columns';
import { Waterfall } from './request-grid';

const settingsOf = (s: CrawlLogStore) => s.settings();
const changesOf = (s: CrawlLogStore) => s.changes();

const secs = (v: number | null | undefined) => (v === null || v === undefined ? DASH : `${Number(v.toFixed(3))} s`);
const ms = (v: number | null) => (v === null ? DASH : `${formatCount(Math.round(v))} ms`);
const onOff = (b: boolean) => (b ? 'on' : 'off');

/** The settings in force at `t`: the crawl's current ones taken back through its recorded changes. */
export function settingsAt(current: Settings, changes: readonly ChangeRecord[], t: number): Settings {
  let s = current;
  for (const e of settingsEpochs(current, changes)) if (e.t <= t) s = e.settings;
  return s;
}

export interface RequestDetailProps {
  readonly crawlId: number;
  readonly row: RequestRow;
  readonly onClose: () => void;
  readonly onOpenHistory: (slot: string, t: number) => void;
  readonly onFilterSlot: (slot: string) => void;
}

export function RequestDetail({ crawlId, row, onClose, onOpenHistory, onFilterSlot }: RequestDetailProps) {
  const { stores } = useApp();
  const log = stores.crawlLogs.get(crawlId);
  const current = useStore(log, settingsOf);
  const changes = useStore(log, changesOf);
  const [copied, setCopied] = useState(false);
  const p = phasesOf(row);
  const settings = useMemo(() => (current ? settingsAt(current, changes, row.t) : null), [current, changes, row.t]);
  const pins = useMemo(() => {
    const floors = slotDelayFloors(row.slot, changes);
    const pinConc = [...changes].filter((c) => c.slot === row.slot && c.setting === 'pin_concurrency' && c.t <= row.t).sort((a, b) => b.t - a.t)[0];
    return {
      delay: valueAt(floors.pin, row.t),
      crawlDelay: valueAt(floors.crawlDelay, row.t),
      concurrency: pinConc && typeof pinConc.newValue === 'number' ? pinConc.newValue : null,
    };
  }, [changes, row.slot, row.t]);
  const debugLine = recordDebugLine(row);
  const copy = (text: string) => {
    void navigator.clipboard?.writeText(text).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    }, () => undefined);
  };

  return (
    <section className="req-detail" aria-label={`Request ${row.url}`} data-testid="request-detail" data-row-id={row.id}>
      <div className="req-detail-head">
        <h3 className="req-detail-title" title={row.url}>
          <span className={`badge badge-${row.status === null || row.status >= 500 ? 'bad' : row.status >= 400 ? 'warn' : row.status >= 300 ? 'info' : 'ok'}`}>{statusWords(row)}</span>{' '}
          <span className="mono">{row.method || 'GET'}</span> <span className="req-detail-url">{row.url}</span>
        </h3>
        <div className="toolbar">
          <button type="button" className="btn btn-small" onClick={() => onOpenHistory(row.slot, row.t)} data-testid="request-open-history"
            title={`The history of slot ${row.slot} around ${clockMs(row.t)}`}>
            Show in history
          </button>
          <button type="button" className="btn btn-small" onClick={() => onFilterSlot(row.slot)}>Only this slot</button>
          <button type="button" className="btn btn-small" onClick={() => copy(row.url)}>{copied ? 'Copied' : 'Copy URL'}</button>
          <button type="button" className="btn btn-small" onClick={onClose} aria-label="Close the request's detail">Close</button>
        </div>
      </div>
      <div className="req-detail-body">
          <Section title="Timing">
            <div className="req-detail-waterfall"><Waterfall row={row} scale={Math.max(1, p.end)} /></div>
            <Field label="Queued">{clockMs(row.startedAt - row.waitMs)}</Field>
            <Field label="Waited in the slot's queue">{ms(row.waitMs)}</Field>
            <Field label="Sent (handed to the HTTP client)">{clockMs(row.startedAt)}</Field>
            <Field label="Latency (to the headers)">{ms(row.latency === null ? null : row.latency * 1000)}</Field>
            <Field label="Download (headers to end)">{ms(row.downloadTime === null ? null : row.downloadTime * 1000)}</Field>
            <Field label="Ended">{clockMs(row.t)} <span className="muted">({new Date(row.t).toLocaleDateString()})</span></Field>
          </Section>
          <Section title="Request">
            <Field label="Slot">{row.slot}</Field>
            <Field label="Depth">{row.depth}</Field>
            <Field label="Attempt">{row.attempt === 0 ? 'first' : `retry ${row.attempt} (attempt ${row.attempt + 1})`}</Field>
            <Field label="Connection">{row.reused === null ? 'unknown' : row.reused ? 'reused' : 'new'}</Field>
          </Section>
          <Section title="Response">
            <Field label="Status">{row.status ?? 'none (the download failed)'}</Field>
            {row.errorKind && <Field label="Failure">{row.errorKind}: {row.errorMessage}</Field>}
            <Field label="Content type">{row.contentType ?? DASH}</Field>
            <Field label="Size">{formatBytes(row.bytes)} <span className="muted">({formatCount(row.bytes)} bytes)</span></Field>
          </Section>
          <Section title="Throttle">
            <Field label="Delay">{secs(row.delayBefore)} → {secs(row.delayAfter)}, set by {CAUSE_WORDS[row.delayCause]}</Field>
            <Field label="Backoff level">{row.backoffLevel}</Field>
            <Field label="In flight on the slot">{row.inFlight}</Field>
          </Section>
          <Section title="Debug line">
            <div className="req-debug-line">
              <code data-testid="request-debug-line">{debugLine}</code>
              <button type="button" className="btn btn-small" onClick={() => copy(debugLine)}>Copy</button>
            </div>
          </Section>
          <Section title={`Settings in force for ${row.slot}`}>
            {!settings ? <p className="muted">Loading the crawl’s settings…</p> : <SlotSettings slot={row.slot} s={settings} pins={pins} />}
          </Section>
      </div>
    </section>
  );
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section className="req-section" aria-label={title}>
      <h4>{title}</h4>
      <dl className="req-fields">{children}</dl>
    </section>
  );
}

function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

/** What throttled this slot under `s`, in words (its scope's values where it has its own). */
function SlotSettings({ slot, s, pins }: { slot: string; s: Settings; pins: { delay: number | null; crawlDelay: number | null; concurrency: number | null } }) {
  const at = scopeAutoThrottle(slot, s);
  const { scope, override } = scopeConfig(slot, s);
  const own = scope || override ? ' (its own scope settings)' : '';
  return (
    <>
      <Field label="AutoThrottle">{at.enabled ? `on, target ${at.target}, start ${secs(at.startDelay)}, max ${secs(at.maxdelay)}` : 'off'}</Field>
      <Field label="Delay floor">{secs(at.mindelay)}{scope?.delay !== undefined ? own : ' (DOWNLOAD_DELAY)'}</Field>
      <Field label="Concurrency">{concurrencyLimit(scope, override, s, pins.concurrency, pins.crawlDelay !== null)}{pins.concurrency !== null ? ' (pinned)' : ''}</Field>
      {pins.delay !== null && <Field label="Delay pinned">{secs(pins.delay)}</Field>}
      {pins.crawlDelay !== null && <Field label="Crawl-delay (robots.txt)">{secs(pins.crawlDelay)}</Field>}
      <Field label="Backoff">
        {s.BACKOFF_HTTP_CODES.length === 0 ? 'off for statuses' : `on ${s.BACKOFF_HTTP_CODES.join(', ')}`}; ×{scope?.backoff?.delay_factor ?? s.BACKOFF_DELAY_FACTOR}, {secs(scope?.backoff?.min_delay ?? s.BACKOFF_MIN_DELAY)} to {secs(scope?.backoff?.max_delay ?? s.BACKOFF_MAX_DELAY)}, recovers after {secs(scope?.backoff?.window ?? s.BACKOFF_WINDOW)}
      </Field>
      <Field label="Retries">{s.RETRY_ENABLED ? `${s.RETRY_TIMES} on ${s.RETRY_HTTP_CODES.join(', ')} and transport failures` : 'off'}</Field>
      <Field label="Rampup">{onOff(scope?.rampup === true)}</Field>
      {scope?.quota !== undefined && <Field label="Quota">{scope.quota} per {secs(scope.window ?? s.THROTTLING_WINDOW)}</Field>}
    </>
  );
}
