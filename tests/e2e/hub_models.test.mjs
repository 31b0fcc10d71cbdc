// `vllm-cpp serve ORG/NAME`: a model id resolved from a Hugging Face cache built here (as
// huggingface_hub lays it out), one downloaded from a fake hub on 127.0.0.1 (src/hub/fake_hub.mjs:
// the revision API, redirects, a connection dropped mid-file and resumed) and then served, and
// HF_HUB_OFFLINE=1 with an empty cache refused with a clear error. Never the network.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, symlinkSync,
  writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { startFakeHub } from '../../src/hub/fake_hub.mjs';
import { model, startServer, stopServer } from './helpers.mjs';

const stories = `${process.env.VLLM_E2E_SHARED}/models/stories260K.gguf`;
const commit = '0123456789abcdef0123456789abcdef01234567';

// Greedy from "Once upon a time" on stories260K: the README's continuation.
async function expectStories(server) {
  const openai = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'x', maxRetries: 0 });
  const response = await openai.completions.create({ model, prompt: 'Once upon a time', max_tokens: 12,
    temperature: 0 });
  assert.match(response.choices[0].text, /^, there was a little girl named Lily/);
}

test('serve ORG/NAME:TAG resolves the id in the Hugging Face cache', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'vllm-cpp-hf-cache-'));
  try {
    const repo = join(cache, 'models--org--stories-GGUF');
    mkdirSync(join(repo, 'blobs'), { recursive: true });
    symlinkSync(stories, join(repo, 'blobs', 'etag0'));
    mkdirSync(join(repo, 'snapshots', commit), { recursive: true });
    symlinkSync('../../blobs/etag0', join(repo, 'snapshots', commit, 'stories260K-Q8_0.gguf'));
    mkdirSync(join(repo, 'refs'));
    writeFileSync(join(repo, 'refs', 'main'), commit);
    const server = await startServer([], { env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1' },
      modelPath: 'org/stories-GGUF:q8_0' });
    try {
      assert.match(server.output(), new RegExp(`org/stories-GGUF:q8_0 \\(revision main\\) is .*snapshots/${commit}/stories260K-Q8_0\\.gguf`));
      await expectStories(server);
    } finally {
      await stopServer(server);
    }
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('serve ORG/NAME downloads from the hub into the cache, resuming a dropped file, then serves', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vllm-cpp-fake-hub-'));
  const cache = join(root, 'cache');
  mkdirSync(join(root, 'repos', 'org', 'tiny-GGUF'), { recursive: true });
  symlinkSync(stories, join(root, 'repos', 'org', 'tiny-GGUF', 'stories260K-Q8_0.gguf'));
  symlinkSync(stories, join(root, 'repos', 'org', 'tiny-GGUF', 'stories260K-F32.gguf'));
  writeFileSync(join(root, 'repos', 'org', 'tiny-GGUF', 'README.md'), '# a GGUF repo');
  const hub = await startFakeHub(join(root, 'repos'), { dropOnce: ['stories260K-Q8_0.gguf'] });
  const env = { HF_ENDPOINT: `http://127.0.0.1:${hub.port}`, HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '' };
  try {
    // Two GGUF files, neither Q4_K_M (the default tag): a tag must be given.
    await assert.rejects(startServer([], { env, modelPath: 'org/tiny-GGUF' }),
      /org\/tiny-GGUF has several GGUF files: pick one with org\/tiny-GGUF:TAG/);
    const server = await startServer([], { env, modelPath: 'org/tiny-GGUF:Q8_0' });
    try {
      await expectStories(server);
      assert.match(server.output(), /trying again in .* resuming/);
    } finally {
      await stopServer(server);
    }
    // The cache as huggingface_hub leaves it: refs/main, one blob named by its sha256, the
    // snapshot's relative link; only the chosen file fetched, and the rest asked for by Range.
    const repo = join(cache, 'models--org--tiny-GGUF');
    const hubCommit = readFileSync(join(repo, 'refs', 'main'), 'utf8');
    assert.match(hubCommit, /^[0-9a-f]{40}$/);
    assert.deepEqual(readdirSync(join(repo, 'snapshots', hubCommit)), ['stories260K-Q8_0.gguf']);
    const blobs = readdirSync(join(repo, 'blobs'));
    assert.equal(blobs.length, 1);
    assert.match(blobs[0], /^[0-9a-f]{64}$/);
    assert.equal(readlinkSync(join(repo, 'snapshots', hubCommit, 'stories260K-Q8_0.gguf')), `../../blobs/${blobs[0]}`);
    const gets = hub.log.filter((r) => r.url === '/blob/org/tiny-GGUF/stories260K-Q8_0.gguf');
    assert.equal(gets.length, 2);
    assert.match(gets[1].range, /^bytes=\d+-$/);
    assert.ok(!hub.log.some((r) => r.url.includes('F32')));
    // Served again offline, from the cache alone.
    const before = hub.log.length;
    const offline = await startServer([], { env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1' },
      modelPath: 'org/tiny-GGUF:Q8_0' });
    await stopServer(offline);
    assert.equal(hub.log.length, before);
  } finally {
    await hub.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('HF_HUB_OFFLINE=1 with an empty cache is a clear error', async () => {
  const cache = mkdtempSync(join(tmpdir(), 'vllm-cpp-empty-cache-'));
  try {
    const result = await new Promise((resolve) => execFile(process.env.VLLM_E2E_BINARY,
      ['serve', 'org/absent-model', '--port', '1', '--host', '127.0.0.1'],
      { env: { ...process.env, HF_HUB_CACHE: cache, HF_HUB_OFFLINE: '1', HF_ENDPOINT: 'http://127.0.0.1:1' } },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, output: stdout + stderr })));
    assert.notEqual(result.code, 0);
    assert.match(result.output, /org\/absent-model is not in the Hugging Face cache: .*refs\/main is absent; HF_HUB_OFFLINE is set, so nothing is downloaded/);
    assert.ok(!existsSync(join(cache, 'models--org--absent-model')));
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
