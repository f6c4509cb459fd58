// The Requests tab (issue 16) against the real core and a real crawl of three hosts (one rate
// limited, one failing, one fine): every response is listed, live while the crawl runs; 429 and 5xx
// are one click away; a row's detail shows its debug line and jumps to the slot's history at that
// moment; a slot's queue lists what it will start next.

import { strict as assert } from 'node:assert';
import Database from 'better-sqlite3';
import { recordDebugLine } from '../../shared/debug-line';
import type { RequestPage } from '../../shared/contract';
import { assertNoPageErrors, openPage, runTests, sleep, startStack, test, textOf, waitFor, waitForText } from './harness';

const LIMITED = 'limited.requests.test';
const FLAKY = 'flaky.requests.test';
const FINE = 'fine.requests.test';
const SLOW = 'slow.requests.test';

const SITE = {
  hosts: {
    [LIMITED]: { address: '127.0.95.1', pages: 40, latency_ms: 5, rate_limit: { requests: 4, per_seconds: 1, status: 429, retry_after: 1 } },
    [FLAKY]: { address: '127.0.95.2', pages: 40, latency_ms: 5, statuses: { '503': 0.3 } },
    [FINE]: { address: '127.0.95.3', pages: 60, latency_ms: 5 },
  },
  seed: 5,
};
const SETTINGS = {
  AUTOTHROTTLE_ENABLED: false, DOWNLOAD_DELAY: 0.05, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 2,
  BACKOFF_MIN_DELAY: 0.1, BACKOFF_MAX_DELAY: 1, BACKOFF_WINDOW: 1, RETRY_TIMES: 1, ROBOTSTXT_OBEY: false,
};

/** The rows the grid shows, read from the DOM (virtualised: only those in view). */
async function gridRows(page: import('playwright-core').Page): Promise<{ id: number; status: string; url: string; slot: string | null }[]> {
  return page.locator('[data-testid="requests-grid"] [role="row"][data-row-id]').evaluateAll((rows) => rows.map((r) => ({
    id: Number(r.getAttribute('data-row-id')),
    status: r.getAttribute('data-status') ?? '',
    url: r.querySelector('[data-col="url"]')?.textContent ?? '',
    slot: r.querySelector('[data-col="slot"]')?.textContent ?? null,
  })));
}

test('requests: every response of a live crawl, 429 and 5xx one click away, a row in full and its moment in the history', async (t) => {
  const stack = await startStack(t, SITE, [{ name: 'e2e requests', follow: { scope: 'host' }, settings: SETTINGS }]);
  const [id] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('tab', { name: 'Requests' }).click();
  await waitFor(async () => (await textOf(page.getByTestId('requests-status'))) === 'No requests', 'an empty list before the start', 10_000,
    () => textOf(page.getByTestId('requests-status')));

  await page.getByRole('button', { name: 'Start', exact: true }).click();
  // Live: rows arrive while the crawl runs, newest first, without touching anything.
  await waitFor(async () => (await gridRows(page)).length >= 5, 'rows while the crawl runs', 20_000);
  const seenLive = Number((await page.getByTestId('requests-grid').getAttribute('data-rows')) ?? 0);
  assert.ok(seenLive > 0, 'the grid counts rows while live');
  await waitForText(page.getByTestId('crawl-status'), 'finished', 60_000);
  const summary = await stack.call<{ requests: number; byStatus: Record<string, number>; failures: number }>('crawls.stats', { id });
  await waitFor(async () => Number(await page.getByTestId('requests-grid').getAttribute('data-rows')) === summary.requests,
    `all ${summary.requests} requests listed`, 15_000, () => page.getByTestId('requests-grid').getAttribute('data-rows'));
  const first = await gridRows(page);
  const ids = first.map((r) => r.id);
  assert.deepEqual(ids, [...ids].sort((a, b) => b - a), 'newest first: row ids descend');

  // 429 in one click: only 429s, as many as the crawl counted.
  const s429 = summary.byStatus['429'] ?? 0;
  assert.ok(s429 > 0, `the rate-limited host answered 429 (${JSON.stringify(summary.byStatus)})`);
  await page.locator('[data-testid="requests-tab"] button[data-class="429"]').click();
  await waitFor(async () => Number(await page.getByTestId('requests-grid').getAttribute('data-rows')) === s429, `${s429} rows with 429`, 10_000);
  await waitFor(async () => { const r = await gridRows(page); return r.length > 0 && r.every((x) => x.status === '429'); }, 'only 429 rows shown');
  assert.match((await textOf(page.getByTestId('requests-status'))) ?? '', new RegExp(`^${s429} 429 responses`));

  // 5xx: the flaky host's 503s.
  const s5xx = Object.entries(summary.byStatus).filter(([k]) => Number(k) >= 500).reduce((a, [, n]) => a + n, 0);
  await page.locator('[data-testid="requests-tab"] button[data-class="5xx"]').click();
  await waitFor(async () => Number(await page.getByTestId('requests-grid').getAttribute('data-rows')) === s5xx, `${s5xx} 5xx rows`, 10_000);
  await waitFor(async () => { const r = await gridRows(page); return r.length > 0 && r.every((x) => Number(x.status) >= 500); }, 'only 5xx rows shown');

  // By slot and by time: the fine host's rows, oldest first.
  await page.locator('[data-testid="requests-tab"] button[data-class="all"]').click();
  await page.getByTestId('requests-slot').fill(FINE);
  await page.getByRole('button', { name: 'By time' }).click();
  const ascending = (ids: number[]) => ids.length > 1 && ids.every((x, i) => i === 0 || x > ids[i - 1]);
  await waitFor(async () => { const r = await gridRows(page); return r.every((x) => x.url.includes(FINE)) && ascending(r.map((x) => x.id)); },
    `only ${FINE} rows, by time (row ids ascend)`, 10_000, async () => (await gridRows(page)).map((x) => x.id));

  // URL text.
  await page.getByLabel('URL contains').fill('/page/7');
  await waitFor(async () => { const r = await gridRows(page); return r.length > 0 && r.every((x) => x.url.includes('/page/7')); }, 'rows with /page/7 in the URL');

  // A row in full: its recorded fields and its debug line, rendered from the stored row.
  const rowId = (await gridRows(page))[0].id;
  await page.locator(`[data-testid="requests-grid"] [data-row-id="${rowId}"]`).click();
  const detail = page.getByTestId('request-detail');
  await waitFor(async () => (await detail.getAttribute('data-row-id')) === String(rowId), 'the detail of the clicked row');
  const db = new Database(stack.dbFile, { readonly: true });
  t.defer(() => db.close());
  const stored = db.prepare(`SELECT r.*, s.key AS slot FROM responses r JOIN slots s ON s.id = r.slot_id WHERE r.id = ?`).get(rowId) as Record<string, number>;
  const line = recordDebugLine({ slot: stored.slot as unknown as string, inFlight: stored.in_flight, delayBefore: stored.delay_before, delayAfter: stored.delay_after, latency: stored.latency, bytes: stored.bytes });
  assert.equal(await textOf(page.getByTestId('request-debug-line')), line);
  const text = (await textOf(detail)) ?? '';
  for (const words of ['Waited in the slot\'s queue', 'Latency (to the headers)', `Settings in force for ${FINE}`, 'AutoThrottle', 'off']) {
    assert.ok(text.includes(words), `the detail says “${words}”`);
  }

  // Its moment in the slot's history: the History tab on that slot, around that time.
  await page.getByTestId('request-open-history').click();
  const slotDetail = page.getByTestId('slot-detail');
  await waitFor(async () => (await slotDetail.getAttribute('data-slot')) === FINE, 'the history of the row\'s slot');
  const from = await page.locator('input[aria-label="From"]').inputValue();
  const to = await page.locator('input[aria-label="To"]').inputValue();
  const at = new Date(stored.t);
  const pad = (n: number) => String(n).padStart(2, '0');
  const minute = `${pad(at.getHours())}:${pad(at.getMinutes())}`;
  assert.ok(new Date(from).getTime() <= stored.t && new Date(to).getTime() >= stored.t - 1000, `the range ${from}–${to} holds the row's moment (${minute})`);
  assertNoPageErrors(p);
});

test('requests: a slot\'s queue lists the next URLs with their depth and retries while the crawl runs', async (t) => {
  const stack = await startStack(t, {
    hosts: { [SLOW]: { address: '127.0.95.4', pages: 200, latency_ms: 5 } }, seed: 2,
  }, [{ name: 'e2e queue', hosts: [SLOW], paths: Array.from({ length: 60 }, (_, i) => `/page/${i + 1}`),
    follow: { scope: 'none' }, settings: { DOWNLOAD_DELAY: 0.5, RANDOMIZE_DOWNLOAD_DELAY: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1, ROBOTSTXT_OBEY: false } }]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  // From the slot's row: its ⋯ menu opens the Requests tab on its queue.
  await page.getByRole('button', { name: `More actions for slot ${SLOW}` }).click();
  await page.getByRole('menuitem', { name: 'Show its queue' }).click();
  await waitFor(async () => (await page.getByTestId('requests-tab').getAttribute('data-mode')) === 'queue', 'the queue view');
  assert.equal(await page.getByTestId('requests-slot').inputValue(), SLOW);
  const table = page.getByTestId('queue-table');
  await waitFor(async () => (await table.locator('tbody tr').count()) > 10, 'queued URLs listed', 15_000, () => textOf(page.getByTestId('queue-status')));
  const firstUrls = await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-url')));
  assert.ok(firstUrls.every((u) => u?.includes(SLOW)), 'every queued URL is the slot\'s');
  assert.match((await textOf(page.getByTestId('queue-status'))) ?? '', /requests? waiting in slow\.requests\.test’s queue/);
  const depthCell = await textOf(table.locator('tbody tr').first().locator('td').nth(2));
  assert.equal(depthCell, '0', 'seeds have depth 0');
  // The queue moves: a second later the head is further on.
  await sleep(1500);
  await waitFor(async () => (await table.locator('tbody tr').first().getAttribute('data-url')) !== firstUrls[0], 'the queue moves on', 10_000);
  // The store's view of the same queue answers the same URLs.
  const page1 = await stack.call<RequestPage>('requests.page', { crawlId: stack.crawlIds[0], count: true });
  assert.ok((page1.total ?? 0) > 0);
  assertNoPageErrors(p);
});

await runTests('requests-tab.e2e.ts');
