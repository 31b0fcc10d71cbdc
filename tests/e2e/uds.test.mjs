// --uds: `serve` on a UNIX domain socket instead of --host / --port, driven by the official
// openai SDK (its `fetch` over node:http with a socketPath) and by curl --unix-socket; HTTPS over
// the socket with --ssl-*; the socket file replaced when stale, removed at exit, and a path that
// is not a socket refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import OpenAI from 'openai';
import { model, nodeFetch, sleep, startServer, stopServer } from './helpers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'vllm-cpp-uds-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The SDK over the socket: the URL's host is only the Host header.
const sdk = (fetch) => new OpenAI({ baseURL: 'http://localhost/v1', apiKey: 'x', maxRetries: 0, timeout: 60000, fetch });
const healthyAt = (socketPath) => () =>
  nodeFetch(http.request, { socketPath })('http://localhost/health').then((response) => response.ok);

test('the SDK over --uds: models, chat, streaming; no TCP port; the file goes at exit', async () => {
  const socketPath = join(dir, 'vllm.sock');
  const server = await startServer(['--uds', socketPath], { healthy: healthyAt(socketPath) });
  try {
    assert.match(server.output(), new RegExp(`on unix:${socketPath} `));
    const client = sdk(nodeFetch(http.request, { socketPath }));
    const models = await client.models.list();
    assert.equal(models.data[0].id, model);
    const chat = await client.chat.completions.create({
      model, messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 8, temperature: 0,
    });
    assert.equal(chat.choices[0].message.role, 'assistant');
    assert.ok(chat.usage.completion_tokens > 0);
    const stream = await client.completions.create({
      model, prompt: 'Once upon a time', max_tokens: 8, temperature: 0, stream: true,
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
    const whole = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
    assert.equal(streamed, whole.choices[0].text);
    // curl, as a shell user would.
    const curled = JSON.parse(execFileSync('curl', ['-sf', '--unix-socket', socketPath, 'http://localhost/v1/models']));
    assert.equal(curled.data[0].id, model);
    // --host / --port are not listened on with --uds (as vLLM).
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/health`));
  } finally {
    const { code } = await stopServer(server);
    assert.equal(code, 0);
  }
  assert.equal(existsSync(socketPath), false, 'the socket file is removed at exit');
});

test('a socket file left by a killed server is replaced; a regular file is refused', async () => {
  const socketPath = join(dir, 'killed.sock');
  const killed = await startServer(['--uds', socketPath], { healthy: healthyAt(socketPath) });
  await stopServer(killed, 'SIGKILL');
  assert.ok(existsSync(socketPath), 'SIGKILL leaves the file');
  const server = await startServer(['--uds', socketPath], { healthy: healthyAt(socketPath) });
  try {
    assert.match(server.output(), /removed the stale socket/);
    // A second server on the live socket is refused, and the first keeps its file.
    // (Its health check must not pass on the first server's answers.)
    const never = async () => false;
    await assert.rejects(startServer(['--uds', socketPath], { healthy: never }),
      /another server is listening on it/);
    assert.ok(await healthyAt(socketPath)());
  } finally {
    await stopServer(server);
  }
  const notSocket = join(dir, 'notes.txt');
  writeFileSync(notSocket, 'keep me');
  await assert.rejects(startServer(['--uds', notSocket], { healthy: async () => false }),
    /cannot listen on UNIX socket '.*notes\.txt': it exists and is not a socket/);
  assert.equal(readFileSync(notSocket, 'utf8'), 'keep me');
});

test('HTTPS over --uds with --ssl-keyfile / --ssl-certfile', async () => {
  const key = join(dir, 'server.key');
  const cert = join(dir, 'server.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'],
  { stdio: 'pipe' });
  const socketPath = join(dir, 'tls.sock');
  const tlsFetch = nodeFetch(https.request, { socketPath, ca: readFileSync(cert) });
  const server = await startServer(['--uds', socketPath, '--ssl-keyfile', key, '--ssl-certfile', cert], {
    healthy: () => tlsFetch('https://localhost/health').then((response) => response.ok),
  });
  try {
    const client = new OpenAI({ baseURL: 'https://localhost/v1', apiKey: 'x', maxRetries: 0, timeout: 60000, fetch: tlsFetch });
    const chat = await client.chat.completions.create({
      model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4,
    });
    assert.ok(chat.usage.completion_tokens > 0);
    // Plain HTTP on the TLS socket gets no answer.
    await assert.rejects(healthyAt(socketPath)());
  } finally {
    await stopServer(server);
  }
  assert.equal(existsSync(socketPath), false);
});

test('streams cut by their clients mid-stream over --uds are aborted as over TCP', async () => {
  const socketPath = join(dir, 'cut.sock');
  const server = await startServer(['--uds', socketPath, '--max-model-len', '512'], { healthy: healthyAt(socketPath) });
  const socketFetch = nodeFetch(http.request, { socketPath });
  const metricsText = async () => (await socketFetch('http://localhost/metrics')).text();
  const numStreams = 8;
  try {
    await Promise.all(Array.from({ length: numStreams }, async (_, i) => {
      const controller = new AbortController();
      // ignore_eos and the whole context: the model cannot finish before its client leaves.
      const response = await socketFetch('http://localhost/v1/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' }, signal: controller.signal,
        body: JSON.stringify({ model, prompt: `Tell a long story ${i}`, max_tokens: 480, ignore_eos: true, stream: true }),
      });
      const reader = response.body.getReader();
      const first = await reader.read();
      assert.match(new TextDecoder().decode(first.value), /^data: /);
      controller.abort();
      await reader.read().catch(() => {});
    }));
    let metrics = '';
    for (let i = 0; i < 40; i++) {
      metrics = await metricsText();
      if (/vllm:num_requests_running\{[^}]*\} 0\b/.test(metrics)) break;
      await sleep(100);
    }
    assert.match(metrics, /vllm:num_requests_running\{[^}]*\} 0\b/);
    assert.match(metrics, new RegExp(`request_success_total\\{[^}]*finished_reason="abort"[^}]*\\} ${numStreams}\\b`));
    assert.doesNotMatch(metrics, /request_success_total\{[^}]*finished_reason="length"[^}]*\} [1-9]/);
  } finally {
    await stopServer(server);
  }
});
