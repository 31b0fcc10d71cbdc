// HTTPS: `serve --ssl-keyfile --ssl-certfile` (and mutual TLS with --ssl-ca-certs
// --ssl-cert-reqs 2) driven by the official openai SDK over node's TLS stack, with a CA, a server
// certificate for 127.0.0.1 / localhost and a client certificate made by the openssl CLI.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { model, nodeFetch, sleep, startServer, stopServer } from './helpers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'vllm-cpp-tls-'));
const file = (name) => join(dir, name);
const openssl = (...args) => execFileSync('openssl', args, { stdio: 'pipe' });

// A P-256 key NAME.key and a certificate NAME.pem for `subject`, signed by the CA (self-signed
// without `extensions`: the CA, and a client from elsewhere).
function makeCertificate(name, subject, extensions) {
  if (extensions === undefined) {
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`), '-days', '2', '-subj', subject);
    return;
  }
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject);
  writeFileSync(file(`${name}.ext`), extensions);
  openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'),
    '-CAcreateserial', '-out', file(`${name}.pem`), '-days', '2', '-extfile', file(`${name}.ext`));
}

// fetch over node:https with `tls` (ca, cert, key): what the SDK's `fetch` option takes. Each
// call records whether it reused a kept-alive connection.
function httpsFetch(tls, reused = []) {
  return nodeFetch(https.request, { agent: new https.Agent({ keepAlive: true, ...tls }) }, reused);
}

const serverTlsArgs = () => ['--ssl-keyfile', file('server.key'), '--ssl-certfile', file('server.pem')];
const healthyOverTls = (port) => httpsFetch({ ca: readFileSync(file('ca.pem')), keepAlive: false })(
  `https://127.0.0.1:${port}/health`).then((response) => response.ok);
const sdk = (server, tls, host = '127.0.0.1') => new OpenAI({
  baseURL: `https://${host}:${server.port}/v1`, apiKey: 'x', maxRetries: 0, timeout: 60000,
  fetch: httpsFetch(tls),
});

let ca;
before(() => {
  makeCertificate('ca', '/CN=vllm-cpp e2e CA');
  makeCertificate('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  makeCertificate('client', '/CN=e2e client', 'extendedKeyUsage=clientAuth\n');
  makeCertificate('stranger', '/CN=e2e client');
  ca = readFileSync(file('ca.pem'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('chat completions over HTTPS: plain, streaming, kept-alive, by IP and by name', async () => {
  const server = await startServer(serverTlsArgs(), { healthy: healthyOverTls });
  try {
    assert.match(server.output(), /on https:\/\/127\.0\.0\.1:/);
    const reused = [];
    const client = new OpenAI({ baseURL: `https://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0,
      fetch: httpsFetch({ ca }, reused) });
    const messages = [{ role: 'user', content: 'Once upon a time' }];
    const reply = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
    assert.equal(reply.choices[0].message.role, 'assistant');
    assert.equal(reply.usage.completion_tokens, 8);
    const stream = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0, stream: true });
    let text = '';
    let role;
    for await (const chunk of stream) {
      role ??= chunk.choices[0]?.delta?.role;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(role, 'assistant');
    assert.equal(text, reply.choices[0].message.content);  // greedy: the same tokens
    // The second request went over the first one's connection.
    assert.deepEqual(reused, [false, true]);
    const byName = await sdk(server, { ca }, 'localhost').models.list();
    assert.equal(byName.data[0].id, model);
    // A client that does not trust the CA is refused by its own TLS stack.
    await assert.rejects(sdk(server, {}).models.list(), (error) => error.constructor.name === 'APIConnectionError');
    assert.doesNotMatch(server.output(), /Received request/);  // request logging is off by default
  } finally {
    await stopServer(server);
  }
});

test('a request pipelined over TLS while the one before it runs is answered after it', async () => {
  const server = await startServer(serverTlsArgs(), { healthy: healthyOverTls });
  try {
    const body = JSON.stringify({ model, prompt: 'Once upon a time', max_tokens: 200, ignore_eos: true });
    const bytes = await new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca }, () => {
        socket.write(`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        setTimeout(() => socket.write('GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 20);
      });
      let received = '';
      socket.on('data', (data) => { received += data; });
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    const statuses = bytes.match(/HTTP\/1\.1 \d+/g);
    assert.deepEqual(statuses, ['HTTP/1.1 200', 'HTTP/1.1 200'], bytes);
    assert.match(bytes, /"completion_tokens":200[^]*\{"version":/);
  } finally {
    await stopServer(server);
  }
});

test('plain HTTP to the HTTPS port, or a stalled handshake, fails cleanly and holds nothing', async () => {
  const server = await startServer(serverTlsArgs(), { healthy: healthyOverTls });
  try {
    // Two clients that never start their handshake hold two connections, not the server.
    const stalled = await Promise.all([0, 1].map(() => new Promise((resolve) => {
      const socket = net.connect(server.port, '127.0.0.1', () => resolve(socket));
    })));
    const started = Date.now();
    const plain = await new Promise((resolve) => {
      const request = net.connect(server.port, '127.0.0.1', () => {
        request.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      let bytes = '';
      request.on('data', (data) => { bytes += data; });
      request.on('close', () => resolve(bytes));
      request.on('error', () => {});
    });
    assert.doesNotMatch(plain, /^HTTP\/1\.1 200/);  // refused in the handshake, at once
    assert.ok(Date.now() - started < 2000, `the plain request took ${Date.now() - started} ms`);
    const reply = await sdk(server, { ca }).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }],
      max_tokens: 4 });
    assert.equal(reply.usage.completion_tokens, 4);
    for (const socket of stalled) socket.destroy();
  } finally {
    await stopServer(server);
  }
});

test('streams cut by their clients are aborted over TLS as over TCP', async () => {
  const server = await startServer(serverTlsArgs(), { healthy: healthyOverTls });
  try {
    const tlsFetch = httpsFetch({ ca });
    const base = `https://127.0.0.1:${server.port}`;
    await Promise.all(Array.from({ length: 32 }, async (_, i) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      try {
        const response = await tlsFetch(`${base}/v1/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
          body: JSON.stringify({ model, prompt: `Tell a long story ${i}`, max_tokens: 240, ignore_eos: true, stream: i % 2 === 0 }),
        });
        await response.text();
      } catch {}  // aborted before the answer, or in the midst of its body
    }));
    let metrics = '';
    for (let i = 0; i < 40; i++) {
      metrics = await (await tlsFetch(`${base}/metrics`)).text();
      if (/vllm:num_requests_running\{[^}]*\} 0\b/.test(metrics)) break;
      await sleep(100);
    }
    assert.match(metrics, /vllm:num_requests_running\{[^}]*\} 0\b/);
    assert.match(metrics, /request_success_total\{[^}]*finished_reason="abort"[^}]*\} [1-9]/);
  } finally {
    await stopServer(server);
  }
});

test('mutual TLS (--ssl-cert-reqs 2): a client with a certificate from the CA is served, one without refused', async () => {
  const server = await startServer([...serverTlsArgs(), '--ssl-ca-certs', file('ca.pem'), '--ssl-cert-reqs', '2'], {
    healthy: (port) => httpsFetch({ ca, cert: readFileSync(file('client.pem')), key: readFileSync(file('client.key')),
      keepAlive: false })(
      `https://127.0.0.1:${port}/health`).then((response) => response.ok),
  });
  try {
    const withCertificate = sdk(server, { ca, cert: readFileSync(file('client.pem')), key: readFileSync(file('client.key')) });
    const reply = await withCertificate.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
    assert.equal(reply.choices[0].message.role, 'assistant');
    await assert.rejects(sdk(server, { ca }).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }),
      (error) => error.constructor.name === 'APIConnectionError');
    // A certificate that did not come from the CA is refused too.
    await assert.rejects(sdk(server, { ca, cert: readFileSync(file('stranger.pem')), key: readFileSync(file('stranger.key')) }).models.list(),
      (error) => error.constructor.name === 'APIConnectionError');
    assert.equal((await withCertificate.models.list()).data[0].id, model);  // still healthy
  } finally {
    await stopServer(server);
  }
});

test('bad key or certificate files stop serve at start with the flag and the file named', () => {
  openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file('other.key'));
  openssl('pkey', '-in', file('server.key'), '-aes128', '-passout', 'pass:secret', '-out', file('encrypted.key'));
  const serve = (...args) => spawnSync(process.env.VLLM_E2E_BINARY, ['serve', `${process.env.VLLM_E2E_SHARED}/models/stories260K.gguf`,
    '--port', '0', ...args], { encoding: 'utf8', timeout: 30000 });
  const cases = [
    [['--ssl-keyfile', file('other.key'), '--ssl-certfile', file('server.pem')], /--ssl-keyfile .*other\.key: the private key does not match/],
    [['--ssl-keyfile', file('encrypted.key'), '--ssl-certfile', file('server.pem')], /--ssl-keyfile .*encrypted\.key: the private key is encrypted/],
    [['--ssl-keyfile', file('server.key'), '--ssl-certfile', file('missing.pem')], /--ssl-certfile .*missing\.pem: cannot read it/],
    [['--ssl-keyfile', file('server.key'), '--ssl-certfile', file('server.pem'), '--ssl-cert-reqs', '2'], /needs --ssl-ca-certs/],
  ];
  for (const [args, message] of cases) {
    const result = serve(...args);
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, message);
    assert.doesNotMatch(result.stderr, /Serving/);  // refused before listening or loading
  }
});
