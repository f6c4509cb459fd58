// The Journal tab: what was done to a crawl, newest first, in words: every operator action (the
// crawl started, paused, resumed, stopped; settings changed; slots paused, pinned, reset), and on
// request what the throttle did by itself; each slot's entry a click away from its moment in the history.

import { useMemo, useState } from 'react';
import type { ChangeRecord } from '../../../../shared/types';
import type { CrawlLogStore } from '../../store/crawl-log-store';
import { useStore } from '../../store/use-store';
import { useApp } from '../app-context';
import { formatCount } from '../format';
import { clockMs } from '../requests/request-columns';
import { byOperator, changeWords, type ChangeWords } from './journal-words';

/** Entries shown at most (the newest); a crawl's automatic changes can run to thousands. */
const SHOWN = 500;

const changesOf = (s: CrawlLogStore) => s.changes();

interface Entry {
  readonly c: ChangeRecord;
  readonly words: ChangeWords;
}

export function JournalView({ crawlId, onOpenHistory }: { crawlId: number; onOpenHistory: (slot: string, t: number) => void }) {
  const { stores } = useApp();
  const changes = useStore(stores.crawlLogs.get(crawlId), changesOf);
  const [all, setAll] = useState(false);
  const entries = useMemo(() => {
    const out: Entry[] = [];
    for (const c of changes) {
      if (!all && !byOperator(c)) continue;
      const words = changeWords(c);
      if (words) out.push({ c, words });
    }
    return out;
  }, [changes, all]);
  const today = new Date().toDateString();

  return (
    <div className="journal-view" data-testid="journal-view">
      <div className="journal-head">
        <p className="muted" role="status" data-testid="journal-status">
          {entries.length === 0
            ? all ? 'Nothing was done to this crawl yet.' : 'You have done nothing to this crawl yet: starting, pausing, settings and slot controls are written here.'
            : `${formatCount(entries.length)} ${all ? 'changes' : 'actions of yours'}, newest first${entries.length > SHOWN ? ` (the latest ${SHOWN} shown)` : ''}.`}
        </p>
        <label className="check">
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> also what the throttle did (backoff, Retry-After, AutoThrottle, robots.txt)
        </label>
      </div>
      {entries.length > 0 && (
        <div className="table-scroll journal-scroll">
          <table className="grid journal-table" data-testid="journal-table">
            <thead>
              <tr>
                <th className="left">When</th>
                <th className="left">What</th>
                <th className="left">Slot</th>
              </tr>
            </thead>
            <tbody>
              {entries.slice(0, SHOWN).map(({ c, words }, i) => (
                <tr key={`${c.t}|${i}`} data-setting={c.setting} data-slot={c.slot ?? ''} data-source={c.source}>
                  <td className="left muted mono journal-when" title={new Date(c.t).toLocaleString()}>
                    {new Date(c.t).toDateString() === today ? '' : `${new Date(c.t).toLocaleDateString()} `}{clockMs(c.t)}
                  </td>
                  <td className="left journal-what">
                    <div className="journal-title">{words.title}</div>
                    {words.detail && <div className="muted journal-detail">{words.detail}</div>}
                  </td>
                  <td className="left journal-slot">
                    {c.slot === null ? <span className="muted">the whole crawl</span> : (
                      <button type="button" className="link" onClick={() => onOpenHistory(c.slot!, c.t)} title={`The history of ${c.slot} at this moment`}>
                        {c.slot}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
