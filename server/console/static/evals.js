import { h, errorBox } from './dom.js';
import { api } from './api.js';
import { ms } from './waterfall.js';
import { line } from './chart.js';

// The evals pages: #/evals (every agent) and #/evals/{agent} run an
// agent's suites and chart its eval history, the pass rate of each past
// run over time; #/evals/{agent}/{evalId} is one past run, case by case,
// each case marked where it changed since the run before.

const pct = (r) => (r.total ? Math.round((r.passed / r.total) * 100) + '%' : '—');
const when = (t) => new Date(t).toLocaleString();
const evalsPath = (agent) => '/agents/' + encodeURIComponent(agent) + '/evals';
const runHref = (agent, id) => '#/evals/' + encodeURIComponent(agent) + '/' + encodeURIComponent(id);

// cases is a table of an eval run's cases; before, when given, is the run
// before it, to mark each case that changed.
function cases(results, before) {
  const prev = new Map((before ? before.results : []).map((c) => [c.suite + '\u0000' + c.case, c]));
  return h('div.table-wrap', h('table',
    h('thead', h('tr', ['Suite', 'Type', 'Case', 'Result', before ? 'Since the run before' : null, 'Problems', 'Time'].filter(Boolean).map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', results.map((c) => {
      const p = prev.get(c.suite + '\u0000' + c.case);
      const moved = before && (!p || p.passed !== c.passed);
      return h('tr' + (moved ? '.differs' : ''),
        h('td', c.suite), h('td', c.type || 'functional'), h('td', c.case),
        h('td.' + (c.passed ? 'pass' : 'fail'), c.passed ? 'pass' : 'fail'),
        before ? h('td', !p ? 'new case' : moved ? [h('span.diff-mark', '≠ '), 'was ' + (p.passed ? 'pass' : 'fail')] : 'same') : null,
        h('td', (c.problems || []).join('\n')), h('td.num', ms(c.durationMs || 0)));
    }))));
}

// history is an agent's eval history: a chart of each past run's pass
// rate over time, every dot a link to that run, and a table of the runs,
// newest first, a page at a time.
function history(agent) {
  const el = h('div.eval-history', { 'aria-live': 'polite' });
  const runs = [];
  let next = '';
  const more = h('button.secondary', { type: 'button' }, 'Older runs');
  const draw = () => {
    if (!runs.length) {
      el.replaceChildren(h('p.muted', 'No past eval runs.'));
      return;
    }
    const oldest = runs.slice().reverse();
    el.replaceChildren(
      h('h3', 'History · ' + runs.length + ' run(s)' + (next ? ', more before' : '')),
      line(oldest.map((r) => ({
        t: r.createdAt, v: r.total ? r.passed / r.total : 0, cls: r.passed < r.total ? 'failed' : '',
        title: when(r.createdAt) + ' · ' + r.passed + ' / ' + r.total + ' passed', href: runHref(agent, r.id),
      })), { title: 'Pass rate of the evals of ' + agent + ' over time, oldest first' }),
      h('div.table-wrap', h('table',
        h('thead', h('tr', ['When', 'Passed', 'Rate', 'Duration', ''].map((x) => h('th', { scope: 'col' }, x)))),
        h('tbody', runs.map((r) => h('tr',
          h('td', when(r.createdAt)), h('td.num', r.passed + ' / ' + r.total), h('td.num', pct(r)), h('td.num', ms(r.durationMs || 0)),
          h('td', h('a', { href: runHref(agent, r.id), 'aria-label': 'Cases of the run of ' + when(r.createdAt) }, 'Cases'))))))),
      next ? h('div.row', more) : '');
  };
  const load = async (after) => {
    const page = await api('GET', evalsPath(agent) + (after ? '?after=' + encodeURIComponent(after) : ''));
    runs.push(...page.evals);
    next = page.next || '';
    draw();
  };
  more.addEventListener('click', () => load(next).catch((e) => el.append(errorBox(e))));
  const refresh = () => {
    runs.length = 0;
    return load('').catch((e) => el.replaceChildren(e.code === 'NOT_IMPLEMENTED' ? h('p.muted', 'The store keeps no eval history.') : errorBox(e)));
  };
  refresh();
  return { el, refresh };
}

// evals is #/evals and #/evals/{agent}.
export async function evals(main, only) {
  document.title = 'Evals · bread console';
  main.append(h('h1', only ? 'Evals of ' + only : 'Evals'),
    h('p.muted', 'Runs every case of an agent\'s agents/<id>/evals/*.eval.yaml, as bread eval does, and keeps each run\'s score.'));
  const agents = await api('GET', '/agents');
  for (const a of agents) {
    if (only && a.id !== only) continue;
    const out = h('div', { 'aria-live': 'polite' });
    const hist = history(a.id);
    const btn = h('button', { type: 'button', 'aria-label': 'Run the evals of ' + a.id }, 'Run evals');
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      out.replaceChildren(h('p.muted', 'Running…'));
      try {
        const r = await api('POST', evalsPath(a.id));
        out.replaceChildren(h('p', h('strong', r.passed + ' / ' + r.total + ' passed'),
          r.id ? [' · ', h('a', { href: runHref(a.id, r.id) }, 'kept in the history')] : null), cases(r.results));
        if (r.id) hist.refresh();
      } catch (e) {
        out.replaceChildren(errorBox(e));
      } finally {
        btn.disabled = false;
      }
    });
    main.append(h('section.card', { 'aria-label': 'Evals of ' + a.id }, h('h2', a.id), h('div.row', btn), out, hist.el));
  }
}

// evalRun is #/evals/{agent}/{evalId}: one past run, case by case, against
// the run before it in the history.
export async function evalRun(main, agent, id) {
  document.title = 'Eval run · bread console';
  const [r, page] = await Promise.all([api('GET', evalsPath(agent) + '/' + encodeURIComponent(id)), api('GET', evalsPath(agent)).catch(() => ({ evals: [] }))]);
  const i = page.evals.findIndex((x) => x.id === id);
  const prevSum = i >= 0 ? page.evals[i + 1] : null;
  const before = prevSum ? await api('GET', evalsPath(agent) + '/' + encodeURIComponent(prevSum.id)).catch(() => null) : null;
  main.append(h('h1', 'Eval run of ' + agent),
    h('p', h('strong', r.passed + ' / ' + r.total + ' passed'), ' · ' + pct(r) + ' · ' + when(r.createdAt) + ' · ' + ms(r.durationMs || 0)),
    h('p', h('a', { href: '#/evals/' + encodeURIComponent(agent) }, 'Back to the history of ' + agent),
      before ? [' · compared with ', h('a', { href: runHref(agent, before.id) }, 'the run before'), ' (' + before.passed + ' / ' + before.total + ', ' + when(before.createdAt) + ')'] : null),
    cases(r.results, before));
}
