// The Crawl view and Duplicate and edit (issue 16): what a crawl is (seeds, follow rules, patterns,
// scope rules, the resolve map, its settings with what differs from Scrapy's defaults set apart), its
// seeds downloaded whole; the New crawl form filled from it (seeds included), every part of the config
// editable (patterns, scope rules, THROTTLING_SCOPES as a table, booleans as switches), the copy
// created as edited; a long seed list kept by reference; a preset that fills its values.

import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import type { CrawlDefinition } from '../../shared/contract';
import { assertNoPageErrors, openPage, runTests, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOST = 'def.view.test';
const SITE = { hosts: { [HOST]: { address: '127.0.95.31', pages: 50, latency_ms: 2 } }, seed: 4 };

async function makeCrawl(stack: Awaited<ReturnType<typeof startStack>>, seeds: number) {
  const origin = stack.site.origin(HOST);
  const { crawl } = await stack.call<{ crawl: { id: number } }>('crawls.create', { config: {
    name: 'Definition under test',
    seeds: Array.from({ length: seeds }, (_, i) => `${origin}/page/${i + 1}`),
    follow: { scope: 'domain', max_depth: 3, max_pages: 50, include: ['/page/'], exclude: ['/private/'] },
    scopes: [{ by: 'domain' }, { by: 'prefix', prefix: `${origin}/api/`, scope: 'api' }],
    resolve: stack.site.resolve,
    settings: { AUTOTHROTTLE_ENABLED: true, DOWNLOAD_DELAY: 0.25, THROTTLING_SCOPES: { [HOST]: { concurrency: 2, delay: 0.5, rampup: true } } },
  } });
  return crawl.id;
}

test('crawl view: seeds, follow rules, scope rules, the resolve map and the settings that differ from the defaults; every seed downloads', async (t) => {
  const stack = await startStack(t, SITE, []);
  const id = await makeCrawl(stack, 30);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-name'), 'Definition under test');
  await page.getByRole('tab', { name: 'Crawl' }).click();
  const view = page.getByTestId('crawl-view');
  await view.waitFor();
  assert.match((await textOf(page.getByTestId('crawl-seeds'))) ?? '', /^Seeds · 30/);
  assert.equal(await page.getByTestId('crawl-seed-list').locator('li').count(), 20, 'the first 20 seeds are listed');
  assert.match((await textOf(page.getByTestId('crawl-seeds'))) ?? '', /The first 20 of 30\./);
  const follow = (await textOf(page.getByTestId('crawl-follow'))) ?? '';
  for (const words of ['links to the seeds’ registrable domains', 'Max depth3', 'Max pages50', '/page/', '/private/']) assert.ok(follow.includes(words), `follow says ${words}: ${follow}`);
  const rules = (await textOf(page.getByTestId('crawl-scopes'))) ?? '';
  assert.match(rules, /each registrable domain is a scope/);
  assert.match(rules, /URLs starting with http:\/\/def\.view\.test:\d+\/api\/ are the scope api/);
  assert.match((await textOf(page.getByTestId('crawl-resolve'))) ?? '', /def\.view\.test127\.0\.95\.31/);
  // Settings: only those that differ from Scrapy's defaults, in words (no JSON).
  const rows = page.locator('[data-testid="crawl-settings-table"] tbody tr[data-setting]');
  const differing = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-setting')));
  assert.deepEqual(differing.sort(), ['AUTOTHROTTLE_ENABLED', 'DOWNLOAD_DELAY', 'THROTTLING_SCOPES']);
  assert.match((await textOf(page.getByTestId('crawl-settings'))) ?? '', /3 differ from Scrapy’s defaults/);
  const scopesRow = (await textOf(page.locator('tr[data-setting="THROTTLING_SCOPES"]'))) ?? '';
  assert.match(scopesRow, /def\.view\.test: concurrency 2, delay 0\.5 s, rampup/);
  assert.ok(!/[{}"]/.test(scopesRow), `no JSON in the settings: ${scopesRow}`);
  await page.getByTestId('crawl-settings').getByLabel('only those').uncheck();
  await waitFor(async () => (await rows.count()) > 20, 'every setting listed');
  assert.equal(await page.locator('tr[data-setting="DOWNLOAD_DELAY"]').getAttribute('data-differs'), 'true');
  assert.equal(await page.locator('tr[data-setting="BACKOFF_WINDOW"]').getAttribute('data-differs'), 'false');

  const download = page.waitForEvent('download');
  await page.getByTestId('download-seeds').click();
  const file = await (await download).path();
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const def = await stack.call<CrawlDefinition>('crawls.definition', { id });
  assert.equal(lines.length, 30);
  assert.deepEqual(lines.slice(0, 20), def.firstSeeds);
  assertNoPageErrors(p);
});

test('duplicate and edit: the New crawl form filled from a crawl, seeds included; the copy is created as edited', async (t) => {
  const stack = await startStack(t, SITE, []);
  const id = await makeCrawl(stack, 30);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-name'), 'Definition under test');
  await page.getByRole('tab', { name: 'Crawl' }).click();
  await page.getByTestId('duplicate-edit').click();
  const form = page.getByTestId('new-crawl-form');
  await form.getByLabel('Name', { exact: true }).waitFor();
  assert.equal(await form.getByLabel('Name', { exact: true }).inputValue(), 'Definition under test (copy)');
  const seeds = (await form.getByLabel('Seeds, one URL a line').inputValue()).split('\n');
  assert.equal(seeds.length, 30, 'every seed is in the form');
  assert.equal(await form.getByLabel('Follow links').inputValue(), 'domain');
  assert.equal(await form.getByLabel('Max depth').inputValue(), '3');
  assert.equal(await form.getByLabel('Max pages').inputValue(), '50');
  assert.equal(await form.getByLabel('Only URLs matching').inputValue(), '/page/');
  assert.equal(await form.getByLabel('Never URLs matching').inputValue(), '/private/');
  assert.equal(await form.getByLabel('Scope rule 1: by').inputValue(), 'domain');
  assert.equal(await form.getByLabel('Scope rule 2: by').inputValue(), 'prefix');
  assert.equal(await form.getByLabel('Scope rule 2: scope name').inputValue(), 'api');
  assert.equal(await form.getByLabel('Scope, scope 1').inputValue(), HOST);
  assert.equal(await form.getByLabel('Concurrency, scope 1').inputValue(), '2');
  assert.equal(await form.getByLabel('Delay, seconds, scope 1').inputValue(), '0.5');
  assert.equal(await form.getByLabel('Rampup, scope 1').isChecked(), true);
  // Booleans are switches; the copied values are in the fields.
  const autothrottle = page.getByTestId('new-setting-AUTOTHROTTLE_ENABLED').getByRole('switch');
  assert.equal(await autothrottle.isChecked(), true);
  assert.equal(await page.getByTestId('new-setting-DOWNLOAD_DELAY').locator('input').inputValue(), '0.25');

  // Edit before creating: a name, one seed fewer, a page limit, another pattern, a scope more, robots.txt off.
  await form.getByLabel('Name', { exact: true }).fill('Edited copy');
  await form.getByLabel('Seeds, one URL a line').fill(seeds.slice(1).join('\n'));
  await form.getByLabel('Max pages').fill('40');
  await form.getByLabel('Never URLs matching').fill('/private/\n/login');
  await form.getByLabel('Never URLs matching').fill('/private/\n(unclosed');
  await waitFor(async () => /Never URLs matching, line 2: \(unclosed is not a regular expression/.test((await textOf(page.getByTestId('pattern-error'))) ?? ''), 'the bad pattern named');
  assert.equal(await form.getByRole('button', { name: 'Create' }).isDisabled(), true);
  await form.getByLabel('Never URLs matching').fill('/private/\n/login');
  await page.getByTestId('scopes-table').getByRole('button', { name: 'Add a scope' }).click();
  await form.getByLabel('Scope, scope 2').fill('other.test');
  await form.getByLabel('Concurrency, scope 2').fill('1');
  await form.getByLabel('More settings as JSON, scope 2').fill('{"backoff": {"max_delay": 30}}');
  await page.getByTestId('new-setting-ROBOTSTXT_OBEY').getByRole('switch').uncheck();
  await form.getByRole('button', { name: 'Create' }).click();
  await waitForText(page.getByTestId('crawl-name'), 'Edited copy');

  const crawls = await stack.call<{ id: number; name: string }[]>('crawls.list', {});
  const copy = crawls.find((c) => c.name === 'Edited copy')!;
  const def = await stack.call<CrawlDefinition>('crawls.definition', { id: copy.id });
  assert.equal(def.seedCount, 29);
  assert.deepEqual(def.follow, { scope: 'domain', maxDepth: 3, maxPages: 40, include: ['/page/'], exclude: ['/private/', '/login'] });
  assert.deepEqual(def.scopes, (await stack.call<CrawlDefinition>('crawls.definition', { id })).scopes);
  assert.equal(def.settings.ROBOTSTXT_OBEY, false);
  assert.equal(def.settings.AUTOTHROTTLE_ENABLED, true);
  assert.equal(def.settings.DOWNLOAD_DELAY, 0.25);
  assert.deepEqual(JSON.parse(JSON.stringify(def.settings.THROTTLING_SCOPES)), {
    [HOST]: { concurrency: 2, delay: 0.5, rampup: true }, 'other.test': { concurrency: 1, backoff: { max_delay: 30 } },
  });
  assert.deepEqual(def.resolve, stack.site.resolve);
  assertNoPageErrors(p);
});

test('duplicate and edit: a long seed list stays on the host and more seeds add to it; a preset fills its values', async (t) => {
  const stack = await startStack(t, SITE, []);
  const id = await makeCrawl(stack, 6000);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-name'), 'Definition under test');
  await page.getByRole('tab', { name: 'Crawl' }).click();
  await page.getByTestId('duplicate-edit').click();
  const form = page.getByTestId('new-crawl-form');
  await page.getByTestId('seeds-from').waitFor();
  assert.match((await textOf(page.getByTestId('seeds-from'))) ?? '', /the 6,000 seeds of “Definition under test”, kept as they are/);
  await form.getByLabel('More seeds, one URL a line').fill(`${stack.site.origin(HOST)}/extra`);
  await form.getByRole('button', { name: 'Create' }).click();
  await waitForText(page.getByTestId('crawl-name'), 'Definition under test (copy)');
  const copy = (await stack.call<{ id: number; name: string }[]>('crawls.list', {})).find((c) => c.id !== id)!;
  const def = await stack.call<CrawlDefinition>('crawls.definition', { id: copy.id });
  assert.equal(def.seedCount, 6001);

  // A preset writes its values into the fields, where they can be read and changed.
  await page.getByRole('button', { name: 'New crawl' }).click();
  await form.getByLabel('Preset').selectOption({ label: 'Polite, one site' });
  await page.getByTestId('every-setting').locator('summary').click();
  assert.equal(await page.getByTestId('new-setting-DOWNLOAD_DELAY').locator('input').inputValue(), '1');
  assert.equal(await page.getByTestId('new-setting-AUTOTHROTTLE_ENABLED').getByRole('switch').isChecked(), true);
  await form.getByLabel('Preset').selectOption({ label: 'Cooperative server' });
  assert.equal(await page.getByTestId('new-setting-DOWNLOAD_DELAY').locator('input').inputValue(), '', 'the previous preset\'s value goes');
  assert.equal(await page.getByTestId('new-setting-AUTOTHROTTLE_TARGET_CONCURRENCY').locator('input').inputValue(), '4');
  assertNoPageErrors(p);
});

await runTests('crawl-view-definition.e2e.ts');
