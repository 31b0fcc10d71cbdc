// vLLM's --root-path (a proxy's path prefix), --response-role and request logging
// (--enable-log-requests, --max-log-len), through the official openai SDK.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { model, startServer, stopServer } from './helpers.mjs';

let server;
before(async () => {
  server = await startServer(['--root-path', '/proxy', '--response-role', 'narrator', '--enable-log-requests',
    '--max-log-len', '6']);
});
after(() => stopServer(server));

const sdk = (prefix) => new OpenAI({ baseURL: `http://127.0.0.1:${server.port}${prefix}/v1`, apiKey: 'x', maxRetries: 0 });

test('--root-path: requests under the prefix are served without it, and those without it still are', async () => {
  assert.equal((await sdk('/proxy').models.list()).data[0].id, model);
  assert.equal((await sdk('').models.list()).data[0].id, model);
  const reply = await sdk('/proxy').completions.create({ model, prompt: 'Once', max_tokens: 3 });
  assert.equal(reply.usage.completion_tokens, 3);
  // Only a whole path segment is a prefix; the prefix alone routes nowhere.
  for (const path of ['/proxyv1/models', '/proxy', '/other/v1/models']) {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
    assert.equal(response.status, 404, path);
  }
});

test('--response-role names the reply after a generation prompt; without one the last message\'s role does', async () => {
  const client = sdk('/proxy');
  const messages = [{ role: 'user', content: 'Hi' }];
  const reply = await client.chat.completions.create({ model, messages, max_tokens: 3 });
  assert.equal(reply.choices[0].message.role, 'narrator');
  const stream = await client.chat.completions.create({ model, messages, max_tokens: 3, stream: true });
  const roles = [];
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.role) roles.push(chunk.choices[0].delta.role);
  }
  assert.deepEqual(roles, ['narrator']);
  // Continuing the user's own message: the reply is the user's, and echo puts that message first.
  const continued = await client.chat.completions.create({ model, messages, max_tokens: 3,
    add_generation_prompt: false, continue_final_message: true, echo: true });
  assert.equal(continued.choices[0].message.role, 'user');
  assert.ok(continued.choices[0].message.content.startsWith('Hi'));
});

test('--enable-log-requests logs each request as vLLM does, cut to --max-log-len', async () => {
  const reply = await sdk('').completions.create({ model, prompt: 'Tell me a story about a cat', max_tokens: 2,
    temperature: 0.5, stop: ['\n'] });
  const id = reply.id;
  const line = server.output().split('\n').find((l) => l.includes(`Received request ${id}:`));
  assert.ok(line, server.output().slice(-2000));
  assert.match(line, new RegExp(`Received request ${id}: prompt: 'Tell m', params: SamplingParams\\(n=1, presence_penalty=0\\.0, ` +
    `frequency_penalty=0\\.0, repetition_penalty=1\\.0, temperature=0\\.5, .*stop=\\['\\\\n'\\], .*max_tokens=2, .*\\), ` +
    `prompt_token_ids: \\[\\d+(, \\d+){5}\\], prompt_embeds shape: None, lora_request: None\\.$`));
});
