// The selected crawl's name, status and commands (Start / Pause / Resume / Stop, Duplicate, Delete;
// Stop and Delete ask first, naming it) and its live figures from 'crawl.status', about once a second.

import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import type { CrawlInfo, CrawlStatsWire } from '../../../shared/contract';
import type { CrawlStatus } from '../../../shared/types';
import { Badge } from '../components/badge';
import { CommandButton } from '../components/command-button';
import { OFFLINE_TITLE, useHostOnline } from '../components/connection-notice';
import { Stat } from '../components/stat';
import { SHORTCUTS } from '../keyboard';
import type { CrawlLogStore } from '../store/crawl-log-store';
import type { CrawlRates } from '../store/crawl-rates';
import type { CrawlsStore } from '../store/crawls-store';
import type { WorkersStore } from '../store/workers-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { DASH, formatCount, formatDuration, formatWhen } from './format';
import { formatBytes } from './slot-table/columns';
import { CRAWL_STATUS_TONE } from './tones';

const can = {
  start: (s: CrawlStatus) => s === 'created',
  pause: (s: CrawlStatus) => s === 'running',
  // A stopped or interrupted crawl goes on from its saved frontier, as `slotscope crawl --resume` does.
  resume: (s: CrawlStatus) => s === 'paused' || s === 'stopped' || s === 'interrupted',
  // Nothing to stop before a start, nor after an end.
  stop: (s: CrawlStatus) => s === 'running' || s === 'paused',
  delete: (s: CrawlStatus) => s !== 'running' && s !== 'paused',
};

const RESUME_TITLE: Partial<Record<CrawlStatus, string>> = {
  stopped: 'Go on from where it stopped: the URLs still in its frontier, with its settings and learned delays',
  interrupted: 'Go on from its saved frontier: URLs done are not fetched again',
};

const warningCount = (s: CrawlLogStore) => s.warnings().length;
const concurrencyLimit = (s: CrawlLogStore) => s.settings()?.CONCURRENT_REQUESTS;

/** Responses per status class (1xx…5xx) from the per-status counts. */
export function byClass(byStatus: Readonly<Record<string, number>> | undefined): readonly [number, number, number, number, number] {
  const c: [number, number, number, number, number] = [0, 0, 0, 0, 0];
  for (const [code, n] of Object.entries(byStatus ?? {})) {
    const k = Math.floor(Number(code) / 100);
    if (k >= 1 && k <= 5) c[k - 1] += n;
  }
  return c;
}

/** Re-renders every second while `on`, for the elapsed time. */
function useSecondTick(on: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!on) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [on]);
  return on ? Date.now() : now;
}

function formatRate(n: number): string {
  return n >= 100 ? formatCount(Math.round(n)) : n.toFixed(1);
}

export interface CrawlHeaderProps {
  readonly crawlId: number;
  readonly onShowWarnings?: () => void;
  /** Shows another crawl (the duplicate just made). */
  readonly onOpenCrawl?: (crawlId: number) => void;
}

export function CrawlHeader({ crawlId, onShowWarnings, onOpenCrawl }: CrawlHeaderProps) {
  const { stores, commands } = useApp();
  const log = stores.crawlLogs.get(crawlId);
  const warnings = useStore(log, warningCount);
  const ownLimit = useStore(log, concurrencyLimit);
  // A shared crawl's limit is its live workers' (each has its own concurrency), as the Workers tab lists them.
  const sharedLimit = useStore(stores.workers, useCallback((s: WorkersStore) => {
    const of = s.of(crawlId);
    const ws = of?.unavailable === undefined ? of?.workers : undefined;
    return ws === undefined ? undefined : ws.reduce((n, w) => n + (w.alive ? w.concurrency : 0), 0);
  }, [crawlId]));
  const info = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.crawl(crawlId), [crawlId]));
  const limit = info?.shared ? sharedLimit : ownLimit;
  const stats = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.statsOf(crawlId), [crawlId]));
  const rate = useStore(stores.rates, useCallback((s: CrawlRates) => s.rate(crawlId), [crawlId]));
  const [confirming, setConfirming] = useState<'delete' | 'stop' | 'seeds' | null>(null);
  const online = useHostOnline();
  const status = info?.status ?? 'created';
  const live = status === 'running' || status === 'paused';
  const started = stats?.startedAt ?? info?.startedAt ?? null;
  // A live crawl has no end yet (a resumed one keeps the end of its earlier run in the list).
  const finished = live ? null : (stats?.finishedAt ?? info?.finishedAt ?? null);
  // ELAPSED counts while the crawl runs and the host is there to say so; paused, it stops (where it
  // paused, when this page saw it happen).
  const now = useSecondTick(started !== null && finished === null && status === 'running' && online);
  const pausedAt = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.pausedSince(crawlId), [crawlId]));
  // A crawl that ended while Stop's question was open has nothing left to stop: the question goes.
  useEffect(() => {
    if (confirming === 'stop' && !can.stop(status)) setConfirming(null);
  }, [confirming, status]);
  if (!info) return null;
  const run = (command: 'start' | 'pause' | 'resume' | 'stop') => () => commands.crawl(command, crawlId);
  const classes = byClass(stats?.byStatus);
  const duplicate = async () => {
    const r = await commands.copyCrawl(crawlId);
    if (r.ok) onOpenCrawl?.(r.result.id);
    else if (r.error.field === 'seedsText') setConfirming('seeds');
    else stores.messages.report(`Duplicating “${info.name}”`, r.error);
  };

  return (
    <div className="crawl-header">
      <div className="crawl-title-row">
        <div className="crawl-title">
          <h2 data-testid="crawl-name" title={info.name}>{info.name}</h2>
          {info.source && <Badge tone="info" testId="crawl-source" title={`Run by a ${info.source} spider, streamed in by slotscope-scrapy`}>{info.source}</Badge>}
          {info.shared && <Badge tone="info" testId="crawl-shared" title="A shared crawl: its frontier and slots live in Redis, fetched by every worker (the Workers tab)">shared</Badge>}
          <Badge tone={CRAWL_STATUS_TONE[status]} testId="crawl-status" title={online ? undefined : 'Last known: the host is not connected'}>
            {status}
          </Badge>
          {!online && <span className="muted crawl-times">last known</span>}
          <span className="muted crawl-times">{started === null ? 'not started' : `started ${formatWhen(started)}`}</span>
        </div>
        <div className="toolbar" role="toolbar" aria-label="Crawl commands">
          <CommandButton variant="primary" onRun={run('start')} disabled={!can.start(status)}>
            Start
          </CommandButton>
          <CommandButton onRun={run('pause')} disabled={!can.pause(status)} title={`Pause the crawl (${SHORTCUTS.togglePause.key})`}>
            Pause
          </CommandButton>
          <CommandButton variant={status === 'stopped' || status === 'interrupted' ? 'primary' : 'default'} onRun={run('resume')} disabled={!can.resume(status)}
            title={RESUME_TITLE[status] ?? `Resume the crawl (${SHORTCUTS.togglePause.key})`}>
            Resume
          </CommandButton>
          <button type="button" className="btn btn-danger" disabled={!can.stop(status) || !online} onClick={() => setConfirming('stop')}
            title={!online ? OFFLINE_TITLE : can.stop(status) ? 'Stop the crawl (asks first); Resume goes on from its frontier' : status === 'created' ? 'Nothing to stop: the crawl has not started' : `Nothing to stop: the crawl is ${status}`}>
            Stop
          </button>
          <span className="toolbar-sep" aria-hidden="true" />
          <CommandButton title="A new crawl with the same seeds, rules and current settings" onRun={duplicate}>
            Duplicate
          </CommandButton>
          <button type="button" className="btn btn-danger" disabled={!can.delete(status) || !online} onClick={() => setConfirming('delete')}
            title={!online ? OFFLINE_TITLE : can.delete(status) ? 'Delete the crawl and its history' : 'Stop the crawl before deleting it'}>
            Delete…
          </button>
        </div>
      </div>
      <div className="stats stats-wide" data-testid="crawl-stats">
        <Figure label="Status" title={`The crawl is ${status}`} testId="stat-status">
          {status}
        </Figure>
        <Stat label="Elapsed" testId="stat-elapsed">
          {started === null ? DASH : formatDuration((finished ?? (status === 'paused' && pausedAt !== null ? pausedAt : now)) - started)}
        </Stat>
        <Stat label="Requests" testId="stat-requests">
          {formatCount(stats?.requests ?? info.requests)}
        </Stat>
        <div className="stat stat-span-2">
          <div className="stat-label">Responses by class</div>
          <div className="stat-value">
            <span data-testid="stat-responses">{formatCount(stats?.responses ?? info.responses)}</span>
            <span className="status-classes" data-testid="stat-classes">
              {(['2xx', '3xx', '4xx', '5xx'] as const).map((label, i) => (
                <span key={label} data-class={label} className={i === 3 && classes[4] > 0 ? 'bad-text' : i === 2 && classes[3] > 0 ? 'warn-text' : undefined}>
                  {label} <b>{stats ? formatCount(classes[i + 1]) : DASH}</b>
                </span>
              ))}
            </span>
          </div>
        </div>
        <div className="stat stat-span-2" title="Requests started and body bytes received per second, over the last 10 seconds">
          <div className="stat-label">
            Rate<span className="stat-label-note"> · last 10 s</span>
          </div>
          <div className="stat-value">
            <span data-testid="stat-req-rate">{live && rate ? formatRate(rate.requestsPerSecond) : DASH}</span>
            <span className="stat-sub"> req/s · </span>
            <span data-testid="stat-byte-rate">{live && rate ? formatBytes(Math.round(rate.bytesPerSecond)) : DASH}</span>
            <span className="stat-sub">/s</span>
          </div>
        </div>
        <Figure label="In flight" title={info?.shared
          ? 'Requests in flight in every worker (from Redis) / the sum of the live workers\' concurrency (the Workers tab)'
          : 'Requests in flight / the crawl\'s limit (CONCURRENT_REQUESTS; ∞: none)'} testId="stat-inflight">
          {live ? formatCount(stats?.inFlight) : DASH}
          {live && <span className="stat-sub"> / {limit === undefined ? DASH : limit === 0 ? '∞' : formatCount(limit)}</span>}
        </Figure>
        <Stat label="Queued" testId="stat-queued">
          {live ? formatCount(stats?.queued) : DASH}
        </Stat>
        <Stat label="Failures" testId="stat-failures">
          {formatCount(stats?.failures ?? info.failures)}
        </Stat>
        <Stat label="Slots" testId="stat-slots">
          {formatCount(stats?.slots ?? info.slots)}
        </Stat>
        <Stat label="Warnings" testId="stat-warnings">
          <button type="button" className={`link${warnings > 0 ? ' warn-text' : ''}`} onClick={onShowWarnings} title="Show the warnings"
            aria-label={`${formatCount(warnings)} warning${warnings === 1 ? '' : 's'}: show ${warnings === 1 ? 'it' : 'them'}`}>
            {formatCount(warnings)}
          </button>
        </Stat>
      </div>
      {confirming === 'delete' && <ConfirmDelete info={info} stats={stats} onClose={() => setConfirming(null)} />}
      {confirming === 'stop' && <ConfirmStop info={info} stats={stats} onClose={() => setConfirming(null)} />}
      {confirming === 'seeds' && <AskSeeds info={info} onClose={() => setConfirming(null)} onCopied={(id) => { setConfirming(null); onOpenCrawl?.(id); }} />}
    </div>
  );
}

/** A header figure with a hint on hover and an optional lower-case note beside its label ("10 s"). */
function Figure({ label, note, title, testId, children }: { label: string; note?: string; title: string; testId: string; children: ReactNode }) {
  return (
    <div className={`stat stat-${testId}`} title={title}>
      <div className="stat-label">
        {label}
        {note && <span className="stat-label-note"> · {note}</span>}
      </div>
      <div className="stat-value" data-testid={testId}>
        {children}
      </div>
    </div>
  );
}

/** The modal that names the crawl about to be deleted and what goes with it. */
function ConfirmDelete({ info, stats, onClose }: { info: CrawlInfo; stats: CrawlStatsWire | undefined; onClose: () => void }) {
  const { commands } = useApp();
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const requests = stats?.requests ?? info.requests;
  const del = async () => {
    setBusy(true);
    // Refused or not, the dialog closes: a refusal is told on the message line.
    await commands.deleteCrawl(info.id);
    setBusy(false);
    onClose();
  };
  return (
    <dialog ref={ref} className="confirm-dialog" aria-labelledby="confirm-delete-title" aria-describedby="confirm-delete-text" data-testid="confirm-delete"
      onClose={onClose} onCancel={onClose}>
      <h2 id="confirm-delete-title">Delete the crawl “{info.name}”?</h2>
      <p id="confirm-delete-text">
        Its history goes with it: {formatCount(requests)} request{requests === 1 ? '' : 's'} over {formatCount(stats?.slots ?? info.slots)} slot
        {(stats?.slots ?? info.slots) === 1 ? '' : 's'}, its settings changes and its warnings. This cannot be undone.
      </p>
      <div className="toolbar">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button type="button" className="btn btn-danger-solid" disabled={busy} onClick={() => void del()}>
          Delete “{info.name}”
        </button>
      </div>
    </dialog>
  );
}

/** Stop asks first: in-flight requests are cancelled, and Resume can go on from the frontier. */
function ConfirmStop({ info, stats, onClose }: { info: CrawlInfo; stats: CrawlStatsWire | undefined; onClose: () => void }) {
  const { commands } = useApp();
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const queued = stats?.queued ?? 0;
  const inFlight = stats?.inFlight ?? 0;
  const stop = async () => {
    setBusy(true);
    // Refused or not, the dialog closes: a refusal is told on the message line.
    await commands.crawl('stop', info.id);
    setBusy(false);
    onClose();
  };
  return (
    <dialog ref={ref} className="confirm-dialog" aria-labelledby="confirm-stop-title" aria-describedby="confirm-stop-text" data-testid="confirm-stop"
      onClose={onClose} onCancel={onClose}>
      <h2 id="confirm-stop-title">Stop the crawl “{info.name}”?</h2>
      <p id="confirm-stop-text">
        {inFlight > 0 ? `Its ${formatCount(inFlight)} request${inFlight === 1 ? '' : 's'} in flight are cancelled and nothing new starts. ` : 'Nothing new starts. '}
        {queued > 0 ? `The ${formatCount(queued)} URL${queued === 1 ? '' : 's'} still queued stay in its frontier: ` : 'Its frontier is kept: '}
        Resume goes on from there. To hold it for a while, Pause is enough.
      </p>
      <div className="toolbar">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Cancel
        </button>
        <button type="button" className="btn btn-danger-solid" disabled={busy} onClick={() => void stop()}>
          Stop “{info.name}”
        </button>
      </div>
    </dialog>
  );
}

/** Duplicate of a crawl without seeds (an imported log): the copy's seeds are asked for, never made up. */
function AskSeeds({ info, onClose, onCopied }: { info: CrawlInfo; onClose: () => void; onCopied: (crawlId: number) => void }) {
  const { commands } = useApp();
  const ref = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).length;
  const copy = async () => {
    setBusy(true);
    setError(null);
    const r = await commands.copyCrawl(info.id, text);
    setBusy(false);
    if (r.ok) onCopied(r.result.id);
    else setError(r.error.message);
  };
  return (
    <dialog ref={ref} className="confirm-dialog" aria-labelledby="ask-seeds-title" aria-describedby="ask-seeds-text" data-testid="duplicate-seeds"
      onClose={onClose} onCancel={onClose}>
      <h2 id="ask-seeds-title">Duplicate “{info.name}”: which URLs?</h2>
      <p id="ask-seeds-text">
        This crawl has no seeds: it was imported from a log, which says what was fetched but not where the spider started. The copy
        keeps its settings and rules and crawls the URLs you give here.
      </p>
      <label className="field">
        <span className="field-label">Seeds, one URL a line</span>
        <textarea className="input mono" rows={4} value={text} spellCheck={false} autoFocus placeholder="https://example.org/"
          onChange={(e) => setText(e.target.value)} aria-invalid={error !== null} />
      </label>
      {error && (
        <div className="field-error pre" role="alert">
          {error}
        </div>
      )}
      <div className="toolbar">
        <button type="button" className="btn" onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="btn btn-primary" disabled={busy || lines === 0} onClick={() => void copy()}
          title={lines === 0 ? 'Give at least one URL' : undefined}>
          Duplicate with {lines} seed{lines === 1 ? '' : 's'}
        </button>
      </div>
    </dialog>
  );
}
