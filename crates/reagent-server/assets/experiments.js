// Experiments (`reagent cycles`): the list with a form that starts one from its config, and an
// experiment's page that follows it live cycle by cycle (its events over SSE), answers the
// agent's messages to the operator, stops or resumes it, and shows its memory at the end.
// Routes: `#/experiments`, `#/experiments/ID`.

import { call, followExperiment } from './api.js';
import { h, fill, num, ms, when, badge, folded, pretty, toast, every } from './dom.js';

const CONFIG_KEY = 'reagent.experiment-config';
const EXAMPLE = `run_id = "ember-1"
cycles = 3
history = "reflections"
[model]
provider = "ollama"
base_url = "http://127.0.0.1:11434"
name = "qwen3:8b"
options = { temperature = 0.7, seed = 1 }
[operator]
mode = "dashboard"
timeout_secs = 300
`;

/** The list of experiments and the form that starts one. */
export function experimentsPage({ show, handleError }) {
  const body = h('tbody');
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  const table = h('table', { class: 'runs', id: 'experiments' },
    h('caption', { class: 'sr-only' }, 'Experiments, newest first'),
    h('thead', {}, h('tr', {}, ['Status', 'Experiment', 'Model', 'Cycles', 'Updated']
      .map((t) => h('th', { scope: 'col' }, t)))),
    body);
  const config = h('textarea', { id: 'experiment-config', name: 'config', rows: 14, spellcheck: 'false', class: 'mono', required: true });
  config.value = localStorage.getItem(CONFIG_KEY) || EXAMPLE;
  const error = h('div', { class: 'form-error', 'aria-live': 'assertive' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Start experiment');
  const form = h('form', { class: 'card', id: 'new-experiment', 'aria-labelledby': 'new-experiment-title' },
    h('h2', { id: 'new-experiment-title' }, 'Start an experiment'),
    h('p', { class: 'muted' }, 'The config of reagent cycles run (TOML or YAML). It may name no file; the operator is you (mode dashboard) or nobody (none).'),
    h('label', { for: 'experiment-config' }, 'Config'), config,
    error,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    localStorage.setItem(CONFIG_KEY, config.value);
    submit.disabled = true;
    try {
      const started = await call('POST', '/v1/experiments', { config: config.value });
      for (const note of started.unsupported) toast(note);
      location.hash = `#/experiments/${encodeURIComponent(started.id)}`;
    } catch (err) {
      submit.disabled = false;
      handleError(err, error);
    }
  });
  async function refresh() {
    try {
      const list = await call('GET', '/v1/experiments');
      fill(body, list.experiments.map(experimentRow));
      if (!list.experiments.length) fill(body, h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No experiments yet.')));
      const live = list.experiments.filter((e) => e.status === 'running').length;
      status.textContent = `${list.experiments.length} experiment${list.experiments.length === 1 ? '' : 's'}, ${live} running.`;
    } catch (err) {
      handleError(err, status);
    }
  }
  show('Experiments',
    h('div', { class: 'page-head' }, h('h1', {}, 'Experiments')),
    status,
    h('div', { class: 'table-wrap' }, table),
    form);
  return every(refresh);
}

function experimentRow(e) {
  return h('tr', { dataset: { experiment: e.id, status: e.status } },
    h('td', { 'data-label': 'Status' }, badge(e.status)),
    h('td', { 'data-label': 'Experiment' }, h('a', { href: `#/experiments/${encodeURIComponent(e.id)}` }, e.id)),
    h('td', { 'data-label': 'Model' }, e.model),
    h('td', { 'data-label': 'Cycles', class: 'n' }, `${e.cycles_done} / ${e.cycles}`),
    h('td', { 'data-label': 'Updated' }, when(e.updated)));
}

/** Experiment `id`, followed live. */
export function experimentPage(id, { show, handleError }) {
  const path = `/v1/experiments/${encodeURIComponent(id)}`;
  const statusEl = h('span', { id: 'experiment-status' });
  const facts = h('dl', { class: 'facts' });
  const stop = h('button', { type: 'button', class: 'danger', hidden: true }, 'Stop');
  const resume = h('button', { type: 'button', hidden: true }, 'Resume');
  const operator = h('section', { id: 'operator', class: 'card alert ask', hidden: true, 'aria-labelledby': 'operator-title' },
    h('h2', { id: 'operator-title' }, 'The agent asks the operator'), h('ul', { class: 'plain' }));
  const cycles = h('ol', { id: 'cycles', class: 'plain cycles' });
  const memory = h('section', { id: 'memory', hidden: true, 'aria-labelledby': 'memory-title' },
    h('h2', { id: 'memory-title' }, 'Memory'), h('div', { class: 'table-wrap' }));
  const cards = new Map();
  const answered = new Set();
  const abort = new AbortController();

  function cycleCard(n) {
    let card = cards.get(n);
    if (card) return card;
    const state = h('span', { class: 'cycle-state' }, badge('running'));
    const tools = h('ul', { class: 'tools' });
    const reflection = h('div', { class: 'reflection' });
    const metrics = h('dl', { class: 'facts' });
    const el = h('li', { class: 'card cycle', dataset: { cycle: n } },
      h('div', { class: 'tl-head' }, h('h3', {}, `Cycle ${n}`), state),
      tools, reflection, metrics);
    card = { el, state, tools, reflection, metrics };
    cards.set(n, card);
    cycles.append(el);
    return card;
  }

  function onEvent(e, name) {
    if (name === 'operator') return showPending(e.pending);
    if (name === 'end') {
      fill(statusEl, badge(e.status));
      refresh();
      return undefined;
    }
    const card = cycleCard(e.cycle_number);
    const p = e.payload || {};
    if (e.event_type === 'TOOL_CALL') {
      card.tools.append(h('li', { class: 'tool' },
        h('strong', {}, p.tool_name), ' ', h('code', {}, JSON.stringify(p.parameters)),
        folded(pretty(p.output), { summary: 'result', chars: 300, lines: 6 })));
    } else if (e.event_type === 'CYCLE_END') {
      const m = p.metrics || {};
      fill(card.state, badge(p.cut_short ? 'cut short' : 'completed'));
      soon();
      fill(card.reflection, h('h4', {}, 'Reflection'), h('pre', { class: 'text' }, p.final_reflection || ''),
        m.session_run_id ? h('p', {}, h('a', { href: `#/runs/${m.session_run_id}`, class: 'session-link' }, 'The cycle’s session, step by step')) : null);
      fill(card.metrics,
        fact('Tool calls', num(m.tool_calls_total)), fact('Memory ops', num(m.memory_ops_total)),
        fact('Operator messages', num(m.messages_to_operator)), fact('Tokens', num(m.total_tokens)),
        fact('Duration', ms(m.duration_ms)),
        fact('Similarity', m.similarity_max === null || m.similarity_max === undefined ? '–'
          : `${Number(m.similarity_max).toFixed(2)} (${m.similarity_level}, ${m.similarity_method})`));
    }
    return undefined;
  }

  function showPending(pending) {
    const waiting = pending.filter((m) => !answered.has(m.id));
    operator.hidden = waiting.length === 0;
    fill(operator.querySelector('ul'), waiting.map(pendingCard));
  }

  function pendingCard(m) {
    const fieldId = `reply-${m.id}`;
    const reply = h('textarea', { id: fieldId, name: 'reply', rows: 2, required: true });
    const send = h('button', { type: 'submit', class: 'primary' }, 'Reply');
    const form = h('form', { class: 'operator-message', dataset: { message: m.id } },
      h('pre', { class: 'text' }, m.message),
      h('p', { class: 'muted' }, `Asked ${when(m.asked)}; the agent waits ${m.timeout_secs} s.`),
      h('label', { for: fieldId }, 'Your reply'), reply,
      h('div', { class: 'actions' }, send));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      send.disabled = true;
      try {
        await call('POST', `${path}/operator/${encodeURIComponent(m.id)}`, { reply: reply.value });
        answered.add(m.id);
        form.closest('li').remove();
        operator.hidden = !operator.querySelector('li');
        toast('Reply sent.');
      } catch (err) {
        send.disabled = false;
        handleError(err);
      }
    });
    return h('li', {}, form);
  }

  let refreshTimer = null;
  /** Refresh once the events read in one go are shown (a replay of many cycles asks once). */
  function soon() {
    if (refreshTimer === null) refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 300);
  }

  async function refresh() {
    try {
      const d = await call('GET', path);
      const s = d.summary;
      fill(statusEl, badge(s.status));
      fill(facts, fact('Model', s.model), fact('Cycles', `${s.cycles_done} / ${s.cycles}`),
        fact('Created', when(s.created)), fact('Updated', when(s.updated)));
      stop.hidden = !s.live;
      resume.hidden = s.live || s.status === 'completed' || s.status === 'running';
      const items = d.report.memory || [];
      memory.hidden = items.length === 0;
      fill(memory.querySelector('.table-wrap'), h('table', {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Value'))),
        h('tbody', {}, items.map((i) => h('tr', {}, h('td', {}, i.key), h('td', {}, folded(i.value, { chars: 300, lines: 6 })))))));
    } catch (err) {
      handleError(err, facts);
    }
  }

  stop.addEventListener('click', async () => {
    stop.disabled = true;
    try {
      await call('POST', `${path}/stop`);
      toast('Stopping after the cycle in progress.');
    } catch (err) {
      handleError(err);
    }
    stop.disabled = false;
  });
  resume.addEventListener('click', async () => {
    resume.disabled = true;
    try {
      await call('POST', `${path}/resume`);
      location.reload();
    } catch (err) {
      resume.disabled = false;
      handleError(err);
    }
  });

  show(`Experiment ${id}`,
    h('p', { class: 'crumbs' }, h('a', { href: '#/experiments' }, 'Experiments')),
    h('div', { class: 'page-head' }, h('h1', { class: 'task-title' }, id, ' ', statusEl), h('div', { class: 'actions' }, stop, resume)),
    facts, operator,
    h('h2', {}, 'Cycles'), cycles, memory);
  refresh();
  followExperiment(id, 0, onEvent, abort.signal).catch((err) => {
    if (err.name !== 'AbortError') handleError(err);
  });
  return () => {
    abort.abort();
    clearTimeout(refreshTimer);
  };
}

function fact(label, value) {
  return h('div', {}, h('dt', {}, label), h('dd', {}, value));
}
