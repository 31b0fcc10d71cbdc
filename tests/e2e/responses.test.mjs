// OpenAI's Responses API (/v1/responses) as the official client uses it: responses.create with a
// string and with items, function tools and a function_call_output round trip through
// previous_response_id, responses.stream, background requests with retrieve and cancel; and
// vLLM's simple /generate API, whole and streamed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import {
  apiKey, client, model, port, postJson, runningAfterSettling, sleep, startServer, stopServer,
} from './helpers.mjs';

const openai = client();
const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 5 } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

test('responses.create answers a string input with one message and its usage', async () => {
  const response = await openai.responses.create({ model, input: 'Once upon a time', max_output_tokens: 8 });
  assert.match(response.id, /^resp_/);
  assert.equal(response.object, 'response');
  assert.equal(response.model, model);
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal(response.output.length, 1);
  const [message] = response.output;
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.content[0].type, 'output_text');
  assert.ok(response.output_text.length > 0);
  assert.equal(response.output_text, message.content[0].text);
  assert.equal(response.usage.output_tokens, 8);
  assert.equal(response.usage.total_tokens, response.usage.input_tokens + 8);
  assert.equal(response.max_output_tokens, 8);
  assert.equal(response.store, true);
  const unstored = await openai.responses.create({
    model, input: 'Hi', max_output_tokens: 2, store: false, top_logprobs: 2, include: ['message.output_text.logprobs'],
  });
  const { logprobs } = unstored.output[0].content[0];
  assert.equal(logprobs.length, 2);
  // Each token is decoded alone, as vLLM's are: a SentencePiece word start loses its space.
  const letters = (text) => text.replace(/\s/g, '');
  assert.equal(letters(logprobs.map((entry) => entry.token).join('')), letters(unstored.output_text));
  assert.equal(logprobs[0].top_logprobs.length, 2);
  await assert.rejects(openai.responses.retrieve(unstored.id), OpenAI.NotFoundError);
});

test('responses.create takes items and instructions, and retrieve returns the stored response', async () => {
  const input = [
    { role: 'developer', content: 'Tell a story.' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'A dog' }] },
  ];
  const response = await openai.responses.create({
    model, input, instructions: 'Be brief.', max_output_tokens: 5, temperature: 0, metadata: { run: 'e2e' },
  });
  assert.equal(response.instructions, 'Be brief.');
  assert.deepEqual(response.metadata, { run: 'e2e' });
  assert.equal(response.temperature, 0);
  const again = await openai.responses.create({
    model, input: [{ role: 'system', content: 'Be brief.' }, ...input], max_output_tokens: 5, temperature: 0,
  });
  // The instructions are the first system message: the same prompt, the same greedy reply.
  assert.equal(again.usage.input_tokens, response.usage.input_tokens);
  assert.equal(again.output_text, response.output_text);
  const stored = await openai.responses.retrieve(response.id);
  assert.deepEqual(stored.output, response.output);
  assert.equal(stored.status, response.status);
});

test('a required function tool gives a function_call item; its output continues the conversation', async () => {
  const call = await openai.responses.create({
    model, input: 'What is the weather in Paris?', tools: [weatherTool], tool_choice: 'required',
    parallel_tool_calls: false, max_output_tokens: 64, temperature: 0,
  });
  assert.equal(call.status, 'completed');
  assert.equal(call.output.length, 1);
  const [item] = call.output;
  assert.equal(item.type, 'function_call');
  assert.equal(item.name, 'get_weather');
  assert.match(item.call_id, /^call_/);
  assert.match(item.id, /^fc_/);
  assert.equal(typeof JSON.parse(item.arguments).city, 'string');
  assert.equal(call.tools[0].name, 'get_weather');

  const answer = await openai.responses.create({
    // tool_choice auto would need --enable-auto-tool-choice, as on the chat route.
    model, previous_response_id: call.id, tools: [weatherTool], tool_choice: 'none', max_output_tokens: 5,
    temperature: 0,
    input: [{ type: 'function_call_output', call_id: item.call_id, output: 'Sunny, 25 C' }],
  });
  assert.equal(answer.previous_response_id, call.id);
  assert.equal(answer.output[0].type, 'message');
  // The earlier turn (question and call) is part of this prompt.
  assert.ok(answer.usage.input_tokens > call.usage.input_tokens);
});

test('with the server parsers, thinking is a reasoning item and a hermes tool call a function_call', async () => {
  const server = await startServer(['--enable-auto-tool-choice', '--tool-call-parser', 'hermes',
    '--reasoning-parser', 'deepseek_r1', '--trust-request-chat-template', '--max-model-len', '2048']);
  try {
    const own = client({ baseURL: `http://127.0.0.1:${server.port}/v1` });
    // As in structured_outputs.test.mjs: a template that ends the thinking block, and a regex
    // that shapes the reply into some thinking, then a hermes tool call.
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_call>';
    const request = {
      model, input: 'Weather?', tools: [weatherTool], temperature: 0, max_output_tokens: 500,
      chat_template: '{% for m in messages %}{{ m.content }}\n{% endfor %}</think>\n',
      guided_regex: `[a-z ]{1,12}</think>${call.replace(/[{}()[\]|.*+?^$\\]/g, '\\$&')}`,
    };
    const whole = await own.responses.create(request);
    assert.deepEqual(whole.output.map((item) => item.type), ['reasoning', 'function_call']);
    const [reasoning, functionCall] = whole.output;
    assert.match(reasoning.content[0].text, /^[a-z ]{1,12}$/);
    assert.equal(reasoning.content[0].type, 'reasoning_text');
    assert.equal(functionCall.name, 'get_weather');
    assert.deepEqual(JSON.parse(functionCall.arguments), { city: 'Lima' });

    const stream = own.responses.stream(request);
    let reasoningDeltas = '';
    for await (const event of stream) {
      if (event.type === 'response.reasoning_text.delta') reasoningDeltas += event.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(reasoningDeltas, reasoning.content[0].text);
    assert.deepEqual(final.output.map((item) => item.type), ['reasoning', 'function_call']);
    assert.equal(final.output[0].content[0].text, reasoningDeltas);
    assert.deepEqual(JSON.parse(final.output[1].arguments), { city: 'Lima' });
  } finally {
    await stopServer(server);
  }
});

test('an unknown previous_response_id or response id is a 404; bad input a 400', async () => {
  await assert.rejects(
    openai.responses.create({ model, input: 'x', previous_response_id: 'resp_nope' }),
    (error) => error instanceof OpenAI.NotFoundError && /Response with id 'resp_nope' not found/.test(error.message));
  await assert.rejects(openai.responses.retrieve('resp_nope'), OpenAI.NotFoundError);
  await assert.rejects(openai.responses.cancel('resp_nope'), OpenAI.NotFoundError);
  await assert.rejects(openai.responses.create({ model }), (error) => error.status === 400 && /input/.test(error.message));
  await assert.rejects(
    openai.responses.create({ model, input: 'x', tools: [{ type: 'web_search' }] }),
    (error) => error.status === 400 && /web_search/.test(error.message));
  await assert.rejects(
    openai.responses.create({ model, input: 'x', background: true, store: false }),
    (error) => error.status === 400 && /background/.test(error.message));
});

test('responses.stream sends the events in order and assembles the final response', async () => {
  const stream = openai.responses.stream({ model, input: 'Once upon a time', max_output_tokens: 12 });
  const types = [];
  const numbers = [];
  let deltas = '';
  for await (const event of stream) {
    types.push(event.type);
    numbers.push(event.sequence_number);
    if (event.type === 'response.output_text.delta') deltas += event.delta;
  }
  const final = await stream.finalResponse();
  assert.deepEqual(numbers, types.map((_, i) => i));
  const distinct = types.filter((type, i) => type !== types[i - 1]);
  assert.deepEqual(distinct, [
    'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
    'response.output_text.delta', 'response.output_text.done', 'response.content_part.done',
    'response.output_item.done', 'response.incomplete',
  ]);
  assert.ok(deltas.length > 0);
  assert.equal(final.output_text, deltas);
  assert.equal(final.usage.output_tokens, 12);
  assert.equal(final.status, 'incomplete');
  const stored = await openai.responses.retrieve(final.id);
  assert.equal(stored.output_text, final.output_text);
  assert.equal(stored.output[0].id, final.output[0].id);
});

test('a streamed function call comes as function_call_arguments events', async () => {
  const stream = openai.responses.stream({
    model, input: 'Weather?', tools: [weatherTool], tool_choice: { type: 'function', name: 'get_weather' },
    max_output_tokens: 64, temperature: 0,
  });
  let argumentDeltas = '';
  let done;
  for await (const event of stream) {
    if (event.type === 'response.function_call_arguments.delta') argumentDeltas += event.delta;
    if (event.type === 'response.function_call_arguments.done') done = event;
  }
  const final = await stream.finalResponse();
  assert.equal(final.output[0].type, 'function_call');
  assert.equal(final.output[0].arguments, argumentDeltas);
  assert.equal(done.arguments, argumentDeltas);
  assert.equal(typeof JSON.parse(argumentDeltas).city, 'string');
});

test('a background response is queued, runs on and is retrieved when done', async () => {
  const queued = await openai.responses.create({ model, input: 'Once upon a time', background: true, max_output_tokens: 6 });
  assert.equal(queued.status, 'queued');
  assert.equal(queued.background, true);
  assert.deepEqual(queued.output, []);
  let response = queued;
  for (let i = 0; i < 100 && (response.status === 'queued' || response.status === 'in_progress'); i++) {
    await sleep(50);
    response = await openai.responses.retrieve(queued.id);
  }
  assert.equal(response.status, 'incomplete');
  assert.equal(response.usage.output_tokens, 6);
  assert.ok(response.output_text.length > 0);
  // A finished response cannot be cancelled.
  await assert.rejects(openai.responses.cancel(queued.id),
    (error) => error.status === 400 && /Cannot cancel a synchronous response/.test(error.message));
});

test('cancel stops a background response and frees its request', async () => {
  // A server of its own with room for a reply long enough to be cancelled while it runs.
  const server = await startServer(['--max-model-len', '2048', '--api-key', apiKey]);
  try {
    const own = client({ baseURL: `http://127.0.0.1:${server.port}/v1` });
    const queued = await own.responses.create({
      model, input: 'Once upon a time', background: true, max_output_tokens: 2000, ignore_eos: true,
    });
    const cancelled = await own.responses.cancel(queued.id);
    assert.equal(cancelled.id, queued.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(await runningAfterSettling(server.port), 0);
    const stored = await own.responses.retrieve(queued.id);
    assert.equal(stored.status, 'cancelled');
  } finally {
    await stopServer(server);
  }
});

test('/generate answers {text: [prompt + output]} for each of n, whole and streamed', async () => {
  const whole = await postJson('/generate', { prompt: 'Once upon', max_tokens: 4, n: 2, temperature: 0 });
  assert.equal(whole.status, 200);
  assert.equal(whole.json.text.length, 2);
  for (const text of whole.json.text) assert.ok(text.startsWith('Once upon') && text.length > 'Once upon'.length);

  const streamed = await fetch(`http://127.0.0.1:${port}/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon', max_tokens: 4, temperature: 0, stream: true }),
  });
  assert.equal(streamed.status, 200);
  assert.match(streamed.headers.get('content-type'), /application\/x-ndjson/);
  const body = await streamed.text();
  const lines = body.split('\n').filter((line) => line.length > 0).map((line) => JSON.parse(line).text[0]);
  assert.equal(lines.length, 4);
  for (let i = 1; i < lines.length; i++) assert.ok(lines[i].startsWith(lines[i - 1]));
  assert.equal(lines.at(-1), whole.json.text[0]);

  const missing = await postJson('/generate', { max_tokens: 4 });
  assert.equal(missing.status, 400);
  assert.match(missing.json.error.message, /prompt/);
});
