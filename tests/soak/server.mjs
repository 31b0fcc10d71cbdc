// The server under soak: start `vllm-cpp serve` on the demo model, probe it (/health, /metrics,
// RSS), stop it with SIGTERM.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';

export const MODEL_NAME = 'stories';
const CHAT_TEMPLATE = new URL('../e2e/chat_template.jinja', import.meta.url).pathname;
const LOG_TAIL_LINES = 200;

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

// The serve command line. The KV cache keeps its default size on purpose: the RSS check is
// about the memory a long-running server really holds. Request chat templates are trusted so
// that the hostile template reaches the template interpreter (and its limits) instead of
// being turned away at the door.
function serveArgs({ shared, port, extraArgs }) {
  return ['serve', `${shared}/models/stories260K.gguf`, '--host', '127.0.0.1', '--port', String(port),
    '--chat-template', CHAT_TEMPLATE, '--served-model-name', MODEL_NAME, '--max-model-len', '256',
    '--log-stats-interval', '0', '--trust-request-chat-template', ...extraArgs];
}

// Keeps the last lines of the server's output (and all of it in `logFile`, when given).
function captureOutput(child, logFile) {
  const lines = [];
  const file = logFile ? createWriteStream(logFile) : null;
  let partial = '';
  const onData = (data) => {
    file?.write(data);
    const pieces = (partial + data).split('\n');
    partial = pieces.pop();
    lines.push(...pieces);
    if (lines.length > LOG_TAIL_LINES) lines.splice(0, lines.length - LOG_TAIL_LINES);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return () => [...lines, partial].filter((line) => line !== '').join('\n');
}

// Starts the server; resolves {port, pid, process, exited, isAlive(), exitInfo(), logTail()}
// once /health answers 200.
export async function startServer({ binary, shared, port, extraArgs = [], logFile, startTimeoutMs = 30000 }) {
  const child = spawn(binary, serveArgs({ shared, port, extraArgs }), { stdio: ['ignore', 'pipe', 'pipe'] });
  const logTail = captureOutput(child, logFile);
  let exitInfo = null;
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    exitInfo = { code, signal };
    resolve(exitInfo);
  }));
  const server = {
    port, pid: child.pid, process: child, exited, logTail,
    isAlive: () => exitInfo === null, exitInfo: () => exitInfo,
  };
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline && server.isAlive()) {
    const probe = await getPath(port, '/health', 1000);
    if (probe.status === 200) return server;
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not start:\n${logTail()}`);
}

// One GET over a fresh connection; resolves {status, body, ms} or {error, ms}, never rejects.
export function getPath(port, path, timeoutMs) {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve({
        status: response.statusCode, body: Buffer.concat(chunks).toString(), ms: performance.now() - started,
      }));
      response.on('error', (error) => resolve({ error: error.code ?? error.message, ms: performance.now() - started }));
    });
    request.on('timeout', () => request.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    request.on('error', (error) => resolve({ error: error.code ?? error.message, ms: performance.now() - started }));
  });
}

// The resident set size of a process in KiB (VmRSS), or null once it is gone.
export function readRssKb(pid) {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

// The value of a Prometheus sample `name{...} value` (or `name value`) in an exposition text.
export function metricValue(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(name + '{') || l.startsWith(name + ' '));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

// SIGTERM, then SIGKILL after `graceMs`; resolves {code, signal, killed}.
export async function stopServer(server, graceMs) {
  if (!server.isAlive()) return { ...server.exitInfo(), killed: false };
  server.process.kill('SIGTERM');
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    server.process.kill('SIGKILL');
  }, graceMs);
  const result = await server.exited;
  clearTimeout(timer);
  return { ...result, killed };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
