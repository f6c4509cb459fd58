// The "done when" flow in one go, in Chromium against the real core and test site: a crawl
// made with the Polite preset (seeds from a file), started, one slot paused, settings changed
// mid-crawl and used by the engine, an invalid value refused, the crawl paused and resumed.

import { strict as assert } from 'node:assert';
import type { Page } from 'playwright-core';
import type { ChangeRecord, EventRecord } from '../../shared/types';
import { assertNoPageErrors, openPage, runTests, sleep, slotCell, slotRow, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOSTS = {
  'one.test': { address: '127.0.32.21', pages: 300, latency_ms: 20 },
  'two.test': { address: '127.0.32.22', pages: 300, latency_ms: 20 },
  'three.test': { address: '127.0.32.23', pages: 300, latency_ms: 20 },
};
const NAMES = Object.keys(HOSTS);

const setting = (page: Page, name: string) => page.getByTestId(`setting-${name}`);
const input = (page: Page, name: string) => page.locator(`#setting-${name}`);
const apply = (page: Page, name: string) => page.getByRole('button', { name: `Apply ${name}`, exact: true });

test('done when: Polite preset from the form, start, pause a slot, change settings mid-crawl, refuse a bad value, pause and resume', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, []);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  const inUse = async (id: number, name: string) => (await stack.call<EventRecord[]>('log.events', { id, kind: 'info' }))
    .filter((e) => e.code === 'settings-in-use' && ((e.data as { changed: string[] }).changed ?? []).includes(name));

  // 1. The form: seeds loaded from a file (a bad line named by its number), the Polite preset.
  await page.getByRole('button', { name: 'New crawl' }).click();
  const form = page.getByTestId('new-crawl-form');
  await form.getByLabel('Name').fill('e2e polite flow');
  const seedFile = [`${stack.site.origin('one.test')}/`, 'ftp://nope.test/', `${stack.site.origin('two.test')}/`, `${stack.site.origin('three.test')}/`, ''].join('\n');
  await page.getByTestId('seed-file').setInputFiles({ name: 'seeds.txt', mimeType: 'text/plain', buffer: Buffer.from(seedFile) });
  await waitForText(page.getByTestId('seed-file-note'), 'Loaded 4 lines from seeds.txt', 5000);
  assert.match((await textOf(page.getByTestId('seed-problems'))) ?? '', /line 2: ftp:\/\/nope\.test\/ \(ftp: is not http or https\)/);
  assert.match((await textOf(page.getByTestId('seed-count'))) ?? '', /^3 valid seeds · 1 bad line/);
  await form.getByLabel('Preset').selectOption({ label: 'Polite, one site' });
  // Exact gaps to check against: no randomization, set over the preset in the list of every setting
  // (a wrong value first: refused by the field, Create held back).
  await page.getByTestId('every-setting').locator('summary').click();
  const randomize = page.getByTestId('new-setting-RANDOMIZE_DOWNLOAD_DELAY');
  assert.match((await textOf(randomize)) ?? '', /default 0\.5/);
  await randomize.locator('input').fill('maybe');
  await waitFor(async () => /RANDOMIZE_DOWNLOAD_DELAY/.test((await textOf(randomize.getByTestId('new-setting-error'))) ?? ''), 'the inline refusal', 5000);
  assert.equal(await form.getByRole('button', { name: 'Create' }).isDisabled(), true);
  await randomize.locator('input').fill('false');
  await waitFor(async () => (await randomize.getByTestId('new-setting-error').count()) === 0, 'the refusal gone', 5000);
  assert.match((await textOf(page.getByTestId('new-setting-DOWNLOAD_DELAY'))) ?? '', /preset 1/, 'the preset\'s value is shown beside the default');
  await form.getByLabel('Resolve').fill(JSON.stringify(stack.site.resolve));
  await form.getByRole('button', { name: 'Create' }).click();
  await page.getByTestId('created-note').waitFor({ timeout: 5000 });
  await page.getByRole('button', { name: 'Show the crawl' }).click();
  await waitForText(page.getByTestId('crawl-name'), 'e2e polite flow');
  const id = (await stack.call<{ id: number; name: string }[]>('crawls.list', {})).find((c) => c.name === 'e2e polite flow')!.id;
  const initial = await stack.call<Record<string, unknown>>('settings.get', { id });
  assert.equal(initial.AUTOTHROTTLE_TARGET_CONCURRENCY, 1);
  assert.equal(initial.DOWNLOAD_DELAY, 1);
  assert.equal(initial.RANDOMIZE_DOWNLOAD_DELAY, false);

  // 2. Start; a row per host appears, and the live header counts.
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  for (const host of NAMES) await slotRow(page, host).waitFor({ timeout: 15_000 });
  await waitFor(async () => (await textOf(page.getByTestId('stat-req-rate'))) !== '—', 'a request rate in the header', 10_000);
  assert.match((await textOf(page.getByTestId('stat-inflight'))) ?? '', /^\d+ \/ 16$/, 'in flight against the limit (CONCURRENT_REQUESTS 16)');

  // 3. Pause one slot: its requests stop in the site's log while the others go on.
  await page.getByRole('button', { name: 'Pause slot one.test' }).click();
  await waitFor(async () => (await slotRow(page, 'one.test').getAttribute('data-state')) === 'paused', 'one.test paused', 5000);
  await sleep(300);
  const onePaused = stack.arrivals('one.test').length;
  const othersPaused = stack.arrivals('two.test').length + stack.arrivals('three.test').length;
  await sleep(3500);
  assert.equal(stack.arrivals('one.test').length, onePaused, 'one.test got requests while its slot was paused');
  assert.ok(stack.arrivals('two.test').length + stack.arrivals('three.test').length > othersPaused, 'the other hosts went on');
  await page.getByRole('button', { name: 'Resume slot one.test' }).click();
  await waitFor(() => stack.arrivals('one.test').length > onePaused, 'one.test to get requests again', 10_000);

  // 4. AUTOTHROTTLE_TARGET_CONCURRENCY mid-crawl: applied, listed, and used by the engine.
  await page.getByRole('tab', { name: 'Settings' }).click();
  await waitForText(setting(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').getByTestId('setting-current'), '1');
  await input(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').fill('2');
  await apply(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').click();
  await setting(page, 'AUTOTHROTTLE_TARGET_CONCURRENCY').getByTestId('setting-applied').waitFor({ timeout: 5000 });
  await waitFor(async () => (await inUse(id, 'AUTOTHROTTLE_TARGET_CONCURRENCY')).length > 0, 'the engine to start a request under the new target', 10_000);
  const targetUse = (await inUse(id, 'AUTOTHROTTLE_TARGET_CONCURRENCY'))[0];
  t.log(`engine: ${targetUse.text}`);

  // 5. DOWNLOAD_DELAY mid-crawl: the arrivals after it are at least 2 s apart.
  await input(page, 'DOWNLOAD_DELAY').fill('2');
  await apply(page, 'DOWNLOAD_DELAY').click();
  await setting(page, 'DOWNLOAD_DELAY').getByTestId('setting-applied').waitFor({ timeout: 5000 });
  await waitFor(async () => (await inUse(id, 'DOWNLOAD_DELAY')).length > 0, 'the engine to start a request under the new delay', 10_000);
  const from = stack.arrivals('two.test').length + 1; // the next one may have been started before the change
  await waitFor(() => stack.arrivals('two.test').length >= from + 3, 'three more arrivals on two.test', 20_000, () => stack.arrivals('two.test').length - from);
  const after = stack.arrivals('two.test').slice(from);
  const gaps = after.slice(1).map((e, i) => e.t - after[i].t);
  t.log(`two.test gaps after DOWNLOAD_DELAY 2 (ms): ${gaps.join(' ')}`);
  assert.ok(gaps.every((g) => g >= 1950), `arrivals at least 2 s apart: ${gaps.join(', ')}`);
  const changes = await stack.call<ChangeRecord[]>('log.changes', { id });
  assert.ok(changes.some((c) => c.setting === 'AUTOTHROTTLE_TARGET_CONCURRENCY' && c.oldValue === 1 && c.newValue === 2 && c.source === 'user'));
  assert.ok(changes.some((c) => c.setting === 'DOWNLOAD_DELAY' && c.oldValue === 1 && c.newValue === 2 && c.source === 'user'));
  const listed = page.locator('[data-testid="changes-list"] tr[data-setting="DOWNLOAD_DELAY"]').first();
  assert.equal(await textOf(listed.locator('td[data-col="values"]')), '1 → 2');

  // 6. An invalid value: the error by the field, Apply disabled, nothing applied or recorded.
  const before = await stack.call<Record<string, unknown>>('settings.get', { id });
  const recorded = changes.length;
  await input(page, 'DOWNLOAD_DELAY').fill('-1');
  await waitFor(async () => /a number >= 0/.test((await textOf(setting(page, 'DOWNLOAD_DELAY').getByTestId('setting-error'))) ?? ''), 'the inline error', 5000);
  assert.equal(await apply(page, 'DOWNLOAD_DELAY').isDisabled(), true);
  await input(page, 'DOWNLOAD_DELAY').press('Enter');
  await sleep(300);
  assert.deepEqual(await stack.call('settings.get', { id }), before, 'nothing applied');
  assert.equal((await stack.call<ChangeRecord[]>('log.changes', { id })).filter((c) => c.slot === null).length,
    changes.filter((c) => c.slot === null).length, 'nothing recorded');
  assert.ok(recorded > 0);

  // 7. The slot table shows the engine's new target; then pause and resume the whole crawl.
  await page.getByRole('tab', { name: 'Slots' }).click();
  await waitFor(async () => (await textOf(slotCell(page, 'two.test', 'target'))) === '2', 'the target column at 2', 5000, () => textOf(slotCell(page, 'two.test', 'target')));
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'paused', 5000);
  await sleep(400);
  const all = () => NAMES.reduce((n, h) => n + stack.arrivals(h).length, 0);
  const atPause = all();
  await sleep(3000);
  assert.equal(all(), atPause, 'no request reached the site while the crawl was paused');
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running', 5000);
  await waitFor(() => all() > atPause, 'requests again after Resume', 10_000);

  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  assertNoPageErrors(p);
}, { timeoutMs: 150_000 });

await runTests('console-flow.e2e.ts');
