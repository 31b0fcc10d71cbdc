// Shared helpers of the end-to-end tests: the server's address, an OpenAI client, raw HTTP.
import http from 'node:http';
import { Readable } from 'node:stream';
import OpenAI from 'openai';

export const port = Number(process.env.VLLM_E2E_PORT);
export const baseURL = `http://127.0.0.1:${port}/v1`;
export const apiKey = 'e2e-key';
export const model = 'stories';

export function client(options = {}) {
  return new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000, ...options });
}

// A `fetch` for the SDK's `fetch` option over node's http.request or https.request, with
// `options` added to each request (an agent, TLS settings, a socketPath for --uds). Each call
// records in `reused` whether it reused a kept-alive connection.
export function nodeFetch(request, options = {}, reused = []) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method: init.method ?? 'GET', headers: Object.fromEntries(new Headers(init.headers)),
      signal: init.signal, ...options,
    }, (response) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(response.headers)) {
        headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      resolve(new Response(Readable.toWeb(response), { status: response.statusCode, headers }));
    });
    outgoing.on('socket', () => reused.push(outgoing.reusedSocket));
    outgoing.on('error', reject);
    outgoing.end(init.body ?? undefined);
  });
}

// One HTTP request with full control over the bytes; resolves {status, headers, body}.
// serverPort: a server of the test's own (startServer), else the shared one.
export function rawRequest({ method = 'POST', path, headers = {}, body = '', serverPort = port }) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port: serverPort, method, path, headers: { 'content-length': Buffer.byteLength(body), ...headers } },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      });
    request.on('error', reject);
    request.end(body);
  });
}

export async function postJson(path, body, headers = {}) {
  const response = await rawRequest({
    path,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
  });
  return { ...response, json: response.body ? JSON.parse(response.body) : null };
}

// The value of an unlabelled-but-for-model_name Prometheus sample.
export async function metric(name, serverPort = port) {
  const response = await rawRequest({ method: 'GET', path: '/metrics', serverPort });
  const line = response.body.split('\n').find((l) => l.startsWith(name + '{'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// vllm:num_requests_running once it reaches 0, or after 2 s (of the shared server, or of the
// server on serverPort).
export async function runningAfterSettling(serverPort = port) {
  let running = await metric('vllm:num_requests_running', serverPort);
  for (let i = 0; i < 20 && running !== 0; i++) {
    await sleep(100);
    running = await metric('vllm:num_requests_running', serverPort);
  }
  return running;
}

// A server of a test's own (flags the shared one must not have: connection limits, shutdown...).
// Resolves {port, process, output()} once /health answers; the caller stops it (stopServer).
// modelPath null: no model argument (serve's default model). `healthy(port)` tells a started
// server (default: GET /health over plain HTTP answers 200).
export async function startServer(extraArgs = [], { env = {}, modelPath, healthy } = {}) {
  const { spawn } = await import('node:child_process');
  const net = await import('node:net');
  const freePort = await new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = server.address();
      server.close(() => resolve(free));
    });
  });
  const shared = process.env.VLLM_E2E_SHARED;
  const model_ = modelPath === undefined ? `${shared}/models/stories260K.gguf` : modelPath;
  const args = ['serve', ...(model_ === null ? [] : [model_]), '--port', String(freePort), '--host', '127.0.0.1',
    '--served-model-name', model, '--chat-template', new URL('./chat_template.jinja', import.meta.url).pathname,
    ...(extraArgs.includes('--max-model-len') ? [] : ['--max-model-len', '256']),
    '--log-stats-interval', '0', ...extraArgs];
  const child = spawn(process.env.VLLM_E2E_BINARY, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (data) => { output += data; });
  child.stderr.on('data', (data) => { output += data; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    try {
      const ok = healthy ? await healthy(freePort) : (await fetch(`http://127.0.0.1:${freePort}/health`)).ok;
      if (ok) return { port: freePort, process: child, exited, output: () => output };
    } catch {}
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}

// Stops a server of startServer (SIGKILL after `graceMs`); resolves {code, signal}.
export async function stopServer(server, signal = 'SIGTERM', graceMs = 15000) {
  if (server.process.exitCode === null) server.process.kill(signal);
  const timer = setTimeout(() => server.process.kill('SIGKILL'), graceMs);
  const result = await server.exited;
  clearTimeout(timer);
  return result;
}

// Writes a random-weight model of `shape` with `vocab` (a file of ../shared/vocab) into
// `directory` with `vllm-cpp make-random-model`; resolves to its path.
export async function writeRandomModel(directory, shape, vocab) {
  const { execFileSync } = await import('node:child_process');
  const path = `${directory}/${shape}.gguf`;
  execFileSync(process.env.VLLM_E2E_BINARY, ['make-random-model', '--shape', shape, '--vocab',
    `${process.env.VLLM_E2E_SHARED}/vocab/${vocab}`, '--out', path], { stdio: 'ignore' });
  return path;
}

// POSTs `body` as JSON to a server of startServer; resolves to {status, json}.
export async function postTo(server, path, body) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}
