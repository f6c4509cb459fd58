// Steering one slot from its row: pausing it stops that host's arrivals at the test site while
// the other hosts go on, and resuming it brings them back; then Stop ends the crawl.

import { strict as assert } from 'node:assert';
import { SLOT_COLUMNS, type AppEvents } from '../../shared/contract';
import {
  assertNoPageErrors, numberOf, openPage, runTests, sleep, slotCell, slotRow, startStack, test, textOf, waitFor, waitForText,
} from './harness';

const HOSTS = {
  'alpha.test': { address: '127.0.30.11', pages: 300, latency_ms: 20 },
  'beta.test': { address: '127.0.30.12', pages: 300, latency_ms: 50 },
  'gamma.test': { address: '127.0.30.13', pages: 300, latency_ms: 20 },
};

test('pausing a slot from its row stops its host\'s arrivals while the others go on; resume restarts it', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [
    { name: 'e2e slot control', settings: { DOWNLOAD_DELAY: 0.1, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false } },
  ]);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitForText(page.getByTestId('crawl-status'), 'running');
  for (const host of Object.keys(HOSTS)) {
    await waitFor(async () => (await numberOf(slotCell(page, host, 'requests'))) >= 3, `${host} to have made a few requests`, 10_000);
  }

  await page.getByRole('button', { name: 'Pause slot alpha.test' }).click();
  await waitFor(async () => (await slotRow(page, 'alpha.test').getAttribute('data-state')) === 'paused', 'alpha.test to show paused', 5000);
  assert.equal(await textOf(slotCell(page, 'alpha.test', 'state')), 'paused');
  await page.getByRole('button', { name: 'Resume slot alpha.test' }).waitFor({ timeout: 5000 });
  // A request already in flight may still land (20 ms); after that, nothing more for alpha.
  await sleep(300);
  const alphaAtPause = stack.arrivals('alpha.test').length;
  const othersAtPause = stack.arrivals('beta.test').length + stack.arrivals('gamma.test').length;
  await sleep(2000);
  assert.equal(stack.arrivals('alpha.test').length, alphaAtPause, 'alpha.test received requests while its slot was paused');
  const othersGained = stack.arrivals('beta.test').length + stack.arrivals('gamma.test').length - othersAtPause;
  assert.ok(othersGained >= 10, `the other hosts went on while alpha.test was paused (only ${othersGained} arrivals in 2 s)`);
  // The paused row holds still too.
  assert.equal(await numberOf(slotCell(page, 'alpha.test', 'requests')), alphaAtPause);

  await page.getByRole('button', { name: 'Resume slot alpha.test' }).click();
  await waitFor(() => stack.arrivals('alpha.test').length >= alphaAtPause + 5, 'alpha.test to receive requests again', 10_000, () => stack.arrivals('alpha.test').length);
  await waitFor(async () => (await slotRow(page, 'alpha.test').getAttribute('data-state')) !== 'paused', 'alpha.test to leave the paused state', 5000);
  await waitFor(async () => (await numberOf(slotCell(page, 'alpha.test', 'requests'))) > alphaAtPause, 'alpha.test\'s row to count again', 5000);

  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await page.getByTestId('confirm-stop').getByRole('button', { name: /^Stop/ }).click(); // Stop asks first
  await waitForText(page.getByTestId('crawl-status'), 'stopped', 15_000);
  await waitFor(async () => page.getByRole('button', { name: 'Pause slot beta.test' }).isDisabled(), 'slot actions to be disabled once the crawl ended', 5000);
  assertNoPageErrors(p);
});

test('a waiting slot\'s next start counts down in its row while the host sends nothing new for it', async (t) => {
  const stack = await startStack(t, { hosts: { 'slow.test': { address: '127.0.30.14', pages: 20, latency_ms: 5 } } }, [
    { name: 'e2e countdown', settings: { DOWNLOAD_DELAY: 4, RANDOMIZE_DOWNLOAD_DELAY: false, AUTOTHROTTLE_ENABLED: false, ROBOTSTXT_OBEY: false } },
  ]);
  const sent: { at: number; requests: number; row: string }[] = [];
  const off = stack.core.subscribe((event, payload) => {
    if (event !== 'slots.update') return;
    for (const r of (payload as AppEvents['slots.update']).rows) {
      if (r[0] === 'slow.test') sent.push({ at: Date.now(), requests: r[SLOT_COLUMNS.indexOf('requests')] as number, row: JSON.stringify(r) });
    }
  });
  t.defer(off);
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await waitFor(async () => (await slotRow(page, 'slow.test').getAttribute('data-state')) === 'waiting' &&
    (await numberOf(slotCell(page, 'slow.test', 'requests'))) === 1, 'slow.test to wait after its first request', 10_000);
  const seconds = async (): Promise<number> => {
    const text = await textOf(slotCell(page, 'slow.test', 'next'));
    const m = /^(\d+(?:\.\d+)?) (s|ms)$/.exec(text ?? '');
    assert.ok(m, `the next start reads as a countdown, not ${JSON.stringify(text)}`);
    return m[2] === 's' ? Number(m[1]) : Number(m[1]) / 1000;
  };
  const first = await seconds();
  const t0 = Date.now();
  assert.ok(first > 2 && first <= 4, `about 4 s to wait after the first request, not ${first} s`);
  await sleep(1500);
  const second = await seconds();
  const waited = (Date.now() - t0) / 1000;
  assert.equal(await numberOf(slotCell(page, 'slow.test', 'requests')), 1, 'no second request yet');
  // Counted down by the time that passed (0.1 s steps, a tick of slack either side).
  assert.ok(Math.abs(first - second - waited) <= 0.25, `counted down ${first} → ${second} s in ${waited} s`);
  // The host never re-sent the waiting row unchanged: the countdown is the page's own. (A row that
  // still changed, e.g. the response's figures landing a tick after its state on a loaded machine,
  // may come late; a copy of the one before it may not.)
  const resent = sent.filter((x, i) => x.requests === 1 && x.at >= t0 && i > 0 && sent[i - 1]!.row === x.row);
  assert.deepEqual(resent, [], `the host re-sent the unchanged row ${resent.length} times while it waited`);
  assert.ok(sent.filter((x) => x.requests === 1 && x.at >= t0).length <= 1, 'at most one late change of the waiting row');
  await waitFor(async () => (await numberOf(slotCell(page, 'slow.test', 'requests'))) === 2, 'the second request when the countdown ends', 5000);
  assertNoPageErrors(p);
});

await runTests('slot-control.e2e.ts');
