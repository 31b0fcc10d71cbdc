// Quantized Hugging Face checkpoints behind `serve`: two of the shared oracle's formats
// (../shared/oracles/quantized_hf: GPTQ 4-bit act-order with asymmetric zeros, compressed-tensors
// W8A8 int8) answer /v1/completions with llama.cpp's greedy token ids on the dequantized weights.
// Prompts go as token-id arrays (the checkpoint's tokenizer and llama.cpp's vocabulary differ) and
// the reply's ids come back through logprobs with vLLM's return_tokens_as_token_ids.
// The checkpoints are the ones CTest's quantized_hf_oracle_models fixture writes
// (VLLM_E2E_QUANTIZED_HF); run by hand, the test writes them into a temporary directory.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { model, startServer, stopServer } from './helpers.mjs';

const FORMATS = ['gptq4-act', 'ct-w8a8'];
const shared = process.env.VLLM_E2E_SHARED;
const oracle = JSON.parse(readFileSync(`${shared}/oracles/quantized_hf/oracle.json`, 'utf8'));
const generator = new URL('../conformance/quantized_hf/oracle_models.py', import.meta.url).pathname;

let temporary;
const servers = {};

before(async () => {
  let directory = process.env.VLLM_E2E_QUANTIZED_HF;
  if (!directory) directory = temporary = mkdtempSync(join(tmpdir(), 'vllm-cpp-quantized-hf-'));
  // Writes the checkpoints unless their sha256s already match the oracle's; fails when they do not.
  execFileSync('/usr/bin/python3', [generator, '--out', directory, '--shared', shared], { stdio: 'pipe' });
  for (const format of FORMATS) servers[format] = await startServer([], { modelPath: join(directory, format) });
});

after(async () => {
  for (const server of Object.values(servers)) await stopServer(server);
  if (temporary) rmSync(temporary, { recursive: true, force: true });
});

// Greedy ids of one prompt (token ids), read from logprobs' "token_id:<id>" names.
async function greedyIds(server, promptTokenIds) {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'unused', maxRetries: 0 });
  const completion = await client.completions.create({
    model, prompt: promptTokenIds, temperature: 0, max_tokens: 32, logprobs: 0,
    return_tokens_as_token_ids: true });
  return completion.choices[0].logprobs.tokens.map((name) => {
    assert.match(name, /^token_id:\d+$/);
    return Number(name.slice('token_id:'.length));
  });
}

for (const format of FORMATS) {
  test(`${format}: greedy completions of token-id prompts match the oracle`, async () => {
    const cases = oracle.formats[format];
    const replies = await Promise.all(cases.map((c) => greedyIds(servers[format], c.prompt_token_ids)));
    cases.forEach((c, index) => {
      assert.deepEqual(replies[index].slice(0, c.n), c.ids.slice(0, c.n),
        `${format} prompt ${index} ${JSON.stringify(c.prompt_token_ids)}: the oracle's first ${c.n} ids`);
      assert.equal(replies[index].length, 32, `${format} prompt ${index}: max_tokens`);
    });
  });
}
