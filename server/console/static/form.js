import { h } from './dom.js';

let uid = 0;

// schemaForm builds a form from a JSON Schema: a text box for a string (or
// no schema), one labelled field per property of an object, JSON for the
// rest. onSubmit gets the value; a value that cannot be read shows its
// error in the form.
export function schemaForm(schema, { submitLabel = 'Run', onSubmit, name = 'input', extra, clear = false } = {}) {
  schema = schema && typeof schema === 'object' ? schema : {};
  const form = h('form.schema', { 'aria-label': name });
  const problem = h('p.error', { role: 'alert' });
  let read;
  if (schema.type === 'object' && schema.properties) {
    const required = new Set(schema.required || []);
    const readers = [];
    for (const [key, prop] of Object.entries(schema.properties)) {
      const f = field(key, prop || {}, required.has(key));
      form.append(f.el);
      readers.push([key, f.read]);
    }
    read = () => {
      const out = {};
      for (const [key, r] of readers) {
        const v = r();
        if (v !== undefined) out[key] = v;
      }
      return out;
    };
  } else {
    const f = field(name, schema, true, true);
    form.append(f.el);
    read = f.read;
  }
  if (extra) form.append(extra);
  const submit = h('button', { type: 'submit' }, submitLabel);
  form.append(h('div.row', submit), problem);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    problem.textContent = '';
    let value;
    try { value = read(); } catch (e) { problem.textContent = e.message; return; }
    submit.disabled = true;
    try { await onSubmit(value); if (clear) form.reset(); } catch (e) { problem.textContent = (e.code ? e.code + ': ' : '') + e.message; }
    finally { submit.disabled = false; }
  });
  return form;
}

function field(key, prop, required, whole) {
  const id = 'f' + (++uid);
  const title = prop.title || key;
  const hint = prop.description ? h('span.hint', prop.description) : null;
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  if (Array.isArray(prop.enum)) {
    const sel = h('select', { id, name: key, required },
      required ? null : h('option', { value: '' }, '—'),
      prop.enum.map((v, i) => h('option', { value: String(i) }, String(v))));
    return { el: h('label', { for: id }, title, hint, sel), read: () => sel.value === '' ? undefined : prop.enum[Number(sel.value)] };
  }
  if (type === 'boolean') {
    const box = h('input', { id, name: key, type: 'checkbox' });
    if (prop.default === true) box.checked = true;
    return { el: h('label.check', { for: id }, box, title, hint), read: () => box.checked };
  }
  if (type === 'number' || type === 'integer') {
    const inp = h('input', { id, name: key, type: 'number', step: type === 'integer' ? '1' : 'any', required });
    if (typeof prop.default === 'number') inp.value = String(prop.default);
    return {
      el: h('label', { for: id }, title, hint, inp),
      read: () => inp.value === '' ? undefined : Number(inp.value),
    };
  }
  if (type === 'string' || type === undefined && !prop.properties && !prop.items) {
    const long = whole || !prop.maxLength || prop.maxLength > 120;
    const inp = long ? h('textarea', { id, name: key, required, rows: whole ? 3 : 2 }) : h('input', { id, name: key, required });
    if (typeof prop.default === 'string') inp.value = prop.default;
    return {
      el: h('label', { for: id }, whole && !prop.title ? 'Input' : title, hint, inp),
      read: () => inp.value === '' && !required ? undefined : inp.value,
    };
  }
  const area = h('textarea', { id, name: key, required, rows: 4, spellcheck: 'false' });
  if (prop.default !== undefined) area.value = JSON.stringify(prop.default, null, 2);
  return {
    el: h('label', { for: id }, (whole && !prop.title ? 'Input' : title) + ' (JSON)', hint, area),
    read: () => {
      if (area.value.trim() === '') return undefined;
      try { return JSON.parse(area.value); } catch (_) { throw new Error(title + ' is not valid JSON'); }
    },
  };
}
