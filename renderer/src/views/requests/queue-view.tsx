// The requests a slot will start next, in the order it will start them: its queue while the crawl
// runs (read again with each of the crawl's status events), or the pending URLs of its saved frontier.

import { useEffect, useState } from 'react';
import type { SlotQueue } from '../../../../shared/contract';
import { toAppError } from '../../transport/transport';
import { useApp } from '../app-context';
import { DASH, formatCount } from '../format';
import { msCell } from './request-columns';

const LIMIT = 200;

export function QueueView({ crawlId, slot, live }: { crawlId: number; slot: string | null; live: boolean }) {
  const { transport } = useApp();
  const [queue, setQueue] = useState<SlotQueue | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setQueue(null);
    setError(null);
    if (!slot) return;
    let gone = false;
    let busy = false;
    const load = async () => {
      if (busy) return;
      busy = true;
      try {
        const q = await transport.invoke('slots.queue', { id: crawlId, slot, limit: LIMIT });
        if (!gone) {
          setQueue(q);
          setError(null);
        }
      } catch (e) {
        if (!gone) setError(toAppError(e).message);
      } finally {
        busy = false;
      }
    };
    void load();
    const off = live ? transport.subscribe('crawl.status', (p) => { if (p.crawlId === crawlId) void load(); }) : () => undefined;
    return () => {
      gone = true;
      off();
    };
  }, [transport, crawlId, slot, live]);

  if (!slot) return <p className="empty" data-testid="queue-view">Pick a slot above to see the requests it will start next.</p>;
  return (
    <div className="queue-view" data-testid="queue-view" data-slot={slot}>
      <p className="muted queue-note" role="status" data-testid="queue-status">
        {error ? <span className="bad-text">Loading the queue failed: {error}</span>
          : !queue ? 'Loading…'
          : queue.queued === 0 ? `Nothing waits in ${slot}’s queue${queue.live ? ' now' : ' (its saved frontier has no pending URL of this host)'}.`
          : `${formatCount(queue.queued)} request${queue.queued === 1 ? '' : 's'} waiting in ${slot}’s ${queue.live ? 'queue' : 'saved frontier'}` +
            `${queue.queued > queue.items.length ? `; the first ${formatCount(queue.items.length)} shown` : ''}, in the order ${queue.live ? 'they will start' : 'a resume would queue them'}.`}
      </p>
      {queue && queue.items.length > 0 && (
        <div className="table-scroll queue-scroll">
          <table className="grid" data-testid="queue-table">
            <thead>
              <tr>
                <th className="num">#</th>
                <th className="left">URL</th>
                <th className="num" title="Link depth (0 for a seed)">Depth</th>
                <th className="num" title="Retries so far">Retries</th>
                <th className="num" title="Higher starts first; a retry waits at a lower priority">Priority</th>
                <th className="num" title="How long it has waited in the queue, milliseconds">Waiting ms</th>
              </tr>
            </thead>
            <tbody>
              {queue.items.map((q, i) => (
                <tr key={`${i}|${q.url}`} data-url={q.url}>
                  <td className="num muted">{i + 1}</td>
                  <td className="left queue-url" title={q.url}>{q.url}</td>
                  <td className="num">{q.depth}</td>
                  <td className={`num${q.retries > 0 ? ' warn-text' : ''}`}>{q.retries}</td>
                  <td className="num">{q.priority}</td>
                  <td className="num">{q.queuedAt === null ? DASH : msCell(Math.max(0, queue.now - q.queuedAt))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
