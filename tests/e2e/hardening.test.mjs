// One hostile request must never crash, freeze or exhaust the server: deep JSON, heavy requests
// beside /health, fan-out, request chat templates, fields this build does not implement, and
// shutdown with requests under way.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { apiKey, model, postJson, rawRequest, sleep, startServer, stopServer } from './helpers.mjs';

const auth = { authorization: `Bearer ${apiKey}` };

function assertBadRequest(response, messagePattern, param) {
  assert.equal(response.status, 400, response.body);
  const { error } = JSON.parse(response.body);
  assert.match(error.message, messagePattern);
  if (param !== undefined) assert.equal(error.param, param);
}

// A field nested `depth` levels deep, followed by another key (the shape that crashed the server).
function deeplyNested(depth) {
  return '['.repeat(depth) + ']'.repeat(depth);
}

test('JSON nested deeper than the limit is a 400 on every route, before anything recurses', async () => {
  const deep = deeplyNested(60000);
  const bodies = [
    ['/v1/completions', `{"model": "${model}", "extra": ${deep}, "prompt": "x"}`],
    ['/v1/chat/completions', `{"messages": [{"role": "user", "content": "x"}], "tools": ${deep}}`],
    ['/v1/chat/completions', `{"messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": {"a": ${deep}}}`],
    ['/v1/chat/completions', `{"messages": [{"role": "user", "content": "x", "extra": ${deeplyNested(100000)}}]}`],
    ['/tokenize', `{"prompt": "x", "deep": ${deep}, "add_special_tokens": true}`],
    ['/detokenize', `{"tokens": ${deep}}`],
  ];
  for (const [path, body] of bodies) {
    const response = await rawRequest({ path, body, headers: { 'content-type': 'application/json', ...auth } });
    assertBadRequest(response, /nests JSON deeper than 128 levels/);
  }
  // Nesting within the limit still parses (and is then judged on its fields).
  const fine = await postJson('/v1/completions', `{"model": "${model}", "extra": ${deeplyNested(100)}, "prompt": "x", "max_tokens": 1}`);
  assert.equal(fine.status, 200);
  assert.equal((await rawRequest({ method: 'GET', path: '/health' })).status, 200);
});

test('a request asking for more sequences than the server allows is a 400 before any work', async () => {
  const started = Date.now();
  const response = await postJson('/v1/completions', { model, prompt: Array(1000).fill([1]), n: 128, max_tokens: 1 });
  assertBadRequest(response, /asks for 128000 sequences .*at most \d+ per request/, 'prompt');
  assert.ok(Date.now() - started < 2000);
  const chat = await postJson('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'x' }], n: 128, max_tokens: 1 });
  assert.equal(chat.status, 200);  // 128 <= --max-num-seqs (256)
});

test('fields this build does not implement are 400s naming them; their no-op values are fine', async () => {
  const chat = { model, messages: [{ role: 'user', content: 'x' }], max_tokens: 1 };
  const refused = [
    [{ best_of: 3 }, 'best_of'],
    [{ structural_tag: '{}' }, 'structural_tag'],
    [{ tools: [{ type: 'function', function: { name: 'f' } }] }, 'tool_choice'],
    [{ tool_choice: 'auto' }, 'tool_choice'],
    [{ spaces_between_special_tokens: false, skip_special_tokens: false }, 'spaces_between_special_tokens'],
  ];
  for (const [fields, param] of refused) {
    const response = await postJson('/v1/chat/completions', { ...chat, ...fields });
    assert.equal(response.status, 400, `${JSON.stringify(fields)}: ${response.body}`);
    assert.equal(response.json.error.param, param, JSON.stringify(fields));
  }
  const suffix = await postJson('/v1/completions', { model, prompt: 'x', suffix: 'y' });
  assertBadRequest(suffix, /suffix/, 'suffix');
  for (const fields of [{ best_of: 1 }, { use_beam_search: false }, { response_format: { type: 'text' } },
    { tool_choice: 'none' }, { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' },
    { spaces_between_special_tokens: false }]) {
    const response = await postJson('/v1/chat/completions', { ...chat, ...fields });
    assert.equal(response.status, 200, `${JSON.stringify(fields)}: ${response.body}`);
  }
  const withId = await postJson('/v1/completions', { model, prompt: 'x', max_tokens: 1, request_id: 'abc' });
  assert.equal(withId.json.id, 'cmpl-abc');
});

test('request chat templates are refused unless the server trusts them', async () => {
  const messages = [{ role: 'user', content: 'x' }];
  for (const fields of [{ chat_template: '{{ "x" }}' }, { chat_template_kwargs: { chat_template: '{{ "x" }}' } }]) {
    const response = await postJson('/v1/chat/completions', { model, messages, ...fields });
    assertBadRequest(response, /--trust-request-chat-template is not set/, 'chat_template');
  }
  const server = await startServer(['--trust-request-chat-template']);
  try {
    const url = `http://127.0.0.1:${server.port}/v1/chat/completions`;
    const post = (body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(async (r) => ({ status: r.status, json: await r.json() }));
    const raised = await post({ model, messages, chat_template: '{{ raise_exception("no way") }}' });
    assert.equal(raised.status, 400);
    assert.equal(raised.json.error.message, 'no way');
    // A 120-byte template that would render 60 MB: refused fast, and /health answers meanwhile.
    const started = Date.now();
    const heavy = post({ model, messages, chat_template: "{{ 'hello ' * 10000000 }}" });
    const health = await fetch(`http://127.0.0.1:${server.port}/health`);
    assert.equal(health.status, 200);
    const response = await heavy;
    assert.equal(response.status, 400);
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    const ok = await post({ model, messages, chat_template: '{{ messages[0].content }}', max_tokens: 2 });
    assert.equal(ok.status, 200);
  } finally {
    await stopServer(server);
  }
});

test('heavy requests run off the I/O thread: /health stays fast while prompts are tokenized', async () => {
  const server = await startServer(['--max-request-body-bytes', String(64 << 20), '--max-prompt-bytes', String(48 << 20)]);
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const big = JSON.stringify({ prompt: 'Once upon a time there was a dog. '.repeat(150000) });  // ~5 MB
    const heavy = Array.from({ length: 2 }, () =>
      fetch(`${base}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big }).then((r) => r.status));
    await sleep(300);  // the bodies are being read and tokenized
    const latencies = [];
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      assert.equal((await fetch(`${base}/health`)).status, 200);
      latencies.push(Date.now() - started);
      await sleep(50);
    }
    assert.ok(Math.max(...latencies) < 500, `health latencies ${latencies}`);
    assert.deepEqual(await Promise.all(heavy), [200, 200]);
  } finally {
    await stopServer(server);
  }
});

test('prompts over --max-prompt-bytes are 400s', async () => {
  const server = await startServer(['--max-prompt-bytes', '1000']);
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const post = (path, body) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(async (r) => ({ status: r.status, json: await r.json() }));
    for (const [path, body] of [['/v1/completions', { prompt: 'x'.repeat(1001) }],
      ['/v1/chat/completions', { messages: [{ role: 'user', content: 'x'.repeat(600) }, { role: 'user', content: 'y'.repeat(600) }] }],
      ['/tokenize', { prompt: 'x'.repeat(1001) }]]) {
      const response = await post(path, body);
      assert.equal(response.status, 400, path);
      assert.match(response.json.error.message, /--max-prompt-bytes/);
    }
    const atLimit = await post('/tokenize', { prompt: 'x'.repeat(1000) });
    assert.equal(atLimit.status, 200);
  } finally {
    await stopServer(server);
  }
});

// Reads a streaming response to its end; resolves the raw body, or rejects if the connection was
// cut before the chunked encoding ended. onFirstData runs when the first bytes of the body arrive.
function streamToEnd(serverPort, body, onFirstData = () => {}) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: serverPort, method: 'POST', path: '/v1/completions',
      headers: { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.on('data', (chunk) => {
        if (text === '') onFirstData();
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode, text }));
      response.on('aborted', () => reject(new Error(`stream cut: ${text.slice(-200)}`)));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

test('shutdown ends streams with an error event and [DONE], other requests with a 503', async () => {
  const server = await startServer(['--shutdown-timeout', '0', '--max-num-seqs', '1']);
  const long = { model, prompt: 'Once upon a time', max_tokens: 250, ignore_eos: true };
  // One sequence at a time: the first stream runs, and the requests sent once its first bytes
  // arrived queue behind it. The server stops as soon as they are all queued (its metrics say so),
  // neither after a fixed delay nor while a request other than the stream is running (on a fast
  // machine either can happen: requests sent together may arrive in any order).
  const waitFor = async (what, ready) => {
    let timer;
    const outcome = await Promise.race([ready.then(() => 'ready'),
      new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), 30000); })]);
    clearTimeout(timer);
    assert.equal(outcome, 'ready', `${what} within 30 s`);
  };
  let streamUnderWay;
  const firstStreamBytes = new Promise((resolve) => { streamUnderWay = resolve; });
  // 2,000 tokens of the demo model take most of a second even on a fast machine.
  const first = { ...long, max_tokens: 2000, stream: true };
  const streams = [streamToEnd(server.port, first, streamUnderWay)];
  await waitFor('the first stream started', firstStreamBytes);
  for (let i = 0; i < 2; i++) streams.push(streamToEnd(server.port, { ...long, stream: true }));
  const whole = Array.from({ length: 3 }, () =>
    fetch(`http://127.0.0.1:${server.port}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(long) })
      .then(async (r) => ({ status: r.status, body: await r.text() })));
  const waiting = async () => {
    const body = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    const line = body.split('\n').find((l) => l.startsWith('vllm:num_requests_waiting{'));
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  await waitFor('the other requests queued', (async () => {
    while (await waiting() < 5) await sleep(1);
  })());
  const { code } = await stopServer(server);
  assert.equal(code, 0);
  const ended = await Promise.all(streams);
  const cut = ended.filter((stream) => stream.text.includes('shutting down'));
  assert.ok(cut.length > 0, 'no stream was under way at the shutdown');
  for (const stream of ended) {
    if (stream.status === 503) continue;  // still queued at the shutdown: nothing was sent yet
    assert.equal(stream.status, 200);
    assert.ok(stream.text.trimEnd().endsWith('data: [DONE]'), stream.text.slice(-200));
  }
  for (const stream of cut) assert.match(stream.text, /"code":503/);
  const answers = await Promise.all(whole);
  assert.ok(answers.some((answer) => answer.status === 503), JSON.stringify(answers.map((a) => a.status)));
  for (const answer of answers) assert.ok([200, 503].includes(answer.status));
});

test('a KV cache larger than the memory fails at start with a message naming the flag', async () => {
  const { spawnSync } = await import('node:child_process');
  const started = Date.now();
  const result = spawnSync(process.env.VLLM_E2E_BINARY, ['serve', `${process.env.VLLM_E2E_SHARED}/models/stories260K.gguf`,
    '--port', '0', '--kv-cache-memory-bytes', '100000000000000', '--max-num-seqs', '100000'], { encoding: 'utf8', timeout: 30000 });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /--kv-cache-memory-bytes: a KV cache of .* does not fit/);
  assert.ok(Date.now() - started < 10000);
});
