// The HTTP API as the console calls it: JSON routes and NDJSON crumb streams,
// with the bearer token from this tab's session storage when one is set.

const TOKEN = 'bread.token';

export function token() { return sessionStorage.getItem(TOKEN) || ''; }
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN, t); else sessionStorage.removeItem(TOKEN);
}

function headers(extra) {
  const h = Object.assign({}, extra);
  const t = token();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

// APIError is a refused request: its HTTP status and BreadError code.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function failure(res) {
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  const e = body && body.error;
  if (e && typeof e === 'object') return new APIError(res.status, e.code || 'HTTP_' + res.status, e.message || res.statusText);
  if (typeof e === 'string') return new APIError(res.status, res.status === 403 ? 'FORBIDDEN' : 'HTTP_' + res.status, e);
  return new APIError(res.status, 'HTTP_' + res.status, res.statusText || 'request failed');
}

// api calls a JSON route and returns its decoded answer.
export async function api(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  return res.json();
}

// stream calls a streaming route and hands each NDJSON frame to onFrame
// until the stream ends.
export async function stream(method, path, body, onFrame, signal) {
  const h = { Accept: 'application/x-ndjson' };
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const init = { method, headers: headers(h), signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) onFrame(JSON.parse(line));
    }
  }
  if (buf.trim()) onFrame(JSON.parse(buf));
}

// download fetches a run's file with the token and saves it.
export async function download(path, name) {
  const res = await fetch(path, { headers: headers({}) });
  if (!res.ok) throw await failure(res);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name || 'file';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
