// Small DOM and formatting helpers. Text from the server only ever goes in as text nodes
// (never as HTML), so nothing a model or a tool writes can run in the page.

/**
 * `h('div', {class: 'x', onclick: f}, child, 'text', [more])`: an element. Attributes whose
 * value is null, undefined or false are left out; `on*` functions become listeners.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Replace `el`'s children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Text that is long (over `chars` characters or `lines` lines) folded in a <details>. */
export function folded(text, { summary = 'show', chars = 600, lines = 12, cls = '' } = {}) {
  const body = h('pre', { class: `text ${cls}` }, text);
  const lineCount = text.split('\n').length;
  if (text.length <= chars && lineCount <= lines) return body;
  const size = text.length >= 1024 ? `${(text.length / 1024).toFixed(1)} KiB` : `${text.length} chars`;
  return h('details', { class: `fold ${cls}` }, h('summary', {}, `${summary} (${size}, ${lineCount} lines)`), body);
}

/** A JSON value as indented text. */
export function pretty(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch (_) {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

/** 1234 → "1,234". */
export function num(n) {
  return n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US');
}

/** Milliseconds as "850 ms", "2.4 s", "3 min 5 s". */
export function ms(n) {
  if (n === null || n === undefined) return '–';
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60000) return `${(n / 1000).toFixed(1)} s`;
  const minutes = Math.floor(n / 60000);
  return `${minutes} min ${Math.round((n % 60000) / 1000)} s`;
}

/** An RFC 3339 time as local date and time. */
export function when(ts) {
  if (!ts) return '–';
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? ts : d.toLocaleString();
}

/** A short form of a run id. */
export function shortId(id) {
  return id ? id.slice(0, 8) : '';
}

/** The status badge of an outcome (`running`, `completed`, `cancelled`...). */
export function badge(outcome) {
  const kind = ['completed', 'verified'].includes(outcome) ? 'ok'
    : outcome === 'running' ? 'live'
      : ['cancelled', 'interrupted', 'max_iterations', 'budget_exhausted', 'partial_pass',
        'unchecked'].includes(outcome) ? 'warn'
        : 'bad';
  return h('span', { class: `badge ${kind}`, dataset: { outcome } }, outcome.replace(/_/g, ' '));
}

/** Show a short message in the page's live region for a few seconds. */
export function toast(message, kind = 'info') {
  const el = document.getElementById('toast');
  if (!el) return;
  fill(el, h('p', { class: `toast ${kind}` }, message));
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => el.replaceChildren(), 5000);
}

/** Run `fn` now and every `everyMs` (2 s) until the returned stop function is called. */
export function every(fn, everyMs = 2000) {
  let timer = null;
  let stopped = false;
  const tick = async () => {
    await fn();
    if (!stopped) timer = setTimeout(tick, everyMs);
  };
  tick();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
