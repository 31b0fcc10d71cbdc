// The server under raw HTTP: bad bodies, limits, many concurrent streams, clients that give up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiKey, baseURL, client, metric, model, postJson, rawRequest, runningAfterSettling } from './helpers.mjs';

const auth = { authorization: `Bearer ${apiKey}` };

function assertErrorShape(response, status) {
  assert.equal(response.status, status);
  const body = JSON.parse(response.body);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.type, 'string');
  assert.equal(body.error.code, status);
  assert.ok('param' in body.error);
}

test('malformed JSON is a 400', async () => {
  const response = await rawRequest({
    path: '/v1/completions', body: '{"model": "stories", "prompt": ', headers: { 'content-type': 'application/json', ...auth },
  });
  assertErrorShape(response, 400);
});

test('a JSON body that is not an object is a 400', async () => {
  for (const body of ['[1, 2]', '"text"', '42', 'null']) {
    const response = await rawRequest({ path: '/v1/chat/completions', body, headers: { 'content-type': 'application/json', ...auth } });
    assertErrorShape(response, 400);
  }
});

test('wrong field types and out-of-range values are 400s naming the field', async () => {
  for (const [field, value] of [['temperature', 'hot'], ['max_tokens', 'many'], ['n', 0], ['top_p', 2], ['stop', 5],
    ['logit_bias', { '999999': 1 }], ['stream', 'yes'], ['seed', 1.5]]) {
    const response = await postJson('/v1/completions', { model, prompt: 'x', [field]: value });
    assertErrorShape(response, 400);
  }
  const response = await postJson('/v1/completions', { model, prompt: 'x', stream_options: { include_usage: true } });
  assertErrorShape(response, 400);
  assert.match(response.json.error.message, /stream=True/);
});

test('a body over the limit is a 413', async () => {
  const body = JSON.stringify({ model, prompt: 'x'.repeat(2 << 20) });
  const response = await rawRequest({ path: '/v1/completions', body, headers: { 'content-type': 'application/json', ...auth } });
  assert.equal(response.status, 413);
});

test('a wrong content type is a 415', async () => {
  const response = await rawRequest({
    path: '/v1/completions', body: JSON.stringify({ model, prompt: 'x' }), headers: { 'content-type': 'text/plain', ...auth },
  });
  assertErrorShape(response, 415);
});

test('a prompt longer than the context is a 400 with vLLM\'s message', async () => {
  const response = await postJson('/v1/completions', { model, prompt: 'Once upon a time '.repeat(200) });
  assertErrorShape(response, 400);
  assert.match(response.json.error.message,
    /maximum context length is 256 tokens\. However, your request has \d+ input tokens\. Please reduce the length of the input prompt\.$/);
  assert.equal(response.json.error.param, 'prompt');
});

test('unknown routes are 404s', async () => {
  assertErrorShape(await rawRequest({ method: 'GET', path: '/v1/nothing', headers: auth }), 404);
  // A POST to a path no route has is a 404 too, never another route's answer (/detokenize's).
  for (const path of ['/v1/nothing', '/nothing', '/detokenizer']) {
    const response = await postJson(path, { model, tokens: [1, 2] });
    assertErrorShape(response, 404);
    assert.equal(response.json.error.message, 'Not Found');
  }
});

test('a known route asked with another method is a 405', async () => {
  for (const [method, path] of [['GET', '/v1/completions'], ['POST', '/health'], ['POST', '/v1/models'],
    ['GET', '/tokenize'], ['DELETE', '/detokenize']]) {
    assertErrorShape(await rawRequest({ method, path, headers: auth }), 405);
  }
});

test('health, version and metrics answer', async () => {
  assert.equal((await rawRequest({ method: 'GET', path: '/health' })).status, 200);
  const version = await rawRequest({ method: 'GET', path: '/version' });
  assert.equal(typeof JSON.parse(version.body).version, 'string');
  const metrics = await rawRequest({ method: 'GET', path: '/metrics' });
  for (const name of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc',
    'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total', 'vllm:num_preemptions_total',
    'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:request_success_total',
    'vllm:time_to_first_token_seconds_bucket', 'vllm:inter_token_latency_seconds_bucket',
    'vllm:e2e_request_latency_seconds_bucket', 'vllm:request_queue_time_seconds_bucket',
    'vllm:request_prompt_tokens_bucket', 'vllm:request_generation_tokens_bucket']) {
    assert.match(metrics.body, new RegExp(`^${name}\\{.*model_name="stories"`, 'm'), name);
  }
});

test('64 concurrent streaming clients all receive complete and correct streams', async () => {
  const openai = client();
  const prompts = Array.from({ length: 64 }, (_, i) => `Once upon a time there was a ${['dog', 'cat', 'bird', 'girl'][i % 4]} number ${i}`);
  const expected = await Promise.all(prompts.map((prompt) =>
    openai.completions.create({ model, prompt, temperature: 0, max_tokens: 32 }).then((r) => r.choices[0].text)));
  const streamed = await Promise.all(prompts.map(async (prompt) => {
    const stream = await openai.completions.create({ model, prompt, temperature: 0, max_tokens: 32, stream: true });
    let text = '';
    let finishes = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      if (chunk.choices[0]?.finish_reason) finishes++;
    }
    assert.equal(finishes, 1);
    return text;
  }));
  assert.deepEqual(streamed, expected);
});

test('100 clients that give up after 0.2 s are aborted and free their blocks', async () => {
  const requests = Array.from({ length: 100 }, async (_, i) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const stream = i % 2 === 0;
    try {
      const response = await fetch(`${baseURL}/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ model, prompt: `Tell a long story ${i}`, max_tokens: 200, ignore_eos: true, stream }),
        signal: controller.signal,
      });
      await response.text();
    } catch (error) {
      assert.equal(error.name, 'AbortError');
    }
  });
  await Promise.all(requests);
  const started = Date.now();
  const response = await client().completions.create({ model, prompt: 'One day', max_tokens: 8 });
  assert.ok(response.choices[0].text.length > 0);
  assert.ok(Date.now() - started < 5000, `the next request took ${Date.now() - started} ms`);
  assert.equal(await runningAfterSettling(), 0);
  assert.equal(await metric('vllm:kv_cache_usage_perc'), 0);
  assert.ok((await rawRequest({ method: 'GET', path: '/metrics' })).body.match(/request_success_total\{[^}]*finished_reason="abort"[^}]*\} [1-9]/));
});

test('a stream is chunked server-sent events ending with data: [DONE]', async () => {
  const response = await rawRequest({
    path: '/v1/completions',
    body: JSON.stringify({ model, prompt: 'x', stream: true, max_tokens: 2 }),
    headers: { 'content-type': 'application/json', ...auth },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers['transfer-encoding'], 'chunked');
  assert.match(response.headers['content-type'], /text\/event-stream/);
  assert.ok(response.body.trimEnd().endsWith('data: [DONE]'));
});
