// Small SVG charts drawn by the console's own code: a session's runs by
// tokens and duration, an agent's eval scores over time.

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...kids) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const k of kids) el.append(k);
  return el;
}

// bars draws one group of bars per item, a bar per series, each series
// scaled to its own largest value (tokens and milliseconds share no axis),
// with a legend naming each series and its largest value. series is
// [{name, cls, value: (item) => number, format: (n) => string}].
export function bars(items, series, { label = (_, i) => String(i + 1), title = 'Chart' } = {}) {
  const W = 640, H = 170, top = 28, bottom = 20, left = 4;
  const plot = H - top - bottom;
  const group = Math.max(8, (W - left) / Math.max(1, items.length));
  const bw = Math.max(2, Math.min(18, (group - 4) / series.length));
  const el = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title });
  el.append(svg('title', {}, title));
  let lx = left;
  for (const s of series) {
    const max = Math.max(0, ...items.map(s.value));
    s.max = max || 1;
    el.append(svg('rect', { class: 'key ' + s.cls, x: lx, y: 6, width: 10, height: 10 }),
      svg('text', { class: 'axis', x: lx + 14, y: 15 }, s.name + ' (max ' + s.format(max) + ')'));
    lx += 230;
  }
  el.append(svg('line', { class: 'tick', x1: left, x2: W, y1: top + plot, y2: top + plot }));
  items.forEach((it, i) => {
    const gx = left + i * group + 2;
    series.forEach((s, j) => {
      const v = s.value(it) || 0;
      const hgt = Math.max(v ? 1 : 0, (v / s.max) * plot);
      const r = svg('rect', { class: 'bar ' + s.cls, x: gx + j * bw, y: top + plot - hgt, width: bw - 1, height: hgt });
      r.append(svg('title', {}, label(it, i) + ' · ' + s.name + ' ' + s.format(v)));
      el.append(r);
    });
    if (items.length <= 24) el.append(svg('text', { class: 'axis', x: gx, y: H - 6 }, label(it, i)));
  });
  return el;
}

// line draws values in [0, 1] over time, a dot per point, with the first
// and last times under the axis. points is [{t, v, title, href, cls}]: a
// point with an href is a link (focusable, Enter follows it).
export function line(points, { title = 'Chart', format = (v) => Math.round(v * 100) + '%' } = {}) {
  const W = 640, H = 150, top = 10, bottom = 20, left = 40, right = 10;
  const plot = H - top - bottom;
  const el = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title });
  el.append(svg('title', {}, title));
  for (const v of [0, 0.5, 1]) {
    const y = top + plot - v * plot;
    el.append(svg('line', { class: 'tick', x1: left, x2: W - right, y1: y, y2: y }), svg('text', { class: 'axis', x: 2, y: y + 4 }, format(v)));
  }
  if (!points.length) return el;
  const t0 = points[0].t, t1 = points[points.length - 1].t;
  const x = (t, i) => left + (t1 > t0 ? (t - t0) / (t1 - t0) : points.length > 1 ? i / (points.length - 1) : 0.5) * (W - left - right);
  const y = (v) => top + plot - Math.max(0, Math.min(1, v)) * plot;
  el.append(svg('polyline', { class: 'trend', points: points.map((p, i) => x(p.t, i) + ',' + y(p.v)).join(' ') }));
  points.forEach((p, i) => {
    const c = svg('circle', { class: 'dot' + (p.cls ? ' ' + p.cls : ''), cx: x(p.t, i), cy: y(p.v), r: 5 });
    c.append(svg('title', {}, p.title || format(p.v)));
    el.append(p.href ? svg('a', { href: p.href, 'aria-label': p.title || format(p.v) }, c) : c);
  });
  const when = (t) => new Date(t).toLocaleString();
  el.append(svg('text', { class: 'axis', x: left, y: H - 4 }, when(t0)));
  if (points.length > 1) el.append(svg('text', { class: 'axis', x: W - right, y: H - 4, 'text-anchor': 'end' }, when(t1)));
  return el;
}
