// The Workers tab of a shared crawl (issue 18): every process that fetches for it (this host's own
// fetcher and each `slotscope worker`), alive or lost, what it has in flight, how fast it answers
// and when it was last heard from; refreshed by the host about once a second.

import { useCallback } from 'react';
import type { WorkerWire } from '../../../shared/contract';
import { Badge } from '../components/badge';
import type { WorkersStore } from '../store/workers-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { formatCount, formatDuration, formatWhen } from './format';

const rate = (r: number | null) => (r === null ? '—' : r.toFixed(1));

/** How long ago a heartbeat was: "now" within a second, "3 s ago", "2 min 05 s ago". */
export function formatAgo(t: number, now: number): string {
  const ms = now - t;
  if (ms < 1000) return 'now';
  return `${formatDuration(ms)} ago`;
}

export function WorkersPanel({ crawlId, live }: { crawlId: number; live: boolean }) {
  const { stores } = useApp();
  const of = useStore(stores.workers, useCallback((s: WorkersStore) => s.of(crawlId), [crawlId]));
  const workers = of?.workers ?? [];
  const now = of?.now ?? Date.now();
  const alive = workers.filter((w) => w.alive);
  const total = alive.reduce((n, w) => n + (w.responsesPerSecond ?? 0), 0);
  return (
    <div className="workers" data-testid="workers-panel">
      <div className="panel-head">
        <h3>Workers</h3>
        <span className="panel-note" data-testid="workers-summary">
          {of === undefined ? 'Loading…'
            : of.unavailable !== undefined ? 'not recorded by this host'
            : `${workers.length} ${workers.length === 1 ? 'worker' : 'workers'}, ${alive.length} alive · ${total.toFixed(1)} responses/s in all${live ? '' : ' · as last seen'}`}
        </span>
      </div>
      {of?.unavailable !== undefined ? (
        <p className="empty" data-testid="workers-unavailable">{of.unavailable}</p>
      ) : of !== undefined && workers.length === 0 ? (
        <p className="empty">No worker has joined yet.</p>
      ) : (
        <div className="workers-scroll">
          <table className="grid workers-table" data-testid="workers-table">
            <thead>
              <tr>
                <th className="left" scope="col">Worker</th>
                <th className="left" scope="col">Host</th>
                <th className="left" scope="col">State</th>
                <th className="num" scope="col" title="Requests in flight / the most it may have">In flight</th>
                <th className="num" scope="col" title="Responses per second over the last 3 s">Responses/s</th>
                <th className="num" scope="col">Responses</th>
                <th className="left" scope="col" title="Its latest heartbeat (it beats every second)">Last seen</th>
                <th className="left" scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => <WorkerRow key={w.name} w={w} now={now} />)}
            </tbody>
          </table>
        </div>
      )}
      <p className="muted workers-hint">
        More workers join from any machine that reaches the Redis and the sites: <code>slotscope worker --redis URL [--name NAME]</code>.
        Pause, resume, stop, settings and slot actions reach every worker within a second and are recorded once, here.
      </p>
    </div>
  );
}

function WorkerRow({ w, now }: { w: WorkerWire; now: number }) {
  return (
    <tr data-worker={w.name} data-alive={w.alive ? 'true' : 'false'}>
      <td className="left mono" data-col="name">{w.name}</td>
      <td className="left" data-col="host"><span className="mono">{w.host}</span> <span className="muted">pid {w.pid}</span></td>
      <td className="left" data-col="state">
        {w.alive ? <Badge tone="ok">alive</Badge>
          : <Badge tone="bad" title="No heartbeat for 3 s: its requests in flight went back to the queue">lost</Badge>}
      </td>
      <td className="num" data-col="inflight">{formatCount(w.inFlight)} / {formatCount(w.concurrency)}</td>
      <td className="num" data-col="rate">{rate(w.responsesPerSecond)}</td>
      <td className="num" data-col="responses">{formatCount(w.responses)}</td>
      <td className="left" data-col="seen" title={formatWhen(w.lastSeen, now)}>{formatAgo(w.lastSeen, now)}</td>
      <td className="left muted" data-col="joined">{formatWhen(w.startedAt, now)}</td>
    </tr>
  );
}
