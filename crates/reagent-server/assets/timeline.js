// A run's timeline, built from its events (schema/events.schema.json) as they arrive: one
// section per step (loop iteration) with the model call (latency, tokens, parse layer), the
// reply (thinking folded and dimmed), each tool call (arguments, result, duration; long
// results folded); guardrails and nudges highlighted, compactions marked, approvals answerable.

import { h, fill, folded, pretty, num, ms, badge } from './dom.js';

const LOOP_REASONS = {
  nudge: 'Nudge',
  repetition_hint: 'Repetition hint',
  final_answer_request: 'Final answer requested',
};

function clock(ts) {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString();
}

function item(kind, event, title, ...body) {
  return h('li', { class: `tl-item kind-${kind}`, dataset: { kind, seq: event.seq } },
    h('div', { class: 'tl-head' },
      h('span', { class: 'tl-title' }, title),
      h('time', { datetime: event.ts, class: 'muted' }, clock(event.ts))),
    ...body);
}

/** What a tool result says: its output text, its error, or the JSON (a cut result stays as is). */
function resultText(json) {
  try {
    const value = JSON.parse(json);
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      if (typeof value.output === 'string') return value.output;
      if (typeof value.error === 'string') return `error: ${value.error}`;
      if ('output' in value) return pretty(value.output);
    }
    return pretty(value);
  } catch (_) {
    return json;
  }
}

function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))));
}

/** The timeline of one run, rendered into `root` (an element it owns). */
export class Timeline {
  /**
   * `onDecide(approvalId, decision)` answers an approval (resolves when the server took it).
   */
  constructor(root, { onDecide }) {
    this.root = root;
    this.onDecide = onDecide;
    this.list = h('ol', { class: 'timeline', 'aria-label': 'Timeline' });
    fill(root, this.list);
    this.lastSeq = 0;
    this.steps = new Map();
    this.currentStep = null;
    this.modelCalls = new Map();
    this.toolCalls = new Map();
    this.approvals = new Map();
    this.live = null;
    /** One entry per model call: {iteration, prompt, completion, latency}. */
    this.calls = [];
    /** The run_started and run_finished events, once seen. */
    this.started = null;
    this.finished = null;
  }

  /** Apply events in order; returns whether any changed the timeline. */
  apply(events) {
    let changed = false;
    for (const event of events) {
      const delta = event.type === 'text_delta' || event.type === 'reasoning_delta';
      if (!delta) {
        if (event.seq <= this.lastSeq) continue;
        this.lastSeq = event.seq;
      }
      this.render(event);
      changed = true;
    }
    return changed;
  }

  /** The element events of `iteration` go in (a new step section the first time). */
  step(iteration) {
    if (iteration === undefined || iteration === null) return this.currentStep || this.list;
    let step = this.steps.get(iteration);
    if (!step) {
      const items = h('ol', { class: 'step-items' });
      const section = h('li', { class: 'step', id: `step-${iteration}`, dataset: { iteration } },
        h('h3', { class: 'step-title' }, `Step ${iteration}`), items);
      this.list.append(section);
      step = items;
      this.steps.set(iteration, step);
    }
    this.currentStep = step;
    return step;
  }

  render(e) {
    const handler = this[`on_${e.type}`];
    if (handler) handler.call(this, e);
    else this.step().append(item('other', e, e.type, folded(pretty(e), { summary: 'event' })));
  }

  on_run_started(e) {
    this.started = e;
    this.list.append(item('run_started', e, e.follow_up ? 'Follow-up started' : 'Run started',
      h('p', { class: 'task' }, e.task),
      facts([['model', e.model], ['provider', e.provider], ['tool mode', e.tool_mode],
        ['context', e.num_ctx ? `${num(e.num_ctx)} tokens` : null], ['workspace', e.workspace],
        ['tools', (e.tools || []).join(', ')]]),
      e.system_prompt ? h('details', { class: 'fold' }, h('summary', {}, 'System prompt'),
        h('pre', { class: 'text' }, e.system_prompt)) : null));
  }

  on_llm_request(e) {
    const el = item('model_call', e, 'Model call', h('p', { class: 'muted pending' },
      `sending ${e.messages} messages (~${num(e.estimated_tokens)} tokens)…`));
    this.step(e.iteration).append(el);
    this.modelCalls.set(e.iteration, el);
  }

  on_llm_response(e) {
    let el = this.modelCalls.get(e.iteration);
    if (!el || el.dataset.done) {
      el = item('model_call', e, 'Model call');
      this.step(e.iteration).append(el);
    }
    el.dataset.done = 'true';
    const cached = e.cached_prompt_tokens ? ` (${num(e.cached_prompt_tokens)} cached)` : '';
    el.querySelector('.pending')?.remove();
    el.append(facts([
      ['latency', ms(e.latency_ms)],
      ['tokens in', `${num(e.prompt_tokens)}${cached}`],
      ['tokens out', num(e.completion_tokens)],
      ['parse layer', e.parse_layer || 'none'],
      ['finish', e.finish_reason],
      ['tool calls', e.tool_calls],
      ['endpoint', e.endpoint],
    ]));
    this.calls.push({
      iteration: e.iteration, prompt: e.prompt_tokens, completion: e.completion_tokens, latency: e.latency_ms,
    });
  }

  /** Streamed text and thinking of the reply in progress, replaced by the reply itself. */
  on_text_delta(e) {
    this.liveBox('text').textContent += e.text;
  }

  on_reasoning_delta(e) {
    this.liveBox('thinking').textContent += e.text;
  }

  liveBox(part) {
    if (!this.live) {
      this.live = { el: h('li', { class: 'tl-item kind-streaming', dataset: { kind: 'streaming' } },
        h('div', { class: 'tl-head' }, h('span', { class: 'tl-title' }, 'Replying…'))) };
      this.step().append(this.live.el);
    }
    if (!this.live[part]) {
      this.live[part] = h('pre', { class: part === 'thinking' ? 'text thinking' : 'text' });
      this.live.el.append(this.live[part]);
    }
    return this.live[part];
  }

  on_assistant_message(e) {
    this.live?.el.remove();
    this.live = null;
    const calls = e.calls || [];
    this.step(e.iteration).append(item('assistant', e, calls.length ? 'Reply with tool calls' : 'Reply',
      e.reasoning ? h('details', { class: 'fold thinking' }, h('summary', {}, 'Thinking'),
        h('pre', { class: 'text' }, e.reasoning)) : null,
      e.content ? folded(e.content, { summary: 'reply' }) : h('p', { class: 'muted' }, '(no text)'),
      calls.length ? h('p', { class: 'muted' }, `calls: ${calls.map((c) => c.name).join(', ')}`) : null,
      e.raw ? h('details', { class: 'fold' }, h('summary', {}, 'As the server sent it'),
        h('pre', { class: 'text' }, e.raw)) : null));
  }

  toolItem(e) {
    const key = `${e.iteration}/${e.call_id}`;
    let el = this.toolCalls.get(key);
    if (!el) {
      el = item('tool_call', e, h('span', {}, 'Tool ', h('code', {}, e.name)),
        h('div', { class: 'args' }, h('span', { class: 'label' }, 'arguments'),
          folded(pretty(e.arguments ?? {}), { summary: 'arguments', chars: 400 })),
        h('p', { class: 'tool-status muted' }, 'running…'));
      this.step(e.iteration).append(el);
      this.toolCalls.set(key, el);
    }
    return el;
  }

  on_tool_call_started(e) {
    this.toolItem(e);
  }

  on_tool_call(e) {
    const el = this.toolItem(e);
    el.classList.add(e.ok ? 'ok' : 'failed');
    const status = el.querySelector('.tool-status');
    fill(status, h('span', { class: e.ok ? 'ok-text' : 'bad-text' }, e.ok ? 'ok' : 'error'),
      ` in ${ms(e.duration_ms)} — ${e.summary}`);
    status.classList.remove('muted');
  }

  on_tool_result(e) {
    const el = this.toolItem(e);
    el.append(h('div', { class: 'result' }, h('span', { class: 'label' }, e.truncated ? 'result (cut)' : 'result'),
      folded(resultText(e.output), { summary: 'result' })));
  }

  on_user_message(e) {
    if (e.reason === 'follow_up') {
      this.step().append(item('follow_up', e, 'Follow-up', h('p', { class: 'task' }, e.content)));
      return;
    }
    this.step().append(item('loop_message', e, LOOP_REASONS[e.reason] || e.reason,
      folded(e.content, { summary: 'message', chars: 300 })));
  }

  on_guardrail(e) {
    const severity = e.action === 'stop' || e.action === 'failed' ? 'stop' : 'warn';
    const el = item('guardrail', e,
      h('span', {}, 'Guardrail ', h('code', {}, e.guardrail), ` → ${e.action}`),
      h('p', {}, e.detail));
    el.classList.add('alert', severity);
    this.step().append(el);
  }

  on_nudge(e) {
    const el = item('nudge', e, `Nudge #${e.count}: ${e.reason.replace(/_/g, ' ')}`);
    el.classList.add('alert', 'warn');
    this.step().append(el);
  }

  on_compaction(e) {
    this.step().append(item('compaction', e, 'Context compacted',
      h('p', {}, `${e.messages_removed} messages (${e.rounds_removed} rounds) folded: ~${num(e.estimated_tokens_before)} → ~${num(e.estimated_tokens_after)} tokens`),
      h('details', { class: 'fold' }, h('summary', {}, 'Digest'), h('pre', { class: 'text' }, e.digest))));
  }

  on_approval_requested(e) {
    const buttons = h('div', { class: 'actions' });
    const decide = (decision) => async () => {
      for (const b of buttons.querySelectorAll('button')) b.disabled = true;
      try {
        await this.onDecide(e.approval_id, decision);
      } catch (err) {
        for (const b of buttons.querySelectorAll('button')) b.disabled = false;
        fill(status, h('span', { class: 'bad-text' }, err.message));
      }
    };
    buttons.append(
      h('button', { type: 'button', class: 'primary', onclick: decide('allow') }, 'Allow'),
      h('button', { type: 'button', class: 'danger', onclick: decide('deny') }, 'Deny'));
    const status = h('p', { class: 'approval-status' }, 'Waiting for your answer.');
    const el = item('approval', e, 'Approval needed',
      h('pre', { class: 'text command' }, e.command), status, buttons);
    el.classList.add('alert', 'ask');
    el.dataset.approval = e.approval_id;
    this.step().append(el);
    this.approvals.set(e.approval_id, { el, buttons, status });
  }

  /**
   * Tokens used so far: the run's own count once it finished; before, per step the last model
   * call's numbers (after a reply cut off by its length, the retried call's event counts both
   * calls).
   */
  tokenTotals() {
    if (this.finished) return { prompt: this.finished.prompt_tokens, completion: this.finished.completion_tokens };
    const last = new Map(this.calls.map((c) => [c.iteration, c]));
    let prompt = 0;
    let completion = 0;
    for (const c of last.values()) {
      prompt += c.prompt;
      completion += c.completion;
    }
    return { prompt, completion };
  }

  /** The Allow buttons of the approvals still waiting for an answer. */
  waitingApprovals() {
    return [...this.approvals.values()]
      .filter((a) => a.buttons.isConnected)
      .map((a) => a.buttons.querySelector('button'));
  }

  on_approval_decided(e) {
    const approval = this.approvals.get(e.approval_id);
    if (!approval) return;
    approval.buttons.remove();
    approval.el.classList.remove('ask');
    approval.el.dataset.decided = e.approved ? 'allowed' : 'denied';
    fill(approval.status, h('span', { class: e.approved ? 'ok-text' : 'bad-text' }, e.approved ? 'Allowed' : 'Denied'));
  }

  on_retry(e) {
    this.step().append(item('retry', e, `Retry #${e.attempt} in ${ms(e.delay_ms)}`, h('p', { class: 'muted' }, e.error)));
  }

  on_pool_state(e) {
    const up = (e.endpoints || []).filter((p) => p.up).length;
    this.step().append(item('pool', e, `Endpoints: ${up} of ${(e.endpoints || []).length} up`));
  }

  on_run_finished(e) {
    this.finished = e;
    this.live?.el.remove();
    this.live = null;
    this.list.append(item('run_finished', e, h('span', {}, 'Finished ', badge(e.outcome)),
      e.answer ? h('div', { class: 'answer' }, h('span', { class: 'label' }, 'answer'), folded(e.answer, { summary: 'answer', chars: 2000, lines: 40 })) : null,
      e.error ? h('p', { class: 'bad-text' }, `${e.error_kind || 'error'}: ${e.error}`) : null,
      facts([['steps', e.iterations], ['tool calls', e.tool_calls], ['tokens in', num(e.prompt_tokens)],
        ['tokens out', num(e.completion_tokens)], ['wall time', ms(e.wall_ms)], ['model time', ms(e.model_ms)],
        ['files changed', (e.files_changed || []).join(', ')]])));
  }
}
