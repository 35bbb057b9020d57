// The reagent dashboard: sign-in, the run list with live status and pending approvals, the
// form that starts a run, and a run's page (run.js). Routes live in the URL fragment:
// `#/` (runs), `#/new`, `#/runs/ID`, `#/experiments`, `#/experiments/ID` (experiments.js). The token arrives as `#token=...` or through the form.

import { call, token, setToken, clearToken, adoptTokenFromFragment, ApiError } from './api.js';
import { h, fill, num, when, badge, shortId, toast, every } from './dom.js';
import { runPage } from './run.js';
import { experimentsPage, experimentPage } from './experiments.js';

const main = document.getElementById('main');
const FORM_KEY = 'reagent.form';

/** The page being shown: a function that stops its timers and streams. */
let leavePage = () => {};
/** Whether a page was shown before (focus moves to a new page, not to the first one). */
let navigated = false;

function show(title, ...children) {
  document.title = `${title} · reagent`;
  fill(main, ...children);
  if (navigated) main.focus({ preventScroll: true });
  navigated = true;
}

/** An API error that means the token is missing or wrong sends the user to the sign-in form. */
function handleError(err, where) {
  if (err instanceof ApiError && err.status === 401) {
    clearToken();
    route();
    return;
  }
  if (where) fill(where, h('p', { class: 'error', role: 'alert' }, err.message));
  else toast(err.message, 'error');
}

function loginPage(message) {
  const input = h('input', { id: 'token-input', name: 'token', type: 'password', autocomplete: 'current-password', required: true });
  const error = h('div', { class: 'form-error', 'aria-live': 'assertive' }, message ? h('p', { class: 'error' }, message) : null);
  const form = h('form', { class: 'card narrow', 'aria-labelledby': 'login-title' },
    h('h1', { id: 'login-title' }, 'Sign in'),
    h('p', { class: 'muted' }, 'reagent serve prints a link that signs you in, and the path of its token file.'),
    h('label', { for: 'token-input' }, 'Access token'), input,
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    try {
      await call('GET', '/v1/runs?limit=1');
      location.hash = '#/';
      route();
    } catch (err) {
      clearToken();
      fill(error, h('p', { class: 'error', role: 'alert' },
        err.status === 401 ? 'The server refused this token.' : err.message));
    }
  });
  show('Sign in', form);
  input.focus();
  return () => {};
}

async function decide(id, decision) {
  await call('POST', `/v1/approvals/${encodeURIComponent(id)}`, { decision });
  toast(decision === 'allow' ? 'Allowed.' : 'Denied.');
}

function approvalCard(a, after) {
  const buttons = [['allow', 'Allow', 'primary'], ['deny', 'Deny', 'danger']].map(([decision, label, cls]) =>
    h('button', { type: 'button', class: cls, onclick: async (ev) => {
      ev.currentTarget.disabled = true;
      try {
        await decide(a.id, decision);
        after();
      } catch (err) {
        handleError(err);
      }
    } }, label));
  return h('li', { class: 'card alert ask approval-card', dataset: { approval: a.id } },
    h('p', {}, h('strong', {}, a.tool), ' in run ', h('a', { href: `#/runs/${a.run_id}` }, shortId(a.run_id)), ' asks to run:'),
    h('pre', { class: 'text command' }, a.summary),
    h('div', { class: 'actions' }, buttons));
}

function runsPage() {
  const approvals = h('section', { 'aria-labelledby': 'approvals-title', hidden: true },
    h('h2', { id: 'approvals-title' }, 'Waiting for your answer'), h('ul', { class: 'plain' }));
  const outcome = h('select', { id: 'filter-outcome' },
    ['', 'running', 'completed', 'cancelled', 'interrupted', 'max_iterations', 'budget_exhausted',
      'guardrail_stop', 'provider_error', 'no_progress', 'verified', 'partial_pass',
      'verification_failed', 'unchecked', 'copied_error'].map((o) => h('option', { value: o }, o ? o.replace(/_/g, ' ') : 'all')));
  const body = h('tbody');
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  const table = h('table', { class: 'runs' },
    h('caption', { class: 'sr-only' }, 'Runs, newest first'),
    h('thead', {}, h('tr', {}, ['Status', 'Task', 'Model', 'Started', 'Steps', 'Tokens', 'Tool calls']
      .map((t) => h('th', { scope: 'col' }, t)))),
    body);
  let limit = 50;
  const more = h('button', { type: 'button', hidden: true, onclick: () => { limit += 50; refresh(); } }, 'Show older runs');
  async function refresh() {
    try {
      const filter = outcome.value ? `&outcome=${encodeURIComponent(outcome.value)}` : '';
      const [list, pending] = await Promise.all([
        call('GET', `/v1/runs?limit=${limit}${filter}`),
        call('GET', '/v1/approvals'),
      ]);
      fill(body, list.runs.map(runRow));
      if (!list.runs.length) fill(body, h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No runs yet. Start one with “New run”.')));
      more.hidden = list.next_offset === null || list.next_offset === undefined;
      const live = list.runs.filter((r) => r.outcome === 'running').length;
      const total = list.total ?? list.runs.length;
      status.textContent = `${total} run${total === 1 ? '' : 's'}, ${live} running.`;
      approvals.hidden = pending.approvals.length === 0;
      fill(approvals.querySelector('ul'), pending.approvals.map((a) => approvalCard(a, refresh)));
    } catch (err) {
      handleError(err, status);
    }
  }
  outcome.addEventListener('change', refresh);
  show('Runs',
    h('div', { class: 'page-head' }, h('h1', {}, 'Runs'), h('a', { class: 'button primary', href: '#/new' }, 'New run')),
    approvals,
    h('div', { class: 'filters' }, h('label', { for: 'filter-outcome' }, 'Outcome'), outcome, status),
    h('div', { class: 'table-wrap' }, table),
    more);
  return every(refresh);
}

function runRow(r) {
  return h('tr', { dataset: { run: r.id, outcome: r.outcome } },
    h('td', { 'data-label': 'Status' }, badge(r.outcome)),
    h('td', { 'data-label': 'Task', class: 'task-cell' }, h('a', { href: `#/runs/${r.id}` }, r.task || shortId(r.id))),
    h('td', { 'data-label': 'Model' }, r.model),
    h('td', { 'data-label': 'Started' }, when(r.started_at)),
    h('td', { 'data-label': 'Steps', class: 'n' }, num(r.iterations)),
    h('td', { 'data-label': 'Tokens', class: 'n' }, num(r.tokens)),
    h('td', { 'data-label': 'Tool calls', class: 'n' }, num(r.tool_calls)));
}

function field(id, label, input, hint) {
  input.id = id;
  input.name = id;
  const hintId = hint ? `${id}-hint` : null;
  if (hintId) input.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field' }, h('label', { for: id }, label), input,
    hint ? h('small', { id: hintId, class: 'muted' }, hint) : null);
}

function choice(options) {
  return h('select', {}, options.map(([value, text]) => h('option', { value }, text)));
}

function newRunPage() {
  const saved = JSON.parse(localStorage.getItem(FORM_KEY) || '{}');
  const inputs = {
    task: h('textarea', { rows: 4, required: true }),
    model: h('input', { type: 'text', required: true, autocomplete: 'off', value: saved.model || '' }),
    workspace: h('input', { type: 'text', required: true, autocomplete: 'off', value: saved.workspace || '' }),
    provider: choice([['', 'server default'], ['ollama', 'ollama'], ['openai', 'openai'], ['anthropic', 'anthropic'], ['gemini', 'gemini']]),
    base_url: h('input', { type: 'url', autocomplete: 'off', value: saved.base_url || '' }),
    tool_mode: choice([['', 'auto'], ['native', 'native'], ['constrained', 'constrained'], ['prompt', 'prompt']]),
    approval: choice([['ask', 'ask me'], ['allow', 'allow'], ['deny', 'deny']]),
    max_iterations: h('input', { type: 'number', min: 1, inputmode: 'numeric' }),
    max_tokens: h('input', { type: 'number', min: 1, inputmode: 'numeric' }),
    max_time_secs: h('input', { type: 'number', min: 1, step: 'any', inputmode: 'decimal' }),
    max_tool_calls: h('input', { type: 'number', min: 1, inputmode: 'numeric' }),
  };
  inputs.provider.value = saved.provider || '';
  inputs.tool_mode.value = saved.tool_mode || '';
  const error = h('div', { class: 'form-error', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Start run');
  const form = h('form', { class: 'card', id: 'new-run', 'aria-labelledby': 'new-title' },
    h('h1', { id: 'new-title' }, 'New run'),
    field('task', 'Task', inputs.task),
    h('div', { class: 'grid' },
      field('model', 'Model', inputs.model, 'as the model server names it, e.g. qwen3:8b'),
      field('workspace', 'Workspace', inputs.workspace, 'a directory under one of the server’s workspace roots'),
      field('provider', 'Provider', inputs.provider),
      field('base_url', 'Model server URL', inputs.base_url, 'empty: the server’s default'),
      field('tool_mode', 'Tool mode', inputs.tool_mode),
      field('approval', 'Commands that need approval', inputs.approval)),
    h('fieldset', {}, h('legend', {}, 'Limits (optional)'),
      h('div', { class: 'grid' },
        field('max_iterations', 'Steps', inputs.max_iterations),
        field('max_tokens', 'Tokens', inputs.max_tokens),
        field('max_time_secs', 'Seconds', inputs.max_time_secs),
        field('max_tool_calls', 'Tool calls', inputs.max_tool_calls))),
    error,
    h('div', { class: 'actions' }, submit, h('a', { href: '#/', class: 'button' }, 'Cancel')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const value = (k) => inputs[k].value.trim();
    const number = (k) => (value(k) === '' ? undefined : Number(value(k)));
    const body = { task: value('task'), model: value('model'), workspace: value('workspace'), approval: value('approval') };
    for (const k of ['provider', 'base_url', 'tool_mode']) if (value(k)) body[k] = value(k);
    if (number('max_iterations') !== undefined) body.max_iterations = number('max_iterations');
    const budgets = {};
    for (const k of ['max_tokens', 'max_time_secs', 'max_tool_calls']) if (number(k) !== undefined) budgets[k] = number(k);
    if (Object.keys(budgets).length) body.budgets = budgets;
    localStorage.setItem(FORM_KEY, JSON.stringify({
      model: body.model, workspace: body.workspace, base_url: value('base_url'), provider: value('provider'), tool_mode: value('tool_mode'),
    }));
    submit.disabled = true;
    try {
      const created = await call('POST', '/v1/runs', body);
      location.hash = `#/runs/${created.id}`;
    } catch (err) {
      submit.disabled = false;
      handleError(err, error);
    }
  });
  show('New run', form);
  inputs.task.focus();
  return () => {};
}

function notFound() {
  show('Not found', h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/' }, 'Back to the runs')));
  return () => {};
}

/** Show the page the fragment names. */
function route() {
  leavePage();
  adoptTokenFromFragment();
  const signedIn = Boolean(token());
  document.getElementById('logout').hidden = !signedIn;
  for (const link of document.querySelectorAll('nav a')) {
    link.toggleAttribute('aria-current', link.getAttribute('href') === (location.hash || '#/'));
  }
  if (!signedIn) {
    leavePage = loginPage();
    return;
  }
  const path = (location.hash || '#/').slice(1);
  const run = /^\/runs\/([A-Za-z0-9_-]+)$/.exec(path);
  const experiment = /^\/experiments\/([A-Za-z0-9_.:%-]+)$/.exec(path);
  if (path === '/' || path === '') leavePage = runsPage();
  else if (path === '/new') leavePage = newRunPage();
  else if (run) leavePage = runPage(main, run[1], { show, handleError, decide });
  else if (path === '/experiments') leavePage = experimentsPage({ show, handleError });
  else if (experiment) leavePage = experimentPage(decodeURIComponent(experiment[1]), { show, handleError });
  else leavePage = notFound();
}

document.getElementById('logout').addEventListener('click', () => {
  clearToken();
  location.hash = '#/';
  route();
});
// The fragment holds the route, so the skip link moves focus itself.
document.querySelector('.skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', route);
route();
