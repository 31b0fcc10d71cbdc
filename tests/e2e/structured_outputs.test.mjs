// Structured outputs, tool calling and reasoning output as the official openai client uses them:
// response_format, vLLM's guided_* and structured_outputs fields, tools with tool_choice
// required / named / auto (hermes parser), and reasoning_content (deepseek_r1 parser).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { model, startServer, stopServer } from './helpers.mjs';

// A server of this file's own with room for long replies.
let server;
let openai;
before(async () => {
  server = await startServer(['--max-model-len', '2048']);
  openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0, timeout: 120000 });
});
after(() => stopServer(server));
const messages = [{ role: 'user', content: 'Tell me about a dog.' }];

const petSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 8 },
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 20 },
    friendly: { type: 'boolean' },
  },
  required: ['name', 'kind', 'age', 'friendly'],
  additionalProperties: false,
};

function assertPet(text) {
  const pet = JSON.parse(text);
  assert.deepEqual(Object.keys(pet).sort(), ['age', 'friendly', 'kind', 'name'], text);
  assert.ok(pet.name.length <= 8, text);
  assert.ok(['cat', 'dog', 'bird'].includes(pet.kind), text);
  assert.ok(Number.isInteger(pet.age) && pet.age >= 0 && pet.age <= 20, text);
  assert.equal(typeof pet.friendly, 'boolean', text);
}

async function collect(stream) {
  let content = '';
  let reasoning = '';
  let finishReason = null;
  const toolCalls = [];
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      content += choice.delta?.content ?? '';
      reasoning += choice.delta?.reasoning_content ?? '';
      for (const call of choice.delta?.tool_calls ?? []) {
        if (!toolCalls[call.index]) toolCalls[call.index] = { id: call.id, name: call.function.name, arguments: '' };
        toolCalls[call.index].arguments += call.function.arguments ?? '';
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  return { content, reasoning, finishReason, toolCalls };
}

test('response_format json_schema: the reply parses and satisfies the schema, streamed or not', async () => {
  for (const temperature of [0, 1]) {
    const response = await openai.chat.completions.create({
      model, messages, temperature, seed: 5, max_tokens: 1000, n: 2,
      response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: petSchema, strict: true } },
    });
    for (const choice of response.choices) {
      assert.equal(choice.finish_reason, 'stop', choice.message.content);
      assertPet(choice.message.content);
    }
  }
  const whole = await openai.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 1000,
    response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: petSchema } },
  });
  const streamed = await collect(await openai.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 1000, stream: true,
    response_format: { type: 'json_schema', json_schema: { name: 'pet', schema: petSchema } },
  }));
  assert.equal(streamed.content, whole.choices[0].message.content);
});

test('response_format json_object and guided_json on completions', async () => {
  const chat = await openai.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 60, response_format: { type: 'json_object' },
  });
  assert.equal(chat.choices[0].message.content.trimStart()[0], '{', chat.choices[0].message.content);
  if (chat.choices[0].finish_reason === 'stop') JSON.parse(chat.choices[0].message.content);
  const completion = await openai.completions.create({
    model, prompt: 'Once upon a time', temperature: 0.7, seed: 1, max_tokens: 1000, guided_json: petSchema,
  });
  assert.equal(completion.choices[0].finish_reason, 'stop');
  assertPet(completion.choices[0].text);
});

test('guided_regex, guided_choice and guided_grammar hold exactly', async () => {
  const regex = await openai.completions.create({
    model, prompt: 'The phone number is', max_tokens: 30, temperature: 1, seed: 2, n: 3,
    guided_regex: '\\(\\d{3}\\) \\d{3}-\\d{4}',
  });
  for (const choice of regex.choices) assert.match(choice.text, /^\(\d{3}\) \d{3}-\d{4}$/);
  const choices = ['sunny', 'rainy', 'snowy'];
  const streamed = await collect(await openai.chat.completions.create({
    model, messages, max_tokens: 10, stream: true, guided_choice: choices,
  }));
  assert.ok(choices.includes(streamed.content), streamed.content);
  assert.equal(streamed.finishReason, 'stop');
  const grammar = await openai.completions.create({
    model, prompt: 'Count:', max_tokens: 40, temperature: 0,
    guided_grammar: 'root ::= number ("," number){2}\nnumber ::= [1-9] [0-9]?',
  });
  assert.match(grammar.choices[0].text, /^[1-9][0-9]?(,[1-9][0-9]?){2}$/);
  const structured = await openai.completions.create({
    model, prompt: 'Answer:', max_tokens: 10, structured_outputs: { choice: ['yes', 'no'] },
  });
  assert.ok(['yes', 'no'].includes(structured.choices[0].text));
});

test('constraints that cannot compile are 400s that say why; hostile regexes are not slow', async () => {
  for (const fields of [{ guided_regex: '(a' }, { guided_json: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } },
    { guided_grammar: 'root ::= undefined_rule' }, { guided_regex: 'a{1000000000}' },
    { guided_regex: 'a', guided_choice: ['b'] }]) {
    await assert.rejects(
      openai.completions.create({ model, prompt: 'x', max_tokens: 5, ...fields }),
      (error) => error instanceof OpenAI.BadRequestError && error.message.length > 10, JSON.stringify(fields));
  }
  const started = Date.now();
  const response = await openai.completions.create({
    model, prompt: 'x', max_tokens: 20, temperature: 0, guided_regex: '(a+)+b|(a|a)*c|((x*)*)*y',
  });
  const text = response.choices[0].text;
  if (response.choices[0].finish_reason === 'stop') assert.match(text, /^((a+)+b|(a|a)*c|((x*)*)*y)$/);
  else assert.match(text, /^(a*|x*)$/);
  assert.ok(Date.now() - started < 20000);
});

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { enum: ['Paris', 'Tokyo', 'Lima'] }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
    },
  },
};
const time = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'] } } };

function assertWeatherArguments(text) {
  const args = JSON.parse(text);
  assert.ok(['Paris', 'Tokyo', 'Lima'].includes(args.city), text);
  assert.ok(['celsius', 'fahrenheit'].includes(args.unit), text);
}

test('tool_choice required and a named function give valid tool calls, streamed the same', async () => {
  const request = { model, messages, temperature: 0, max_tokens: 1000, tools: [weather, time] };
  const required = await openai.chat.completions.create({ ...request, tool_choice: 'required', parallel_tool_calls: false });
  const message = required.choices[0].message;
  assert.equal(message.tool_calls.length, 1);
  assert.match(message.tool_calls[0].id, /^chatcmpl-tool-/);
  assert.equal(message.tool_calls[0].type, 'function');
  const call = message.tool_calls[0].function;
  if (call.name === 'get_weather') assertWeatherArguments(call.arguments);
  else assert.ok(['UTC', 'CET'].includes(JSON.parse(call.arguments).zone), call.arguments);
  const streamedRequired = await collect(await openai.chat.completions.create({
    ...request, tool_choice: 'required', parallel_tool_calls: false, stream: true,
  }));
  assert.equal(streamedRequired.toolCalls.length, 1);
  assert.equal(streamedRequired.toolCalls[0].name, call.name);
  assert.deepEqual(JSON.parse(streamedRequired.toolCalls[0].arguments), JSON.parse(call.arguments));

  const named = await openai.chat.completions.create({
    ...request, tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  assert.equal(named.choices[0].message.tool_calls[0].function.name, 'get_weather');
  assertWeatherArguments(named.choices[0].message.tool_calls[0].function.arguments);
  // The SDK's stream helper assembles the same call from the deltas.
  const runner = openai.chat.completions.stream({
    ...request, tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  const final = await runner.finalChatCompletion();
  assert.equal(final.choices[0].message.tool_calls[0].function.name, 'get_weather');
  assert.equal(final.choices[0].message.tool_calls[0].function.arguments,
    named.choices[0].message.tool_calls[0].function.arguments);
});

test('a history with assistant tool calls (null content) and tool results is accepted', async () => {
  const response = await openai.chat.completions.create({
    model, temperature: 0, max_tokens: 8, tools: [weather], tool_choice: 'none',
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "celsius"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '21 degrees' },
    ],
  });
  assert.equal(response.choices[0].message.tool_calls.length, 0);
  assert.ok(typeof response.choices[0].message.content === 'string');
});

test('auto tool choice with the hermes parser, and reasoning with the deepseek_r1 parser', async () => {
  const parsing = await startServer(['--enable-auto-tool-choice', '--tool-call-parser', 'hermes',
    '--reasoning-parser', 'deepseek_r1', '--trust-request-chat-template', '--max-model-len', '2048']);
  try {
    const local = new OpenAI({ baseURL: `http://127.0.0.1:${parsing.port}/v1`, apiKey: 'x', maxRetries: 0 });
    // A template whose prompt ends the thinking block, so the regex shapes the whole reply: some
    // thinking, then a hermes tool call.
    const chat_template = '{% for m in messages %}{{ m.content }}\n{% endfor %}</think>\n';
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lima", "unit": "celsius"}}\n</tool_call>';
    const request = {
      model, messages, temperature: 0, max_tokens: 1000, tools: [weather], chat_template,
      guided_regex: `[a-z ]{1,12}</think>${call.replace(/[{}()[\]|.*+?^$\\]/g, '\\$&')}`,
    };
    const whole = await local.chat.completions.create(request);
    const choice = whole.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.match(choice.message.reasoning_content, /^[a-z ]{1,12}$/);
    assert.equal(choice.message.tool_calls.length, 1);
    assert.equal(choice.message.tool_calls[0].function.name, 'get_weather');
    assert.deepEqual(JSON.parse(choice.message.tool_calls[0].function.arguments), { city: 'Lima', unit: 'celsius' });
    const streamed = await collect(await local.chat.completions.create({ ...request, stream: true }));
    assert.equal(streamed.finishReason, 'tool_calls');
    assert.equal(streamed.reasoning, choice.message.reasoning_content);
    assert.equal(streamed.toolCalls.length, 1);
    assert.equal(streamed.toolCalls[0].name, 'get_weather');
    assert.deepEqual(JSON.parse(streamed.toolCalls[0].arguments), { city: 'Lima', unit: 'celsius' });
    // Without the end of thinking, deepseek_r1 reads the whole reply as reasoning.
    const thinking = await local.chat.completions.create({ model, messages, temperature: 0, max_tokens: 10 });
    assert.ok(thinking.choices[0].message.reasoning_content.length > 0);
    assert.equal(thinking.choices[0].message.content, null);
  } finally {
    await stopServer(parsing);
  }
});

test('the demo model at temperature 1 finishes JSON well within max_tokens', async () => {
  // JSON's whitespace is one separator between two tokens by default (a space, or a newline and an
  // indent): with runs of up to 20 newlines and spaces allowed, these took 2 to 3 times as many
  // tokens and some ran out. (Any JSON object, or any number of tool calls, may still not end: the
  // model adds member after member, whatever the whitespace.)
  const order = {
    $defs: { pet: { type: 'object', properties: { kind: { enum: ['cat', 'dog'] }, age: { type: 'integer' } }, required: ['kind', 'age'] } },
    type: 'object',
    properties: { id: { type: 'integer' }, pet: { $ref: '#/$defs/pet' } },
    required: ['id', 'pet'],
  };
  const requests = [
    { response_format: { type: 'json_schema', json_schema: { name: 'order', schema: order } } },
    { tools: [weather, time], tool_choice: 'required', parallel_tool_calls: false },
    { tools: [weather, time], tool_choice: { type: 'function', function: { name: 'get_weather' } } },
  ];
  for (const fields of requests) {
    for (const seed of [1, 2, 3]) {
      const response = await openai.chat.completions.create({ model, messages, temperature: 1, seed, max_tokens: 300, n: 2, ...fields });
      for (const choice of response.choices) {
        const label = `${JSON.stringify(fields).slice(0, 60)} seed ${seed}: ${JSON.stringify(choice.message)}`;
        assert.equal(choice.finish_reason, 'stop', label);
        if (fields.tools) {
          assert.equal(choice.message.tool_calls.length, 1, label);
          JSON.parse(choice.message.tool_calls[0].function.arguments);
        } else {
          assert.equal(typeof JSON.parse(choice.message.content), 'object', label);
        }
      }
      assert.ok(response.usage.completion_tokens < 2 * 150, `${JSON.stringify(fields).slice(0, 60)}: ${JSON.stringify(response.usage)}`);
    }
  }
});

test('whitespace_pattern per request and per server; ambiguous or unknown fields are 400s', async () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  const spaced = await openai.completions.create({
    model, prompt: 'Once', temperature: 0, max_tokens: 30, structured_outputs: { json: schema, whitespace_pattern: ' ' },
  });
  assert.match(spaced.choices[0].text, /^\{ "n" : -?\d+ \}$/);
  for (const [fields, message] of [
    [{ structured_outputs: { regex: 'a' }, guided_regex: 'b' }, /structured_outputs and guided_regex/],
    [{ structured_outputs: { json: schema }, response_format: { type: 'json_object' } }, /structured_outputs and response_format/],
    [{ structured_outputs: { regex: 'a', regx: 'b' } }, /structured_outputs\.regx: Extra inputs are not permitted/],
    [{ guided_json: { enum: ['a', 'b'], not: { const: 'a' }, minLength: 1, if: {} } }, null],
    [{ guided_json: { type: 'string', not: { const: 'a' } } }, /#\/not/],
  ]) {
    const request = openai.completions.create({ model, prompt: 'x', max_tokens: 5, temperature: 0, ...fields });
    if (message === null) {
      assert.equal((await request).choices[0].text, '"b"');  // `not` holds beside enum
      continue;
    }
    await assert.rejects(request, (error) => error instanceof OpenAI.BadRequestError && message.test(error.message),
      JSON.stringify(fields));
  }
  // The server's default, and a pattern that does not compile stops it at start.
  const server = await startServer(['--structured-outputs-config', '{"whitespace_pattern": " "}']);
  try {
    const local = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0 });
    const response = await local.completions.create({ model, prompt: 'Once', temperature: 0, max_tokens: 30, guided_json: schema });
    assert.match(response.choices[0].text, /^\{ "n" : -?\d+ \}$/);
  } finally {
    await stopServer(server);
  }
  await assert.rejects(startServer(['--structured-outputs-config', '{"whitespace_pattern": "("}']), /whitespace_pattern/);
});
