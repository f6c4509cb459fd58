// The browser host in front of the real core (SQLite and all): what the renderer in a browser
// does first, creating a crawl and listing it, through the reconnecting client.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { createCore } from '../../../electron/core/create-core';
import { connect } from '../../../renderer/src/transport/ws-client';
import { defer, startTestServer, until } from './fixtures';

it('creates and lists a crawl of the real core over the WebSocket', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slotscope-ws-core-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const core = await createCore({ db: join(dir, 'history.sqlite') });
  defer(() => core.close());
  const { wsUrl } = await startTestServer({ dispatcher: core });

  const client = connect(wsUrl, { WebSocketImpl: WebSocket });
  defer(() => client.close());
  const changed: number[][] = [];
  client.subscribe('crawls.changed', (p) => changed.push(p.crawls.map((c) => c.id)));

  const { crawl, seedErrors } = await client.invoke('crawls.create', { config: { seeds: ['http://127.0.0.1:9/'], follow: { scope: 'none' } } });
  expect(seedErrors).toEqual([]);
  expect(crawl.status).toBe('created');
  const list = await client.invoke('crawls.list', {});
  expect(list.map((c) => c.id)).toEqual([crawl.id]);
  // Its event came through too.
  await until(() => changed.length > 0, 5000, 'crawls.changed');
  expect(changed.at(-1)).toEqual([crawl.id]);

  // The core's own errors come back as data through the client.
  await expect(client.invoke('crawls.stats', { id: 987654 })).rejects.toMatchObject({ transport: false, code: 'not-found' });
});
