import { h, json, errorBox } from './dom.js';
import { api, stream } from './api.js';
import { tokens, ms } from './waterfall.js';

// Two runs side by side (#/compare/{a}/{b}): what went in and came out,
// how long and how many tokens and model calls they took, their tool calls
// and errors, with each difference marked (a sign and a row class, not a
// colour alone), then a diff of their outputs, tool calls and crumb
// sequences. Each run is read from its record and its passive stream, so
// a run still going fills in as it goes.

// summary reads a run's crumbs: the first agent's input, output and
// duration, every agent:run:end's usage and model calls (delegations and
// pipeline steps included), the tool calls, the errors, and the crumb
// types in order with repeats folded (a stream of deltas is one entry).
export function summary(crumbs) {
  const s = { agentId: '', pipelineId: '', input: undefined, output: undefined, durationMs: 0, usage: null, modelCalls: 0, tools: [], errors: [], types: [] };
  const byCall = new Map();
  let ended = false;
  for (const c of crumbs) {
    if (s.types[s.types.length - 1] !== c.type) s.types.push(c.type);
    switch (c.type) {
      case 'pipeline:step:start':
        if (!s.agentId && !s.pipelineId) s.pipelineId = c.pipelineId;
        break;
      case 'pipeline:step:end':
        if (c.pipelineId === s.pipelineId) s.output = c.output;
        break;
      case 'agent:run:start':
        if (!s.agentId) {
          s.agentId = c.agentId;
          if (s.input === undefined) s.input = c.input;
        }
        break;
      case 'agent:run:end':
        if (c.usage) {
          const u = s.usage || { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
          for (const k of Object.keys(u)) u[k] += c.usage[k] || 0;
          s.usage = u;
        }
        s.modelCalls += (c.modelCalls || []).length;
        if (c.agentId === s.agentId && !s.pipelineId) {
          s.output = c.output;
          s.durationMs = c.durationMs;
          ended = true;
        }
        break;
      case 'tool:call': {
        const t = { name: c.toolName, args: c.args, result: undefined, error: null };
        byCall.set(c.toolCallId, t);
        s.tools.push(t);
        break;
      }
      case 'tool:result': {
        const t = byCall.get(c.toolCallId);
        if (t) t.result = c.result;
        break;
      }
      case 'tool:error': {
        const t = byCall.get(c.toolCallId);
        if (t) t.error = c.error;
        break;
      }
      case 'agent:error':
        if (c.error) s.errors.push(c.error);
        break;
    }
  }
  if (!ended && crumbs.length > 1) s.durationMs = crumbs[crumbs.length - 1].timestamp - crumbs[0].timestamp;
  return s;
}

// diff is the shortest edit turning list a into list b, as [op, value]
// with op '=', '-' or '+', by the longest common subsequence after the
// common ends are cut off; null when what is left is too big to compare
// here (more than four million cells).
export function diff(a, b) {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const x = a.slice(pre, a.length - suf), y = b.slice(pre, b.length - suf);
  const n = x.length, m = y.length;
  if ((n + 1) * (m + 1) > 4e6) return null;
  const L = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * (m + 1) + j] = x[i] === y[j] ? L[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(L[(i + 1) * (m + 1) + j], L[i * (m + 1) + j + 1]);
    }
  }
  const out = a.slice(0, pre).map((v) => ['=', v]);
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { out.push(['=', x[i]]); i++; j++; }
    else if (i < n && (j === m || L[(i + 1) * (m + 1) + j] >= L[i * (m + 1) + j + 1])) out.push(['-', x[i++]]);
    else out.push(['+', y[j++]]);
  }
  for (const v of a.slice(a.length - suf)) out.push(['=', v]);
  return out;
}

const text = (v) => (v === undefined ? '' : typeof v === 'string' ? v : json(v));
const words = (s) => s.split(/(\s+)/).filter((w) => w !== '');
const total = (u) => (u ? u.totalTokens || (u.inputTokens || 0) + (u.outputTokens || 0) : 0);
const toolLine = (t) => t.name + ' ' + JSON.stringify(t.args === undefined ? null : t.args) + (t.error ? ' → ' + (t.error.code || 'error') : '');

// phrases joins the changes a diff of words interleaves: the words of one
// changed phrase, and the spaces kept between them, read as one struck
// phrase followed by one new one.
function phrases(ops) {
  const out = [];
  let del = '', ins = '';
  const flush = () => {
    if (del) out.push(['-', del]);
    if (ins) out.push(['+', ins]);
    del = ins = '';
  };
  ops.forEach(([op, v], k) => {
    if (op === '-') del += v;
    else if (op === '+') ins += v;
    else if ((del || ins) && !v.trim() && ops[k + 1] && ops[k + 1][0] !== '=') { del += v; ins += v; }
    else { flush(); out.push([op, v]); }
  });
  flush();
  return out;
}

// textDiff marks the words (or, for long texts, the lines) of b that are
// not in a and those of a that are not in b.
function textDiff(a, b, label) {
  let ops = diff(words(a), words(b));
  if (!ops) ops = diff(a.split('\n').map((l) => l + '\n'), b.split('\n').map((l) => l + '\n'));
  if (!ops) return h('p.muted', 'The outputs differ; they are too long to compare here.');
  return h('div.diff', { role: 'group', 'aria-label': label }, phrases(ops).map(([op, v]) => (op === '=' ? v : h(op === '+' ? 'ins' : 'del', v))));
}

// listDiff is a list, one entry per line: kept, only in A (−), only in
// B (+).
function listDiff(a, b, label) {
  const ops = diff(a, b);
  if (!ops) return h('p.muted', 'Too long to compare here.');
  if (!ops.length) return h('p.muted', 'None in either run.');
  return h('ol.diff-list', { 'aria-label': label }, ops.map(([op, v]) => h('li' + (op === '+' ? '.add' : op === '-' ? '.del' : ''),
    h('span.sign', { 'aria-label': op === '+' ? 'only in B' : op === '-' ? 'only in A' : 'in both' }, op === '=' ? '\u00a0' : op === '+' ? '+' : '−'), ' ', v)));
}

function change(a, b, fmt) {
  if (!a || a === b) return '';
  const d = b - a;
  return ' (' + (d > 0 ? '+' : '−') + fmt(Math.abs(d)) + ', ' + (d > 0 ? '+' : '−') + Math.round((Math.abs(d) / a) * 100) + '%)';
}

// table puts the two runs' summaries side by side, a row per property.
function table(ids, [ra, rb], [a, b]) {
  const status = (r, s) => (r ? r.status + (r.errorCode ? ' · ' + r.errorCode : '') : s.errors.length ? 'failed' : 'unknown');
  const rows = [
    ['Agent', a.pipelineId ? 'pipeline ' + a.pipelineId : a.agentId, b.pipelineId ? 'pipeline ' + b.pipelineId : b.agentId],
    ['Status', status(ra, a), status(rb, b)],
    ['Input', text(a.input), text(b.input), 'pre'],
    ['Output', text(a.output), text(b.output), 'pre'],
    ['Duration', a.durationMs, b.durationMs, 'num', ms],
    ['Tokens', total(a.usage), total(b.usage), 'num', (n) => n.toLocaleString('en') + ' tokens', (s) => tokens(s.usage) || '—'],
    ['Model calls', a.modelCalls, b.modelCalls, 'num', String],
    ['Tool calls', a.tools.map(toolLine).join('\n'), b.tools.map(toolLine).join('\n'), '', null, (s) => String(s.tools.length) + (s.tools.length ? ': ' + s.tools.map((t) => t.name).join(', ') : '')],
    ['Errors', a.errors.map((e) => e.code + ': ' + e.message).join('\n'), b.errors.map((e) => e.code + ': ' + e.message).join('\n'), 'pre'],
  ];
  const sums = [a, b];
  return h('div.table-wrap', h('table.cmp',
    h('caption.muted', 'Differences are marked ≠; B\'s change from A follows its figure.'),
    h('thead', h('tr', h('th', { scope: 'col' }, ''), ids.map((id, i) => h('th', { scope: 'col' }, (i ? 'B · ' : 'A · '), h('a', { href: '#/runs/' + encodeURIComponent(id) }, id))))),
    h('tbody', rows.map(([label, va, vb, kind, fmt, show]) => {
      const differs = va !== vb;
      const cell = (v, i) => {
        const shown = show ? show(sums[i]) : fmt ? fmt(v) : v;
        const extra = i === 1 && kind === 'num' && fmt ? change(va, vb, fmt) : '';
        if (kind === 'pre') return h('td', shown === '' ? h('span.muted', '—') : h('pre', shown));
        return h('td' + (kind === 'num' ? '.num' : ''), shown === '' ? h('span.muted', '—') : shown + extra);
      };
      return h('tr' + (differs ? '.differs' : ''), h('th', { scope: 'row' }, differs ? h('span.diff-mark', { title: 'differs' }, '≠ ') : null, label,
        differs ? h('span.sr', ' (differs)') : null), cell(va, 0), cell(vb, 1));
    }))));
}

// read reads a run's record (null when the store keeps none) and
// crumbs, calling onCrumbs as they arrive, until the run's stream ends.
async function read(id, onCrumbs, signal) {
  const rec = api('GET', '/runs/' + encodeURIComponent(id)).catch((e) => (e.code === 'NOT_IMPLEMENTED' ? null : Promise.reject(e)));
  const crumbs = [];
  const done = stream('GET', '/runs/' + encodeURIComponent(id) + '/stream', undefined, (f) => {
    if (f && f.type === 'crumb' && f.crumb) {
      crumbs.push(f.crumb);
      onCrumbs(crumbs);
    }
  }, signal);
  return { rec: await rec, crumbs, done };
}

// compare renders the page into main; it returns a disposer.
export function compare(main, a, b) {
  const aborter = new AbortController();
  document.title = 'Compare runs · bread console';
  const ia = h('input', { id: 'cmp-a', value: a || '', required: true, spellcheck: 'false' });
  const ib = h('input', { id: 'cmp-b', value: b || '', required: true, spellcheck: 'false' });
  main.append(h('h1', 'Compare runs'), h('form.row.cmp-form', {
    onsubmit: (ev) => {
      ev.preventDefault();
      location.hash = '#/compare/' + encodeURIComponent(ia.value.trim()) + '/' + encodeURIComponent(ib.value.trim());
    },
  }, h('label', { for: 'cmp-a' }, 'Run A'), ia, h('label', { for: 'cmp-b' }, 'Run B'), ib, h('button', { type: 'submit' }, 'Compare')));
  const out = h('div', { 'aria-live': 'polite' });
  main.append(out);
  if (!a || !b) {
    if (a) candidates(a, out).catch((e) => out.append(errorBox(e)));
    return () => aborter.abort();
  }
  out.append(h('p.muted', 'Reading both runs…'));
  const got = [null, null];
  let timer = 0;
  const draw = () => {
    timer = 0;
    if (!got[0] || !got[1]) return;
    const sums = got.map((g) => summary(g.crumbs));
    out.replaceChildren(
      table([a, b], got.map((g) => g.rec), sums),
      h('h2', 'Output'), textDiff(text(sums[0].output), text(sums[1].output), 'The outputs, words only in A struck out, words only in B underlined'),
      h('h2', 'Tool calls'), listDiff(sums[0].tools.map(toolLine), sums[1].tools.map(toolLine), 'The tool calls, in order'),
      h('h2', 'Crumbs'), h('p.muted.small', 'The crumb types in order, a run of one type shown once.'),
      listDiff(sums[0].types, sums[1].types, 'The crumb sequences'));
  };
  const later = () => { if (!timer) timer = setTimeout(draw, 150); };
  Promise.all([a, b].map((id, i) => read(id, later, aborter.signal).then((g) => { got[i] = g; later(); return g.done; })))
    .then(() => { clearTimeout(timer); draw(); })
    .catch((e) => { if (e.name !== 'AbortError') out.replaceChildren(errorBox(e)); });
  return () => { aborter.abort(); clearTimeout(timer); };
}

// candidates lists the other runs of run a's session to compare it with.
async function candidates(a, out) {
  const rec = await api('GET', '/runs/' + encodeURIComponent(a));
  if (!rec.sessionId) return;
  const runs = (await api('GET', '/sessions/' + encodeURIComponent(rec.sessionId) + '/runs')).filter((r) => r.id !== a);
  if (!runs.length) return;
  out.append(h('h2', 'Other runs of its session'), h('ul', runs.map((r) => h('li',
    h('a', { href: '#/compare/' + encodeURIComponent(a) + '/' + encodeURIComponent(r.id) }, 'Compare with ' + r.id),
    h('span.muted', ' · ' + (r.pipelineId ? 'pipeline ' + r.pipelineId : r.agentId) + ' · ' + r.status + ' · ' + new Date(r.createdAt).toLocaleString())))));
}
