// The seed's (000) browser/Node SSE consumer, run unchanged against `arxiu serve`.
// Only the fetch shim below is added, as a browser would: it resolves the relative URL
// against the server and carries the session cookie. Usage:
//   ARXIU_URL=http://127.0.0.1:PORT ARXIU_USER=name ARXIU_PASS=pw node ask_assistant.mjs

const BASE = process.env.ARXIU_URL;
const nativeFetch = globalThis.fetch;
let cookie = '';
globalThis.fetch = async (url, init = {}) => {
  const headers = { ...(init.headers || {}) };
  if (cookie) headers.Cookie = cookie;
  const res = await nativeFetch(new URL(url, BASE), { ...init, headers });
  const set = res.headers.get('set-cookie');
  if (set) cookie = set.split(';')[0];
  return res;
};

// ---- the seed's askAssistant, verbatim ---------------------------------------------------
async function askAssistant({ question, model, history = [], context, csrf, signal, onDelta, onTool, onFinal, onError }) {
  const res = await fetch('/dedalo/core/api/v1/json/', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream', 'X-Dedalo-Csrf-Token': csrf },
    signal, // an AbortController signal — call abort() to stop
    body: JSON.stringify({ action: 'agent_chat_stream', dd_api: 'dd_mcp_api',
      options: { question, model, history, context } }),
  });

  // content-negotiate: a JSON body means the server refused before streaming
  if (!(res.headers.get('Content-Type') || '').includes('text/event-stream')) {
    const env = await res.json();
    return onError({ code: 'denied', message: env.msg });
  }

  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    const records = buf.split('\n\n');
    buf = records.pop();                                   // keep the unfinished tail
    for (const rec of records) {
      let event = 'message'; const data = [];
      for (const line of rec.split('\n')) {
        if (line.startsWith(':') || !line) continue;       // heartbeat / blank
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      const payload = JSON.parse(data.join('\n'));
      if (event === 'text')  onDelta(payload.delta);
      if (event === 'tool_use') onTool(payload);
      if (event === 'final') onFinal(payload);             // includes .history and .change_plan
      if (event === 'error') onError(payload);
    }
  }
}
// -------------------------------------------------------------------------------------------

async function login() {
  const res = await fetch('/dedalo/core/api/v1/json/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ action: 'login', dd_api: 'dd_utils_api',
      options: { username: process.env.ARXIU_USER, auth: process.env.ARXIU_PASS } }),
  });
  return (await res.json()).csrf_token;
}

async function turn(options) {
  const out = { deltas: [], tools: [], final: null, errors: [] };
  await askAssistant({
    ...options,
    onDelta: (d) => out.deltas.push(d),
    onTool: (t) => out.tools.push(t),
    onFinal: (f) => { out.final = f; },
    onError: (e) => out.errors.push(e),
  });
  return out;
}

const csrf = await login();
const context = { section_tipo: 'oh1', section_id: 1, mode: 'edit' };
const first = await turn({ question: 'what sections can I search?', model: 'local', context, csrf });
const second = await turn({ question: 'and the people?', model: 'local',
  history: first.final ? first.final.history : [], context, csrf });
const refused = await turn({ question: 'hi', model: 'no-such-model', csrf });
console.log(JSON.stringify({ first, second, refused }));
