// Decoders as pooling models behind the server, on random-weight files the test writes with
// `vllm-cpp make-random-model`: Qwen3-Embedding (/v1/embeddings, last-token pooling, Matryoshka
// `dimensions`), EmbeddingGemma (/v1/embeddings, bidirectional, mean pooling and Dense modules),
// llama.cpp's Qwen3-Reranker GGUF (/rerank) and a plain Qwen3 causal LM turned into a reranker by
// --hf-overrides (/score).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { model, postTo, startServer, stopServer, writeRandomModel } from './helpers.mjs';

const norm = (v) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
const qwen3RerankerOverrides = JSON.stringify({
  architectures: ['Qwen3ForSequenceClassification'], classifier_from_token: ['no', 'yes'],
  is_original_qwen3_reranker: true });

let directory;
const servers = {};

const writeModel = (shape) => writeRandomModel(directory, shape, 'ggml-vocab-gpt-2.gguf');

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'vllm-cpp-decoder-pooling-'));
  servers.qwen3Embedding = await startServer([], { modelPath: await writeModel('qwen3-embedding-tiny') });
  servers.embeddingGemma = await startServer([], { modelPath: await writeModel('embeddinggemma-tiny') });
  servers.qwen3Reranker = await startServer([], { modelPath: await writeModel('qwen3-reranker-tiny') });
  servers.overridden = await startServer(['--hf-overrides', qwen3RerankerOverrides],
    { modelPath: await writeModel('qwen3-tiny') });
});

after(async () => {
  for (const server of Object.values(servers)) await stopServer(server);
  rmSync(directory, { recursive: true, force: true });
});

test('Qwen3-Embedding and EmbeddingGemma serve unit-vector embeddings; Qwen3 truncates', async () => {
  for (const server of [servers.qwen3Embedding, servers.embeddingGemma]) {
    const { status, json } = await postTo(server, '/v1/embeddings', { model, input: ['hello world', 'a cat'] });
    assert.equal(status, 200);
    assert.equal(json.data.length, 2);
    assert.equal(json.data[0].embedding.length, 128);
    for (const item of json.data) assert.ok(Math.abs(norm(item.embedding) - 1) < 1e-5);
  }
  const short = await postTo(servers.qwen3Embedding, '/v1/embeddings', { model, input: 'hello', dimensions: 32 });
  assert.equal(short.status, 200);
  assert.equal(short.json.data[0].embedding.length, 32);
  // EmbeddingGemma here is not marked Matryoshka: vLLM's 400.
  const refused = await postTo(servers.embeddingGemma, '/v1/embeddings', { model, input: 'hello', dimensions: 32 });
  assert.equal(refused.status, 400);
  assert.match(refused.json.error.message, /does not support matryoshka representation/);
});

test('Qwen3-Reranker ranks through /rerank and /score, from its GGUF or by --hf-overrides', async () => {
  const documents = ['a bear of china', 'hello', 'the capital of france is paris'];
  for (const server of [servers.qwen3Reranker, servers.overridden]) {
    const ranked = await postTo(server, '/rerank', { model, query: 'what is a panda?', documents });
    assert.equal(ranked.status, 200);
    assert.equal(ranked.json.results.length, 3);
    for (let i = 1; i < 3; i++) {
      assert.ok(ranked.json.results[i - 1].relevance_score >= ranked.json.results[i].relevance_score);
    }
    const scored = await postTo(server, '/score', { model, text_1: 'what is a panda?', text_2: documents });
    assert.equal(scored.status, 200);
    assert.equal(scored.json.data.length, 3);
    for (const item of scored.json.data) {
      assert.ok(item.score > 0 && item.score < 1);
      const match = ranked.json.results.find((r) => r.index === item.index);
      assert.ok(Math.abs(match.relevance_score - item.score) < 1e-6);
    }
    const embed = await postTo(server, '/v1/embeddings', { model, input: 'hello' });
    assert.equal(embed.status, 400);
  }
});
