// The other pooling routes against random-weight models the test writes with
// `vllm-cpp make-random-model`: a reranker (XLM-R-style classification head) serves /rerank,
// /v1/rerank, /v2/rerank, /score, /v1/score and /classify; an embedding model serves /pooling and
// bi-encoder /score; each route answers 400 on a model that does not serve it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { model, postJson, startServer, stopServer } from './helpers.mjs';

let directory;
let reranker;
let embedder;

function writeModel(shape) {
  const path = join(directory, `${shape}.gguf`);
  execFileSync(process.env.VLLM_E2E_BINARY, ['make-random-model', '--shape', shape, '--vocab',
    `${process.env.VLLM_E2E_SHARED}/vocab/ggml-vocab-bert-bge.gguf`, '--out', path], { stdio: 'ignore' });
  return path;
}

async function post(server, path, body) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'vllm-cpp-rerank-'));
  reranker = await startServer(['--max-model-len', '128'], { modelPath: writeModel('bert-reranker-tiny') });
  embedder = await startServer(['--max-model-len', '128'], { modelPath: writeModel('bert-tiny') });
});

after(async () => {
  if (reranker) await stopServer(reranker);
  if (embedder) await stopServer(embedder);
  rmSync(directory, { recursive: true, force: true });
});

test('rerank sorts documents by relevance, keeps top_n and returns documents', async () => {
  const documents = ['a bear of china', 'hello', 'the capital of france is paris', 'x'];
  for (const path of ['/rerank', '/v1/rerank', '/v2/rerank']) {
    const { status, json } = await post(reranker, path, { model, query: 'what is a panda?', documents });
    assert.equal(status, 200);
    assert.equal(json.model, model);
    assert.equal(json.results.length, 4);
    assert.deepEqual(json.results.map((r) => r.index).sort(), [0, 1, 2, 3]);
    for (let i = 1; i < 4; i++) assert.ok(json.results[i - 1].relevance_score >= json.results[i].relevance_score);
    for (const r of json.results) {
      assert.equal(r.document.text, documents[r.index]);
      assert.ok(r.relevance_score > 0 && r.relevance_score < 1);
    }
    assert.ok(json.usage.total_tokens > 0);
  }
  const top = await post(reranker, '/rerank', { model, query: 'what is a panda?', documents, top_n: 2,
    return_documents: false });
  assert.equal(top.json.results.length, 2);
  assert.equal(top.json.results[0].document, undefined);
  const all = await post(reranker, '/rerank', { model, query: 'what is a panda?', documents });
  assert.deepEqual(top.json.results.map((r) => r.index), all.json.results.slice(0, 2).map((r) => r.index));
  // The same pair scored by /score.
  const score = await post(reranker, '/score', { model, text_1: 'what is a panda?', text_2: documents });
  assert.equal(score.status, 200);
  for (const r of all.json.results) assert.equal(score.json.data[r.index].score, r.relevance_score);
});

test('score and classify on a reranker; bad requests get 400s', async () => {
  const score = await post(reranker, '/v1/score', { model, text_1: ['a', 'b'], text_2: ['c', 'd'] });
  assert.equal(score.status, 200);
  assert.equal(score.json.data.length, 2);
  assert.equal(score.json.data[1].object, 'score');
  const classify = await post(reranker, '/classify', { model, input: ['hello world', 'x'] });
  assert.equal(classify.status, 200);
  assert.equal(classify.json.data[0].num_classes, 1);
  assert.equal(classify.json.data[0].label, 'LABEL_0');
  assert.equal((await post(reranker, '/v1/score', { model, text_1: ['a', 'b'], text_2: ['c', 'd', 'e'] })).status, 400);
  assert.equal((await post(reranker, '/rerank', { model, query: 'q', documents: [] })).status, 400);
  assert.equal((await post(reranker, '/rerank', { model, query: 'q', documents: ['d'], top_n: -1 })).status, 400);
  const embeddings = await post(reranker, '/v1/embeddings', { model, input: 'hello' });
  assert.equal(embeddings.status, 400);
  assert.equal(embeddings.json.error.message, 'The model does not support Embeddings API');
});

test('an embedding model pools, scores by cosine and refuses classification', async () => {
  const pooled = await post(embedder, '/pooling', { model, input: ['hello world'] });
  assert.equal(pooled.status, 200);
  assert.equal(pooled.json.data[0].object, 'pooling');
  assert.equal(pooled.json.data[0].data.length, 64);
  const same = await post(embedder, '/score', { model, text_1: 'same text', text_2: ['same text', 'other'] });
  assert.equal(same.status, 200);
  assert.ok(Math.abs(same.json.data[0].score - 1) < 1e-5);
  assert.ok(same.json.data[1].score < 0.9999);
  const classify = await post(embedder, '/classify', { model, input: 'hello' });
  assert.equal(classify.status, 400);
  assert.equal(classify.json.error.message, 'The model does not support Classification API');
  const generative = await postJson('/rerank', { model, query: 'q', documents: ['d'] });
  assert.equal(generative.status, 400);
});
