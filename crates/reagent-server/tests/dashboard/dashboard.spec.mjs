// The dashboard in Debian's headless Chromium, driven by playwright-core. Run by
// crates/reagent-server/tests/dashboard.rs, which starts the server and a scripted model and
// passes them in the environment. Exits non-zero on the first failed check.
//
// The scripted model answers the first run with: a read of notes.txt (with thinking), a
// command that needs approval, an empty reply (a nudge), the answer; then the follow-up (a reply
// cut off, asked again by the truncation guardrail); then a reply to the second run that comes
// too late (it is cancelled).

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
const WORKSPACE = env('DASHBOARD_WORKSPACE');
const MODEL_URL = env('DASHBOARD_MODEL_URL');
const COMMAND = env('DASHBOARD_COMMAND');
const ANSWER = env('DASHBOARD_ANSWER');
const SHOTS = env('DASHBOARD_ARTIFACTS');
const STEP_TIMEOUT = 30_000;

const browser = await chromium.launch({
  executablePath: env('CHROMIUM'),
  // Running as root in a container: Chromium's own sandbox needs user namespaces it may not get.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  timeout: 60_000,
});
const problems = [];

/**
 * A page at `viewport`, with console errors, failed requests and page errors collected, and
 * every Content-Security-Policy violation kept in `window.cspViolations`.
 */
async function open(viewport) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
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
  return page;
}

async function shot(page, name, fullPage = true) {
  await page.screenshot({ path: path.join(SHOTS, name), fullPage });
}

/** Nothing the dashboard did was blocked by its Content-Security-Policy. */
async function noViolations(page, what) {
  assert.deepEqual(await page.evaluate(() => window.cspViolations), [], `${what}: CSP violations`);
}

/** The page fits its viewport: no sideways scrolling. */
async function fitsWidth(page, what) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth, width: window.innerWidth,
  }));
  assert.ok(scroll <= width + 1, `${what}: ${scroll}px wide in a ${width}px viewport`);
}

const status = (page) => page.locator('#run-status .badge');
const items = (page) => page.locator('.timeline .tl-item');

async function startRun(page, task, approval) {
  await page.getByRole('link', { name: 'New run' }).first().click();
  await page.getByLabel('Task').fill(task);
  await page.getByLabel('Model', { exact: true }).fill('m');
  await page.getByLabel('Workspace').fill(WORKSPACE);
  await page.getByLabel('Provider').selectOption('ollama');
  await page.getByLabel('Model server URL').fill(MODEL_URL);
  await page.getByLabel('Commands that need approval').selectOption(approval);
  await page.getByRole('button', { name: 'Start run' }).click();
  await page.waitForURL(/#\/runs\/[0-9a-f]+$/);
  return page.url().split('/').pop();
}

try {
  // --- Sign-in: a wrong token is refused at the form, the link's fragment signs in. ---
  const desk = await open({ width: 1280, height: 800 });
  const landing = await desk.goto(`${URL_BASE}/`);
  const csp = landing.headers()['content-security-policy'] || '';
  assert.match(csp, /script-src 'self'/, `the page's CSP: ${csp}`);
  assert.match(csp, /frame-ancestors 'none'/, `the page's CSP: ${csp}`);
  await desk.getByLabel('Access token').fill('not-the-token');
  await desk.getByRole('button', { name: 'Sign in' }).click();
  await desk.getByText('The server refused this token.').waitFor();
  problems.length = 0; // the refused token's 401, as it should be
  await desk.goto(`${URL_BASE}/#token=${encodeURIComponent(TOKEN)}`);
  await desk.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
  assert.ok(!desk.url().includes(TOKEN), `the token stays out of the address bar: ${desk.url()}`);
  assert.equal(await desk.evaluate(() => sessionStorage.getItem('reagent.token')), TOKEN);

  // --- The Content-Security-Policy holds: the dashboard's own scripts ran, an injected inline
  // script and inline style do not (as text a model wrote would be, were it ever put in as
  // HTML). ---
  await noViolations(desk, 'the signed-in page');
  const injected = await desk.evaluate(() => {
    const script = document.createElement('script');
    script.textContent = 'window.inlineScriptRan = true;';
    document.body.append(script);
    const box = document.createElement('div');
    box.setAttribute('style', 'width: 1234px');
    document.body.append(box);
    const width = box.getBoundingClientRect().width;
    box.remove();
    script.remove();
    return { ran: window.inlineScriptRan === true, width };
  });
  assert.equal(injected.ran, false, 'an inline script is blocked');
  assert.notEqual(injected.width, 1234, 'an inline style is blocked');
  await desk.waitForFunction(() => window.cspViolations.length >= 2);
  const violations = await desk.evaluate(() => window.cspViolations.splice(0));
  assert.ok(violations.some((v) => v.startsWith('script-src')), `violations: ${violations}`);
  assert.ok(violations.some((v) => v.startsWith('style-src')), `violations: ${violations}`);
  // Their console reports, as they should be.
  for (let i = problems.length - 1; i >= 0; i -= 1) {
    if (/Content Security Policy/.test(problems[i])) problems.splice(i, 1);
  }

  // --- Keyboard: from the top, Tab reaches the skip link, focus is visible, and the skip
  // link moves focus to the content (the page's first control is next). ---
  await desk.reload();
  await desk.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
  await desk.keyboard.press('Tab');
  const focused = await desk.evaluate(() => ({
    text: document.activeElement.textContent,
    outline: getComputedStyle(document.activeElement).outlineStyle,
  }));
  assert.equal(focused.text, 'Skip to content');
  assert.notEqual(focused.outline, 'none', 'a focused control shows an outline');
  await desk.keyboard.press('Enter');
  await desk.keyboard.press('Tab');
  assert.equal(await desk.evaluate(() => document.activeElement.textContent), 'New run');
  assert.ok(desk.url().endsWith('#/'), `the skip link keeps the route: ${desk.url()}`);

  // --- A run started from the form; its timeline grows while it runs. ---
  const first = await startRun(desk, 'Read notes.txt and run the check', 'ask');
  await desk.locator('.kind-run_started').waitFor();
  await desk.locator('.kind-model_call').first().waitFor();
  const early = await items(desk).count();
  assert.equal(await status(desk).getAttribute('data-outcome'), 'running');
  assert.ok(await desk.getByRole('button', { name: 'Cancel run' }).isVisible(), 'a running run can be cancelled');
  const approval = desk.locator('.tl-item.kind-approval');
  await approval.waitFor();
  const later = await items(desk).count();
  assert.ok(later > early, `the timeline grew live: ${early} then ${later} items`);
  assert.equal(await status(desk).getAttribute('data-outcome'), 'running', 'still running while it waits');
  assert.equal((await approval.locator('pre.command').textContent()).trim(), COMMAND);
  // Step 1 so far: the model call with its numbers, the thinking folded and dimmed, the long
  // read result folded.
  const call1 = desk.locator('#step-1 .kind-model_call');
  const call1Text = await call1.textContent();
  for (const fact of ['latency', 'tokens in', '120', 'tokens out', '18', 'parse layer']) {
    assert.ok(call1Text.includes(fact), `model call shows ${fact}: ${call1Text}`);
  }
  const thinking = desk.locator('#step-1 details.thinking');
  assert.equal(await thinking.getAttribute('open'), null, 'thinking is folded');
  const opacity = await thinking.evaluate((el) => Number(getComputedStyle(el).opacity));
  assert.ok(opacity < 1, `thinking is dimmed (opacity ${opacity})`);
  const read = desk.locator('#step-1 .kind-tool_call');
  assert.ok((await read.locator('.tool-status').textContent()).includes('ok'), 'the read succeeded');
  const folded = read.locator('.result details.fold');
  assert.equal(await folded.getAttribute('open'), null, 'the long result is folded');
  await folded.locator('summary').click();
  assert.ok((await folded.locator('pre').textContent()).includes('note 40'), 'unfolded, the whole result shows');
  await shot(desk, 'run-live.png');

  // --- Meanwhile, in another tab, the run list shows the run running and the approval. ---
  const list = await open({ width: 1280, height: 800 });
  await list.goto(`${URL_BASE}/#token=${encodeURIComponent(TOKEN)}`);
  await list.locator(`tr[data-run="${first}"][data-outcome="running"]`).waitFor();
  const card = list.locator('.approval-card');
  await card.waitFor();
  assert.equal((await card.locator('pre.command').textContent()).trim(), COMMAND);
  await shot(list, 'runs-waiting.png');

  // --- The approval, answered from the keyboard: the notice at the top leads to it. ---
  await desk.getByRole('button', { name: 'Go to the approval' }).focus();
  await desk.keyboard.press('Enter');
  const target = await desk.evaluate(() => ({
    text: document.activeElement.textContent,
    approval: document.activeElement.closest('.kind-approval')?.dataset.approval,
  }));
  assert.equal(target.text, 'Allow');
  assert.ok(target.approval, 'focus is on the approval’s Allow button');
  await desk.keyboard.press('Enter');
  await desk.locator('.kind-approval[data-decided="allowed"]').waitFor();
  // The answer streams into the page piece by piece, then the reply takes its place.
  await desk.waitForFunction((answer) => {
    const text = document.querySelector('.kind-streaming pre.text')?.textContent || '';
    return text.length > 0 && text.length < answer.length;
  }, ANSWER);
  const partial = await desk.locator('.kind-streaming pre.text').textContent();
  assert.ok(ANSWER.startsWith(partial), `the streamed text is the answer's start: ${partial}`);
  await shot(desk, 'run-streaming.png');
  await desk.locator('#run-status .badge[data-outcome="completed"]').waitFor();
  assert.equal(await desk.locator('.kind-streaming').count(), 0, 'the streamed text gave way to the reply');
  assert.ok(await desk.locator('#step-2 .kind-tool_call .result').isVisible(), 'the command ran after the answer');
  assert.equal(await desk.getByRole('button', { name: 'Go to the approval' }).count(), 0, 'nothing waits any more');
  // The other tab's list catches up by itself.
  await list.locator(`tr[data-run="${first}"][data-outcome="completed"]`).waitFor();
  assert.equal(await list.locator('.approval-card').count(), 0, 'the answered approval left the list');
  await noViolations(list, 'the run list');
  await list.close();
  const nudge = desk.locator('.kind-nudge.alert');
  await nudge.waitFor();
  assert.ok((await nudge.textContent()).includes('empty reply'), 'the nudge is highlighted');
  const finished = await desk.locator('.kind-run_finished').textContent();
  assert.ok(finished.includes('The notes are read and the check printed dashboard-approved.'), finished);
  assert.equal(await desk.getByRole('button', { name: 'Cancel run' }).isVisible(), false, 'a finished run has no cancel');
  // Charts: one bar group per model call, in both charts, with the numbers in a table.
  const calls = await desk.locator('#step-1 .kind-model_call, #step-2 .kind-model_call, #step-3 .kind-model_call, #step-4 .kind-model_call').count();
  assert.equal(calls, 4);
  const bars = await desk.locator('svg.chart').evaluateAll((svgs) => svgs.map((s) => s.querySelectorAll('g.bar').length));
  assert.deepEqual(bars, [4, 4], 'tokens and latency per step');
  assert.match(await desk.locator('svg.chart').first().getAttribute('aria-label'), /4 model calls, 1,010 in and 66 out/);
  const totals = await desk.locator('.totals').textContent();
  assert.ok(totals.includes('1,010') && totals.includes('66'), `totals: ${totals}`);
  await fitsWidth(desk, 'run page at 1280×800');
  await shot(desk, 'run-finished.png');

  // --- A follow-up continues the session as a new run. ---
  await desk.getByLabel('Message').fill('Anything else?');
  await desk.getByRole('button', { name: 'Send follow-up' }).click();
  await desk.waitForURL((url) => !url.href.endsWith(first));
  await desk.locator('#run-status .badge[data-outcome="completed"]').waitFor();
  assert.ok((await desk.locator('.kind-run_finished').textContent()).includes('Follow-up answered'));
  const followTotals = await desk.locator('.totals').textContent();
  assert.ok(followTotals.includes('760') && !followTotals.includes('1,140'), `the run's own totals: ${followTotals}`);
  const guardrail = desk.locator('.kind-guardrail.alert');
  assert.ok((await guardrail.textContent()).includes('truncation'), 'the guardrail is highlighted');
  await shot(desk, 'run-follow-up.png');

  // --- A second run, cancelled while it waits for the model. ---
  await startRun(desk, 'A run to cancel', 'deny');
  await desk.locator('.kind-model_call .pending').waitFor();
  await desk.getByRole('button', { name: 'Cancel run' }).click();
  await desk.locator('#run-status .badge[data-outcome="cancelled"]').waitFor();
  await desk.locator('.kind-run_finished').waitFor();

  // --- The run list: live statuses, newest first. ---
  await desk.getByRole('link', { name: 'Runs', exact: true }).click();
  await desk.locator('table.runs tbody tr[data-run]').nth(2).waitFor();
  const listed = await desk.locator('table.runs tbody tr[data-run]').evaluateAll((rows) => rows.map((r) => r.dataset.outcome));
  assert.deepEqual(listed, ['cancelled', 'completed', 'completed']);
  await fitsWidth(desk, 'run list at 1280×800');
  await shot(desk, 'runs-desktop.png');

  // --- A phone: the same run page and list fit 390 px. ---
  const phone = await open({ width: 390, height: 844 });
  await phone.goto(`${URL_BASE}/#token=${encodeURIComponent(TOKEN)}`);
  await phone.locator('table.runs tbody tr[data-run]').first().waitFor();
  assert.equal(await phone.locator('table.runs thead').isVisible(), false, 'runs become cards on a phone');
  await fitsWidth(phone, 'run list at 390×844');
  await shot(phone, 'runs-phone.png');
  await phone.goto(`${URL_BASE}/#/runs/${first}`);
  await phone.locator('#run-status .badge[data-outcome="completed"]').waitFor();
  await phone.locator('svg.chart').first().waitFor();
  await fitsWidth(phone, 'run page at 390×844');
  await shot(phone, 'run-phone.png');
  await shot(phone, 'run-phone-screen.png', false);

  await noViolations(desk, 'the desktop pages');
  await noViolations(phone, 'the phone pages');
  assert.deepEqual(problems, [], 'no console or page errors');
  console.log(`dashboard: all checks passed; screenshots in ${SHOTS}`);
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
