// truncate_prompt_tokens on the pooling routes, as vLLM applies it: the last k tokens of the
// input are kept (left truncation), -1 keeps the last max_model_len, and values below -1, 0 or
// above max_model_len are refused with 400s. Runs against a random-weight bge-small-shaped BERT
// GGUF served with --max-model-len 256.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { model, startServer, stopServer } from './helpers.mjs';

let directory;
let server;
let openai;

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'vllm-cpp-truncation-'));
  const path = join(directory, 'bge-small.gguf');
  execFileSync(process.env.VLLM_E2E_BINARY, ['make-random-model', '--shape', 'bge-small', '--vocab',
    `${process.env.VLLM_E2E_SHARED}/vocab/ggml-vocab-bert-bge.gguf`, '--out', path], { stdio: 'ignore' });
  server = await startServer([], { modelPath: path });
  openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0 });
});

after(async () => {
  if (server) await stopServer(server);
  rmSync(directory, { recursive: true, force: true });
});

const post = async (path, body) => {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
};

// Ten distinct token ids (none special), and their last four.
const tokens = [2023, 2003, 1037, 3231, 1997, 1996, 4372, 16044, 2099, 2000];
const lastFour = tokens.slice(-4);

test('embeddings keep the last truncate_prompt_tokens tokens', async () => {
  const truncated = await openai.embeddings.create({ model, input: [tokens], encoding_format: 'float',
    truncate_prompt_tokens: 4 });
  assert.equal(truncated.usage.prompt_tokens, 4);
  const tail = await openai.embeddings.create({ model, input: [lastFour], encoding_format: 'float' });
  assert.deepEqual(truncated.data[0].embedding, tail.data[0].embedding);
  const whole = await openai.embeddings.create({ model, input: [tokens], encoding_format: 'float' });
  assert.equal(whole.usage.prompt_tokens, tokens.length);
  assert.notDeepEqual(whole.data[0].embedding, tail.data[0].embedding);
  // A limit above the input's length changes nothing.
  const loose = await openai.embeddings.create({ model, input: [tokens], encoding_format: 'float',
    truncate_prompt_tokens: 100 });
  assert.deepEqual(loose.data[0].embedding, whole.data[0].embedding);
});

test('-1 truncates to max_model_len; an input past it is refused without truncation', async () => {
  const long = Array.from({ length: 300 }, (_, i) => 2000 + i);
  const refused = await post('/v1/embeddings', { model, input: [long] });
  assert.equal(refused.status, 400);
  assert.match(refused.json.error.message, /maximum context length/);
  const kept = await openai.embeddings.create({ model, input: [long], encoding_format: 'float',
    truncate_prompt_tokens: -1 });
  assert.equal(kept.usage.prompt_tokens, 256);
  const tail = await openai.embeddings.create({ model, input: [long.slice(-256)], encoding_format: 'float' });
  assert.deepEqual(kept.data[0].embedding, tail.data[0].embedding);
});

test('/pooling truncates the same way', async () => {
  const pooled = await post('/pooling', { model, input: [tokens], truncate_prompt_tokens: 4 });
  assert.equal(pooled.status, 200);
  assert.equal(pooled.json.usage.prompt_tokens, 4);
  const tail = await post('/pooling', { model, input: [lastFour] });
  assert.equal(tail.status, 200);
  assert.deepEqual(pooled.json.data[0].data, tail.json.data[0].data);
  const whole = await post('/pooling', { model, input: [tokens] });
  assert.notDeepEqual(whole.json.data[0].data, tail.json.data[0].data);
});

test('out-of-range truncate_prompt_tokens values get 400s', async () => {
  for (const value of [0, -2, 257, 'four', 1.5]) {
    const response = await post('/v1/embeddings', { model, input: [tokens], truncate_prompt_tokens: value });
    assert.equal(response.status, 400, `truncate_prompt_tokens ${JSON.stringify(value)}`);
    assert.equal(typeof response.json.error.message, 'string');
  }
  const above = await post('/v1/embeddings', { model, input: [tokens], truncate_prompt_tokens: 257 });
  assert.match(above.json.error.message, /greater than max_model_len/);
});
