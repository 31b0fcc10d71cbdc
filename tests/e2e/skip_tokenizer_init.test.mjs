// `serve --skip-tokenizer-init`: no tokenizer loads, so completions take token-id prompts and
// answer with token ids (return_token_ids) and empty text, as vLLM's; whatever needs text is a
// 400 with vLLM's message. Driven by the official openai SDK.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { apiKey, client, model, postTo, startServer, stopServer } from './helpers.mjs';

let server;
let openai;
const greedy = { model, temperature: 0, max_tokens: 8 };
const prompt = [1, 400, 300, 200];

before(async () => {
  server = await startServer(['--skip-tokenizer-init']);
  openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey, maxRetries: 0 });
});

after(async () => {
  if (server) await stopServer(server);
});

test('a token-id prompt gives token ids and empty text', async () => {
  const response = await openai.completions.create({ ...greedy, prompt, return_token_ids: true });
  const [choice] = response.choices;
  assert.equal(choice.text, '');
  assert.deepEqual(choice.prompt_token_ids, prompt);
  // No tokenizer, so no EOS id: the sequence runs to max_tokens.
  assert.equal(choice.token_ids.length, 8);
  assert.equal(choice.finish_reason, 'length');
  assert.equal(response.usage.prompt_tokens, 4);
  assert.equal(response.usage.completion_tokens, 8);
  // The same ids as the server with a tokenizer, up to where that one stops at EOS.
  const withTokenizer = await client().completions.create({ ...greedy, prompt, return_token_ids: true });
  const expected = withTokenizer.choices[0].token_ids;
  assert.ok(expected.length > 0);
  assert.deepEqual(choice.token_ids.slice(0, expected.length), expected);
  assert.ok(withTokenizer.choices[0].text.length > 0);
});

test('streamed chunks carry the prompt ids once and each new id', async () => {
  const whole = await openai.completions.create({ ...greedy, prompt, return_token_ids: true });
  const stream = await openai.completions.create({ ...greedy, prompt, return_token_ids: true, stream: true });
  const tokenIds = [];
  const promptIds = [];
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      assert.equal(choice.text, '');
      tokenIds.push(...choice.token_ids);
      if (choice.prompt_token_ids) promptIds.push(choice.prompt_token_ids);
    }
  }
  assert.deepEqual(tokenIds, whole.choices[0].token_ids);
  assert.deepEqual(promptIds, [prompt]);
});

test('what needs a tokenizer is a 400 naming it', async () => {
  const refused = async (request, pattern) =>
    assert.rejects(request, (error) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  await refused(openai.completions.create({ ...greedy, prompt: 'Once upon a time' }),
    /You cannot pass text prompts when `skip_tokenizer_init=True`/);
  await refused(openai.chat.completions.create({ ...greedy, messages: [{ role: 'user', content: 'hi' }] }),
    /Tokenizer not available when `skip_tokenizer_init=True`/);
  await refused(openai.completions.create({ ...greedy, prompt, stop: ['.'] }), /stop strings need a tokenizer/);
  await refused(openai.completions.create({ ...greedy, prompt, echo: true }), /echo needs a tokenizer/);
  await refused(openai.completions.create({ ...greedy, prompt, logprobs: 2 }), /logprobs needs a tokenizer/);
  await refused(openai.completions.create({ ...greedy, prompt, response_format: { type: 'json_object' } }),
    /Structured outputs requires a tokenizer/);
  await refused(openai.completions.create({ ...greedy, prompt: [1, 99999] }), /out of vocabulary/);
  for (const path of ['/tokenize', '/detokenize']) {
    const response = await postTo(server, path, { model, prompt: 'hi', tokens: [1] });
    assert.equal(response.status, 400);
    assert.match(response.json.error.message, /Tokenizer not available/);
  }
});
