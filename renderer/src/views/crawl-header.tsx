// The selected crawl's name, status and commands (Start / Pause / Resume / Stop, enabled as its
// status allows) and its live figures from 'crawl.status', about once a second while it runs.

import { useCallback } from 'react';
import type { CrawlStatus } from '../../../shared/types';
import { Badge } from '../components/badge';
import { CommandButton } from '../components/command-button';
import { Stat } from '../components/stat';
import type { CrawlLogStore } from '../store/crawl-log-store';
import type { CrawlsStore } from '../store/crawls-store';
import { useStore } from '../store/use-store';
import { useApp } from './app-context';
import { DASH, formatCount, formatDuration, formatWhen } from './format';
import { CRAWL_STATUS_TONE } from './tones';

const can = {
  start: (s: CrawlStatus) => s === 'created',
  pause: (s: CrawlStatus) => s === 'running',
  resume: (s: CrawlStatus) => s === 'paused',
  stop: (s: CrawlStatus) => s === 'created' || s === 'running' || s === 'paused',
};

const warningCount = (s: CrawlLogStore) => s.warnings().length;

export function CrawlHeader({ crawlId, onShowWarnings }: { crawlId: number; onShowWarnings?: () => void }) {
  const { stores, commands } = useApp();
  const warnings = useStore(stores.crawlLogs.get(crawlId), warningCount);
  const info = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.crawl(crawlId), [crawlId]));
  const stats = useStore(stores.crawls, useCallback((s: CrawlsStore) => s.statsOf(crawlId), [crawlId]));
  if (!info) return null;
  const status = info.status;
  const started = stats?.startedAt ?? info.startedAt;
  const finished = stats?.finishedAt ?? info.finishedAt;
  const live = status === 'running' || status === 'paused';
  const run = (command: 'start' | 'pause' | 'resume' | 'stop') => () => commands.crawl(command, crawlId);

  return (
    <div className="crawl-header">
      <div className="crawl-title-row">
        <div className="crawl-title">
          <h2 data-testid="crawl-name">{info.name}</h2>
          <Badge tone={CRAWL_STATUS_TONE[status]} testId="crawl-status">
            {status}
          </Badge>
          <span className="muted crawl-times">
            {started === null ? 'not started' : `started ${formatWhen(started)}`}
            {started !== null && ` · ${finished === null ? 'running for' : 'ran'} ${formatDuration((finished ?? Date.now()) - started)}`}
          </span>
        </div>
        <div className="toolbar" role="toolbar" aria-label="Crawl commands">
          <CommandButton variant="primary" onRun={run('start')} disabled={!can.start(status)}>
            Start
          </CommandButton>
          <CommandButton onRun={run('pause')} disabled={!can.pause(status)}>
            Pause
          </CommandButton>
          <CommandButton onRun={run('resume')} disabled={!can.resume(status)}>
            Resume
          </CommandButton>
          <CommandButton variant="danger" onRun={run('stop')} disabled={!can.stop(status)}>
            Stop
          </CommandButton>
        </div>
      </div>
      <div className="stats" data-testid="crawl-stats">
        <Stat label="Status" testId="stat-status">
          {status}
        </Stat>
        <Stat label="Requests" testId="stat-requests">
          {formatCount(stats?.requests ?? info.requests)}
        </Stat>
        <Stat label="Responses" testId="stat-responses">
          {formatCount(stats?.responses ?? info.responses)}
        </Stat>
        <Stat label="In flight" testId="stat-inflight">
          {live ? formatCount(stats?.inFlight) : DASH}
        </Stat>
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
          <button type="button" className={`link${warnings > 0 ? ' warn-text' : ''}`} onClick={onShowWarnings} title="Show the warnings">
            {formatCount(warnings)}
          </button>
        </Stat>
      </div>
    </div>
  );
}
