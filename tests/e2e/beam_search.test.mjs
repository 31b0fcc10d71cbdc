// Beam search through the official openai client (vLLM's use_beam_search, an extra body field):
// n beams as n choices, one beam equal to greedy, a best beam at least as likely as greedy,
// completions answering at once even when asked to stream (as vLLM does), chat streaming its
// beams, the 2n-logprobs limit, and a client that leaves mid-search freeing everything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { baseURL, client, metric, model, postJson, runningAfterSettling, sleep } from './helpers.mjs';

const openai = client();
const beams = (n, extra = {}) => ({ model, prompt: 'Once upon a time', max_tokens: 24, n, ignore_eos: true,
  use_beam_search: true, ...extra });
const sum = (values) => values.reduce((a, b) => a + b, 0);

test('completions: n beams are n distinct choices, best first, and repeat exactly', async () => {
  const response = await openai.completions.create(beams(4, { logprobs: 1 }));
  assert.deepEqual(response.choices.map((c) => c.index), [0, 1, 2, 3]);
  assert.equal(new Set(response.choices.map((c) => c.text)).size, 4);
  const likelihoods = response.choices.map((c) => sum(c.logprobs.token_logprobs));
  for (let i = 1; i < 4; i++) assert.ok(likelihoods[i - 1] >= likelihoods[i] - 1e-4, likelihoods.join(', '));
  for (const choice of response.choices) {
    assert.equal(choice.finish_reason, 'length');
    assert.equal(choice.logprobs.tokens.length, 24);
  }
  assert.equal(response.usage.completion_tokens, 4 * 24);
  const again = await openai.completions.create(beams(4, { logprobs: 1 }));
  assert.deepEqual(again.choices.map((c) => c.text), response.choices.map((c) => c.text));

  const greedy = await openai.completions.create({ model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0,
    ignore_eos: true, logprobs: 1 });
  assert.ok(likelihoods[0] >= sum(greedy.choices[0].logprobs.token_logprobs) - 1e-4);
  const one = await openai.completions.create(beams(1));
  assert.equal(one.choices[0].text, greedy.choices[0].text);
});

test('completions: stream with use_beam_search answers with one JSON body, as vLLM does', async () => {
  const response = await postJson('/v1/completions', { ...beams(2), stream: true });
  assert.equal(response.status, 200, response.body);
  assert.match(response.headers['content-type'], /application\/json/);
  assert.equal(response.json.choices.length, 2);
});

test('chat: beams stream as one chunk per choice and equal the whole response', async () => {
  const request = { model, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 16, n: 2,
    use_beam_search: true, length_penalty: 0.5 };
  const whole = await openai.chat.completions.create(request);
  assert.equal(whole.choices.length, 2);
  const texts = ['', ''];
  for await (const chunk of await openai.chat.completions.create({ ...request, stream: true })) {
    for (const choice of chunk.choices) texts[choice.index] += choice.delta.content ?? '';
  }
  assert.deepEqual(texts, whole.choices.map((c) => c.message.content));
});

test('beam search asks for 2n logprobs a step: n over 10 is a 400', async () => {
  const response = await postJson('/v1/completions', beams(11));
  assert.equal(response.status, 400);
  assert.match(response.json.error.message, /Requested sample logprobs of 22, which is greater than max allowed: 20/);
  assert.equal(response.json.error.param, 'n');
});

test('the server answers during a search; a client leaving mid-search aborts it and frees its blocks', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const search = fetch(`${baseURL}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer e2e-key' },
    body: JSON.stringify(beams(8, { max_tokens: 200 })),
    signal: controller.signal,
  });
  await sleep(100);
  const started = Date.now();
  assert.equal((await fetch(`${baseURL.replace('/v1', '')}/health`)).status, 200);
  assert.ok(Date.now() - started < 100, `/health took ${Date.now() - started} ms during a search`);
  await assert.rejects(search, { name: 'AbortError' });
  assert.equal(await runningAfterSettling(), 0);
  assert.equal(await metric('vllm:kv_cache_usage_perc'), 0);
});
