// The Stats tab: a crawl's figures under Scrapy's stats names, as Scrapy dumps them at the end of a
// crawl (read from the store; again every few seconds while it runs), each with what it counts, and
// the whole dump to copy in Scrapy's own format.

import { useEffect, useState } from 'react';
import type { ScrapyStats } from '../../../../shared/contract';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { useCrawlSpan } from '../history/use-crawl-span';

/** While the crawl runs, the stats are read again at most this often (on its status events). */
const LIVE_EVERY_MS = 5000;

/** What a stat counts, by its name or the start of its name. */
const MEANINGS: readonly (readonly [string, string])[] = [
  ['downloader/request_count', 'requests sent, every attempt and robots.txt included'],
  ['downloader/request_method_count/', 'requests by HTTP method'],
  ['downloader/response_count', 'responses received (downloads that got a status)'],
  ['downloader/response_status_count/', 'responses with this status'],
  ['downloader/response_bytes', 'body bytes received'],
  ['downloader/exception_count', 'downloads that failed without a status'],
  ['downloader/exception_type_count/', 'failed downloads of this kind'],
  ['response_received_count', 'responses received'],
  ['retry/count', 'attempts that were retries (RETRY_TIMES, RETRY_HTTP_CODES)'],
  ['retry/max_reached', 'requests given up after their last retry'],
  ['robotstxt/request_count', 'robots.txt requests'],
  ['robotstxt/forbidden', 'URLs robots.txt kept the crawl from'],
  ['scheduler/enqueued', 'requests queued: pages accepted, plus retries'],
  ['scheduler/dequeued', 'requests taken from the queues to be sent'],
  ['request_depth_max', 'the deepest link followed'],
  ['log_count/', 'log lines of this level (debug lines are INFO)'],
  ['start_time', 'when the crawl started (UTC)'],
  ['finish_time', 'when it ended (UTC)'],
  ['elapsed_time_seconds', 'from start to end, or to now while it runs'],
  ['finish_reason', 'why it ended: finished, or shutdown when stopped'],
  ['slotscope/backoff/steps', 'backoff steps taken (Slotscope)'],
  ['slotscope/backoff/retry_after_blocks', 'Retry-After / RateLimit blocks obeyed (Slotscope)'],
  ['slotscope/warnings', 'warnings raised (Slotscope)'],
  ['slotscope/slots', 'download slots seen (Slotscope)'],
  ['slotscope/changes_by_user', 'settings and slot changes made by you (Slotscope)'],
];

function meaning(name: string): string {
  for (const [k, words] of MEANINGS) if (k.endsWith('/') ? name.startsWith(k) : name === k) return words;
  return '';
}

/** A stat worth a second look: refusals, server errors, failures, requests given up. */
function tone(name: string, value: number | string): string {
  if (typeof value !== 'number' || value === 0) return '';
  if (/response_status_count\/(429|5\d\d)$/.test(name) || name === 'retry/max_reached' || name.startsWith('downloader/exception')) return 'warn-text';
  if (name === 'log_count/ERROR') return 'bad-text';
  return '';
}

/** A value as Scrapy's dump prints it (a Python literal). */
const pythonValue = (v: number | string) => (typeof v === 'number' ? String(v) : v.startsWith('datetime.') ? v : `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);

/** The dump as Scrapy logs it at the end of a crawl (pprint of the stats dict). */
export function scrapyDump(stats: ScrapyStats): string {
  const lines = stats.map(([k, v], i) => `${i === 0 ? '{' : ' '}'${k}': ${pythonValue(v)}${i === stats.length - 1 ? '}' : ','}`);
  return `[scrapy.statscollectors] INFO: Dumping Scrapy stats:\n${lines.join('\n') || '{}'}`;
}

const two = (s: string | undefined) => (s ?? '0').padStart(2, '0');

/** A value as the table shows it: a Python datetime as "2026-11-22 08:00:00.123 UTC", the rest as Scrapy prints it. */
export function shownValue(v: number | string): string {
  if (typeof v === 'number') return String(v);
  const m = /^datetime\.datetime\((\d+), (\d+), (\d+), (\d+), (\d+), (\d+)(?:, (\d+))?/.exec(v);
  if (!m) return v;
  const ms = m[7] ? `.${m[7].padStart(6, '0').slice(0, 3)}` : '';
  return `${m[1]}-${two(m[2])}-${two(m[3])} ${two(m[4])}:${two(m[5])}:${two(m[6])}${ms} UTC`;
}

export function StatsTab({ crawlId }: { crawlId: number }) {
  const { transport } = useApp();
  const span = useCrawlSpan(crawlId);
  const [stats, setStats] = useState<ScrapyStats | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    let gone = false;
    let last = 0;
    let busy = false;
    const load = async () => {
      if (busy) return;
      busy = true;
      last = Date.now();
      try {
        const s = await transport.invoke('crawls.scrapyStats', { id: crawlId });
        if (!gone) {
          setStats(s);
          setError(null);
        }
      } catch (e) {
        if (!gone) setError(toAppError(e).message);
      } finally {
        busy = false;
      }
    };
    void load();
    const off = span.live
      ? transport.subscribe('crawl.status', (p) => {
        if (p.crawlId === crawlId && Date.now() - last >= LIVE_EVERY_MS) void load();
      })
      : () => undefined;
    return () => {
      gone = true;
      off();
    };
  }, [transport, crawlId, span.live]);

  const copy = () => {
    if (!stats) return;
    void navigator.clipboard?.writeText(scrapyDump(stats)).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    }, () => undefined);
  };

  return (
    <div className="stats-tab" data-testid="stats-tab">
      <div className="stats-tab-head">
        <p className="muted" role="status" data-testid="stats-status">
          {error ? <span className="bad-text">Loading the stats failed: {error}</span>
            : !stats ? 'Loading…'
            : `Scrapy’s stats names, counted from the recorded history${span.live ? '; read again every few seconds while the crawl runs' : ''}.`}
        </p>
        <button type="button" className="btn btn-small" onClick={copy} disabled={!stats}>
          {copied ? 'Copied' : 'Copy as Scrapy’s dump'}
        </button>
      </div>
      {stats && (
        <div className="table-scroll stats-scroll">
          <table className="grid stats-table" data-testid="stats-table">
            <thead>
              <tr>
                <th className="left">Stat</th>
                <th className="num">Value</th>
                <th className="left">What it counts</th>
              </tr>
            </thead>
            <tbody>
              {stats.map(([name, value]) => (
                <tr key={name} data-stat={name}>
                  <td className="left mono">{name}</td>
                  <td className={`num mono ${tone(name, value)}`} data-value={String(value)}
                    title={typeof value === 'number' && Number.isInteger(value) && value >= 10_000 ? formatCount(value) : undefined}>
                    {shownValue(value)}
                  </td>
                  <td className="left muted">{meaning(name)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
