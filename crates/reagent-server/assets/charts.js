// Inline SVG charts of a run's model calls: tokens per step (prompt in, completion out,
// stacked) and latency per step. Drawn at the container's width so text keeps its size on a
// phone, each with a text summary for screen readers and the numbers in a table.

import { h, num, ms } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';

function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  for (const child of children) el.append(child instanceof Node ? child : String(child));
  return el;
}

/** A round number at or above `n` (1, 2, 5 × 10^k). */
function niceMax(n) {
  if (n <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

/**
 * A bar chart: `bars` is [{label, parts: [{value, cls, name}]}] (parts stacked bottom up),
 * `format` prints a value.
 */
function barChart({ title, bars, width, format, legend }) {
  const height = 170;
  const margin = { left: 52, right: 8, top: 10, bottom: 26 };
  const plotW = Math.max(40, width - margin.left - margin.right);
  const plotH = height - margin.top - margin.bottom;
  const total = (bar) => bar.parts.reduce((sum, p) => sum + p.value, 0);
  const max = niceMax(Math.max(0, ...bars.map(total)));
  const y = (v) => margin.top + plotH - (v / max) * plotH;
  const slot = plotW / Math.max(bars.length, 1);
  const barW = Math.max(2, Math.min(36, slot * 0.7));
  const svg = s('svg', {
    width, height, viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': title,
  });
  for (const tick of [0, max / 2, max]) {
    svg.append(
      s('line', { x1: margin.left, x2: margin.left + plotW, y1: y(tick), y2: y(tick), class: 'grid' }),
      s('text', { x: margin.left - 6, y: y(tick) + 4, class: 'axis', 'text-anchor': 'end' }, format(tick)),
    );
  }
  // Label every step while they fit, else every k-th.
  const every = Math.ceil(bars.length / Math.max(1, Math.floor(plotW / 28)));
  bars.forEach((bar, i) => {
    const x = margin.left + slot * i + (slot - barW) / 2;
    let base = 0;
    const group = s('g', { class: 'bar' });
    for (const part of bar.parts) {
      const top = y(base + part.value);
      group.append(s('rect', {
        x, y: top, width: barW, height: Math.max(0, y(base) - top), class: part.cls,
      }, s('title', {}, `step ${bar.label}: ${part.name} ${format(part.value)}`)));
      base += part.value;
    }
    svg.append(group);
    if (i % every === 0) {
      svg.append(s('text', { x: x + barW / 2, y: height - 8, class: 'axis', 'text-anchor': 'middle' }, bar.label));
    }
  });
  return h('figure', { class: 'chart-box' },
    h('figcaption', {}, title.split(':')[0], legend ? h('span', { class: 'legend' }, legend) : null),
    svg);
}

/**
 * The charts of `calls` ([{iteration, prompt, completion, latency}], one per model call, in
 * order) at `width` pixels each; `totals` ({prompt, completion}) are the run's tokens in all.
 */
export function renderCharts(calls, width, totals) {
  if (!calls.length) return h('p', { class: 'muted' }, 'No model calls yet.');
  const { prompt: sumIn, completion: sumOut } = totals;
  const slowest = calls.reduce((a, c) => (c.latency > a.latency ? c : a), calls[0]);
  const label = (c) => String(c.iteration);
  const tokens = barChart({
    title: `Tokens per step: ${calls.length} model calls, ${num(sumIn)} in and ${num(sumOut)} out in all`,
    bars: calls.map((c) => ({
      label: label(c),
      parts: [
        { value: c.prompt, cls: 'in', name: 'tokens in' },
        { value: c.completion, cls: 'out', name: 'tokens out' },
      ],
    })),
    width,
    format: (v) => num(Math.round(v)),
    legend: [h('i', { class: 'key in' }), ' in ', h('i', { class: 'key out' }), ' out'],
  });
  const latency = barChart({
    title: `Latency per step: the slowest call took ${ms(slowest.latency)} (step ${slowest.iteration})`,
    bars: calls.map((c) => ({ label: label(c), parts: [{ value: c.latency, cls: 'lat', name: 'latency' }] })),
    width,
    format: ms,
  });
  const table = h('details', { class: 'numbers' },
    h('summary', {}, 'Numbers'),
    h('table', {},
      h('thead', {}, h('tr', {}, ['step', 'tokens in', 'tokens out', 'latency'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, calls.map((c) => h('tr', {},
        h('td', {}, c.iteration), h('td', {}, num(c.prompt)), h('td', {}, num(c.completion)), h('td', {}, ms(c.latency)))))));
  return [h('div', { class: 'charts' }, tokens, latency), table];
}
