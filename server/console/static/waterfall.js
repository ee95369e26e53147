import { h, json } from './dom.js';

// The waterfall of a run: one bar per model call, tool call, sub-agent
// run, pipeline step, loop iteration and human wait, nested as the run
// nested them, on one time axis. Crumbs only update a few spans (a delta
// moves its model call's end), and drawing is one SVG redrawn at most once
// a frame: a run of 10,000 deltas is still a handful of bars.

const NS = 'http://www.w3.org/2000/svg';
const ROW = 20;
const AXIS = 18;
const CAP = 4000; // characters of streamed text kept per model call
const ENDS = { 'subagent:run:end': 'subagent', 'pipeline:step:end': 'step', 'loop:end': 'loop', 'loop:iteration:end': 'iteration', 'task:end': 'task' };
let uid = 0;

function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const k of kids) el.append(k);
  return el;
}

// ms formats a duration for a bar and the axis.
export function ms(d) {
  if (d < 1000) return Math.round(d) + ' ms';
  if (d < 60000) return (d / 1000).toFixed(d < 10000 ? 2 : 1) + ' s';
  return Math.floor(d / 60000) + ' m ' + Math.round((d % 60000) / 1000) + ' s';
}

// tokens formats a usage: "1,234 tokens (1,000 in, 234 out)".
export function tokens(u) {
  if (!u) return '';
  const n = (x) => (x || 0).toLocaleString('en');
  const total = u.totalTokens || (u.inputTokens || 0) + (u.outputTokens || 0);
  return n(total) + ' tokens (' + n(u.inputTokens) + ' in, ' + n(u.outputTokens) + ' out)';
}

export class Waterfall {
  constructor({ compact = false } = {}) {
    this.spans = [];
    this.roots = [];
    this.runs = new Map(); // runId -> { stack, run, model, tools: Map, open }
    this.waits = new Map();
    this.t0 = 0;
    this.t1 = 0;
    this.last = 0;
    this.live = false;
    this.selected = null;
    this.dirty = false;
    this.frame = 0;
    this.count = 0;
    this.compact = compact;
    this.svg = svg('svg', { class: 'wf', role: 'group', 'aria-label': 'Waterfall of the run' });
    this.detail = h('div.wf-detail', { 'aria-live': 'polite' });
    this.empty = h('p.muted', 'No spans yet.');
    this.el = h('div.wf-wrap', this.empty, this.svg, this.detail);
    // The bars are drawn to the width they have: a narrower window
    // redraws them.
    this.width = 0;
    this.resize = new ResizeObserver(() => {
      if (this.el.clientWidth !== this.width) this.schedule();
    });
    this.resize.observe(this.el);
    this.svg.addEventListener('click', (ev) => this.pick(ev.target));
    this.svg.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); this.pick(ev.target); }
    });
  }

  // setLive says whether the run's stream is open: its open bars grow with
  // the clock while it is.
  setLive(on) {
    this.live = on;
    if (on && !this.timer) this.timer = setInterval(() => this.schedule(), 250);
    if (!on && this.timer && !this.waiting()) { clearInterval(this.timer); this.timer = 0; }
    this.schedule();
  }

  // waiting reports an open human wait: its bar grows with the clock even
  // when no stream is open (a POST stream ends at human:required).
  waiting() {
    for (const w of this.waits.values()) if (w.end === null) return true;
    return false;
  }

  dispose() {
    this.live = false;
    clearInterval(this.timer);
    this.timer = 0;
    cancelAnimationFrame(this.frame);
    this.resize.disconnect();
  }

  state(runId) {
    let r = this.runs.get(runId);
    if (!r) { r = { stack: [], run: null, model: null, from: null, tools: new Map(), open: 0, waiting: 0 }; this.runs.set(runId, r); }
    return r;
  }

  span(kind, label, at, parent, extra) {
    const s = Object.assign({ id: ++uid, kind, label, start: at, end: null, parent, children: [], crumbs: [], text: [], chars: 0 }, extra);
    if (parent) parent.children.push(s); else this.roots.push(s);
    this.spans.push(s);
    return s;
  }

  close(s, at) {
    if (s && s.end === null) s.end = Math.max(at, s.start);
  }

  // slot finds the open span a new agent run nests in: a step, delegation,
  // iteration or task that has no run yet (a step only for its own
  // agent), the one expecting this agent first; else a tool call still
  // running with no run under it (a delegation tool), the oldest first.
  slot(agentId) {
    let best = null, score = 0, tool = null;
    for (let i = this.spans.length - 1; i >= 0; i--) {
      const s = this.spans[i];
      if (s.end !== null || s.children.some((c) => c.kind === 'run')) continue;
      if (s.kind === 'tool') { tool = s; continue; }
      if (!s.slot) continue;
      const sc = s.expect === agentId ? 2 : s.kind === 'step' && s.expect ? 0 : 1;
      if (sc > score || (sc === 2 && score === 2)) { best = s; score = sc; }
    }
    return best || tool;
  }

  // under is where a run whose start names its parent run nests: the
  // innermost open delegation, iteration or task of that run expecting
  // it (or any), else its open tool call with nothing under it (a
  // delegation), else the parent's run itself. Null when the parent is not
  // in view: the run nests by the slots, as runs without the field do.
  under(parentRunId, agentId) {
    const p = parentRunId && this.runs.get(parentRunId);
    if (!p || !p.run) return null;
    const free = (s) => s.end === null && !s.children.some((x) => x.kind === 'run');
    const slots = p.stack.filter((s) => s.slot && free(s));
    const tool = [...p.tools.values()].find((t) => free(t) && !t.children.length);
    return slots.findLast((s) => s.expect === agentId) || slots.pop() || tool || p.run;
  }

  // tool is the oldest tool call still running with nothing under it: a
  // delegation whose crumbs come from another run.
  tool() {
    return this.spans.find((s) => s.kind === 'tool' && s.end === null && !s.children.length) || null;
  }

  // container is the innermost open span of any kind but a bar of its
  // own run (model, tool, wait), for crumbs that name no open parent.
  container() {
    for (let i = this.spans.length - 1; i >= 0; i--) {
      const s = this.spans[i];
      if (s.end === null && (s.kind === 'iteration' || s.kind === 'loop' || s.kind === 'step' || s.kind === 'subagent' || s.kind === 'task')) return s;
    }
    return null;
  }

  // A model call starts where its run starts or its last tools ended (the
  // boundary, from); its bar appears with the first crumb it produced, so
  // a pipeline's own run, which calls no model, draws none.
  openModel(r, at) {
    if (!r.run || r.run.end !== null || r.model || r.from === null) return;
    r.model = this.span('model', 'model call', Math.min(r.from, at), r.run, { agentId: r.run.agentId });
    r.from = null;
  }

  endModel(r, at) {
    if (!r.model) this.openModel(r, at);
    if (r.model) { this.close(r.model, at); r.model = null; }
  }

  boundary(r, at) {
    if (!r.model && r.run && r.run.end === null) r.from = at;
  }

  // add takes one crumb, in stream order.
  add(c) {
    if (!c || !c.type) return;
    this.count++;
    const at = c.timestamp || this.last || Date.now();
    if (!this.t0 || at < this.t0) this.t0 = at;
    if (at > this.t1) this.t1 = at;
    this.last = at;
    const r = this.state(c.runId || '');
    const top = r.stack[r.stack.length - 1] || null;
    switch (c.type) {
      case 'text:delta':
      case 'reasoning:delta': {
        if (!r.model && !r.open && !r.waiting) this.openModel(r, at);
        const m = r.model;
        if (m) {
          if (m.chars < CAP) m.text.push(c.delta || '');
          m.chars += (c.delta || '').length;
          m.deltas = (m.deltas || 0) + 1;
        }
        break;
      }
      case 'tool:input:delta':
        break;
      case 'agent:run:start': {
        if (r.run && r.run.end === null) break; // a resumed run goes on
        const parent = this.under(c.parentRunId, c.agentId) || this.slot(c.agentId) || (c.runId && this.runs.size > 1 ? this.container() : null);
        const s = this.span('run', 'run of ' + c.agentId, at, parent, { agentId: c.agentId, runId: c.runId, input: c.input });
        s.crumbs.push(c);
        r.run = s;
        r.stack = [s];
        this.boundary(r, at);
        break;
      }
      case 'tool:input:start':
      case 'tool:call': {
        this.endModel(r, at);
        let t = r.tools.get(c.toolCallId);
        if (!t) {
          t = this.span('tool', 'tool ' + c.toolName, at, top, { toolCallId: c.toolCallId });
          r.tools.set(c.toolCallId, t);
          r.open++;
        }
        if (c.type === 'tool:call') { t.input = c.args; t.crumbs.push(c); }
        break;
      }
      case 'tool:result':
      case 'tool:error': {
        const t = r.tools.get(c.toolCallId);
        if (t && t.end === null) {
          this.close(t, at);
          r.open = Math.max(0, r.open - 1);
          t.output = c.result;
          t.error = c.error;
          t.durationMs = c.durationMs;
          t.crumbs.push(c);
        }
        if (!r.open && !r.waiting) this.boundary(r, at);
        break;
      }
      case 'tool:result:partial':
        break;
      case 'human:required': {
        if (this.waits.has(c.checkpointId)) break;
        this.endModel(r, at);
        const w = this.span('wait', 'wait for ' + (c.kind === 'approval' ? 'approval of ' : '') + c.toolName, at, top, { input: c.schema });
        w.crumbs.push(c);
        this.waits.set(c.checkpointId, w);
        r.waiting++;
        break;
      }
      case 'human:resumed': {
        const w = this.waits.get(c.checkpointId);
        if (w && w.end === null) {
          this.close(w, at);
          w.output = c.response;
          w.crumbs.push(c);
          r.waiting = Math.max(0, r.waiting - 1);
        }
        break;
      }
      case 'subagent:run:start': {
        this.endModel(r, at);
        const parent = top || this.tool() || null;
        const s = this.span('subagent', 'delegate to ' + c.subagentId, at, parent, { slot: true, expect: c.subagentId });
        s.crumbs.push(c);
        r.stack.push(s);
        break;
      }
      case 'pipeline:step:start': {
        const id = c.runId || '';
        let parent = null;
        for (let i = this.spans.length - 1; i >= 0 && !parent; i--) {
          const s = this.spans[i];
          if (s.kind === 'step' && s.end === null && s.runId && id.startsWith(s.runId + ':')) parent = s;
        }
        // A background pipeline logs its steps under its own run id: a
        // step opened inside a parallel one is its branch, otherwise it
        // belongs to what holds the run's steps.
        if (!parent && r.stack.length) {
          parent = r.stack.findLast((x) => x.kind === 'step' && x.expect === 'parallel') || r.stack.findLast((x) => x.kind !== 'step') || null;
        }
        const s = this.span('step', 'step ' + (c.stepIndex + 1) + (c.agentId ? ' · ' + c.agentId : ''), at, parent || this.container(),
          { slot: true, expect: c.agentId, runId: id });
        s.crumbs.push(c);
        r.stack.push(s);
        break;
      }
      case 'loop:start':
      case 'loop:iteration:start':
      case 'task:start': {
        this.endModel(r, at);
        const kind = c.type === 'loop:start' ? 'loop' : c.type === 'task:start' ? 'task' : 'iteration';
        const label = kind === 'loop' ? 'loop ' + (c.loopId || '') : kind === 'task' ? 'task ' + (c.taskId || '') : 'iteration ' + c.iteration;
        const s = this.span(kind, label, at, top || this.container(), { slot: kind !== 'loop' });
        s.crumbs.push(c);
        r.stack.push(s);
        break;
      }
      case 'agent:run:end':
      case 'agent:error': {
        const s = r.run;
        if (s && s.children.some((x) => x.kind === 'step')) r.from = null;
        this.endModel(r, at);
        for (const t of r.tools.values()) this.close(t, at);
        r.open = 0;
        if (c.type === 'agent:error' && !s) {
          // A run that failed before it started: a bar of its own.
          const e = this.span('run', 'run of ' + (c.agentId || '?'), at, null, { error: c.error });
          e.crumbs.push(c);
          this.close(e, at);
          break;
        }
        if (s) {
          if (c.type === 'agent:error') s.error = c.error; else { s.output = c.output; s.durationMs = c.durationMs; }
          if (c.usage) s.usage = c.usage;
          // Each model call's tokens, in order: the run's last model bars
          // (a resumed run reports the calls since it resumed).
          const calls = c.modelCalls || [];
          const models = s.children.filter((x) => x.kind === 'model');
          for (let i = 1; i <= Math.min(calls.length, models.length); i++) models[models.length - i].usage = calls[calls.length - i];
          s.crumbs.push(c);
          // Waits and delegations left open end with their run.
          for (const x of r.stack) if (x !== s) this.close(x, at);
          for (const w of this.waits.values()) if (w.parent === s) this.close(w, at);
          this.close(s, at);
        }
        r.stack = [];
        break;
      }
      default: {
        const kind = ENDS[c.type];
        if (!kind) { if (top) top.crumbs.push(c); break; }
        if (kind === 'step') {
          // Parallel branches end in any order: the one of this agent.
          const i = r.stack.findLastIndex((x) => x.kind === 'step' && x.end === null && x.expect === c.agentId);
          if (i >= 0) {
            const s = r.stack[i];
            this.close(s, at);
            s.output = c.output;
            s.crumbs.push(c);
            r.stack.splice(i, 1);
            break;
          }
        }
        for (let i = r.stack.length - 1; i >= 0; i--) {
          const s = r.stack[i];
          if (s.kind !== kind) continue;
          for (const x of r.stack.slice(i)) this.close(x, at);
          s.output = c.output !== undefined ? c.output : c.result;
          if (c.error) s.error = c.error;
          if (c.usage) s.usage = c.usage;
          s.crumbs.push(c);
          r.stack.length = i;
          break;
        }
      }
    }
    this.schedule();
  }

  schedule() {
    if (this.dirty) return;
    this.dirty = true;
    this.frame = requestAnimationFrame(() => { this.dirty = false; this.render(); });
  }

  // rows are the spans in the order they are drawn: each under its
  // parent, siblings by start.
  rows() {
    const out = [];
    const walk = (list, depth) => {
      for (const s of list) {
        s.depth = depth;
        out.push(s);
        walk(s.children, depth + 1);
      }
    };
    walk(this.roots, 0);
    return out;
  }

  endOf(s, now) { return s.end !== null ? s.end : now; }

  // render draws the bars now; add schedules it once per frame.
  render() {
    const rows = this.rows();
    this.empty.hidden = rows.length > 0;
    const now = this.live || this.waiting() ? Math.max(this.t1, Date.now()) : this.t1;
    const span = Math.max(1, now - this.t0);
    this.width = this.el.clientWidth;
    const W = Math.max(280, Math.round(this.width || 480));
    const label = Math.min(220, Math.round(W * 0.38));
    const right = 64;
    const bar = W - label - right;
    const x = (t) => label + ((t - this.t0) / span) * bar;
    const H = AXIS + rows.length * ROW + 4;
    const g = svg('g');
    const ticks = bar > 320 ? 4 : 2;
    for (let i = 0; i <= ticks; i++) {
      const tx = label + (bar * i) / ticks;
      g.append(svg('line', { class: 'tick', x1: tx, x2: tx, y1: AXIS - 4, y2: H }),
        svg('text', { class: 'axis', x: tx, y: AXIS - 6, 'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle' }, ms((span * i) / ticks)));
    }
    rows.forEach((s, i) => {
      const y = AXIS + i * ROW;
      const end = this.endOf(s, now);
      const d = end - s.start;
      const name = s.label;
      const open = s.end === null;
      const row = svg('g', {
        class: 'row ' + s.kind + (s.error ? ' failed' : '') + (open ? ' open' : '') + (this.selected === s.id ? ' sel' : ''),
        tabindex: '0', role: 'button', 'data-span': s.id, 'data-depth': s.depth,
        'aria-label': s.label + ', ' + (open ? 'running, ' : '') + ms(d) + (s.usage ? ', ' + tokens(s.usage) : '') + (s.error ? ', failed' : ''),
      },
      svg('rect', { class: 'hit', x: 0, y, width: W, height: ROW }),
      svg('text', { class: 'label', x: 4 + s.depth * 10, y: y + 14 }, clip(name, Math.max(4, Math.floor((label - 8 - s.depth * 10) / 6.6)))),
      svg('rect', { class: 'bar', x: x(s.start), y: y + 4, width: Math.max(2, x(end) - x(s.start)), height: ROW - 8, rx: 2 }),
      svg('text', { class: 'dur', x: W - 2, y: y + 14, 'text-anchor': 'end' }, ms(d)));
      row.firstChild.append(svg('title', {}, s.label + ' · ' + ms(d) + (s.usage ? ' · ' + tokens(s.usage) : '')));
      g.append(row);
    });
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.span : null;
    this.svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    this.svg.setAttribute('width', W);
    this.svg.setAttribute('height', H);
    this.svg.replaceChildren(g);
    if (focused && this.svg.contains(document.activeElement) === false) {
      const again = this.svg.querySelector('[data-span="' + focused + '"]');
      if (again) again.focus();
    }
    if (this.selected) this.show(this.spans.find((s) => s.id === this.selected), now);
  }

  pick(target) {
    const row = target && target.closest ? target.closest('[data-span]') : null;
    if (!row) return;
    this.selected = Number(row.dataset.span);
    this.render();
  }

  // show writes the picked span's crumbs: its input, output and error.
  show(s, now) {
    if (!s) return;
    const d = this.endOf(s, now) - s.start;
    const text = s.text.length ? s.text.join('') + (s.chars > CAP ? '…' : '') : '';
    this.detail.replaceChildren(h('div.wf-pick',
      h('h3', s.label),
      h('p.muted', s.kind + ' · starts at +' + ms(s.start - this.t0) + ' · ' + (s.end === null ? 'running, ' : '') + ms(s.durationMs || d) +
        (s.deltas ? ' · ' + s.deltas + ' deltas, ' + s.chars + ' chars' : '')),
      s.usage ? h('p.tokens', tokens(s.usage)) : null,
      s.input !== undefined ? [h('div.muted', 'input'), h('pre', json(s.input))] : null,
      text ? [h('div.muted', 'streamed text'), h('pre', text)] : null,
      s.output !== undefined ? [h('div.muted', 'output'), h('pre', json(s.output))] : null,
      s.error ? [h('div.muted', 'error'), h('pre.bad', json(s.error))] : null,
      h('details', h('summary', s.crumbs.length + ' crumb(s)'), h('pre', s.crumbs.map((c) => json(c)).join('\n')))));
  }
}

function clip(s, n) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }
