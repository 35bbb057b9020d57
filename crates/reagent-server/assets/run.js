// A run's page: its header (status, model, totals), cancel, the charts, the live timeline and,
// once it has finished, a follow-up message. Events are read from the SSE stream and put in
// the page in batches, one per 100 ms window, so a fast run does not redraw per event.

import { call, followEvents } from './api.js';
import { h, fill, num, ms, when, badge, shortId, toast } from './dom.js';
import { renderCharts } from './charts.js';
import { Timeline } from './timeline.js';

/** Events arriving within this window go into the page together. */
const BATCH_MS = 100;
/** Wait before following again after the stream broke off. */
const RECONNECT_MS = 1000;

const sleep = (t, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, t);
  signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

/**
 * Show run `id` in `main`; `show`, `handleError` and `decide` come from the app. Returns the
 * function that leaves the page (stops the stream and timers).
 */
export function runPage(main, id, { show, handleError, decide }) {
  const abort = new AbortController();
  const status = h('span', { id: 'run-status', 'aria-live': 'polite' }, badge('running'));
  const heading = h('h1', { id: 'run-title', class: 'task-title' }, `Run ${shortId(id)}`);
  const meta = h('dl', { class: 'facts meta' });
  const totals = h('dl', { class: 'facts totals', 'aria-label': 'Totals so far' });
  const cancel = h('button', { type: 'button', class: 'danger', id: 'cancel-run', hidden: true }, 'Cancel run');
  const actions = h('div', { class: 'actions' }, cancel);
  const connection = h('p', { class: 'muted connection', 'aria-live': 'polite' });
  const waiting = h('div', { class: 'card alert ask waiting', hidden: true, role: 'status' });
  const charts = h('section', { class: 'card', 'aria-labelledby': 'charts-title' });
  const followUp = h('section', { class: 'card', hidden: true, 'aria-labelledby': 'follow-title' });
  const timelineBox = h('section', { class: 'card', 'aria-labelledby': 'timeline-title' });
  const timeline = new Timeline(h('div'), {
    onDecide: async (approvalId, decision) => {
      try {
        await decide(approvalId, decision);
      } catch (err) {
        handleError(err);
        throw err;
      }
    },
  });
  fill(timelineBox, h('h2', { id: 'timeline-title' }, 'Timeline'), timeline.root);
  show(`Run ${shortId(id)}`,
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, '← Runs')),
    h('div', { class: 'page-head' }, heading, status),
    meta, actions, waiting, totals, connection, charts, followUp, timelineBox);

  let outcome = null;
  let drawnCalls = -1;
  const setOutcome = (value) => {
    if (value === outcome) return;
    outcome = value;
    fill(status, badge(value));
    cancel.hidden = value !== 'running';
    followUp.hidden = value === 'running';
  };

  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    cancel.textContent = 'Cancelling…';
    try {
      await call('POST', `/v1/runs/${encodeURIComponent(id)}/cancel`);
      toast('Cancelling the run…');
    } catch (err) {
      cancel.disabled = false;
      cancel.textContent = 'Cancel run';
      handleError(err);
    }
  });

  const message = h('textarea', { id: 'follow-up', rows: 3, required: true });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send follow-up');
  const followError = h('div', { class: 'form-error', 'aria-live': 'assertive' });
  const followForm = h('form', {},
    h('label', { for: 'follow-up' }, 'Message'), message, followError, h('div', { class: 'actions' }, send));
  followForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    send.disabled = true;
    try {
      const created = await call('POST', `/v1/runs/${encodeURIComponent(id)}/messages`, { content: message.value.trim() });
      location.hash = `#/runs/${created.id}`;
    } catch (err) {
      send.disabled = false;
      handleError(err, followError);
    }
  });
  fill(followUp, h('h2', { id: 'follow-title' }, 'Follow-up'),
    h('p', { class: 'muted' }, 'Continue this conversation as a new run.'), followForm);

  function drawTotals() {
    const calls = timeline.calls;
    const toolCalls = timeline.list.querySelectorAll('.kind-tool_call').length;
    const f = timeline.finished;
    const tokens = timeline.tokenTotals();
    const pairs = [
      ['steps', num(f ? f.iterations : timeline.steps.size)],
      ['model calls', num(calls.length)],
      ['tokens in', num(tokens.prompt)],
      ['tokens out', num(tokens.completion)],
      ['tool calls', num(f ? f.tool_calls : toolCalls)],
      ['model time', ms(calls.reduce((a, c) => a + c.latency, 0))],
    ];
    if (f) pairs.push(['wall time', ms(f.wall_ms)]);
    fill(totals, pairs.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))));
  }

  function drawCharts(force) {
    if (!force && timeline.calls.length === drawnCalls) return;
    drawnCalls = timeline.calls.length;
    const width = charts.clientWidth - 32;
    const each = width > 720 ? Math.floor((width - 16) / 2) : width;
    fill(charts, h('h2', { id: 'charts-title' }, 'Tokens and latency per step'), renderCharts(timeline.calls, Math.max(240, each), timeline.tokenTotals()));
  }

  function drawMeta(run, started) {
    heading.textContent = (started && started.task) || run?.task || `Run ${shortId(id)}`;
    const pairs = [
      ['run', id],
      ['session', started?.session_id || run?.session_id],
      ['model', started?.model || run?.model],
      ['provider', started?.provider || run?.provider],
      ['tool mode', started?.tool_mode],
      ['started', when(run?.started_at || started?.ts)],
    ].filter(([, v]) => v);
    fill(meta, pairs.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))));
  }

  // Events wait in `queue` and go into the page once per BATCH_MS window.
  const queue = [];
  let timer = null;
  let run = null;
  function flush() {
    timer = null;
    const batch = queue.splice(0);
    if (!timeline.apply(batch)) return;
    if (batch.some((e) => e.type === 'run_started')) drawMeta(run, timeline.started);
    if (timeline.finished) setOutcome(timeline.finished.outcome);
    drawTotals();
    // The run's own totals replace the running sums once it finished.
    drawCharts(batch.some((e) => e.type === 'run_finished'));
    drawWaiting();
  }

  /** A notice at the top while a command waits for an answer, with a way to it. */
  function drawWaiting() {
    const allow = timeline.waitingApprovals();
    waiting.hidden = allow.length === 0;
    if (!allow.length) return;
    fill(waiting, h('span', {}, allow.length === 1 ? 'A command waits for your answer. ' : `${allow.length} commands wait for your answer. `),
      h('button', { type: 'button', onclick: () => { allow[0].scrollIntoView({ block: 'center' }); allow[0].focus(); } }, 'Go to the approval'));
  }
  function enqueue(event) {
    queue.push(event);
    if (timer === null) timer = setTimeout(flush, BATCH_MS);
  }

  /** The run's detail; a run created a moment ago may not be recorded yet (404 for a while). */
  async function loadDetail() {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await call('GET', `/v1/runs/${encodeURIComponent(id)}`);
      } catch (err) {
        if (err.status !== 404 || attempt >= 20 || abort.signal.aborted) throw err;
        await sleep(150, abort.signal);
      }
    }
  }

  async function follow() {
    try {
      const detail = await loadDetail();
      run = detail.run;
      drawMeta(run, null);
      setOutcome(run.outcome);
    } catch (err) {
      handleError(err, connection);
      return;
    }
    drawTotals();
    drawCharts(true);
    while (!abort.signal.aborted && !timeline.finished) {
      try {
        connection.textContent = '';
        await followEvents(id, timeline.lastSeq, enqueue, abort.signal);
        clearTimeout(timer);
        flush();
        // Closed without run_finished: a run that was interrupted (its server stopped) has
        // no more events to come.
        if (!timeline.finished && (await stillRunning()) === false) return;
      } catch (err) {
        if (abort.signal.aborted) return;
        if (err.status === 401 || err.status === 404) {
          handleError(err, connection);
          return;
        }
        connection.textContent = `Connection lost (${err.message}); reconnecting…`;
      }
      clearTimeout(timer);
      flush();
      if (!timeline.finished) await sleep(RECONNECT_MS, abort.signal);
    }
  }

  /** Whether the run is still running, per the server (undefined when it cannot say). */
  async function stillRunning() {
    try {
      run = (await call('GET', `/v1/runs/${encodeURIComponent(id)}`)).run;
      setOutcome(run.outcome);
      return run.outcome === 'running';
    } catch (_) {
      return undefined;
    }
  }

  let resizeTimer = null;
  const onResize = () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => drawCharts(true), 150);
  };
  window.addEventListener('resize', onResize);
  follow();
  return () => {
    abort.abort();
    clearTimeout(timer);
    clearTimeout(resizeTimer);
    window.removeEventListener('resize', onResize);
  };
}
