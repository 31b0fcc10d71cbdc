// The server as the official openai client sees it: completions and chat, streaming, n > 1,
// logprobs, usage, seeds, stop strings, the API key and the SDK's error classes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { client, model, postJson } from './helpers.mjs';

const openai = client();
const greedy = { model, temperature: 0, max_tokens: 24 };

async function streamText(stream) {
  const texts = new Map();
  const finishReasons = new Map();
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      const piece = choice.text ?? choice.delta?.content ?? '';
      texts.set(choice.index, (texts.get(choice.index) ?? '') + piece);
      if (choice.finish_reason) {
        assert.equal(finishReasons.has(choice.index), false, 'one finish_reason per choice');
        finishReasons.set(choice.index, choice.finish_reason);
      }
    }
  }
  return { texts, finishReasons };
}

test('completions: greedy stream text equals non-stream text', async () => {
  const whole = await openai.completions.create({ ...greedy, prompt: 'Once upon a time' });
  assert.match(whole.id, /^cmpl-/);
  assert.equal(whole.object, 'text_completion');
  assert.equal(whole.model, model);
  assert.equal(whole.choices.length, 1);
  assert.ok(whole.choices[0].text.length > 0);
  assert.ok(['length', 'stop'].includes(whole.choices[0].finish_reason));
  const stream = await openai.completions.create({ ...greedy, prompt: 'Once upon a time', stream: true });
  const { texts, finishReasons } = await streamText(stream);
  assert.equal(texts.get(0), whole.choices[0].text);
  assert.equal(finishReasons.get(0), whole.choices[0].finish_reason);
});

test('chat: greedy stream text equals non-stream text, role first', async () => {
  const messages = [{ role: 'user', content: 'Tell me a story about a dog.' }];
  const whole = await openai.chat.completions.create({ ...greedy, messages });
  assert.match(whole.id, /^chatcmpl-/);
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  const stream = await openai.chat.completions.create({ ...greedy, messages, stream: true });
  let first = true;
  let text = '';
  let finishes = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (first) assert.equal(chunk.choices[0].delta.role, 'assistant');
    first = false;
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.choices[0]?.finish_reason) finishes++;
  }
  assert.equal(finishes, 1);
  assert.equal(text, whole.choices[0].message.content);
});

test('chat: text content parts are joined like a string', async () => {
  const parts = await openai.chat.completions.create({
    ...greedy,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'A cat' }, { type: 'text', text: 'sat.' }] }],
  });
  const joined = await openai.chat.completions.create({
    ...greedy,
    messages: [{ role: 'user', content: 'A cat\nsat.' }],
  });
  assert.equal(parts.choices[0].message.content, joined.choices[0].message.content);
});

test('n > 1 gives n choices, each with its index and one finish_reason', async () => {
  const whole = await openai.completions.create({
    model, prompt: 'The dog', n: 4, temperature: 1, seed: 7, max_tokens: 12,
  });
  assert.deepEqual(whole.choices.map((c) => c.index).sort(), [0, 1, 2, 3]);
  const stream = await openai.completions.create({
    model, prompt: 'The dog', n: 4, temperature: 1, seed: 7, max_tokens: 12, stream: true,
  });
  const { texts, finishReasons } = await streamText(stream);
  assert.equal(finishReasons.size, 4);
  for (const choice of whole.choices) assert.equal(texts.get(choice.index), choice.text);
});

test('multiple prompts: choice index = prompt index × n + sequence', async () => {
  const response = await openai.completions.create({ ...greedy, prompt: ['One day', 'The sun'], n: 2 });
  assert.deepEqual(response.choices.map((c) => c.index), [0, 1, 2, 3]);
  assert.equal(response.choices[0].text, response.choices[1].text);  // greedy
  const single = await openai.completions.create({ ...greedy, prompt: 'The sun' });
  assert.equal(response.choices[2].text, single.choices[0].text);
});

test('completions logprobs: tokens, token_logprobs, top_logprobs and text_offset line up', async () => {
  const response = await openai.completions.create({ ...greedy, prompt: 'Lily and Tom', logprobs: 3 });
  const { logprobs, text } = response.choices[0];
  const n = response.usage.completion_tokens;
  assert.equal(logprobs.tokens.length, n);
  assert.equal(logprobs.token_logprobs.length, n);
  assert.equal(logprobs.top_logprobs.length, n);
  assert.equal(logprobs.text_offset.length, n);
  // Tokens decode alone, as vLLM decodes them: SentencePiece drops a lone token's leading space.
  const squeeze = (s) => s.replace(/\s/g, '');
  assert.equal(squeeze(logprobs.tokens.join('')), squeeze(text));
  for (let i = 0; i < n; i++) {
    assert.ok(logprobs.token_logprobs[i] <= 0);
    const top = Object.values(logprobs.top_logprobs[i]);
    assert.ok(top.length >= 3 && top.length <= 4);
    // Greedy: the sampled token is the most likely one.
    assert.ok(Math.abs(Math.max(...top) - logprobs.token_logprobs[i]) < 1e-6);
  }
  assert.equal(logprobs.text_offset[0], 0);
});

test('return_tokens_as_token_ids: logprobs name tokens "token_id:<id>", the same tokens', async () => {
  const request = { ...greedy, prompt: 'Lily and Tom', logprobs: 2 };
  const byText = (await openai.completions.create(request)).choices[0];
  const byId = (await openai.completions.create({ ...request, return_tokens_as_token_ids: true })).choices[0];
  assert.equal(byId.text, byText.text);
  assert.deepEqual(byId.logprobs.token_logprobs, byText.logprobs.token_logprobs);
  for (const [i, token] of byId.logprobs.tokens.entries()) {
    assert.match(token, /^token_id:\d+$/);
    assert.ok(Object.keys(byId.logprobs.top_logprobs[i]).every((key) => /^token_id:\d+$/.test(key)));
  }
  const ids = byId.logprobs.tokens.map((token) => Number(token.slice('token_id:'.length)));
  const detokenized = await postJson('/detokenize', { model, tokens: ids });
  // Decoded on their own, the ids lose the first token's leading space (SentencePiece).
  assert.equal(detokenized.json.prompt, byText.text.trimStart());
});

test('chat logprobs: content entries with bytes and top_logprobs', async () => {
  const response = await openai.chat.completions.create({
    ...greedy, messages: [{ role: 'user', content: 'Hi' }], logprobs: true, top_logprobs: 2,
  });
  const content = response.choices[0].logprobs.content;
  assert.equal(content.length, response.usage.completion_tokens);
  for (const entry of content) {
    assert.equal(typeof entry.token, 'string');
    assert.ok(entry.logprob <= 0);
    assert.ok(Array.isArray(entry.bytes));
    assert.equal(entry.top_logprobs.length, 2);
  }
  const squeeze = (s) => s.replace(/\s/g, '');
  assert.equal(squeeze(content.map((e) => e.token).join('')), squeeze(response.choices[0].message.content));
});

test('usage: prompt tokens equal the tokenizer\'s count, completion tokens what was generated', async () => {
  const prompt = 'Once upon a time there was a little girl';
  const tokenized = await postJson('/tokenize', { model, prompt });
  const response = await openai.completions.create({ model, prompt, max_tokens: 9, ignore_eos: true });
  assert.equal(response.usage.prompt_tokens, tokenized.json.count);
  assert.equal(response.usage.completion_tokens, 9);
  assert.equal(response.usage.total_tokens, tokenized.json.count + 9);
  const stream = await openai.completions.create({
    model, prompt, max_tokens: 9, ignore_eos: true, stream: true, stream_options: { include_usage: true },
  });
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) {
      assert.deepEqual(chunk.choices, []);
      usage = chunk.usage;
    }
  }
  assert.equal(usage.prompt_tokens, tokenized.json.count);
  assert.equal(usage.completion_tokens, 9);
  const withoutBos = await postJson('/tokenize', { model, prompt, add_special_tokens: false });
  assert.equal(withoutBos.json.count, tokenized.json.count - 1);
  const detokenized = await postJson('/detokenize', { model, tokens: withoutBos.json.tokens });
  assert.equal(detokenized.json.prompt, prompt);
});

test('/tokenize with messages: the chat prompt as /v1/chat/completions renders it', async () => {
  const messages = [
    { role: 'system', content: 'You tell short stories.' },
    { role: 'user', content: 'Tell me about a cat.' },
  ];
  const tokenized = await postJson('/tokenize', { model, messages, return_token_strs: true });
  assert.equal(tokenized.status, 200);
  const response = await openai.chat.completions.create({ ...greedy, messages, max_tokens: 4 });
  assert.equal(tokenized.json.count, response.usage.prompt_tokens);
  assert.equal(tokenized.json.tokens.length, tokenized.json.count);
  assert.equal(tokenized.json.token_strs.length, tokenized.json.count);
  // The template's text (chat_template.jinja), without special tokens unless asked for.
  const rendered = '<|system|>\nYou tell short stories.\n<|user|>\nTell me about a cat.\n<|assistant|>\n';
  const asPrompt = await postJson('/tokenize', { model, prompt: rendered, add_special_tokens: false });
  assert.deepEqual(tokenized.json.tokens, asPrompt.json.tokens);
  const withBos = await postJson('/tokenize', { model, messages, add_special_tokens: true });
  assert.equal(withBos.json.count, tokenized.json.count + 1);
  const noGenerationPrompt = await postJson('/tokenize', { model, messages, add_generation_prompt: false });
  const withoutAssistant = await postJson('/tokenize', {
    model, prompt: rendered.slice(0, -'<|assistant|>\n'.length), add_special_tokens: false,
  });
  assert.deepEqual(noGenerationPrompt.json.tokens, withoutAssistant.json.tokens);
  // The chat form's errors are the chat endpoint's.
  const untrusted = await postJson('/tokenize', { model, messages, chat_template: '{{ messages }}' });
  assert.equal(untrusted.status, 400);
  assert.match(untrusted.json.error.message, /--trust-request-chat-template/);
  const badRole = await postJson('/tokenize', { model, messages: [{ content: 'no role' }] });
  assert.equal(badRole.status, 400);
});

test('seeds: the same seed gives the same text, another seed another text', async () => {
  const request = { model, prompt: 'The little bird', temperature: 1, max_tokens: 32, ignore_eos: true };
  const a = await openai.completions.create({ ...request, seed: 123 });
  const b = await openai.completions.create({ ...request, seed: 123 });
  const c = await openai.completions.create({ ...request, seed: 456 });
  assert.equal(a.choices[0].text, b.choices[0].text);
  assert.notEqual(a.choices[0].text, c.choices[0].text);
});

test('stop strings end the text before the stop string, with its stop_reason', async () => {
  const whole = await openai.completions.create({ ...greedy, prompt: 'Once upon a time', max_tokens: 40 });
  const text = whole.choices[0].text;
  const stop = text.slice(10, 14);
  const stopped = await openai.completions.create({ ...greedy, prompt: 'Once upon a time', max_tokens: 40, stop: [stop] });
  assert.equal(stopped.choices[0].text, text.slice(0, text.indexOf(stop)));
  assert.equal(stopped.choices[0].finish_reason, 'stop');
  assert.equal(stopped.choices[0].stop_reason, stop);
  const kept = await openai.completions.create({
    ...greedy, prompt: 'Once upon a time', max_tokens: 40, stop: stop, include_stop_str_in_output: true,
  });
  assert.equal(kept.choices[0].text, text.slice(0, text.indexOf(stop) + stop.length));
  const stream = await openai.completions.create({ ...greedy, prompt: 'Once upon a time', max_tokens: 40, stop: [stop], stream: true });
  const { texts } = await streamText(stream);
  assert.equal(texts.get(0), stopped.choices[0].text);
});

test('echo puts the prompt before the completion', async () => {
  const plain = await openai.completions.create({ ...greedy, prompt: 'One day' });
  const echoed = await openai.completions.create({ ...greedy, prompt: 'One day', echo: true });
  assert.equal(echoed.choices[0].text, 'One day' + plain.choices[0].text);
  // With logprobs, the prompt's tokens come first; the first has no logprob.
  const withLogprobs = await openai.completions.create({ ...greedy, prompt: 'One day', echo: true, logprobs: 1, max_tokens: 4 });
  const { logprobs, text } = withLogprobs.choices[0];
  assert.equal(logprobs.tokens.length, withLogprobs.usage.prompt_tokens + 4);
  assert.equal(logprobs.token_logprobs[0], null);
  assert.ok(logprobs.token_logprobs.slice(1).every((lp) => lp <= 0));
  assert.ok(text.startsWith('One day'));
  const streamed = await openai.completions.create({ ...greedy, prompt: 'One day', echo: true, stream: true });
  let streamedText = '';
  for await (const chunk of streamed) streamedText += chunk.choices[0]?.text ?? '';
  assert.equal(streamedText, echoed.choices[0].text);
});

test('models lists the served model name', async () => {
  const models = await openai.models.list();
  assert.deepEqual(models.data.map((m) => m.id), [model]);
});

test('API key: a missing or wrong key is a 401 AuthenticationError', async () => {
  const wrong = client({ apiKey: 'wrong' });
  await assert.rejects(wrong.completions.create({ ...greedy, prompt: 'x' }), OpenAI.AuthenticationError);
  await assert.rejects(wrong.models.list(), (error) => error.status === 401);
});

test('the SDK raises BadRequestError for 400 and NotFoundError for 404', async () => {
  await assert.rejects(openai.completions.create({ ...greedy, prompt: 'x', temperature: -1 }), (error) => {
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.match(error.message, /temperature must be non-negative/);
    return true;
  });
  await assert.rejects(openai.chat.completions.create({ ...greedy, messages: [{ role: 'user', content: 'x' }], top_logprobs: 21, logprobs: true }),
    OpenAI.BadRequestError);
  await assert.rejects(openai.completions.create({ ...greedy, model: 'no-such-model', prompt: 'x' }), (error) => {
    assert.ok(error instanceof OpenAI.NotFoundError);
    assert.match(error.message, /does not exist/);
    return true;
  });
  await assert.rejects(openai.completions.create({ ...greedy, prompt: [1, 2, 99999] }), (error) => {
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.match(error.message, /out of vocabulary/);
    return true;
  });
});
