import { h, json, time, errorBox } from './dom.js';
import { api, token, setToken } from './api.js';
import { schemaForm } from './form.js';
import { RunView } from './run.js';
import { tokens, ms } from './waterfall.js';
import { bars } from './chart.js';
import { compare } from './compare.js';
import { evals, evalRun } from './evals.js';

const main = document.getElementById('main');
let view = null; // the current page's disposable part

const tokenInput = document.getElementById('token');
tokenInput.value = token();
tokenInput.addEventListener('change', () => {
  const v = tokenInput.value.trim();
  if (v === token()) return; // a blur after the same value: nothing to redo
  setToken(v);
  route();
});

window.addEventListener('hashchange', route);
route();

function route() {
  if (view && view.dispose) view.dispose();
  view = null;
  const [path, query] = (location.hash.replace(/^#/, '') || '/').split('?');
  const q = new URLSearchParams(query || '');
  const [section, id, sub] = path.split('/').filter(Boolean).map(decodeURIComponent);
  main.replaceChildren();
  let page;
  if (!section) page = home();
  else if (section === 'agents' && id) page = chat({ kind: 'agent', id, session: q.get('session') });
  else if (section === 'pipelines' && id) page = chat({ kind: 'pipeline', id });
  else if (section === 'runs' && id) page = chat({ runId: id });
  else if (section === 'sessions' && id) page = session(id);
  else if (section === 'sessions') page = sessions(q.getAll('tag'));
  else if (section === 'evals' && id && sub) page = evalRun(main, id, sub);
  else if (section === 'evals') page = evals(main, id);
  else if (section === 'compare') {
    const dispose = compare(main, id, sub);
    view = { dispose };
    return;
  }
  else {
    main.append(h('h1', 'Not found'), h('p', h('a', { href: '#/' }, 'Back to the agents')));
    return;
  }
  page.catch((e) => main.append(errorBox(e)));
}

function title(text) {
  document.title = text + ' · bread console';
  main.append(h('h1', text));
}

async function home() {
  title('Agents and pipelines');
  const [agents, pipelines] = await Promise.all([api('GET', '/agents'), api('GET', '/pipelines').catch(() => [])]);
  main.append(h('h2', 'Agents'));
  main.append(agents.length ? h('div.grid', agents.map((a) => h('article.card',
    h('h3', a.id),
    h('p', a.description || h('span.muted', 'No description.')),
    h('p.muted', a.model.provider + ' / ' + a.model.model + ' · ' + a.outputFormat),
    a.inputSchema ? h('details', h('summary', 'Input schema'), h('pre', json(a.inputSchema))) : null,
    h('div.row',
      h('a.button', { href: '#/agents/' + encodeURIComponent(a.id), 'aria-label': 'Chat with ' + a.id }, 'Chat'),
      h('a.button.secondary', { href: '#/evals/' + encodeURIComponent(a.id), 'aria-label': 'Evals of ' + a.id }, 'Evals'))))) : h('p.muted', 'No agents.'));
  if (pipelines.length) {
    main.append(h('h2', 'Pipelines'), h('div.grid', pipelines.map((p) => h('article.card',
      h('h3', p.id), h('p', p.description),
      h('a.button', { href: '#/pipelines/' + encodeURIComponent(p.id), 'aria-label': 'Run pipeline ' + p.id }, 'Run')))));
  }
}

// sessionId is a random UUID (version 4): under the session ownership
// rule a caller may name a new session only so. Built from getRandomValues
// because crypto.randomUUID exists only in secure contexts (not on a page
// served over plain HTTP on a LAN address).
function sessionId() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = Array.from(b, (v) => v.toString(16).padStart(2, '0')).join('');
  return x.slice(0, 8) + '-' + x.slice(8, 12) + '-' + x.slice(12, 16) + '-' + x.slice(16, 20) + '-' + x.slice(20);
}

// chat is an agent's or pipeline's page, or a run's (#/runs/{id}, opened
// from its URL: the passive stream replays it, then follows it live).
async function chat({ kind, id, session, runId }) {
  const head = h('div');
  main.append(head);
  const rv = new RunView({
    onRun: (t) => {
      if (t.id && location.hash !== '#/runs/' + encodeURIComponent(t.id)) history.replaceState(null, '', '#/runs/' + encodeURIComponent(t.id));
      if (t.id) document.title = 'Run ' + t.id + ' · bread console';
    },
  });
  view = rv;
  const composer = h('section.composer', { 'aria-label': 'New message' });
  rv.main.append(composer);
  main.append(rv.el);
  const state = { kind, id, session: session || sessionId() };

  const setup = async () => {
    let schema, desc = '';
    if (state.kind === 'pipeline') {
      const p = (await api('GET', '/pipelines')).find((x) => x.id === state.id);
      if (!p) throw { code: 'PIPELINE_NOT_FOUND', message: 'pipeline "' + state.id + '" not found' };
      schema = p.inputSchema;
      desc = p.description;
    } else {
      const a = await api('GET', '/agents/' + encodeURIComponent(state.id));
      schema = a.inputSchema;
      desc = a.description || '';
    }
    head.replaceChildren(h('div', h('h1', (state.kind === 'pipeline' ? 'Pipeline ' : '') + state.id), desc ? h('p', desc) : null,
      state.kind === 'agent' ? h('p.muted', 'Session ', h('a', { href: '#/sessions/' + encodeURIComponent(state.session) }, state.session)) : null));
    composer.replaceChildren(schemaForm(schema, {
      submitLabel: state.kind === 'pipeline' ? 'Run pipeline' : 'Send',
      clear: true,
      onSubmit: async (input) => {
        if (rv.busy) throw { code: 'RUN_IN_PROGRESS', message: 'wait for the current run to end, or cancel it' };
        const path = (state.kind === 'pipeline' ? '/pipelines/' : '/agents/') + encodeURIComponent(state.id) + '/run';
        const body = state.kind === 'pipeline' ? { input } : { input, session: { id: state.session, tags: { source: 'console' } } };
        rv.start(path, body, input);
      },
    }));
  };

  if (runId) {
    head.append(h('h1', 'Run ' + runId));
    document.title = 'Run ' + runId + ' · bread console';
    const done = rv.attach(runId);
    // The run's first crumb names its agent and session: the composer
    // continues that conversation.
    const wait = setInterval(() => {
      const t = rv.turn;
      if (!t || !t.started || view !== rv) {
        if (view !== rv) clearInterval(wait);
        return;
      }
      clearInterval(wait);
      if (t.agentId && t.sessionId) {
        Object.assign(state, { kind: 'agent', id: t.agentId, session: t.sessionId });
        setup().catch(() => {}); // an agent internal to a pipeline has no page
      }
    }, 100);
    await done;
    return;
  }
  await setup();
}

async function sessions(tags) {
  title('Sessions');
  const fid = 'tag-filter';
  const input = h('input', { id: fid, value: tags.join(' '), placeholder: 'key:value key:value' });
  main.append(h('form', {
    class: 'row', role: 'search',
    onsubmit: (ev) => {
      ev.preventDefault();
      const q = input.value.split(/[\s,]+/).filter(Boolean).map((t) => 'tag=' + encodeURIComponent(t)).join('&');
      location.hash = '#/sessions' + (q ? '?' + q : '');
    },
  }, h('label', { for: fid }, 'Filter by tag'), input, h('button', { type: 'submit' }, 'Filter')));
  const q = tags.map((t) => 'tag=' + encodeURIComponent(t)).join('&');
  const list = await api('GET', '/sessions' + (q ? '?' + q : ''));
  if (!list.length) {
    main.append(h('p.muted', 'No sessions.'));
    return;
  }
  list.sort((a, b) => b.updatedAt - a.updatedAt);
  const rows = list.map((s) => {
    const del = h('button.danger', { type: 'button', 'aria-label': 'Delete session ' + s.id }, 'Delete');
    const row = h('tr',
      h('td', h('a', { href: '#/sessions/' + encodeURIComponent(s.id) }, s.id)),
      h('td', s.agentId || ''),
      h('td', Object.entries(s.tags || {}).map(([k, v]) => k + ':' + v).join(' ')),
      h('td', new Date(s.updatedAt).toLocaleString()),
      tokenCell(s.id),
      h('td', del));
    let armed = false;
    del.addEventListener('click', async () => {
      if (!armed) {
        armed = true;
        del.textContent = 'Confirm delete';
        return;
      }
      del.disabled = true;
      try {
        await api('DELETE', '/sessions/' + encodeURIComponent(s.id));
        row.remove();
      } catch (e) {
        row.lastElementChild.append(errorBox(e));
      }
    });
    return row;
  });
  main.append(h('div.table-wrap', h('table', h('caption.muted', list.length + ' session(s), latest first'),
    h('thead', h('tr', ['Session', 'Agent', 'Tags', 'Updated', 'Tokens', ''].map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', rows))));
}

// sessionRuns is a session's runs with their tokens (GET
// /sessions/{id}/runs), or null where the store cannot list them.
function sessionRuns(id) {
  return api('GET', '/sessions/' + encodeURIComponent(id) + '/runs').catch(() => null);
}

function sum(runs) {
  const u = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  for (const r of runs) for (const k of Object.keys(u)) u[k] += (r.usage && r.usage[k]) || 0;
  return u;
}

// tokenCell fills in a session's tokens once its runs are read.
function tokenCell(id) {
  const td = h('td.num', '…');
  sessionRuns(id).then((runs) => { td.textContent = runs ? sum(runs).totalTokens.toLocaleString('en') : '—'; });
  return td;
}

async function session(id) {
  title('Session ' + id);
  const [s, msgs] = await Promise.all([
    api('GET', '/sessions/' + encodeURIComponent(id)),
    api('GET', '/sessions/' + encodeURIComponent(id) + '/messages'),
  ]);
  main.append(h('p.muted', 'Created ' + new Date(s.createdAt).toLocaleString() + ' · ' + msgs.length + ' message(s) · ',
    Object.entries(s.tags || {}).map(([k, v]) => k + ':' + v).join(' ')));
  if (s.agentId) main.append(h('p', h('a.button', { href: '#/agents/' + encodeURIComponent(s.agentId) + '?session=' + encodeURIComponent(id) }, 'Continue with ' + s.agentId)));
  const runs = await sessionRuns(id);
  // Two runs picked in the table are compared side by side.
  const cmp = h('button', { type: 'button', disabled: true }, 'Compare the two picked runs');
  const picked = () => [...main.querySelectorAll('.usage input[type=checkbox]:checked')].map((c) => c.value);
  function pick() { cmp.disabled = picked().length !== 2; }
  cmp.addEventListener('click', () => {
    const [a, b] = picked();
    location.hash = '#/compare/' + encodeURIComponent(a) + '/' + encodeURIComponent(b);
  });
  if (runs && runs.length) {
    // Oldest first, as the conversation went.
    runs.reverse();
    main.append(h('section.card.usage', { 'aria-label': 'Runs and tokens' },
      h('h2', 'Runs · ' + tokens(sum(runs))),
      h('p.muted.small', 'Tokens as the providers reported them; the model catalog has no prices, so no cost is shown.'),
      bars(runs, [
        { name: 'tokens', cls: 'model', value: (r) => (r.usage && (r.usage.totalTokens || (r.usage.inputTokens || 0) + (r.usage.outputTokens || 0))) || 0, format: (n) => n.toLocaleString('en') },
        { name: 'duration', cls: 'step', value: (r) => r.durationMs || 0, format: ms },
      ], { title: 'The session\'s runs by tokens and duration, oldest first' }),
      h('div.table-wrap', h('table',
        h('thead', h('tr', ['#', 'Run', 'Agent', 'Status', 'Duration', 'Tokens', 'Compare'].map((x) => h('th', { scope: 'col' }, x)))),
        h('tbody', runs.map((r, i) => h('tr',
          h('td', String(i + 1)),
          h('td', h('a', { href: '#/runs/' + encodeURIComponent(r.id) }, r.id)),
          h('td', r.pipelineId ? 'pipeline ' + r.pipelineId : r.agentId),
          h('td', r.status),
          h('td.num', r.durationMs ? ms(r.durationMs) : ''),
          h('td.num', r.usage ? tokens(r.usage) : '—'),
          h('td', h('input', { type: 'checkbox', value: r.id, 'aria-label': 'Pick run ' + (i + 1) + ' to compare', onchange: pick }))))))),
      cmp));
  }
  main.append(h('div.chat', { role: 'log', 'aria-label': 'History' }, msgs.map(message)));
}

function message(m) {
  const c = m.content;
  const parts = c && Array.isArray(c.parts) ? c.parts : null;
  const body = parts ? parts.map((p) => {
    if (p.type === 'text') return h('div.text', p.text);
    if (p.type === 'reasoning') return h('div.reasoning', p.text);
    if (p.type === 'tool-call') return h('details.tool', h('summary', 'tool call ' + p.toolName), h('div', h('pre', json(p.input))));
    if (p.type === 'tool-result') return h('details.tool', h('summary', 'tool result ' + p.toolName), h('div', h('pre', json(p.output))));
    return h('pre', json(p));
  }) : h('pre', json(c));
  return h('div.msg' + (m.role === 'user' ? '.user' : ''), h('span.who', m.role + ' · ' + time(m.timestamp)), body);
}
