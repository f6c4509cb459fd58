// Issue 16, traps around crawls that have ended: an imported Scrapy log has no seeds, so Duplicate asks
// for them instead of inventing some; its response count is the same in the header, the list and
// the import note (an INFO-level log has no Crawled lines); settings cannot be changed after a
// crawl's end (no change row after it).

import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { CrawlInfo } from '../../shared/contract';
import type { ChangeRecord } from '../../shared/types';
import { assertNoPageErrors, numberOf, openPage, ROOT, runTests, sleep, startStack, test, textOf, waitFor, waitForText } from './harness';

const INFO_LOG = join(ROOT, 'test', 'fixtures', 'scrapy-logs', 'scrapy-2.8.0-info-msecs.log');
const HOSTS = { 'copy.test': { address: '127.0.94.41', pages: 5, latency_ms: 2 } };

const listCell = (page: Page, id: number, col: string) => page.locator(`[data-testid="crawl-list"] tr[data-crawl="${id}"] td[data-col="${col}"]`);

/** Tries to change a setting in the Settings tab; true when the UI let it be sent. */
async function tryApply(page: Page, name: string, value: string): Promise<boolean> {
  await page.getByRole('tab', { name: 'Settings' }).click();
  const row = page.getByTestId(`setting-${name}`);
  await row.waitFor({ timeout: 10_000 });
  const input = row.locator('input, textarea').first();
  if ((await input.isDisabled()) || (await input.getAttribute('readonly')) !== null) return false;
  await input.fill(value);
  const apply = page.getByRole('button', { name: `Apply ${name}`, exact: true });
  if (await apply.isDisabled()) return false;
  await apply.click();
  await sleep(500);
  return true;
}

test('an imported INFO-level Scrapy log: one response count everywhere, no seeds invented by Duplicate, settings refused', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, []);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await page.getByTestId('import-log-file').setInputFiles(INFO_LOG);
  const crawls = () => stack.call<CrawlInfo[]>('crawls.list', {});
  // The crawl row exists from the log's first line; the import is done when its report shows.
  await page.getByTestId('import-status').waitFor({ timeout: 15_000 });
  const [imported] = await crawls();
  await waitForText(page.getByTestId('crawl-name'), imported.name);

  // One count of responses: the header, the list and the note under the import button agree.
  await waitFor(async () => (await textOf(page.getByTestId('stat-responses'))) !== null, 'the header figures', 5000);
  const header = await numberOf(page.getByTestId('stat-responses'));
  const listed = await numberOf(listCell(page, imported.id, 'responses'));
  assert.equal(header, listed, `header ${header} and list ${listed} agree`);
  const note = (await textOf(page.locator('.import-log'))) ?? '';
  const said = /([\d,]+) responses?\b/.exec(note);
  assert.ok(said === null || Number(said[1].replace(/,/g, '')) === listed, `the import note agrees with the list: ${note}`);
  assert.ok(imported.requests > 0, 'the log has requests');

  // Duplicate of an import asks for seeds; nothing is created until they are given.
  await page.getByRole('button', { name: 'Duplicate', exact: true }).click();
  const ask = page.getByTestId('duplicate-seeds');
  await ask.waitFor({ timeout: 3000 });
  assert.equal((await crawls()).length, 1, 'no crawl created before seeds are given');
  const seed = `${stack.site.hosts['copy.test']}/`;
  await ask.getByLabel(/Seeds/).fill(seed);
  await ask.getByRole('button', { name: /Duplicate/ }).click();
  await waitFor(async () => (await crawls()).length === 2, 'the copy', 5000);
  const copy = (await crawls()).find((c) => c.id !== imported.id)!;
  await waitForText(page.getByTestId('crawl-name'), copy.name);
  // The core refuses a copy of a seedless crawl without seeds.
  const r = await stack.core.dispatch('crawls.duplicate', { id: imported.id });
  assert.equal(r.ok, false, 'crawls.duplicate of an import without seeds is refused');
  // The copy crawls exactly the seed given.
  await stack.call('settings.update', { id: copy.id, changes: { ROBOTSTXT_OBEY: false, AUTOTHROTTLE_ENABLED: false } });
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id: copy.id })).status === 'finished', 'the copy to finish', 20_000);
  assert.ok(stack.arrivals('copy.test').some((e) => e.path === '/'), 'the seed given was crawled');

  // Settings of the imported (finished) crawl cannot change.
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${imported.id}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), imported.name);
  const sent = await tryApply(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY', '7');
  t.log(`the UI ${sent ? 'sent' : 'did not send'} the change`);
  const direct = await stack.core.dispatch('settings.update', { id: imported.id, changes: { AUTOTHROTTLE_TARGET_CONCURRENCY: 7 } });
  assert.equal(direct.ok, false, 'settings.update of an imported crawl is refused');
  const changes = await stack.call<ChangeRecord[]>('log.changes', { id: imported.id });
  assert.equal(changes.filter((c) => c.slot === null && c.source === 'user').length, 0, 'no settings change row after the end of the import');
  assertNoPageErrors(p);
});

test('a finished crawl: settings refused, no change row after its end', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [{ name: 'e2e finished', settings: { AUTOTHROTTLE_ENABLED: false } }]);
  const [id] = stack.crawlIds;
  await stack.call('crawls.start', { id });
  await waitFor(async () => (await stack.call<{ status: string }>('crawls.stats', { id })).status === 'finished', 'the crawl to finish', 20_000);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'finished');
  await tryApply(page, 'DOWNLOAD_DELAY', '3');
  const direct = await stack.core.dispatch('settings.update', { id, changes: { DOWNLOAD_DELAY: 3 } });
  assert.equal(direct.ok, false, 'settings.update of a finished crawl is refused');
  const info = (await stack.call<CrawlInfo[]>('crawls.list', {})).find((c) => c.id === id)!;
  const late = (await stack.call<ChangeRecord[]>('log.changes', { id })).filter((c) => c.t > (info.finishedAt ?? Infinity));
  assert.deepEqual(late, [], 'no change row after the crawl ended');
  assertNoPageErrors(p);
});

await runTests('traps-import.e2e.ts');
