import { h, json, time, errorBox } from './dom.js';
import { api, stream, download } from './api.js';
import { schemaForm } from './form.js';
import { Waterfall, tokens } from './waterfall.js';

const LABELS = {
  starting: 'starting', running: 'running', waiting: 'waiting for a human', completed: 'completed',
  failed: 'failed', cancelled: 'cancelled (RUN_CANCELLED)', lost: 'lost (RUN_LOST)',
};
const OPENS = { 'subagent:run:start': 1, 'pipeline:step:start': 1, 'loop:start': 1, 'loop:iteration:start': 1, 'task:start': 1 };
const CLOSES = { 'subagent:run:end': 1, 'pipeline:step:end': 1, 'loop:end': 1, 'loop:iteration:end': 1, 'task:end': 1 };
let uid = 0;

// RunView shows runs: the conversation (text, reasoning, tool cards,
// files, humans in the loop, errors), a status bar with Cancel, and the
// crumb timeline. Each run is one turn; a view may hold several (a chat).
export class RunView {
  constructor({ onRun } = {}) {
    this.onRun = onRun || (() => {});
    this.badge = h('span.badge.starting', 'idle');
    this.info = h('span');
    this.usage = h('span.tokens', { 'aria-label': 'Tokens of the run' });
    this.cancelBtn = h('button.danger', { type: 'button', disabled: true, onclick: () => this.cancel() }, 'Cancel');
    this.status = h('div.status', h('span', { role: 'status', 'aria-live': 'polite' }, 'Status: ', this.badge), this.info, this.usage, this.cancelBtn);
    this.chat = h('div.chat', { role: 'log', 'aria-label': 'Conversation' });
    const fid = 'crumb-filter-' + (++uid);
    this.filter = h('select', { id: fid }, h('option', { value: '' }, 'all types'));
    this.filter.addEventListener('change', () => this.applyFilter());
    this.list = h('ol', { 'aria-label': 'Crumbs, oldest first' });
    this.timeline = h('section.timeline', { 'aria-label': 'Crumb timeline' },
      h('div.row', h('h2', 'Crumbs'), h('label', { for: fid }, 'Show'), this.filter), this.list);
    this.wfSlot = h('div');
    this.waterfall = h('section.timeline.wf-section', { 'aria-label': 'Waterfall' },
      h('h2', 'Waterfall'), h('p.muted.small', 'Click or press Enter on a bar to see its crumbs.'), this.wfSlot);
    this.main = h('section', { 'aria-label': 'Run' }, this.status, this.chat);
    this.side = h('div.side', this.waterfall, this.timeline);
    this.el = h('div.chat-layout', this.main, this.side);
    this.types = new Set();
    this.turn = null;
    this.aborter = new AbortController();
  }

  dispose() {
    this.aborter.abort();
    if (this.turn) this.turn.wf.dispose();
  }

  get busy() { return this.turn && (this.turn.state === 'running' || this.turn.state === 'starting'); }

  newTurn(mode) {
    const t = {
      mode, state: 'starting', id: '', agentId: '', sessionId: '', started: false, hasText: false,
      tools: new Map(), calls: new Map(), hitl: new Map(), files: new Set(), depth: 0, live: true,
    };
    t.el = h('div.turn');
    t.stack = [t.el];
    if (this.turn) this.turn.wf.dispose();
    t.wf = new Waterfall();
    this.wfSlot.replaceChildren(t.wf.el);
    t.usage = null;
    this.usage.textContent = '';
    this.chat.append(t.el);
    this.turn = t;
    this.setState(t, 'starting');
    if (this.list.children.length) this.list.append(h('li', h('span'), h('span'), h('span.sum.muted', '— next run —')));
    return t;
  }

  // start runs an agent or pipeline (POST path) and follows its stream.
  async start(path, body, userText) {
    const t = this.newTurn('post');
    if (userText !== undefined) this.user(t, userText);
    await this.follow(t, () => stream('POST', path, Object.assign({}, body, { detach: true }), (f) => this.frame(t, f), this.aborter.signal));
  }

  // attach follows a run by id on the passive stream: the whole crumb log,
  // then live.
  async attach(runId) {
    const t = this.newTurn('passive');
    t.id = runId;
    this.onRun(t);
    this.showInfo(t);
    await this.follow(t, () => stream('GET', '/runs/' + encodeURIComponent(runId) + '/stream', undefined, (f) => this.frame(t, f), this.aborter.signal));
  }

  async follow(t, open) {
    t.live = true;
    t.wf.setLive(true);
    try {
      await open();
      if (t.state === 'running' || t.state === 'starting') this.setState(t, t.id ? 'completed' : 'failed');
    } catch (e) {
      if (e.name === 'AbortError') return;
      t.el.append(errorBox(e));
      this.setState(t, 'failed');
    } finally {
      t.live = false;
      t.wf.setLive(false);
    }
  }

  frame(t, f) {
    if (f && f.error && f.type !== 'crumb') {
      // A stream may end in an error frame rather than a crumb.
      t.el.append(errorBox(f.error));
      this.setState(t, 'failed');
      return;
    }
    if (!f || f.type !== 'crumb' || !f.crumb) return;
    if (f.runId && !t.id) {
      t.id = f.runId;
      this.onRun(t);
    }
    this.crumb(t, f.crumb, f.seq);
  }

  setState(t, s) {
    t.state = s;
    if (t !== this.turn) return;
    this.badge.className = 'badge ' + s;
    this.badge.textContent = LABELS[s] || s;
    this.cancelBtn.disabled = !t.id || !(s === 'running' || s === 'waiting' || s === 'starting');
  }

  showInfo(t) {
    this.info.replaceChildren(h('span',
      'run ', h('code', t.id || '…'),
      t.pipelineId ? [' · pipeline ', h('code', t.pipelineId)] : null,
      t.agentId ? [' · agent ', h('code', t.agentId)] : null,
      t.sessionId ? [' · session ', h('a', { href: '#/sessions/' + encodeURIComponent(t.sessionId) }, t.sessionId)] : null,
      t.id ? [' · ', h('a', { href: '#/compare/' + encodeURIComponent(t.id) + '/' }, 'compare with another run')] : null));
    this.setState(t, t.state);
  }

  async cancel() {
    const t = this.turn;
    if (!t || !t.id) return;
    this.cancelBtn.disabled = true;
    try {
      await api('POST', '/runs/' + encodeURIComponent(t.id) + '/cancel');
    } catch (e) {
      t.el.append(errorBox(e));
      this.setState(t, t.state);
    }
  }

  user(t, input) {
    const text = typeof input === 'string' ? input : json(input);
    t.el.append(h('div.msg.user', h('span.who', 'you'), text));
  }

  here(t) { return t.stack[t.stack.length - 1]; }

  crumb(t, c, seq) {
    this.record(t, c, seq);
    t.wf.add(c);
    const at = this.here(t);
    if (!t.started && c.type === 'pipeline:step:start') {
      // A pipeline's run: its agents' runs nest in its steps.
      t.started = true;
      t.pipelineId = c.pipelineId;
      this.showInfo(t);
      this.setState(t, 'running');
    }
    switch (c.type) {
      case 'agent:run:start':
        if (t.started && t.stack.length > 1) {
          // One agent's run inside a step, a loop or a delegation: its
          // text starts a bubble of its own.
          at.append(h('div.muted', 'run of ' + c.agentId));
        }
        if (!t.started) {
          t.started = true;
          t.agentId = c.agentId;
          t.sessionId = c.sessionId || '';
          if (t.mode === 'passive' && c.input !== undefined) at.prepend(h('div.msg.user', h('span.who', 'input'), typeof c.input === 'string' ? c.input : json(c.input)));
          this.showInfo(t);
          this.setState(t, 'running');
        }
        break;
      case 'text:delta':
        this.stream(t, 'text', c.agentId, c.delta);
        t.hasText = true;
        break;
      case 'reasoning:delta':
        this.stream(t, 'reasoning', c.agentId, c.delta);
        break;
      case 'tool:input:start':
        this.tool(t, c.toolCallId, c.toolName);
        break;
      case 'tool:input:delta': {
        const card = this.tool(t, c.toolCallId);
        card.raw += c.delta;
        card.args.textContent = card.raw;
        break;
      }
      case 'tool:call': {
        const card = this.tool(t, c.toolCallId, c.toolName);
        card.args.textContent = json(c.args);
        t.calls.set(c.toolName, c.args);
        break;
      }
      case 'tool:result:partial':
        this.tool(t, c.toolCallId, c.toolName).result.textContent = json(c.result);
        break;
      case 'tool:result': {
        const card = this.tool(t, c.toolCallId, c.toolName);
        card.result.textContent = json(c.result);
        card.dur.textContent = c.durationMs + ' ms';
        break;
      }
      case 'tool:error': {
        const card = this.tool(t, c.toolCallId, c.toolName);
        card.result.replaceWith(errorBox(c.error));
        card.dur.textContent = 'failed · ' + c.durationMs + ' ms';
        break;
      }
      case 'file:generated':
        if (!t.files.has(c.uri)) at.append(this.file(t, c));
        break;
      case 'human:required':
        // A turn that asks several humans repeats the pending ones after
        // each partial answer: one card per checkpoint.
        if (!t.hitl.has(c.checkpointId)) at.append(this.hitl(t, c));
        this.setState(t, 'waiting');
        break;
      case 'human:resumed': {
        const card = t.hitl.get(c.checkpointId);
        if (card) this.answered(card, c.response);
        this.setState(t, 'running');
        break;
      }
      case 'agent:run:end':
        if (c.usage) {
          // The turn's tokens: every run's own model calls, delegations
          // and pipeline steps included.
          const u = t.usage || { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
          for (const k of ['inputTokens', 'outputTokens', 'totalTokens']) u[k] += c.usage[k] || 0;
          t.usage = u;
          if (t === this.turn) this.usage.textContent = tokens(u);
        }
        if (t.stack.length > 1 && !at.querySelector('.msg') && c.output !== undefined && c.output !== null && c.output !== '') {
          at.append(h('div.msg', h('span.who', c.agentId + ' · output'), json(c.output)));
        }
        // The turn's own agent ends the turn; a delegation streamed
        // through (passthrough) ends only itself.
        if (t.stack.length === 1 && c.agentId === t.agentId) {
          if (!t.hasText && c.output !== undefined && c.output !== null && c.output !== '') at.append(h('div.msg', h('span.who', 'output'), json(c.output)));
          for (const f of c.files || []) if (!t.files.has(f.uri)) at.append(this.file(t, f));
          at.append(h('p.muted', 'Finished in ' + c.durationMs + ' ms' + (t.usage ? ' · ' + tokens(t.usage) : '') + '.'));
          this.setState(t, 'completed');
        }
        break;
      case 'agent:error': {
        const err = c.error || {};
        at.append(errorBox(err));
        if ((t.stack.length === 1 && (c.agentId === t.agentId || !t.agentId)) || err.code === 'RUN_CANCELLED' || err.code === 'RUN_LOST') {
          this.setState(t, err.code === 'RUN_CANCELLED' ? 'cancelled' : err.code === 'RUN_LOST' ? 'lost' : 'failed');
        }
        break;
      }
      default:
        if (OPENS[c.type]) this.open(t, c);
        else if (CLOSES[c.type]) this.close(t, c);
    }
  }

  stream(t, kind, agentId, delta) {
    const at = this.here(t);
    let last = at.lastElementChild;
    if (!last || last.dataset.kind !== kind || last.dataset.agent !== agentId) {
      last = h('div.' + (kind === 'text' ? 'msg' : 'reasoning'), h('span.who', kind === 'text' ? agentId : agentId + ' · thinking'), h('span.' + kind));
      last.dataset.kind = kind;
      last.dataset.agent = agentId;
      at.append(last);
    }
    last.lastElementChild.append(delta);
  }

  tool(t, id, name) {
    let card = t.tools.get(id);
    if (card) {
      if (name && !card.name.textContent) card.name.textContent = name;
      return card;
    }
    card = { raw: '', name: h('span', name || ''), dur: h('span.muted', 'running…'), args: h('pre'), result: h('pre', '…') };
    card.el = h('details.tool', h('summary', 'tool ', card.name, ' · ', card.dur),
      h('div', h('div.muted', 'arguments'), card.args, h('div.muted', 'result'), card.result));
    t.tools.set(id, card);
    this.here(t).append(card.el);
    return card;
  }

  file(t, f) {
    const uri = f.uri || f.url || '';
    t.files.add(uri);
    const key = decodeURIComponent(uri.split('/').pop() || '');
    const name = f.name || key || 'file';
    return h('div.row', 'file ', h('button.secondary', {
      type: 'button', 'aria-label': 'Download ' + name,
      onclick: (ev) => {
        const btn = ev.currentTarget;
        download('/runs/' + encodeURIComponent(t.id) + '/files/' + encodeURIComponent(key), name)
          .then(() => { btn.textContent = 'Downloaded ' + name; })
          .catch((e) => btn.after(errorBox(e)));
      },
    }, 'Download ' + name), f.mimeType ? h('span.muted', f.mimeType) : null);
  }

  hitl(t, c) {
    const card = h('div.hitl', { role: 'group', 'aria-label': 'A human is needed: ' + c.toolName });
    card.dataset.checkpoint = c.checkpointId;
    if (c.kind === 'approval') {
      // An approval's schema is the call's arguments.
      const rid = 'reason-' + (++uid);
      const reason = h('input', { id: rid });
      card.append(h('div',
        h('h4', 'Approve ' + c.toolName + '?'), c.prompt ? h('p', c.prompt) : null,
        h('div.muted', 'arguments'), h('pre', json(c.schema === undefined || c.schema === null ? (t.calls.get(c.toolName) || {}) : c.schema)),
        h('div.row',
          h('button', { type: 'button', onclick: () => this.answer(t, c, { approved: true }, card) }, 'Approve'),
          h('button.secondary', { type: 'button', onclick: () => this.answer(t, c, reason.value ? { approved: false, reason: reason.value } : { approved: false }, card) }, 'Deny'),
          h('label', { for: rid }, 'Reason to deny'), reason)));
    } else {
      // The crumb's schema is the model's request; the answer's schema is
      // the human tool's, from GET /agents/{id}. Without it the form
      // follows the request's shape, filled with what the model asked.
      const slot = h('div', h('p.muted', 'Loading the form…'));
      card.append(h('div',
        h('h4', c.toolName + ' asks'), c.prompt ? h('p', c.prompt) : null,
        h('div.muted', 'request'), h('pre', json(c.schema)), slot));
      this.answerSchema(c.agentId, c.toolName).then((schema) => {
        slot.replaceChildren(schemaForm(schema || shapeOf(c.schema), { submitLabel: 'Answer', name: 'answer', onSubmit: (v) => this.answer(t, c, v, card) }));
        if (card.querySelector('.answer')) this.answered(card);
      });
    }
    t.hitl.set(c.checkpointId, card);
    return card;
  }

  answered(card, response) {
    for (const el of card.querySelectorAll('button, input, textarea, select')) el.disabled = true;
    if (!card.querySelector('.answer')) card.append(h('p.answer', 'Answered: ', h('code', JSON.stringify(response))));
  }

  // answerSchema is the answer schema of agentId's human tool toolName, or
  // null.
  answerSchema(agentId, toolName) {
    this.agents = this.agents || new Map();
    if (!this.agents.has(agentId)) this.agents.set(agentId, api('GET', '/agents/' + encodeURIComponent(agentId)).catch(() => null));
    return this.agents.get(agentId).then((a) => {
      const tool = a && (a.humanTools || []).find((x) => x.name === toolName);
      return tool && tool.schema ? tool.schema : null;
    });
  }

  async answer(t, c, response, card) {
    for (const el of card.querySelectorAll('button')) el.disabled = true;
    const path = '/resume/' + encodeURIComponent(c.checkpointId);
    if (t.mode === 'passive' && t.live) {
      // The passive stream stays open across human:required and carries
      // the continuation; the resume's own stream is read and dropped.
      try {
        await stream('POST', path, { response, detach: true }, () => {}, this.aborter.signal);
      } catch (e) {
        if (e.name !== 'AbortError') { card.append(errorBox(e)); for (const el of card.querySelectorAll('button')) el.disabled = false; }
      }
      return;
    }
    this.setState(t, 'running');
    this.turn = t;
    try {
      await this.follow(t, () => stream('POST', path, { response, detach: true }, (f) => this.frame(t, f), this.aborter.signal));
    } finally {
      if (t.state === 'failed' && !card.querySelector('.answer')) for (const el of card.querySelectorAll('button')) el.disabled = false;
    }
  }

  open(t, c) {
    let label = c.type;
    if (c.type === 'subagent:run:start') label = 'subagent ' + c.subagentId;
    else if (c.type === 'pipeline:step:start') label = 'step ' + (c.stepIndex + 1) + ' of ' + c.pipelineId;
    else if (c.type === 'loop:start') label = 'loop ' + (c.loopId || '');
    else if (c.type === 'loop:iteration:start') label = 'iteration ' + c.iteration;
    else if (c.type === 'task:start') label = 'task ' + (c.taskId || '');
    const body = h('div');
    const block = h('details.block', { open: true }, h('summary', label), body);
    this.here(t).append(block);
    t.stack.push(body);
  }

  close(t) {
    if (t.stack.length > 1) t.stack.pop();
  }

  record(t, c, seq) {
    const depth = t.stack.length - 1 - (CLOSES[c.type] ? 1 : 0);
    const delta = c.type === 'text:delta' || c.type === 'reasoning:delta' || c.type === 'tool:input:delta';
    const last = this.list.lastElementChild;
    if (delta && last && last.dataset.type === c.type && last.dataset.agent === c.agentId) {
      last.count++;
      last.chars += (c.delta || '').length;
      last.lastElementChild.textContent = c.type + ' ×' + last.count + ' (' + last.chars + ' chars) ' + c.agentId;
      return;
    }
    if (!this.types.has(c.type)) {
      this.types.add(c.type);
      this.filter.append(h('option', { value: c.type }, c.type));
    }
    const li = h('li', h('span', seq ? String(seq) : ''), h('span', time(c.timestamp)), h('span.sum', summary(c)));
    li.dataset.type = c.type;
    li.dataset.agent = c.agentId || '';
    li.count = 1;
    li.chars = (c.delta || '').length;
    li.lastElementChild.style.paddingLeft = Math.max(0, depth) * 14 + 'px';
    if (this.filter.value && this.filter.value !== c.type) li.hidden = true;
    this.list.append(li);
  }

  applyFilter() {
    const only = this.filter.value;
    for (const li of this.list.children) li.hidden = !!only && li.dataset.type !== only;
  }
}

// shapeOf is a JSON Schema for values shaped like v, with v's values as
// defaults; a value that already is a JSON Schema is used as it is.
export function shapeOf(v) {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    if (typeof v.type === 'string' && (v.properties || ['string', 'number', 'integer', 'boolean', 'object', 'array'].includes(v.type))) return v;
    const properties = {};
    for (const [k, x] of Object.entries(v)) properties[k] = Object.assign(shapeOf(x), { default: x });
    return { type: 'object', properties };
  }
  if (typeof v === 'string') return { type: 'string', default: v };
  if (typeof v === 'number') return { type: 'number', default: v };
  if (typeof v === 'boolean') return { type: 'boolean', default: v };
  return {};
}

function summary(c) {
  const who = c.agentId || '';
  switch (c.type) {
    case 'text:delta': case 'reasoning:delta': return c.type + ' ×1 (' + (c.delta || '').length + ' chars) ' + who;
    case 'tool:call': case 'tool:input:start': return c.type + ' ' + c.toolName + ' ' + who;
    case 'tool:result': case 'tool:error': return c.type + ' ' + c.toolName + ' ' + c.durationMs + ' ms';
    case 'human:required': return c.type + ' ' + c.kind + ' ' + c.toolName;
    case 'agent:error': return c.type + ' ' + ((c.error && c.error.code) || '');
    case 'agent:run:end': return c.type + ' ' + who + ' ' + c.durationMs + ' ms';
    case 'subagent:run:start': return c.type + ' ' + c.subagentId;
    case 'pipeline:step:start': case 'pipeline:step:end': return c.type + ' #' + c.stepIndex;
    default: return c.type + ' ' + who;
  }
}
