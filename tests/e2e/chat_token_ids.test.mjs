// vLLM's return_token_ids on chat completions (prompt_token_ids on the response or on a stream's
// role chunks, token_ids on each choice or delta chunk), and raw logprobs after a structured-output
// grammar's mask (forbidden tokens at -9999.0). Driven by the official openai SDK on the shared
// server, whose --logprobs-mode is vLLM's default, raw_logprobs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { client, model, postJson, startServer, stopServer } from './helpers.mjs';

const openai = client();
const messages = [{ role: 'user', content: 'Tell me a story about a cat.' }];
const greedy = { model, messages, temperature: 0, max_tokens: 24 };

// The text of a choice's token_ids but the EOS that ends a reply which stopped (vLLM counts it
// among the ids, not in the text).
async function textOf(choice) {
  const ids = choice.finish_reason === 'length' ? choice.token_ids : choice.token_ids.slice(0, -1);
  return (await postJson('/detokenize', { model, tokens: ids })).json.prompt;
}

test('chat return_token_ids: the prompt ids on the response, each choice its own ids', async () => {
  const response = await openai.chat.completions.create({ ...greedy, n: 2, return_token_ids: true });
  const promptIds = response.prompt_token_ids;
  assert.ok(Array.isArray(promptIds) && promptIds.length > 0);
  assert.equal(promptIds.length, response.usage.prompt_tokens);
  const rendered = await postJson('/tokenize', { model, messages, add_generation_prompt: true });
  assert.deepEqual(promptIds, rendered.json.tokens);
  assert.equal(response.choices.length, 2);
  let numTokens = 0;
  for (const choice of response.choices) {
    assert.ok(choice.token_ids.length > 0);
    numTokens += choice.token_ids.length;
    assert.equal(await textOf(choice), choice.message.content);
  }
  assert.equal(numTokens, response.usage.completion_tokens);
  // The same prompt ids sent as a completion generate the same ids.
  const completion = await openai.completions.create({
    model, prompt: promptIds, temperature: 0, max_tokens: 24, return_token_ids: true });
  assert.deepEqual(completion.choices[0].token_ids, response.choices[0].token_ids);
  // Without the flag, none of the fields.
  const plain = await openai.chat.completions.create(greedy);
  assert.equal(plain.prompt_token_ids, undefined);
  assert.equal(plain.choices[0].token_ids, undefined);
});

test('chat return_token_ids streamed: role chunks carry the prompt ids, deltas their new ids', async () => {
  const whole = await openai.chat.completions.create({ ...greedy, n: 2, return_token_ids: true });
  const stream = await openai.chat.completions.create({
    ...greedy, n: 2, return_token_ids: true, stream: true, logprobs: true, top_logprobs: 1 });
  const tokenIds = [[], []];
  const content = ['', ''];
  const numLogprobs = [0, 0];
  const promptIds = [];
  for await (const chunk of stream) {
    if (chunk.prompt_token_ids) promptIds.push(chunk.prompt_token_ids);
    for (const choice of chunk.choices) {
      if (choice.delta.role) {
        assert.equal(choice.token_ids, undefined);
        continue;
      }
      tokenIds[choice.index].push(...choice.token_ids);
      content[choice.index] += choice.delta.content ?? '';
      numLogprobs[choice.index] += choice.logprobs?.content?.length ?? 0;
    }
  }
  assert.deepEqual(promptIds, [whole.prompt_token_ids, whole.prompt_token_ids]);
  for (const choice of whole.choices) {
    assert.deepEqual(tokenIds[choice.index], choice.token_ids);
    assert.equal(content[choice.index], choice.message.content);
    assert.equal(numLogprobs[choice.index], choice.token_ids.length);
  }
});

test('chat return_token_ids with a named tool: the ids are those of the arguments', async () => {
  const tools = [{
    type: 'function',
    function: {
      name: 'pick_city',
      parameters: {
        type: 'object',
        properties: { city: { enum: ['Paris', 'Rome'] } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  }];
  const response = await openai.chat.completions.create({
    ...greedy, max_tokens: 60, tools, tool_choice: { type: 'function', function: { name: 'pick_city' } },
    return_token_ids: true,
  });
  const [choice] = response.choices;
  const [call] = choice.message.tool_calls;
  assert.ok(['Paris', 'Rome'].includes(JSON.parse(call.function.arguments).city), call.function.arguments);
  assert.equal(await textOf(choice), call.function.arguments);
  assert.ok(response.prompt_token_ids.length > 0);
});

test('return_token_ids with reasoning and auto tool parsers: text they hold back keeps its ids', async () => {
  const parsing = await startServer(['--enable-auto-tool-choice', '--tool-call-parser', 'hermes',
    '--reasoning-parser', 'deepseek_r1', '--trust-request-chat-template', '--max-model-len', '2048']);
  try {
    const local = new OpenAI({ baseURL: `http://127.0.0.1:${parsing.port}/v1`, apiKey: 'x', maxRetries: 0 });
    // As in structured_outputs.test.mjs: a prompt that ends the thinking block, and a regex that
    // makes the reply some thinking, then a hermes tool call, which the parser holds until whole.
    const chat_template = '{% for m in messages %}{{ m.content }}\n{% endfor %}</think>\n';
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call>';
    const weather = {
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    };
    const request = {
      model, messages, temperature: 0, max_tokens: 1000, tools: [weather], chat_template, return_token_ids: true,
      guided_regex: `[a-z ]{1,12}</think>${call.replace(/[{}()[\]|.*+?^$\\]/g, '\\$&')}`,
    };
    const whole = await local.chat.completions.create(request);
    const [choice] = whole.choices;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.tool_calls.length, 1);
    const text = await textOf(choice);
    assert.ok(text.endsWith(`</think>${call}`), text);
    assert.ok(text.startsWith(choice.message.reasoning_content.trim()), text);
    const stream = await local.chat.completions.create({ ...request, stream: true });
    const tokenIds = [];
    let numChunks = 0;
    for await (const chunk of stream) {
      for (const part of chunk.choices) {
        if (part.delta.role) continue;
        numChunks += 1;
        tokenIds.push(...part.token_ids);
      }
    }
    assert.deepEqual(tokenIds, choice.token_ids);
    assert.ok(numChunks < tokenIds.length, 'the parsers held some deltas back');
  } finally {
    await stopServer(parsing);
  }
});

test('raw logprobs come after the grammar mask: forbidden tokens at -9999.0, the rest sum to 1', async () => {
  // Tokens named by id: "L" and its byte token <0x4C> would share one key of top_logprobs.
  const request = {
    model, prompt: 'Once upon a time', max_tokens: 1, temperature: 0, logprobs: 8, return_tokens_as_token_ids: true };
  const choices = ['Lily', 'Tom'];
  const constrained = await openai.completions.create({ ...request, structured_outputs: { choice: choices } });
  const top = Object.entries(constrained.choices[0].logprobs.top_logprobs[0]);
  assert.equal(top.length, 8);
  const allowed = top.filter(([, logprob]) => logprob > -9999);
  const forbidden = top.filter(([, logprob]) => logprob === -9999);
  assert.equal(allowed.length + forbidden.length, top.length);
  assert.ok(forbidden.length > 0, JSON.stringify(top));
  for (const [token] of allowed) {
    const text = (await postJson('/detokenize', { model, tokens: [Number(token.slice('token_id:'.length))] })).json.prompt;
    assert.ok(choices.some((choice) => choice.startsWith(text)), text);
  }
  // Few tokens start a choice, all of them in the top 8: their probabilities sum to 1.
  const total = allowed.reduce((sum, [, logprob]) => sum + Math.exp(logprob), 0);
  assert.ok(Math.abs(total - 1) < 1e-3, JSON.stringify(top));
  // Unconstrained, the same position spreads over the whole vocabulary.
  const free = await openai.completions.create(request);
  const freeTop = Object.values(free.choices[0].logprobs.top_logprobs[0]);
  assert.ok(freeTop.every((logprob) => logprob > -9999));
  assert.ok(freeTop.reduce((sum, logprob) => sum + Math.exp(logprob), 0) < 1 - 1e-3);
});
