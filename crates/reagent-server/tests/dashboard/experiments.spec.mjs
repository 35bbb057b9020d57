// The Experiments view in Debian's headless Chromium, driven by playwright-core. Run by
// crates/reagent-server/tests/dashboard.rs (`experiments_are_followed_and_answered_in_headless_chromium`),
// which starts the server and a scripted model that runs three cycles slowly enough to watch:
// a memory write, then a message to the operator, then a last reflection. Exits non-zero on the
// first failed check.

import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run through cargo test -p reagent-server --test dashboard)`);
  return value;
};
const URL_BASE = env('DASHBOARD_URL');
const TOKEN = env('DASHBOARD_TOKEN');
const CONFIG = env('EXPERIMENT_CONFIG');
const QUESTION = env('EXPERIMENT_QUESTION');
const REPLY = env('EXPERIMENT_REPLY');
const SHOTS = env('DASHBOARD_ARTIFACTS');
const STEP_TIMEOUT = 30_000;

const browser = await chromium.launch({
  executablePath: env('CHROMIUM'),
  // Running as root in a container: Chromium's own sandbox needs user namespaces it may not get.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  timeout: 60_000,
});
const problems = [];

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
  context.setDefaultTimeout(STEP_TIMEOUT);
  await context.addInitScript(() => {
    window.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.cspViolations.push(`${e.effectiveDirective} blocked ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));

  // --- Start an experiment from the Experiments view. ---
  await page.goto(`${URL_BASE}/#token=${encodeURIComponent(TOKEN)}`);
  await page.getByRole('link', { name: 'Experiments' }).click();
  await page.locator('#experiments tbody').waitFor();
  await page.getByLabel('Config').fill(CONFIG);
  await page.getByRole('button', { name: 'Start experiment' }).click();
  await page.waitForURL(/#\/experiments\/dash-ui$/);

  // --- Cycles appear live, one by one. ---
  const cycle = (n) => page.locator(`#cycles li[data-cycle="${n}"]`);
  await cycle(1).waitFor();
  assert.equal(await cycle(3).count(), 0, 'cycle 3 has not begun when cycle 1 shows');
  await page.locator('#experiment-status .badge[data-outcome="running"]').waitFor();
  await cycle(1).locator('.tool', { hasText: 'write' }).waitFor();
  await cycle(1).locator('.reflection pre').waitFor();
  assert.match(await cycle(1).locator('.reflection pre').innerText(), /Cycle one/);
  await page.screenshot({ path: path.join(SHOTS, 'experiment-live.png'), fullPage: true });

  // --- The agent's message to the operator, answered from the page. ---
  const message = page.locator('#operator form[data-message]');
  await message.waitFor();
  assert.match(await message.locator('pre').innerText(), new RegExp(QUESTION));
  await page.screenshot({ path: path.join(SHOTS, 'experiment-operator.png'), fullPage: true });
  await message.getByLabel('Your reply').fill(REPLY);
  await message.getByRole('button', { name: 'Reply' }).click();
  await page.locator('#operator').waitFor({ state: 'hidden' });
  // The reply is the tool's result in cycle 2.
  await cycle(2).locator('.tool', { hasText: REPLY }).waitFor();

  // --- The end: three cycles, the memory. ---
  await page.locator('#experiment-status .badge[data-outcome="completed"]').waitFor();
  assert.equal(await page.locator('#cycles li[data-cycle]').count(), 3);
  assert.match(await cycle(3).locator('.reflection pre').innerText(), /Cycle three/);
  await page.locator('#memory td', { hasText: 'plan' }).waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'experiment-done.png'), fullPage: true });

  // Each cycle is a session: its run page shows the operator's reply as the tool's result.
  await cycle(2).locator('a.session-link').click();
  await page.locator('#run-status .badge[data-outcome="completed"]').waitFor();
  await page.getByText(REPLY).first().waitFor();
  await page.goBack();
  await page.locator('#experiment-status .badge[data-outcome="completed"]').waitFor();

  await page.getByRole('link', { name: 'Experiments' }).first().click();
  await page.locator('#experiments tr[data-experiment="dash-ui"][data-status="completed"]').waitFor();
  await page.screenshot({ path: path.join(SHOTS, 'experiments-list.png'), fullPage: true });

  assert.deepEqual(await page.evaluate(() => window.cspViolations), [], 'CSP violations');
  assert.deepEqual(problems, [], 'no console or page errors');
  console.log(`experiments: all checks passed; screenshots in ${SHOTS}`);
} catch (err) {
  console.error(err);
  if (problems.length) console.error(`also seen in the browser:\n${problems.join('\n')}`);
  const pages = browser.contexts().flatMap((context) => context.pages());
  for (const [i, page] of pages.entries()) {
    await page.screenshot({ path: path.join(SHOTS, `failure-${i + 1}.png`), fullPage: true }).catch(() => {});
  }
  process.exitCode = 1;
} finally {
  await browser.close();
}
