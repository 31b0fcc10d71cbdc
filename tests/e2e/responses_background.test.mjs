// Background streamed responses (background: true with stream: true) through the official
// client: the events come as they are made, GET ?stream=true&starting_after=N replays those
// after N and follows the rest, the client going away does not stop the response, and cancel
// ends it and frees its request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiKey, client, model, runningAfterSettling, sleep, startServer, stopServer } from './helpers.mjs';

const openai = client();

async function collect(stream, limit = Infinity) {
  const events = [];
  for await (const event of stream) {
    events.push(event);
    if (events.length >= limit) break;  // leaves the loop: the client closes the connection
  }
  return events;
}

async function finished(own, id) {
  let response = await own.responses.retrieve(id);
  for (let i = 0; i < 200 && (response.status === 'queued' || response.status === 'in_progress'); i++) {
    await sleep(50);
    response = await own.responses.retrieve(id);
  }
  return response;
}

test('a background stream sends numbered events, and starting_after replays the rest', async () => {
  const stream = await openai.responses.create({
    model, input: 'Once upon a time', background: true, stream: true, max_output_tokens: 10,
  });
  const events = await collect(stream);
  assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, i) => i));
  assert.equal(events[0].type, 'response.created');
  assert.equal(events[0].response.background, true);
  const last = events.at(-1);
  assert.equal(last.type, 'response.incomplete');
  assert.equal(last.response.usage.output_tokens, 10);
  const { id } = events[0].response;

  const replay = await collect(await openai.responses.retrieve(id, { stream: true, starting_after: 3 }));
  assert.deepEqual(replay, events.slice(4));
  const whole = await collect(await openai.responses.retrieve(id, { stream: true }));
  assert.deepEqual(whole, events);
  const stored = await openai.responses.retrieve(id);
  assert.equal(stored.status, 'incomplete');
  assert.deepEqual(stored.output, last.response.output);

  // Ids that have no event stream, and a bad starting_after, are clear 400s.
  const plain = await openai.responses.create({ model, input: 'Hi', max_output_tokens: 2 });
  await assert.rejects(openai.responses.retrieve(plain.id, { stream: true }),
    (error) => error.status === 400 && /has no event stream/.test(error.message));
  await assert.rejects(openai.responses.retrieve(id, { stream: true, starting_after: -5 }),
    (error) => error.status === 400 && /starting_after/.test(error.message));
});

test('a background stream runs on when its client goes, and is resumed with starting_after', async () => {
  const server = await startServer(['--max-model-len', '2048', '--api-key', apiKey]);
  try {
    const own = client({ baseURL: `http://127.0.0.1:${server.port}/v1` });
    const numTokens = 1500;
    const first = await collect(await own.responses.create({
      model, input: 'Once upon a time', background: true, stream: true, max_output_tokens: numTokens,
      ignore_eos: true,
    }), 3);
    const { id } = first[0].response;
    const rest = await collect(await own.responses.retrieve(id, { stream: true, starting_after: 2 }));
    assert.equal(rest[0].sequence_number, 3);
    assert.equal(rest.at(-1).type, 'response.incomplete');
    assert.equal(rest.at(-1).response.usage.output_tokens, numTokens);
    const text = [...first, ...rest].filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta).join('');
    const stored = await finished(own, id);
    assert.equal(stored.status, 'incomplete');
    assert.equal(stored.output_text, text);
  } finally {
    await stopServer(server);
  }
});

test('cancel ends a running background stream and frees its request', async () => {
  const server = await startServer(['--max-model-len', '2048', '--api-key', apiKey]);
  try {
    const own = client({ baseURL: `http://127.0.0.1:${server.port}/v1` });
    const stream = await own.responses.create({
      model, input: 'Once upon a time', background: true, stream: true, max_output_tokens: 2000,
      ignore_eos: true,
    });
    const events = [];
    let cancelled;
    for await (const event of stream) {
      events.push(event);
      if (events.length === 1) {
        const running = await own.responses.retrieve(event.response.id);
        assert.ok(['queued', 'in_progress'].includes(running.status));
        cancelled = await own.responses.cancel(event.response.id);
      }
    }
    assert.equal(cancelled.status, 'cancelled');
    const last = events.at(-1);
    assert.equal(last.response.status, 'cancelled');
    assert.ok(last.response.usage.output_tokens < 2000);
    assert.equal(await runningAfterSettling(server.port), 0);
    assert.equal((await own.responses.retrieve(last.response.id)).status, 'cancelled');
  } finally {
    await stopServer(server);
  }
});
