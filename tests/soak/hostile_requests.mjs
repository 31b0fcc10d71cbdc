// The hostile part of the load, over raw sockets so that every byte is ours: malformed and
// oversized bodies, protocol abuse, slow and half-closed clients. Each must get a 4xx (413, 414
// and 431 included), a 503, or a clean close; never another 5xx, never silence, never a crash.
import net from 'node:net';
import { MODEL_NAME } from './server.mjs';

const isClientError = (status) => status >= 400 && status < 500;
// For requests that are valid, only abusive in size or manners: served or refused are both fine.
const isServedOrClientError = (status) => (status >= 200 && status < 300) || isClientError(status);

// The bytes of one HTTP/1.1 request (Connection: close: one request per hostile connection).
function requestBytes({ method = 'POST', path = '/v1/completions', headers = {}, body = '' }) {
  const bodyBytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  if (method !== 'GET') head.push('Content-Type: application/json', `Content-Length: ${bodyBytes.length}`);
  for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n'), bodyBytes]);
}

// A plan for rawExchange that sends `bytes` at once.
const sendAll = (bytes, extra = {}) => ({ pieces: [{ bytes, delayMs: 0 }], ...extra });

// The big bodies are built once: building them for every request would load the client, not
// the server.
function once(build) {
  let value;
  return () => (value ??= build());
}

const deepNestingRequest = once(() => requestBytes({
  body: `{"model":"${MODEL_NAME}","prompt":` + '['.repeat(100000) + ']'.repeat(100000) + '}',
}));
const promptList100kRequest = once(() => requestBytes({
  body: JSON.stringify({ model: MODEL_NAME, prompt: Array(100000).fill('Once'), max_tokens: 4, stream: true }),
}));
const prompt2MbRequest = once(() => requestBytes({
  body: JSON.stringify({ model: MODEL_NAME, prompt: 'x'.repeat(2 << 20), max_tokens: 8 }),
}));
const hugeHeaderRequest = once(() => requestBytes({ method: 'GET', path: '/health', headers: { 'X-Filler': 'a'.repeat(70 << 10) } }));
const hugeUrlRequest = once(() => requestBytes({ method: 'GET', path: '/v1/models?q=' + 'a'.repeat(100 << 10) }));

// Builds the big bodies now, before the load: built during it, they would stall the client.
export function prebuildHostileBodies() {
  [deepNestingRequest, promptList100kRequest, prompt2MbRequest, hugeHeaderRequest, hugeUrlRequest].forEach((build) => build());
}

const WRONG_TYPES = [
  ['/v1/completions', { model: MODEL_NAME, prompt: 5 }],
  ['/v1/completions', { model: MODEL_NAME, prompt: { text: 'x' } }],
  ['/v1/completions', { model: MODEL_NAME, prompt: 'x', max_tokens: 'many' }],
  ['/v1/completions', { model: MODEL_NAME, prompt: 'x', max_tokens: -1 }],
  ['/v1/completions', { model: MODEL_NAME, prompt: 'x', temperature: 'hot' }],
  ['/v1/completions', { model: MODEL_NAME, prompt: 'x', stop: 5 }],
  ['/v1/completions', { model: MODEL_NAME, prompt: [[1, -5, 1e12]] }],
  ['/v1/completions', { model: MODEL_NAME, prompt: 'x', logit_bias: { 99999999: 1 } }],
  ['/v1/completions', [1, 2, 3]],
  ['/v1/chat/completions', { model: MODEL_NAME, messages: 'hello' }],
  ['/v1/chat/completions', { model: MODEL_NAME, messages: [{ role: 'user', content: 5 }] }],
  ['/v1/chat/completions', { model: MODEL_NAME, messages: [{ role: 7 }] }],
];

const UNKNOWN_ROUTES = [
  { method: 'GET', path: '/v1/nothing' },
  { method: 'POST', path: '/v2/completions', body: '{}' },
  { method: 'GET', path: '/../../etc/passwd' },
];

const WRONG_METHODS = [
  { method: 'GET', path: '/v1/completions' },
  { method: 'PUT', path: '/v1/chat/completions', body: '{}' },
  { method: 'DELETE', path: '/health' },
  { method: 'PATCH', path: '/v1/models', body: '{}' },
];

// Chunked bodies whose framing is wrong: a size that is not hex, a size smaller than the data
// that follows it, a size that overflows 64 bits, a chunk without its CRLF; and a body with
// both Content-Length and Transfer-Encoding (the request-smuggling shape). Every one is
// complete on the wire, so the server has all it needs to refuse it.
const BAD_CHUNKED_BODIES = [
  { body: 'zz\r\n{}\r\n0\r\n\r\n' },
  { body: '5\r\n{"prompt":"x"}\r\n0\r\n\r\n' },
  { body: 'ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n' },
  { body: '2\r\n{}0\r\n\r\n' },
  { body: '2\r\n{}\r\n0\r\n\r\n', extraHeader: 'Content-Length: 3\r\n' },
];

function badChunkedPlan(rng) {
  const { body, extraHeader = '' } = rng.pick(BAD_CHUNKED_BODIES);
  const head = 'POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
    `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n${extraHeader}\r\n`;
  return sendAll(Buffer.from(head + body));
}

// The head of a valid request, one byte at a time, then the client vanishes.
function slowlorisPlan(rng) {
  const bytes = requestBytes({ body: JSON.stringify({ model: MODEL_NAME, prompt: 'x', max_tokens: 8 }) });
  const delayMs = rng.int(20, 60);
  const pieces = [...bytes].map((byte) => ({ bytes: Buffer.from([byte]), delayMs }));
  return { pieces, abandonAfterMs: rng.int(300, 3000) };
}

function invalidUtf8Plan(rng) {
  const garbage = rng.pick([[0xff, 0xfe], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]]);
  const body = Buffer.concat([Buffer.from(`{"model":"${MODEL_NAME}","prompt":"Once upon `),
    Buffer.from(garbage), Buffer.from('a time","max_tokens":8}')]);
  return sendAll(requestBytes({ body }));
}

// name -> {allow(status), plan(rng)}. A plan: {pieces: [{bytes, delayMs}], halfClose?, abandonAfterMs?}.
export const HOSTILE_REQUESTS = {
  malformed_json: { allow: isClientError, plan: () => sendAll(requestBytes({ body: `{"model": "${MODEL_NAME}", "prompt": ` })) },
  deep_nesting: { allow: isClientError, plan: () => sendAll(deepNestingRequest()) },
  wrong_types: {
    allow: isClientError,
    plan: (rng) => {
      const [path, body] = rng.pick(WRONG_TYPES);
      return sendAll(requestBytes({ path, body: JSON.stringify(body) }));
    },
  },
  huge_n: {
    allow: isClientError,
    plan: (rng) => sendAll(requestBytes({
      body: JSON.stringify({ model: MODEL_NAME, prompt: 'x', max_tokens: 8, n: rng.pick([1000, 1e6, 2 ** 31 - 1, 1e12]) }),
    })),
  },
  prompt_list_100k: { allow: isServedOrClientError, plan: () => sendAll(promptList100kRequest()) },
  unknown_route: { allow: isClientError, plan: (rng) => sendAll(requestBytes(rng.pick(UNKNOWN_ROUTES))) },
  wrong_method: { allow: isClientError, plan: (rng) => sendAll(requestBytes(rng.pick(WRONG_METHODS))) },
  huge_header: { allow: isClientError, plan: () => sendAll(hugeHeaderRequest()) },
  huge_url: { allow: isClientError, plan: () => sendAll(hugeUrlRequest()) },
  bad_chunked: { allow: isClientError, plan: badChunkedPlan },
  chat_template_bomb: {
    allow: isClientError,
    plan: () => sendAll(requestBytes({
      path: '/v1/chat/completions',
      body: JSON.stringify({
        model: MODEL_NAME, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }],
        chat_template: "{{ 'hello ' * 10000000 }}",
      }),
    })),
  },
  prompt_2mb: { allow: isClientError, plan: () => sendAll(prompt2MbRequest()) },
  slowloris: { allow: isClientError, plan: slowlorisPlan },
  half_closed: {
    allow: isServedOrClientError,
    plan: () => sendAll(requestBytes({ body: JSON.stringify({ model: MODEL_NAME, prompt: 'Once', max_tokens: 8 }) }),
      { halfClose: true }),
  },
  invalid_utf8: { allow: isClientError, plan: invalidUtf8Plan },
};

// Sends a plan's bytes and waits for the status line of the answer. Resolves, never rejects,
// with {outcome} where outcome is the status (a number), 'closed' / 'reset' (the server hung
// up without an answer), 'abandoned' (the plan gave up first), 'stuck' (no byte and no close
// for stuckMs), 'refused' (nothing listens), 'garbage' or 'cut_off'.
export function rawExchange({ port, plan, stuckMs, tracker }) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const timers = [];
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      tracker.delete(cancel);
      socket.destroy();
      resolve({ outcome });
    };
    const cancel = () => finish('cut_off');
    tracker.add(cancel);
    timers.push(setTimeout(() => finish('stuck'), stuckMs));
    if (plan.abandonAfterMs !== undefined) timers.push(setTimeout(() => finish('abandoned'), plan.abandonAfterMs));
    socket.on('connect', () => writePieces(socket, plan, () => settled));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      // Interim 1xx answers (100 Continue, which also probes a half-closed client) come before
      // the final status: skip each whole one.
      while (/^HTTP\/1\.[01] 1\d\d /.test(received.subarray(0, 13).toString('latin1'))) {
        const headEnd = received.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        received = received.subarray(headEnd + 4);
      }
      const lineEnd = received.indexOf('\r\n');
      if (lineEnd < 0) return;
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(received.subarray(0, lineEnd).toString('latin1'));
      finish(match ? Number(match[1]) : 'garbage');
    });
    socket.on('end', () => finish(received.length ? 'garbage' : 'closed'));
    socket.on('close', () => finish(received.length ? 'garbage' : 'closed'));
    socket.on('error', (error) => finish(error.code === 'ECONNREFUSED' ? 'refused' : 'reset'));
  });
}

async function writePieces(socket, plan, stopped) {
  for (const { bytes, delayMs } of plan.pieces) {
    if (stopped()) return;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (stopped() || socket.destroyed) return;
    socket.write(bytes);
  }
  if (plan.halfClose && !stopped()) socket.end();
}

// What an outcome means for a hostile request: ok, overloaded, server_error, unexpected_status,
// stuck, network_error (the server is not there), bad_response, cut_off.
export function classifyHostileOutcome(name, outcome) {
  if (typeof outcome === 'number') {
    if (outcome === 503 || outcome === 429) return 'overloaded';
    if (outcome >= 500) return 'server_error';
    return HOSTILE_REQUESTS[name].allow(outcome) ? 'ok' : 'unexpected_status';
  }
  switch (outcome) {
    case 'closed': case 'reset': case 'abandoned': return 'ok';
    case 'stuck': return 'stuck';
    case 'refused': return 'network_error';
    case 'garbage': return 'bad_response';
    default: return outcome;  // cut_off
  }
}
