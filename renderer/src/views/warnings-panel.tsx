// The selected crawl's warnings, newest first, each with its slot, its text (which says what to
// do) and its time; dismissing one hides every warning of that cause (code + slot), after a reload too.

import { Badge } from '../components/badge';
import { causeKey, type CrawlLogStore } from '../store/crawl-log-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { formatWhen } from './format';

const visible = (s: CrawlLogStore) => s.warnings();
const hiddenCount = (s: CrawlLogStore) => s.allWarnings().length - s.warnings().length;

export function WarningsPanel({ crawlId }: { crawlId: number }) {
  const { stores } = useApp();
  const log = stores.crawlLogs.get(crawlId);
  const warnings = useStore(log, visible);
  const hidden = useStore(log, hiddenCount);
  return (
    <div className="warnings" data-testid="warnings-panel">
      <div className="panel-head">
        <h3>Warnings</h3>
        <span className="panel-note">
          {warnings.length} shown, newest first{hidden > 0 ? ` · ${hidden} dismissed` : ''}
        </span>
      </div>
      {warnings.length === 0 ? (
        <p className="empty">No warnings{hidden > 0 ? ' left' : ''}.</p>
      ) : (
        <ul className="warning-list" data-testid="warning-list">
          {warnings.slice(0, 200).map((w, i) => (
            <li key={`${w.t}-${i}-${causeKey(w)}`} className="warning-item" data-code={w.code} data-slot={w.slot ?? ''}>
              <div className="warning-meta">
                <Badge tone="warn">{w.code}</Badge>
                <span className="warning-slot">{w.slot ?? 'whole crawl'}</span>
                <span className="muted">{formatWhen(w.t)}</span>
              </div>
              <p className="warning-text">{w.text}</p>
              <button type="button" className="btn btn-small" onClick={() => log.dismiss(causeKey(w))}
                aria-label={`Dismiss ${w.code} on ${w.slot ?? 'whole crawl'}`}>
                Dismiss
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
