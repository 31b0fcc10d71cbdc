// `vllm-cpp serve` with no model: it writes a tiny random-weight Llama with a byte-level
// vocabulary and its checksum into the cache ($HOME/.cache/vllm-cpp here, a fresh HOME), says so,
// and serves it; a second start finds the file whole and writes nothing.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { model, startServer, stopServer } from './helpers.mjs';

test('serve with no model writes the default model into the cache and answers with it', async () => {
  const home = mkdtempSync(join(tmpdir(), 'vllm-cpp-home-'));
  const env = { HOME: home, XDG_CACHE_HOME: '' };
  const cache = join(home, '.cache', 'vllm-cpp');
  try {
    let server = await startServer([], { env, modelPath: null });
    try {
      assert.match(server.output(), /wrote the default model, a tiny random-weight Llama .*random-stories260k-byte-vocab\.gguf/);
      // The model and its checksum; no temporary files left.
      assert.deepEqual(readdirSync(cache).sort(),
        ['random-stories260k-byte-vocab.gguf', 'random-stories260k-byte-vocab.gguf.checksum']);
      const openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0 });
      // Byte-level: BOS, then one token per byte ('é' and 'ö' are two) and one per space.
      const response = await openai.completions.create({ model, prompt: 'Héllo, wörld', max_tokens: 8, temperature: 0,
        ignore_eos: true });
      assert.equal(response.usage.prompt_tokens, 1 + 7 + 1 + 6);
      assert.equal(response.usage.completion_tokens, 8);
      assert.equal(typeof response.choices[0].text, 'string');
      const chat = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 });
      assert.equal(chat.choices[0].message.role, 'assistant');
    } finally {
      await stopServer(server);
    }
    server = await startServer([], { env, modelPath: null });
    try {
      assert.match(server.output(), /serving the default model, .* from .*random-stories260k-byte-vocab\.gguf/);
      assert.ok(existsSync(join(cache, 'random-stories260k-byte-vocab.gguf')));
    } finally {
      await stopServer(server);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
