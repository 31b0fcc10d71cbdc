// The well-behaved part of the load: completions and chat completions, mostly streamed, some of
// them abandoned by their client at a random moment. Every response that is read to its end is
// checked for shape (status, SSE framing, one finish_reason per choice).
import http from 'node:http';
import { MODEL_NAME } from './server.mjs';
import { pickWeighted } from './random.mjs';

const OPENINGS = ['Once upon a time', 'One day', 'Lily and Tom', 'The little dog', 'In the park',
  'The sun was shining', 'A big red ball', 'Mom said', 'There was a cat named', 'Tim wanted to'];
const ENDINGS = ['', ' in the garden', ' with a friend', ' and was happy', ' near the tree', ' who liked to play'];

const KIND_WEIGHTS = { completion_stream: 45, chat_stream: 35, completion: 10, chat: 10 };

function pickPrompt(rng) {
  return rng.pick(OPENINGS) + rng.pick(ENDINGS);
}

// Sampling fields of one request: greedy or random, sometimes two choices (only when sampling:
// two greedy choices would be the same text). A response that is not streamed sends no byte
// before its last token, so it gets fewer tokens: under 256 clients on two cores, 128 tokens
// could come close to the stuck limit without anything being wrong.
function pickSampling(rng, stream) {
  const temperature = rng.chance(0.35) ? 0 : Math.round((0.3 + rng() * 0.9) * 100) / 100;
  const fields = { temperature, max_tokens: rng.int(8, stream ? 128 : 64) };
  if (temperature > 0 && rng.chance(0.15)) fields.n = 2;
  if (temperature > 0 && rng.chance(0.3)) fields.seed = rng.int(0, 1 << 30);
  if (rng.chance(0.1)) fields.ignore_eos = true;
  return fields;
}

// When this client gives up, if it does: a random time after sending (before the server has
// read the request, while it computes, or while it answers) or after some events of a stream.
function pickDisconnect(rng, stream, disconnectShare) {
  if (!rng.chance(disconnectShare)) return null;
  if (stream && rng.chance(0.6)) return { moment: 'mid_stream', afterEvents: rng.int(1, 24) };
  return { moment: 'timed', afterMs: rng.int(0, 400) };
}

// One request to send: {kind, path, body, choices, stream, disconnect}.
export function pickNormalRequest(rng, { disconnectShare }) {
  const kind = pickWeighted(rng, KIND_WEIGHTS);
  const stream = kind.endsWith('_stream');
  const chat = kind.startsWith('chat');
  const body = { model: MODEL_NAME, ...pickSampling(rng, stream), stream };
  if (chat) {
    body.messages = rng.chance(0.2)
      ? [{ role: 'system', content: 'You tell short stories.' }, { role: 'user', content: pickPrompt(rng) }]
      : [{ role: 'user', content: pickPrompt(rng) }];
  } else {
    body.prompt = pickPrompt(rng);
  }
  if (stream && rng.chance(0.3)) body.stream_options = { include_usage: true };
  return {
    kind, stream, body, choices: body.n ?? 1,
    path: chat ? '/v1/chat/completions' : '/v1/completions',
    disconnect: pickDisconnect(rng, stream, disconnectShare),
  };
}

// Reads a server-sent event stream and checks its shape as the events arrive.
class EventStreamChecker {
  constructor(choices) {
    this.choices = choices;
    this.buffer = '';
    this.events = 0;
    this.done = false;
    this.finished = new Map();  // choice index -> the event that carried its finish_reason
    this.problem = null;
    this.errorCode = null;      // `code` of an error event, if the stream carried one
  }

  push(chunk) {
    this.buffer += chunk;
    let end;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      this.onEvent(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
    }
  }

  onEvent(event) {
    this.events++;
    if (!event.startsWith('data: ')) return this.fail(`an event without data: ${event.slice(0, 80)}`);
    const data = event.slice(6);
    if (this.done) return this.fail('an event after [DONE]');
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      return this.fail(`an event that is not JSON: ${data.slice(0, 80)}`);
    }
    if (chunk.error) {
      this.errorCode = chunk.error.code ?? null;
      return this.fail(`an error event: ${JSON.stringify(chunk.error).slice(0, 160)}`);
    }
    for (const choice of chunk.choices ?? []) {
      if (choice.finish_reason == null) continue;
      if (this.finished.has(choice.index)) {
        this.fail(`two finish_reasons for choice ${choice.index}: ${this.finished.get(choice.index)} then ${data.slice(0, 300)}`);
      }
      this.finished.set(choice.index, data.slice(0, 300));
    }
  }

  fail(problem) {
    this.problem ??= problem;
  }

  // Why the complete stream is wrong, or null.
  verdict() {
    if (this.problem) return this.problem;
    if (this.buffer.trim() !== '') return 'a partial event at the end of the stream';
    if (!this.done) return 'the stream ended without data: [DONE]';
    if (this.finished.size !== this.choices) return `${this.finished.size} of ${this.choices} choices finished`;
    return null;
  }
}

// Why a complete non-streamed body is wrong, or null.
function checkJsonBody(text, choices) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return `a body that is not JSON: ${text.slice(0, 80)}`;
  }
  if (!Array.isArray(body.choices) || body.choices.length !== choices) return `${body.choices?.length} choices, expected ${choices}`;
  if (body.choices.some((choice) => !choice.finish_reason)) return 'a choice without finish_reason';
  return null;
}

// What a finished exchange means: {result, detail}. 503 and 429 are the server shedding load
// (counted, reported, allowed); any other 5xx is a server error. `checker` is null when the
// body was read whole into `text`.
function classifyResponse(request, status, checker, text) {
  const snippet = () => `${status} ${(checker ? checker.buffer : text).slice(0, 160)}`;
  if (status === 503 || status === 429) return { result: 'overloaded' };
  if (status >= 500) return { result: 'server_error', detail: snippet() };
  if (status !== 200) return { result: 'bad_response', detail: snippet() };
  const problem = checker ? checker.verdict() : checkJsonBody(text, request.choices);
  if (!problem) return { result: 'ok' };
  const serverError = checker?.errorCode >= 500 && checker.errorCode !== 503;
  return { result: serverError ? 'server_error' : 'bad_response', detail: problem };
}

// Sends one request and reads (or abandons) its response. Resolves, never rejects, with
// {kind, status, result, detail}; result is one of ok, disconnected, overloaded, server_error,
// bad_response, network_error, stuck, cut_off. `tracker` can cut it off (the server is gone).
export function runNormalRequest({ port, agent, request, stuckMs, tracker }) {
  return new Promise((resolve) => {
    let status = null;
    let settled = false;
    let stuckTimer = null;
    let disconnectTimer = null;
    let cancel = null;
    const outgoing = http.request({
      host: '127.0.0.1', port, method: 'POST', path: request.path, agent,
      headers: { 'content-type': 'application/json' },
    });
    const finish = (result, detail = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(stuckTimer);
      clearTimeout(disconnectTimer);
      tracker.delete(cancel);
      resolve({ kind: request.kind, status, result, detail, disconnect: request.disconnect?.moment });
    };
    const giveUp = (result, detail) => {
      finish(result, detail);
      outgoing.destroy();
    };
    // A request that gets no byte for stuckMs is stuck: the server forgot it.
    const sawProgress = () => {
      clearTimeout(stuckTimer);
      stuckTimer = setTimeout(() => giveUp('stuck', `no byte for ${stuckMs} ms (status ${status})`), stuckMs);
    };
    cancel = () => giveUp('cut_off', 'the run was cut off');
    tracker.add(cancel);
    sawProgress();
    if (request.disconnect?.moment === 'timed') {
      disconnectTimer = setTimeout(() => giveUp('disconnected'), request.disconnect.afterMs);
    }
    outgoing.on('error', (error) => finish('network_error', error.code ?? error.message));
    outgoing.on('response', (response) => {
      status = response.statusCode;
      sawProgress();
      const streamed = request.stream && status === 200;
      const checker = streamed ? new EventStreamChecker(request.choices) : null;
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        sawProgress();
        if (!streamed) {
          text += chunk;
          return;
        }
        checker.push(chunk);
        if (request.disconnect?.moment === 'mid_stream' && checker.events >= request.disconnect.afterEvents) {
          giveUp('disconnected');
        }
      });
      response.on('end', () => {
        const { result, detail } = classifyResponse(request, status, checker, text);
        finish(result, detail);
      });
      response.on('error', (error) => finish('network_error', `mid-response: ${error.code ?? error.message}`));
      response.on('close', () => {
        if (!response.complete) finish('network_error', 'the connection closed mid-response');
      });
    });
    outgoing.end(JSON.stringify(request.body));
  });
}
