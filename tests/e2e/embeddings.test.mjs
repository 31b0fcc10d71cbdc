// /v1/embeddings with the official openai SDK against a random-weight bge-small-shaped BERT GGUF
// that the test writes with `vllm-cpp make-random-model`: float and base64 encodings agree,
// embeddings are unit vectors of the hidden size, `dimensions` truncates and renormalizes (the
// model marked Matryoshka by --hf-overrides), token arrays and lists batch together, and a
// generative model answers 400.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { client, model, postJson, startServer, stopServer } from './helpers.mjs';

const norm = (v) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

let directory;
let server;
let openai;

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'vllm-cpp-embeddings-'));
  const path = join(directory, 'bge-small.gguf');
  execFileSync(process.env.VLLM_E2E_BINARY, ['make-random-model', '--shape', 'bge-small', '--vocab',
    `${process.env.VLLM_E2E_SHARED}/vocab/ggml-vocab-bert-bge.gguf`, '--out', path], { stdio: 'ignore' });
  // bge-small is not Matryoshka-trained; the override lets `dimensions` truncate it.
  server = await startServer(['--hf-overrides', '{"is_matryoshka": true}'], { modelPath: path });
  openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0 });
});

after(async () => {
  if (server) await stopServer(server);
  rmSync(directory, { recursive: true, force: true });
});

test('embeddings.create returns unit vectors of the hidden size, the same as float or base64', async () => {
  const asFloat = await openai.embeddings.create({ model, input: 'hello world', encoding_format: 'float' });
  assert.equal(asFloat.object, 'list');
  assert.equal(asFloat.model, model);
  assert.equal(asFloat.data.length, 1);
  assert.equal(asFloat.data[0].object, 'embedding');
  assert.equal(asFloat.data[0].index, 0);
  assert.equal(asFloat.data[0].embedding.length, 384);
  assert.ok(Math.abs(norm(asFloat.data[0].embedding) - 1) < 1e-5);
  assert.ok(asFloat.usage.prompt_tokens > 0);
  assert.equal(asFloat.usage.total_tokens, asFloat.usage.prompt_tokens);
  const asBase64 = await openai.embeddings.create({ model, input: 'hello world', encoding_format: 'base64' });
  // The SDK decodes base64 into floats when it asked for them itself (no encoding_format).
  const decoded = await openai.embeddings.create({ model, input: 'hello world' });
  assert.deepEqual(decoded.data[0].embedding, asFloat.data[0].embedding);
  const bytes = Buffer.from(asBase64.data[0].embedding, 'base64');
  assert.deepEqual(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)),
    asFloat.data[0].embedding);
});

test('dimensions truncates and renormalizes; lists and token arrays batch together', async () => {
  const full = await openai.embeddings.create({ model, input: 'hello world', encoding_format: 'float' });
  const short = await openai.embeddings.create({ model, input: 'hello world', dimensions: 128,
    encoding_format: 'float' });
  assert.equal(short.data[0].embedding.length, 128);
  assert.ok(Math.abs(norm(short.data[0].embedding) - 1) < 1e-5);
  const head = full.data[0].embedding.slice(0, 128);
  const scale = norm(head);
  short.data[0].embedding.forEach((x, i) => assert.ok(Math.abs(x - head[i] / scale) < 1e-6));
  const batch = await openai.embeddings.create({ model, input: ['hello world', 'a second, longer input text', 'x'],
    encoding_format: 'float' });
  assert.deepEqual(batch.data.map((d) => d.index), [0, 1, 2]);
  assert.deepEqual(batch.data[0].embedding, full.data[0].embedding);
  const tokens = await openai.embeddings.create({ model, input: [[101, 7592, 2088, 102], [101, 102]],
    encoding_format: 'float' });
  assert.equal(tokens.usage.prompt_tokens, 6);
  const single = await openai.embeddings.create({ model, input: [101, 7592, 2088, 102], encoding_format: 'float' });
  assert.deepEqual(single.data[0].embedding, tokens.data[0].embedding);
});

test('bad embeddings requests get 400s', async () => {
  const base = { headers: { authorization: 'Bearer x' } };
  const url = `http://127.0.0.1:${server.port}/v1/embeddings`;
  const post = async (body) => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...base.headers },
      body: JSON.stringify(body) });
    return { status: response.status, json: await response.json() };
  };
  assert.equal((await post({ model })).status, 400);
  assert.equal((await post({ model, input: [] })).status, 400);
  assert.equal((await post({ model, input: 'a', encoding_format: 'int8' })).status, 400);
  assert.equal((await post({ model, input: 'a', dimensions: 0 })).status, 400);
  assert.equal((await post({ model, input: [[999999999]] })).status, 400);
  const tooLong = await post({ model, input: [Array(600).fill(1000)] });
  assert.equal(tooLong.status, 400);
  assert.match(tooLong.json.error.message, /maximum context length/);
  assert.equal((await post({ model: 'other', input: 'a' })).status, 404);
});

test('a generative model answers /v1/embeddings with 400', async () => {
  const response = await postJson('/v1/embeddings', { model, input: 'hello' });
  assert.equal(response.status, 400);
  assert.equal(response.json.error.message, 'The model does not support Embeddings API');
  await assert.rejects(client().embeddings.create({ model, input: 'hello' }), { status: 400 });
});
