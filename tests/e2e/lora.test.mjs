// LoRA adapters as vLLM serves them, through the official openai SDK: --enable-lora with
// --lora-modules (name=path and the JSON form), a request's model naming an adapter (requests of
// two adapters and the base in parallel, against llama.cpp's greedy outputs), /v1/models'
// adapter cards, the unknown model's 404, runtime /v1/load_lora_adapter and
// /v1/unload_lora_adapter with VLLM_ALLOW_RUNTIME_LORA_UPDATING (404 without it), a bad adapter's
// 400 / 404 while the server keeps serving, and vllm:lora_requests_info.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { model, rawRequest, startServer, stopServer } from './helpers.mjs';

const oracle = `${process.env.VLLM_E2E_SHARED}/oracles/lora`;
const cases = (name) => JSON.parse(readFileSync(`${oracle}/greedy/${name}.json`, 'utf8')).cases;

let server;
let sdk;
before(async () => {
  server = await startServer(['--enable-lora', '--max-loras', '2', '--max-cpu-loras', '4',
    '--kv-cache-memory-bytes', String(64 << 20), '--lora-modules', `sql=${oracle}/sql.gguf`,
    JSON.stringify({ name: 'poet', path: `${oracle}/poet-peft`, base_model_name: model })],
  { modelPath: `${oracle}/base.gguf`, env: { VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' } });
  sdk = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0 });
});
after(() => stopServer(server));

// POSTs JSON to the server; resolves {status, text}.
async function post(path, body, port = server.port) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

async function completeAll(name, adapter) {
  return Promise.all(cases(name).map(async ({ prompt, expected_prefix: expected }) => {
    const reply = await sdk.completions.create({ model: adapter, prompt, max_tokens: 64, temperature: 0 });
    return { reply, expected, prompt };
  }));
}

test('a request\'s model picks the adapter: sql, poet and the base in parallel give llama.cpp\'s greedy text', async () => {
  const runs = await Promise.all([completeAll('sql', 'sql'), completeAll('poet', 'poet'), completeAll('base', model)]);
  for (const [adapter, results] of [['sql', runs[0]], ['poet', runs[1]], [model, runs[2]]]) {
    for (const { reply, expected, prompt } of results) {
      assert.equal(reply.model, adapter);
      assert.ok(reply.choices[0].text.startsWith(expected), `${adapter} on ${JSON.stringify(prompt)}: ${JSON.stringify(reply.choices[0].text)}`);
    }
  }
  // Chat and streaming name the adapter too.
  const chat = await sdk.chat.completions.create({ model: 'poet', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
  assert.equal(chat.model, 'poet');
  const stream = await sdk.completions.create({ model: 'sql', prompt: cases('sql')[0].prompt, max_tokens: 64, temperature: 0, stream: true });
  let text = '';
  for await (const chunk of stream) {
    assert.equal(chunk.model, 'sql');
    text += chunk.choices[0]?.text ?? '';
  }
  assert.ok(text.startsWith(cases('sql')[0].expected_prefix));
});

test('/v1/models lists the base, then each adapter with its path as root and the base as parent', async () => {
  const models = (await sdk.models.list()).data;
  assert.deepEqual(models.map((card) => card.id), [model, 'sql', 'poet']);
  assert.equal(models[0].parent, null);
  assert.equal(models[1].root, `${oracle}/sql.gguf`);
  assert.equal(models[1].parent, model);
  assert.equal(models[2].root, `${oracle}/poet-peft`);
  assert.equal(models[2].parent, model);
});

test('an unknown model is vLLM\'s 404 NotFoundError', async () => {
  await assert.rejects(sdk.completions.create({ model: 'no-such-adapter', prompt: 'x', max_tokens: 2 }), (error) => {
    assert.ok(error instanceof OpenAI.NotFoundError);
    assert.equal(error.message, '404 The model `no-such-adapter` does not exist.');
    return true;
  });
  await assert.rejects(sdk.chat.completions.create({ model: 'no-such-adapter', messages: [{ role: 'user', content: 'x' }] }),
    OpenAI.NotFoundError);
});

test('runtime loading: load, serve, refuse a second load, unload, then 404', async () => {
  const loaded = await post('/v1/load_lora_adapter', { lora_name: 'sql2', lora_path: `${oracle}/sql-peft` });
  assert.deepEqual(loaded, { status: 200, text: "Success: LoRA adapter 'sql2' added successfully." });
  assert.ok((await sdk.models.list()).data.some((card) => card.id === 'sql2' && card.parent === model));
  // The PEFT form of the sql adapter gives the GGUF form's greedy text.
  for (const { reply, expected } of await completeAll('sql', 'sql2')) {
    assert.ok(reply.choices[0].text.startsWith(expected));
  }
  const again = await post('/v1/load_lora_adapter', { lora_name: 'sql2', lora_path: `${oracle}/sql-peft` });
  assert.equal(again.status, 400);
  assert.match(JSON.parse(again.text).error.message, /The lora adapter 'sql2' has already been loaded/);
  const missing = await post('/v1/load_lora_adapter', { lora_name: 'x' });
  assert.equal(missing.status, 400);
  assert.match(JSON.parse(missing.text).error.message, /Both 'lora_name' and 'lora_path' must be provided/);

  const unloaded = await post('/v1/unload_lora_adapter', { lora_name: 'sql2' });
  assert.deepEqual(unloaded, { status: 200, text: "Success: LoRA adapter 'sql2' removed successfully." });
  const twice = await post('/v1/unload_lora_adapter', { lora_name: 'sql2' });
  assert.equal(twice.status, 404);
  assert.equal(JSON.parse(twice.text).error.message, "The lora adapter 'sql2' cannot be found.");
  await assert.rejects(sdk.completions.create({ model: 'sql2', prompt: 'x', max_tokens: 2 }), OpenAI.NotFoundError);
  assert.ok(!(await sdk.models.list()).data.some((card) => card.id === 'sql2'));
});

test('a bad adapter is refused with the loader\'s message and the server keeps serving', async () => {
  const absent = await post('/v1/load_lora_adapter', { lora_name: 'gone', lora_path: `${oracle}/missing` });
  assert.equal(absent.status, 404);
  assert.match(JSON.parse(absent.text).error.message, /No adapter found/);
  const work = mkdtempSync(`${tmpdir()}/lora-e2e-`);
  try {
    writeFileSync(`${work}/corrupt.gguf`, 'GGUF this is not an adapter');
    const corrupt = await post('/v1/load_lora_adapter', { lora_name: 'corrupt', lora_path: `${work}/corrupt.gguf` });
    assert.equal(corrupt.status, 400);
    assert.match(JSON.parse(corrupt.text).error.message, /corrupt/);
    // An adapter of another base: its shapes do not fit this one.
    const base = await post('/v1/load_lora_adapter', { lora_name: 'base-as-lora', lora_path: `${oracle}/base.gguf` });
    assert.equal(base.status, 400);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const { reply, expected } = (await completeAll('poet', 'poet'))[0];
  assert.ok(reply.choices[0].text.startsWith(expected));
  assert.ok(!(await sdk.models.list()).data.some((card) => ['gone', 'corrupt', 'base-as-lora'].includes(card.id)));
});

test('vllm:lora_requests_info names --max-loras and is stamped with the time', async () => {
  const response = await rawRequest({ method: 'GET', path: '/metrics', serverPort: server.port });
  const line = response.body.split('\n').find((l) => l.startsWith('vllm:lora_requests_info{'));
  assert.ok(line, response.body);
  assert.match(line, /max_lora="2"/);
  assert.match(line, /running_lora_adapters="[^"]*"/);
  assert.match(line, /waiting_lora_adapters="[^"]*"/);
  const stamp = Number(line.slice(line.lastIndexOf(' ') + 1));
  assert.ok(Math.abs(stamp - Date.now() / 1000) < 3600, line);
});

test('without VLLM_ALLOW_RUNTIME_LORA_UPDATING the runtime routes are 404', async () => {
  const plain = await startServer(['--enable-lora', '--kv-cache-memory-bytes', String(64 << 20)],
    { modelPath: `${oracle}/base.gguf`, env: { VLLM_ALLOW_RUNTIME_LORA_UPDATING: '' } });
  try {
    for (const path of ['/v1/load_lora_adapter', '/v1/unload_lora_adapter']) {
      const response = await post(path, { lora_name: 'sql', lora_path: `${oracle}/sql.gguf` }, plain.port);
      assert.equal(response.status, 404, path);
    }
  } finally {
    await stopServer(plain);
  }
});

// Chat, beam search and the pooling routes with an adapter (issue 45): vLLM applies the adapter
// the request's model names to each of them.
test('chat with an adapter is that adapter\'s greedy completion of the rendered conversation', async () => {
  const messages = [{ role: 'user', content: 'Write a query' }];
  const chat = async (name) => (await sdk.chat.completions.create({ model: name, messages, max_tokens: 24, temperature: 0 })).choices[0].message.content;
  const rendered = JSON.parse((await post('/tokenize', { model, messages })).text).tokens;
  const completion = await sdk.completions.create({ model: 'sql', prompt: rendered, max_tokens: 24, temperature: 0 });
  const withSql = await chat('sql');
  assert.equal(withSql, completion.choices[0].text);
  assert.notEqual(withSql, await chat(model));
});

test('/v1/completions beam search with an adapter: width 1 is the adapter\'s greedy text', async () => {
  const { prompt } = cases('sql')[0];
  const beam = async (name) => (await sdk.completions.create({ model: name, prompt, max_tokens: 16, temperature: 0, n: 1, use_beam_search: true, ignore_eos: true }));
  const withSql = await beam('sql');
  assert.equal(withSql.model, 'sql');
  const greedy = await sdk.completions.create({ model: 'sql', prompt, max_tokens: 16, temperature: 0, ignore_eos: true });
  assert.equal(withSql.choices[0].text, greedy.choices[0].text);
  assert.notEqual(withSql.choices[0].text, (await beam(model)).choices[0].text);
  // Wider beams with the adapter: n sequences, the best first.
  const wide = await sdk.completions.create({ model: 'poet', prompt, max_tokens: 8, temperature: 0, n: 3, use_beam_search: true });
  assert.equal(wide.choices.length, 3);
});

test('the pooling routes on a decoder run as a pooling model apply the adapter the model names', async () => {
  const pooler = await startServer(['--runner', 'pooling', '--enable-lora', '--max-loras', '2',
    '--kv-cache-memory-bytes', String(64 << 20), '--lora-modules', `sql=${oracle}/sql.gguf`, `poet=${oracle}/poet-peft`],
  { modelPath: `${oracle}/base.gguf` });
  try {
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${pooler.port}/v1`, apiKey: 'x', maxRetries: 0 });
    const input = ['Once upon a time', 'SELECT name FROM users'];
    const embed = (name, text = input) => client.embeddings.create({ model: name, input: text, encoding_format: 'float' });
    const [withSql, withPoet, base] = await Promise.all([embed('sql'), embed('poet'), embed(model)]);
    assert.equal(withSql.model, 'sql');
    const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);
    for (let i = 0; i < input.length; ++i) {
      assert.ok(dot(withSql.data[i].embedding, base.data[i].embedding) < 0.999, `sql changed nothing on ${input[i]}`);
      assert.ok(dot(withPoet.data[i].embedding, withSql.data[i].embedding) < 0.999);
      // Alone, the same vector as in the batch (mixed with the other adapters' requests).
      const alone = (await embed('sql', input[i])).data[0].embedding;
      alone.forEach((x, k) => assert.ok(Math.abs(x - withSql.data[i].embedding[k]) < 1e-5));
    }
    // /score (a bi-encoder): the cosine of the adapter's embeddings.
    const score = await post('/score', { model: 'sql', text_1: input[0], text_2: [input[1]] }, pooler.port);
    assert.equal(score.status, 200, score.text);
    const scored = JSON.parse(score.text);
    assert.equal(scored.model, 'sql');
    assert.ok(Math.abs(scored.data[0].score - dot(withSql.data[0].embedding, withSql.data[1].embedding)) < 1e-5);
    const pooling = await post('/pooling', { model: 'poet', input: input[0] }, pooler.port);
    assert.equal(pooling.status, 200, pooling.text);
    await assert.rejects(embed('no-such-adapter'), OpenAI.NotFoundError);
  } finally {
    await stopServer(pooler);
  }
});
