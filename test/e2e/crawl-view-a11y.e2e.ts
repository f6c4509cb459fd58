// Accessibility of the crawl views (issue 16): messages and errors are announced from a live region
// that is there before they come; the arrow keys, Home and End move between the crawl's tabs (one Tab
// stop for the list); a control's accessible name says what its visible label says (the Warnings
// counter, the JSON settings box, the form's text boxes).

import { strict as assert } from 'node:assert';
import { assertNoPageErrors, openPage, runTests, startStack, test, waitFor, waitForText } from './harness';

const HOSTS = { 'fast.a11y.test': { address: '127.0.95.71', pages: 5, latency_ms: 2 } };

test('a11y: a live region announces a refused command; arrow keys move between tabs; names match labels', async (t) => {
  const stack = await startStack(t, { hosts: HOSTS }, [
    { name: 'a11y broken plug-in', settings: { THROTTLING_MANAGER: 'broken-manager.mjs' } },
  ], { plugins: { 'broken-manager.mjs': "throw new Error('this plug-in is broken');\n" } });
  const p = await openPage(t, stack.server.url);
  const { page } = p;
  await waitForText(page.getByTestId('crawl-status'), 'created');

  // The live region is in the page before anything is wrong; the refusal is written into that same element.
  const region = page.locator('[role="alert"][aria-live="assertive"]').first();
  await region.waitFor({ state: 'attached' });
  const handle = await region.elementHandle();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await page.getByTestId('message-line').waitFor({ timeout: 10_000 });
  assert.match((await handle!.textContent()) ?? '', /Starting “a11y broken plug-in” failed:/, 'the message is written into the region that was there');
  assert.equal(await handle!.getAttribute('aria-atomic'), 'true');

  // The tabs: one Tab stop; arrows, Home and End move the selection and the focus.
  const tabs = page.getByRole('tablist', { name: 'Crawl views' });
  const names = await tabs.getByRole('tab').allTextContents();
  assert.equal(await tabs.locator('[role="tab"][tabindex="0"]').count(), 1, 'one tab in the Tab order');
  await tabs.getByRole('tab', { name: 'Slots' }).focus();
  await page.keyboard.press('ArrowRight');
  const selected = async () => tabs.locator('[role="tab"][aria-selected="true"]').textContent();
  const focused = async () => page.evaluate('document.activeElement?.textContent ?? null');
  await waitFor(async () => (await selected()) === names[1] && (await focused()) === names[1], `ArrowRight to ${names[1]}`);
  await page.keyboard.press('End');
  await waitFor(async () => (await selected()) === names[names.length - 1], 'End to the last tab');
  await page.keyboard.press('ArrowRight');
  await waitFor(async () => (await selected()) === names[0], 'past the last tab, back to the first');
  await page.keyboard.press('ArrowLeft');
  await waitFor(async () => (await selected()) === names[names.length - 1], 'ArrowLeft from the first to the last');
  await page.keyboard.press('Home');
  await waitFor(async () => (await selected()) === names[0] && (await focused()) === names[0], 'Home to the first tab');
  assert.equal(await page.getByRole('tabpanel').getAttribute('aria-labelledby'), 'tab-slots');

  // Names say what the labels say: the Warnings counter, and the New crawl form's boxes.
  await page.getByRole('button', { name: '0 warnings: show them', exact: true }).waitFor();
  await page.getByRole('button', { name: 'New crawl' }).click();
  const form = page.getByTestId('new-crawl-form');
  await form.getByRole('textbox', { name: 'Advanced settings as JSON (applied last, over every field above)', exact: true }).waitFor();
  await form.getByRole('textbox', { name: 'Resolve (optional JSON: host → IP address)', exact: true }).waitFor();
  await form.getByRole('textbox', { name: 'Only URLs matching', exact: true }).waitFor();
  await form.getByRole('textbox', { name: 'Seeds, one URL a line', exact: true }).waitFor();
  // Every box of the form whose label wraps it is named by that label's text, nothing else.
  const mismatched = await form.locator('label.field').evaluateAll((labels) => (labels as unknown as {
    querySelector(s: string): { getAttribute(n: string): string | null } | null; textContent: string | null;
  }[]).map((l) => ({ control: l.querySelector('input, textarea, select'), text: (l.textContent ?? '').replace(/\s+/g, ' ').trim() }))
    .filter((x) => x.control !== null && x.control.getAttribute('aria-label') !== null && !x.text.toLowerCase().includes((x.control.getAttribute('aria-label') ?? '').toLowerCase()))
    .map((x) => `${x.control!.getAttribute('aria-label')} ≠ ${x.text}`));
  assert.deepEqual(mismatched, [], 'an aria-label never says other than the visible label');
  assertNoPageErrors(p);
});

await runTests('crawl-view-a11y.e2e.ts');
