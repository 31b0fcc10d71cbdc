// `serve --enable-prompt-embeds`: /v1/completions takes `prompt_embeds`, base64 torch.save
// tensors, as vLLM's. The embedding rows of a prompt's own tokens (read from the GGUF) give the
// completion the token-id prompt gives, logprobs included; the 400s name what is wrong. Driven
// by the official openai SDK, which passes prompt_embeds through as vLLM's examples do.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { apiKey, client, model, postTo, startServer, stopServer } from './helpers.mjs';
import { ggufTokenEmbeddings, torchSaveBase64 } from './torch_save.mjs';

let server;
let openai;
let ids;
let embeds;  // { values, hidden } of ids
const greedy = { model, temperature: 0, max_tokens: 24, logprobs: 2 };

before(async () => {
  server = await startServer(['--enable-prompt-embeds', '--enable-log-requests']);
  openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey, maxRetries: 0 });
  ids = (await postTo(server, '/tokenize', { model, prompt: 'Once upon a time' })).json.tokens;
  embeds = ggufTokenEmbeddings(`${process.env.VLLM_E2E_SHARED}/models/stories260K.gguf`, ids);
});

after(async () => {
  if (server) await stopServer(server);
});

test("the request log shows an embeddings prompt's shape as vLLM's does", async () => {
  const completion = await openai.completions.create({
    model, max_tokens: 2, prompt: '', prompt_embeds: torchSaveBase64([ids.length, embeds.hidden], embeds.values),
  });
  assert.equal(completion.usage.prompt_tokens, ids.length);
  assert.match(server.output(), new RegExp(`Received request ${completion.id}: prompt: None, params: SamplingParams\\(n=1, .*` +
    `, prompt_token_ids: None, prompt_embeds shape: torch\\.Size\\(\\[${ids.length}, ${embeds.hidden}\\]\\), lora_request: None\\.`));
});

// The same tokens and logprobs; the text without the first token's word-start space, which a
// detokenizer with no prompt text before it (vLLM's, for embeddings) does not show.
function assertSameChoice(actual, expected) {
  assert.deepEqual(actual.logprobs.tokens, expected.logprobs.tokens);
  assert.deepEqual(actual.logprobs.token_logprobs, expected.logprobs.token_logprobs);
  assert.deepEqual(actual.logprobs.top_logprobs, expected.logprobs.top_logprobs);
  assert.equal(actual.text, expected.text.replace(/^ /, ''));
  assert.equal(actual.finish_reason, expected.finish_reason);
}

test("a prompt's own token embeddings complete as its token ids do", async () => {
  const byIds = await openai.completions.create({ ...greedy, prompt: ids });
  const byEmbeds = await openai.completions.create({
    ...greedy, prompt_embeds: torchSaveBase64([ids.length, embeds.hidden], embeds.values),
  });
  assertSameChoice(byEmbeds.choices[0], byIds.choices[0]);
  assert.match(byEmbeds.choices[0].text, /^, there was a little girl named Lily/);
  assert.equal(byEmbeds.usage.prompt_tokens, ids.length);
  assert.equal(byEmbeds.usage.completion_tokens, byIds.usage.completion_tokens);
  // A batch dimension of 1 is squeezed, as vLLM does.
  const batched = await openai.completions.create({
    ...greedy, prompt_embeds: torchSaveBase64([1, ids.length, embeds.hidden], embeds.values),
  });
  assertSameChoice(batched.choices[0], byIds.choices[0]);
});

test('several prompt_embeds come first, then the text prompts; streaming works', async () => {
  const encoded = torchSaveBase64([ids.length, embeds.hidden], embeds.values);
  const response = await openai.completions.create({
    ...greedy, prompt_embeds: [encoded, encoded], prompt: 'Once upon a time', return_token_ids: true,
  });
  assert.equal(response.choices.length, 3);
  const [first, second, text] = [...response.choices].sort((a, b) => a.index - b.index);
  // An embeddings prompt's ids are vLLM's placeholders (0), one per row.
  assert.deepEqual(first.prompt_token_ids, new Array(ids.length).fill(0));
  assert.deepEqual(second.prompt_token_ids, new Array(ids.length).fill(0));
  assert.deepEqual(text.prompt_token_ids, ids);
  assertSameChoice(first, text);
  assertSameChoice(second, text);
  assert.equal(response.usage.prompt_tokens, 3 * ids.length);
  const stream = await openai.completions.create({ ...greedy, prompt_embeds: encoded, stream: true });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices.map((choice) => choice.text).join('');
  assert.equal(streamed, first.text);
});

test('bad prompt_embeds are 400s that name the problem', async () => {
  const refused = async (request, pattern) =>
    assert.rejects(request, (error) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.match(error.message, pattern);
      return true;
    });
  const encoded = torchSaveBase64([ids.length, embeds.hidden], embeds.values);
  // The shared server runs without the flag.
  await refused(client().completions.create({ ...greedy, prompt_embeds: encoded }),
    /You must set `--enable-prompt-embeds` to input `prompt_embeds`/);
  await refused(openai.completions.create({ ...greedy, prompt_embeds: 'not base64!' }),
    /prompt_embeds: invalid base64/);
  await refused(openai.completions.create({ ...greedy, prompt_embeds: Buffer.from('a pickle?').toString('base64') }),
    /invalid torch.save file/);
  await refused(openai.completions.create({ ...greedy, prompt_embeds: torchSaveBase64([2, 32], new Array(64).fill(0.5)) }),
    /prompt_embeds has hidden size 32, but the model's hidden_size is 64/);
  await refused(openai.completions.create({ ...greedy, prompt_embeds: torchSaveBase64([64], new Array(64).fill(0.5)) }),
    /prompt_embeds must be of shape \(seq_len, hidden_size\)/);
  await refused(openai.completions.create({ ...greedy, prompt_embeds: encoded, prompt_logprobs: 1 }),
    /prompt_logprobs is not compatible with prompt embeds/);
  await refused(openai.completions.create({ ...greedy, prompt_embeds: 42 }),
    /prompt_embeds: Input should be a base64 string/);
});
