// Which colour each crawl status, slot state and connection state gets, one table per kind, so
// a state has the same colour in every view.

import type { SlotState } from '../../../shared/contract';
import type { CrawlStatus } from '../../../shared/types';
import type { Tone } from '../components/badge';
import type { ConnectionState } from '../transport/transport';

export const CRAWL_STATUS_TONE: Readonly<Record<CrawlStatus, Tone>> = {
  created: 'neutral',
  running: 'ok',
  paused: 'warn',
  stopped: 'muted',
  finished: 'info',
  failed: 'bad',
  interrupted: 'warn',
};

export const SLOT_STATE_TONE: Readonly<Record<SlotState, Tone>> = {
  active: 'ok',
  waiting: 'info',
  backoff: 'warn',
  paused: 'muted',
  blocked: 'bad',
  idle: 'neutral',
};

export const CONNECTION_TONE: Readonly<Record<ConnectionState, Tone>> = {
  connecting: 'warn',
  open: 'ok',
  reconnecting: 'warn',
  closed: 'bad',
  refused: 'bad',
};
