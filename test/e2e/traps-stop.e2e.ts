// Issue 16, traps: Stop asks first, a crawl that never started has no Stop, and a stopped crawl is
// resumed from its frontier in the UI (the core and the CLI could; the header could not).

import { strict as assert } from 'node:assert';
import { assertNoPageErrors, numberOf, openPage, runTests, sleep, startStack, test, textOf, waitFor, waitForText } from './harness';

const HOSTS = { 'stop.test': { address: '127.0.94.11', pages: 400, latency_ms: 5 } };

test('Stop asks first; a never-started crawl has no Stop; a stopped crawl resumes from its frontier', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [
    { name: 'e2e stop me', settings: { DOWNLOAD_DELAY: 0.08, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false, CONCURRENT_REQUESTS_PER_DOMAIN: 1 } },
    { name: 'e2e never started' },
  ]);
  const [id, unstarted] = stack.crawlIds;
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  const stop = page.getByRole('button', { name: 'Stop', exact: true });
  const resume = page.getByRole('button', { name: 'Resume', exact: true });

  // A crawl that never started: nothing to stop.
  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${unstarted}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), 'e2e never started');
  await waitForText(page.getByTestId('crawl-status'), 'created');
  assert.ok((await stop.count()) === 0 || (await stop.isDisabled()), 'a crawl that never started offers no Stop');

  await page.locator(`[data-testid="crawl-list"] tr[data-crawl="${id}"] button.link`).click();
  await waitForText(page.getByTestId('crawl-name'), 'e2e stop me');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  await waitFor(async () => (await numberOf(page.getByTestId('stat-requests'))) >= 8, 'some requests', 15_000);

  // Stop asks first, naming the crawl; Cancel leaves it running.
  await stop.click();
  const dialog = page.getByTestId('confirm-stop');
  await dialog.waitFor({ timeout: 3000 });
  assert.match((await textOf(dialog)) ?? '', /e2e stop me/);
  assert.equal(await textOf(page.getByTestId('crawl-status')), 'running', 'nothing stopped before the answer');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached', timeout: 3000 });
  await sleep(400);
  assert.equal((await stack.call<{ status: string }>('crawls.stats', { id })).status, 'running', 'Cancel keeps the crawl running');

  await stop.click();
  await dialog.getByRole('button', { name: /^Stop/ }).click();
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 10_000);
  await sleep(300);
  const atStop = (await stack.call<{ requests: number }>('crawls.stats', { id })).requests;
  const homeFetches = () => stack.arrivals('stop.test').filter((e) => e.path === '/').length;
  assert.equal(homeFetches(), 1);

  // Resume from the UI: it goes on from its frontier (the seed is not fetched again).
  await waitFor(async () => (await resume.count()) > 0 && !(await resume.isDisabled()), 'Resume offered for a stopped crawl', 5000);
  await resume.click();
  await waitForText(page.getByTestId('crawl-status'), 'running', 10_000);
  await waitFor(async () => (await numberOf(page.getByTestId('stat-requests'))) >= atStop + 8, 'the resumed crawl to go on', 15_000,
    () => textOf(page.getByTestId('stat-requests')));
  assert.equal(homeFetches(), 1, 'resumed from the frontier, not from the seeds');
  await stop.click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click();
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 10_000);
  assertNoPageErrors(p);
});

await runTests('traps-stop.e2e.ts');
