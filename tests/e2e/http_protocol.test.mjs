// The HTTP layer byte for byte (node:net): protocol edges, half-closes, CORS, connection limits.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { test } from 'node:test';
import { apiKey, model, port, sleep, startServer, stopServer } from './helpers.mjs';

// Opens a connection, sends `request` and resolves with all the server sent, {text, closed}:
// closed once the server closed the connection, false when `timeoutMs` passed first.
// `halfClose` shuts down the sending side after the request.
function talk(request, { to = port, halfClose = false, timeoutMs = 10000 } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect(to, '127.0.0.1');
    const chunks = [];
    const finish = (closed) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => {});  // a reset after the response: what came counts
    socket.write(request);
    if (halfClose) socket.end();
  });
}

// The first response in `text`: {status, headers (lowercase names), body, rest}. `head`: the
// answer to a HEAD request (no body whatever the headers say).
function parseResponse(text, { head = false } = {}) {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end >= 0, `no complete response head in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    headers[name] = headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`;
  }
  const status = Number(statusLine.split(' ')[1]);
  let rest = text.slice(end + 4);
  let body = '';
  if (head || status < 200) {
    // no body
  } else if (headers['transfer-encoding'] === 'chunked') {
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, lineEnd), 16);
      assert.ok(lineEnd >= 0 && size >= 0 && rest.length >= lineEnd + size + 4, 'a truncated chunked body');
      body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
      if (size === 0) break;
    }
  } else if (headers['content-length'] !== undefined) {
    body = rest.slice(0, Number(headers['content-length']));
    rest = rest.slice(body.length);
  } else {
    body = rest;
    rest = '';
  }
  return { status, statusLine, headers, body, rest };
}

// The final response in `text`, past any interim (1xx) ones.
function finalResponse(text) {
  let response = parseResponse(text);
  while (response.status < 200) response = parseResponse(response.rest);
  return response;
}

function assertJsonError(response, status) {
  assert.equal(response.status, status, response.statusLine);
  assert.match(response.headers['content-type'], /application\/json/);
  const { error } = JSON.parse(response.body);
  assert.equal(typeof error.message, 'string');
  assert.equal(typeof error.type, 'string');
  assert.equal(error.code, status);
  assert.ok('param' in error);
}

function post(path, body, headers = '') {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\n` +
    `${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const get = (path, headers = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

// A connection that stays open; resolves once the server has answered a GET /health on it.
async function openConnection(to) {
  const socket = net.connect(to, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => {
    socket.once('data', resolve);
    socket.write(get('/health'));
  });
  return socket;
}

// Resolves with the bytes on `socket` once they contain `marker` (rejects after `timeoutMs`).
function readUntil(socket, marker, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      socket.off('data', onData);
      reject(new Error(`no ${JSON.stringify(marker)} within ${timeoutMs} ms; got ${JSON.stringify(text.slice(0, 200))}`));
    }, timeoutMs);
    const onData = (chunk) => {
      text += chunk.toString('latin1');
      if (text.includes(marker)) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
  });
}

test('a header block over 64 KiB is a 431 with the JSON error shape, then the connection closes', async () => {
  const { text, closed } = await talk(get('/health', `X-Big: ${'a'.repeat(70000)}\r\n`));
  const response = parseResponse(text);
  assertJsonError(response, 431);
  assert.equal(response.headers.connection, 'close');
  assert.ok(closed);
});

test('a request target over 8 KiB is a 414, then the connection closes', async () => {
  for (const length of [10000, 100000]) {
    const { text, closed } = await talk(get(`/health?q=${'a'.repeat(length)}`));
    const response = parseResponse(text);
    assertJsonError(response, 414);
    assert.equal(response.headers.connection, 'close');
    assert.ok(closed, `target of ${length} bytes`);
  }
});

test('malformed framing is a 400 with the JSON error shape, then the connection closes', async () => {
  const head = 'POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
  const requests = {
    'bad chunk size': `${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    'Content-Length with Transfer-Encoding': `${head}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    'conflicting Content-Lengths': `${head}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} `,
    'negative Content-Length': `${head}Content-Length: -1\r\n\r\n{}`,
    'garbage request line': 'HELLO THERE\r\n\r\n',
    'binary request line': '\x00\x01\x02 / HTTP/1.1\r\n\r\n',
  };
  for (const [name, request] of Object.entries(requests)) {
    const { text, closed } = await talk(request);
    assert.ok(text.length > 0, `${name}: closed without an answer`);
    const response = parseResponse(text);
    assertJsonError(response, 400);
    assert.equal(response.headers.connection, 'close', name);
    assert.ok(closed, name);
  }
});

test('Expect: 100-continue gets 100 Continue before the body is sent, then the response', async () => {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const body = JSON.stringify({ prompt: 'Hello' });
  socket.write(`POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n` +
    `Content-Length: ${body.length}\r\n\r\n`);
  const interim = await readUntil(socket, '\r\n\r\n', 3000);
  assert.equal(interim, 'HTTP/1.1 100 Continue\r\n\r\n');
  socket.write(body);
  const response = parseResponse(await readUntil(socket, '"tokens"'));
  socket.destroy();
  assert.equal(response.status, 200);
  assert.ok(JSON.parse(response.body).count > 0);
});

test('Expect: 100-continue with a Content-Length over the body limit is a 413 at once', async () => {
  const { text, closed } = await talk('POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    `Expect: 100-continue\r\nContent-Length: ${2 << 20}\r\n\r\n`, { timeoutMs: 3000 });
  assert.ok(!text.includes('100 Continue'));
  assertJsonError(parseResponse(text), 413);
  assert.ok(closed);
});

test('HEAD on the GET routes answers as GET would, without the body', async () => {
  const auth = `Authorization: Bearer ${apiKey}\r\n`;
  const paths = ['/health', '/version', '/metrics', '/v1/models'];
  const requests = paths.map((path) => `HEAD ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`).join('');
  // The GET after the HEADs (same connection) only parses if the HEAD answers have no bodies.
  const { text } = await talk(requests + get('/version', `${auth}Connection: close\r\n`));
  let rest = text;
  const heads = {};
  for (const path of paths) {
    heads[path] = parseResponse(rest, { head: true });
    assert.equal(heads[path].status, 200, `HEAD ${path}: ${heads[path].statusLine}`);
    rest = heads[path].rest;
  }
  const version = parseResponse(rest);
  assert.equal(version.status, 200);
  assert.equal(typeof JSON.parse(version.body).version, 'string');
  assert.equal(version.rest, '');
  assert.equal(heads['/version'].headers['content-length'], version.headers['content-length']);
});

test('a client that half-closes after its request still gets the whole response, then a close', async () => {
  const request = { model, prompt: 'Once upon a time', max_tokens: 64, ignore_eos: true, temperature: 0 };
  const whole = await talk(post('/v1/completions', JSON.stringify(request)), { halfClose: true, timeoutMs: 60000 });
  assert.ok(whole.closed);
  const response = finalResponse(whole.text);
  assert.equal(response.status, 200, response.statusLine);
  assert.equal(JSON.parse(response.body).choices[0].finish_reason, 'length');

  const streamed = await talk(post('/v1/completions', JSON.stringify({ ...request, stream: true })),
    { halfClose: true, timeoutMs: 60000 });
  assert.ok(streamed.closed);
  const stream = finalResponse(streamed.text);
  assert.equal(stream.status, 200, stream.statusLine);
  assert.ok(stream.body.trimEnd().endsWith('data: [DONE]'), stream.body);
});

test('CORS with the default flags: "*" without credentials; preflights as Starlette answers them', async () => {
  const simple = parseResponse((await talk(get('/health', 'Origin: https://a.example\r\nConnection: close\r\n'))).text);
  assert.equal(simple.headers['access-control-allow-origin'], '*');
  assert.equal(simple.headers['access-control-allow-credentials'], undefined);

  const preflight = parseResponse((await talk('OPTIONS /v1/completions HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n' +
    'Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization, x-custom\r\nConnection: close\r\n\r\n')).text);
  assert.equal(preflight.status, 200);
  assert.equal(preflight.body, 'OK');
  assert.equal(preflight.headers['access-control-allow-origin'], '*');
  assert.equal(preflight.headers['access-control-allow-methods'], 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT');
  assert.equal(preflight.headers['access-control-allow-headers'], 'authorization, x-custom');
  assert.equal(preflight.headers['access-control-max-age'], '600');
  assert.equal(preflight.headers['access-control-allow-credentials'], undefined);
});

test('CORS with listed origins, methods and headers and --allow-credentials', async () => {
  const server = await startServer(['--allowed-origins', 'https://a.example', '--allow-credentials',
    '--allowed-methods', 'GET', 'POST', '--allowed-headers', 'Authorization']);
  try {
    const ask = async (request) => parseResponse((await talk(request, { to: server.port })).text);
    const simple = await ask(get('/health', 'Origin: https://a.example\r\nConnection: close\r\n'));
    assert.equal(simple.headers['access-control-allow-origin'], 'https://a.example');
    assert.equal(simple.headers['access-control-allow-credentials'], 'true');
    assert.equal(simple.headers.vary, 'Origin');
    const foreign = await ask(get('/health', 'Origin: https://b.example\r\nConnection: close\r\n'));
    assert.equal(foreign.status, 200);
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);

    const preflight = (origin, method, headers = '') => ask(`OPTIONS /v1/completions HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\n` +
      `Access-Control-Request-Method: ${method}\r\n${headers}Connection: close\r\n\r\n`);
    const allowed = await preflight('https://a.example', 'POST', 'Access-Control-Request-Headers: Authorization, Content-Type\r\n');
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://a.example');
    assert.equal(allowed.headers['access-control-allow-credentials'], 'true');
    assert.equal(allowed.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(allowed.headers['access-control-allow-headers'],
      'accept, accept-language, authorization, content-language, content-type');
    assert.equal(allowed.headers['access-control-max-age'], '600');
    assert.equal(allowed.headers.vary, 'Origin');
    for (const [origin, method, headers, failure] of [
      ['https://b.example', 'POST', '', 'Disallowed CORS origin'],
      ['https://a.example', 'PUT', '', 'Disallowed CORS method'],
      ['https://a.example', 'POST', 'Access-Control-Request-Headers: x-custom\r\n', 'Disallowed CORS headers'],
      ['https://b.example', 'PUT', '', 'Disallowed CORS origin, method'],
    ]) {
      const refused = await preflight(origin, method, headers);
      assert.equal(refused.status, 400);
      assert.match(refused.headers['content-type'], /^text\/plain/);
      assert.equal(refused.body, failure);
    }
  } finally {
    await stopServer(server);
  }
});

test('--max-connections: one more connection gets 503 at once; a freed slot serves again', async () => {
  const server = await startServer(['--max-connections', '4']);
  try {
    const open = await Promise.all(Array.from({ length: 4 }, () => openConnection(server.port)));
    const { text, closed } = await talk(get('/health'), { to: server.port, timeoutMs: 3000 });
    const response = parseResponse(text);
    assertJsonError(response, 503);
    assert.equal(response.headers.connection, 'close');
    assert.ok(closed);
    for (const socket of open) socket.destroy();
    let status;
    for (let i = 0; i < 20 && status !== 200; i++) {
      await sleep(50);
      status = parseResponse((await talk(get('/health', 'Connection: close\r\n'), { to: server.port })).text).status;
    }
    assert.equal(status, 200);
  } finally {
    await stopServer(server);
  }
});

// The file descriptors a process holds.
const openDescriptors = (pid) => readdirSync(`/proc/${pid}/fd`).length;

// A client that sends nothing and never closes its side. Resolves {socket, text, endMs}: what the
// server sent and how long after connecting its close came (undefined: not within `timeoutMs`).
function silentClient(to, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect({ port: to, host: '127.0.0.1', allowHalfOpen: true });
    let text = '';
    const finish = (endMs) => {
      clearTimeout(timer);
      resolve({ socket, text, endMs });
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.on('data', (chunk) => { text += chunk.toString('latin1'); });
    socket.on('end', () => finish(Date.now() - started));
    socket.on('error', () => finish(Date.now() - started));
  });
}

test('--max-connections: a burst of refused clients that never close is closed at once and holds no descriptors', async () => {
  const server = await startServer(['--max-connections', '8']);
  const { pid } = server.process;
  const sockets = [];
  try {
    // Few descriptors: refused connections held for seconds would run the server out of them.
    execFileSync('prlimit', ['--pid', String(pid), '--nofile=128:128']);
    for (let i = 0; i < 8; i++) sockets.push(await openConnection(server.port));
    const baseline = openDescriptors(pid);
    const healthStarted = Date.now();
    const health = talk(get('/health'), { to: server.port, timeoutMs: 5000 }).then((answer) => ({ ...answer, ms: Date.now() - healthStarted }));
    const refused = await Promise.all(Array.from({ length: 300 }, () => silentClient(server.port, 3000)));
    sockets.push(...refused.map(({ socket }) => socket));
    const slowest = Math.max(...refused.map(({ endMs }) => endMs ?? Infinity));
    assert.ok(slowest < 1000, `a refused connection was closed ${slowest} ms after it opened`);
    for (const { text } of refused) assertJsonError(parseResponse(text), 503);
    // During the burst, /health is answered at once: a 503 too, all slots being taken.
    const during = await health;
    assert.equal(parseResponse(during.text).status, 503);
    assert.ok(during.ms < 1000, `/health took ${during.ms} ms during the burst`);
    let held = openDescriptors(pid) - baseline;
    for (let i = 0; i < 10 && held > 2; i++) {
      await sleep(50);
      held = openDescriptors(pid) - baseline;
    }
    assert.ok(held <= 2, `the server holds ${held} more descriptors after refusing 300 connections`);
    // The refused clients still hold their sides open; freed slots serve at once.
    for (const socket of sockets.splice(0, 8)) socket.destroy();
    await sleep(50);
    const started = Date.now();
    const { text } = await talk(get('/health', 'Connection: close\r\n'), { to: server.port, timeoutMs: 5000 });
    assert.equal(parseResponse(text).status, 200);
    assert.ok(Date.now() - started < 1000, `/health took ${Date.now() - started} ms after the burst`);
  } finally {
    for (const socket of sockets) socket.destroy();
    await stopServer(server);
  }
});

// utime + stime of a process, in clock ticks.
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

test('out of file descriptors, the server does not spin and serves again once they free', async () => {
  const server = await startServer(['--max-connections', '1000']);
  const sockets = [];
  try {
    execFileSync('prlimit', ['--pid', String(server.process.pid), '--nofile=64:64']);
    for (let i = 0; i < 100; i++) {
      const socket = net.connect(server.port, '127.0.0.1');
      socket.on('error', () => {});
      sockets.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
    }
    await sleep(300);
    const before = cpuTicks(server.process.pid);
    await sleep(1500);
    const spent = cpuTicks(server.process.pid) - before;
    assert.ok(spent < 30, `the server used ${spent} ticks of CPU in 1.5 s while out of descriptors`);
    for (const socket of sockets) socket.destroy();
    const started = Date.now();
    const { text } = await talk(get('/health', 'Connection: close\r\n'), { to: server.port, timeoutMs: 5000 });
    assert.equal(parseResponse(text).status, 200);
    assert.ok(Date.now() - started < 2000, `/health took ${Date.now() - started} ms`);
    assert.match(server.output(), /cannot accept connections/);
  } finally {
    for (const socket of sockets) socket.destroy();
    await stopServer(server);
  }
});

test('--max-buffered-request-bytes: a body that would go over the cap gets 503 unread', async () => {
  const server = await startServer(['--max-request-body-bytes', '1000000', '--max-buffered-request-bytes', '1000000']);
  const length = 800000;
  const body = JSON.stringify({ prompt: 'x' }).padEnd(length, ' ');
  const head = 'POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
  const chunked = (size) => `${head}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
    `${size.toString(16)}\r\n${JSON.stringify({ prompt: 'x' }).padEnd(size, ' ')}\r\n0\r\n\r\n`;
  const ask = async (request) => finalResponse((await talk(request, { to: server.port, timeoutMs: 5000 })).text);
  const slow = net.connect(server.port, '127.0.0.1');
  slow.on('error', () => {});
  try {
    // A Content-Length claims its bytes once the headers pass, which the 100 Continue tells.
    slow.write(`${head}Expect: 100-continue\r\nContent-Length: ${length}\r\n\r\n`);
    await readUntil(slow, '100 Continue');
    const refused = await ask(`${head}Content-Length: ${length}\r\n\r\n`);
    assertJsonError(refused, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers.connection, 'close');
    // A chunked body claims its bytes as they arrive.
    assertJsonError(await ask(chunked(300000)), 503);
    const answer = readUntil(slow, '"tokens"');
    slow.write(body);
    assert.equal(finalResponse(await answer).status, 200);
    // The claims end with their exchanges.
    assert.equal((await ask(`${head}Content-Length: ${length}\r\nConnection: close\r\n\r\n${body}`)).status, 200);
    assert.equal((await ask(chunked(300000))).status, 200);
  } finally {
    slow.destroy();
    await stopServer(server);
  }
});
