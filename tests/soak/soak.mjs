#!/usr/bin/env node
// Soak test of `vllm-cpp serve`: --clients concurrent client loops stream completions and chat
// completions from the demo model for --duration-s; about a quarter of the requests are
// abandoned by their client at a random moment and a share are hostile (hostile_requests.mjs).
// Then it checks that the server survived and went back to idle:
//   - the load was served, and the server is alive at its end;
//   - no 5xx but 503 (503 and 429, load shedding, are counted and reported, not failed);
//   - every hostile request got a 4xx, a 503 or a clean close; every normal one that its
//     client did not leave got a complete, well-formed response;
//   - no request stuck (no byte and no end for --stuck-s) and every client loop ended;
//   - /health answered in under 1 s all along (probed every 2 s from a worker thread; a probe
//     that was slow because the prober itself went unscheduled, on a loaded machine, is left
//     out and reported);
//   - /metrics back to 0 running, 0 waiting, 0 KV cache usage within 10 s of the end;
//   - the RSS at the end of the load within +10 % of the RSS after warm-up: the median of the
//     samples (every 0.5 s) over a window after warm-up vs over the same window at the end of
//     the load. The median ignores the short spikes of big hostile bodies and templates,
//     which the allocator gives back; a leak or a heap that keeps growing moves it;
//   - SIGTERM then ends the server with exit code 0.
// It prints a summary and "N passed, M failed", and exits 1 on any failure. The requests of
// each client loop come from a PRNG seeded with --seed and the loop's index.
//
// Usage (`ctest -L soak` runs it for 60 s with 256 clients; no npm packages needed):
//   node tests/soak/soak.mjs --binary build/vllm-cpp --shared ../shared [--duration-s 60]
//     [--clients 256] [--seed 1] [--port P] [--hostile-share 0.08] [--disconnect-share 0.25]
//     [--stuck-s 60] [--log server.log] [--server-arg=--max-num-seqs --server-arg=64 ...]
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { HOSTILE_REQUESTS, classifyHostileOutcome, prebuildHostileBodies, rawExchange } from './hostile_requests.mjs';
import { pickNormalRequest, runNormalRequest } from './normal_requests.mjs';
import { makeRng } from './random.mjs';
import { freePort, getPath, metricValue, readRssKb, sleep, startServer, stopServer } from './server.mjs';
import { SoakStats, mib, quantile } from './stats.mjs';

const HEALTH_INTERVAL_MS = 2000;
const RSS_INTERVAL_MS = 500;
const HEALTH_TIMEOUT_MS = 5000;
const HEALTH_RETRY_MS = 200;
const HEALTH_LIMIT_MS = 1000;
const UNRESPONSIVE_AFTER_FAILED_PROBES = 3;  // consecutive failed /health probes: the server froze
const IDLE_DEADLINE_MS = 10000;
const SHUTDOWN_GRACE_MS = 15000;             // the server's own grace period is 10 s
const RSS_GROWTH_LIMIT = 0.10;
const HOSTILE_NAMES = Object.keys(HOSTILE_REQUESTS);

function parseOptions() {
  const { values } = parseArgs({
    options: {
      binary: { type: 'string' },
      shared: { type: 'string' },
      'duration-s': { type: 'string', default: '60' },
      clients: { type: 'string', default: '256' },
      seed: { type: 'string', default: '1' },
      port: { type: 'string' },
      'hostile-share': { type: 'string', default: '0.08' },
      'disconnect-share': { type: 'string', default: '0.25' },
      'stuck-s': { type: 'string', default: '60' },
      log: { type: 'string' },
      'server-arg': { type: 'string', multiple: true, default: [] },
    },
  });
  if (!values.binary || !values.shared) {
    console.error('usage: soak.mjs --binary PATH --shared DIR [--duration-s 60] [--clients 256] [--seed 1] ...');
    process.exit(2);
  }
  const options = {
    binary: values.binary,
    shared: values.shared,
    durationMs: Number(values['duration-s']) * 1000,
    clients: Number(values.clients),
    seed: Number(values.seed),
    port: values.port ? Number(values.port) : undefined,
    hostileShare: Number(values['hostile-share']),
    disconnectShare: Number(values['disconnect-share']),
    stuckMs: Number(values['stuck-s']) * 1000,
    logFile: values.log,
    serverArgs: values['server-arg'],
  };
  const numbers = ['durationMs', 'clients', 'seed', 'hostileShare', 'disconnectShare', 'stuckMs'];
  const invalid = numbers.filter((name) => !Number.isFinite(options[name]) || options[name] < 0);
  if (invalid.length || options.clients < 1 || options.durationMs <= 0) {
    console.error(`soak.mjs: invalid option value(s): ${invalid.join(', ') || 'clients or duration'}`);
    process.exit(2);
  }
  return options;
}

// The RSS is compared between the first window after warm-up and the last window of the load
// (they overlap in runs shorter than 40 s, where the check means little).
function rssWindows(durationMs) {
  const warmupMs = Math.min(Math.max(0.15 * durationMs, 10000), durationMs / 2);
  const windowMs = Math.max(0.1 * durationMs, 10000);
  return { warm: [warmupMs, Math.min(warmupMs + windowMs, durationMs)], end: [Math.max(0, durationMs - windowMs), durationMs] };
}

// Probes /health every HEALTH_INTERVAL_MS (from a worker thread, health_probe.mjs) and reads
// the RSS every RSS_INTERVAL_MS until stopped; calls monitor.onUnresponsive after a few failed
// probes in a row. Also measures this thread's event-loop delay: when it is large, the client
// was the bottleneck of the run.
function startMonitor(server, clock) {
  const samples = { healthMs: [], healthFailures: [], healthStalled: [], rss: [] };
  const monitor = { samples, onUnresponsive: () => {} };
  let failedInARow = 0;
  const worker = new Worker(new URL('./health_probe.mjs', import.meta.url), {
    workerData: { port: server.port, intervalMs: HEALTH_INTERVAL_MS, retryMs: HEALTH_RETRY_MS, timeoutMs: HEALTH_TIMEOUT_MS },
  });
  worker.on('message', (probe) => {
    if (probe.status === 200 && probe.ms >= HEALTH_LIMIT_MS && probe.stallMs >= probe.ms / 2) {
      // Slow because the prober itself did not run for most of it: the machine, not the server.
      samples.healthStalled.push(`${probe.ms.toFixed(0)} ms with the prober stalled ${probe.stallMs.toFixed(0)} ms`);
      failedInARow = 0;
    } else if (probe.status === 200) {
      samples.healthMs.push(probe.ms);
      failedInARow = 0;
    } else if (server.isAlive()) {
      samples.healthFailures.push(`${probe.status ?? probe.error} after ${probe.ms.toFixed(0)} ms at ${(clock() / 1000).toFixed(1)} s`);
      if (++failedInARow >= UNRESPONSIVE_AFTER_FAILED_PROBES) monitor.onUnresponsive();
    }
  });
  const workerDone = new Promise((resolve) => worker.on('exit', resolve));
  const readRss = () => {
    const kb = readRssKb(server.pid);
    if (kb !== null) samples.rss.push({ atMs: clock(), kb });
  };
  readRss();
  const rssTimer = setInterval(readRss, RSS_INTERVAL_MS);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  monitor.stop = async () => {
    clearInterval(rssTimer);
    loopDelay.disable();
    samples.clientLoopDelayMs = { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
    worker.postMessage('stop');
    // A probe under way ends within its timeout; a worker that still lingers is ended.
    const timer = setTimeout(() => worker.terminate(), HEALTH_TIMEOUT_MS + 1000);
    await workerDone;
    clearTimeout(timer);
  };
  return monitor;
}

async function sendHostileRequest(rng, context) {
  const name = rng.pick(HOSTILE_NAMES);
  const plan = HOSTILE_REQUESTS[name].plan(rng);
  const { outcome } = await rawExchange({ port: context.server.port, plan, stuckMs: context.options.stuckMs, tracker: context.inFlight });
  context.stats.recordHostile(name, outcome, classifyHostileOutcome(name, outcome));
}

async function sendNormalRequest(rng, context) {
  const request = pickNormalRequest(rng, context.options);
  const { port } = context.server;
  context.stats.recordNormal(await runNormalRequest({
    port, agent: context.agent, request, stuckMs: context.options.stuckMs, tracker: context.inFlight,
  }));
}

// One client: a request after the other (closed loop) until the load stops.
async function clientLoop(index, context) {
  const rng = makeRng(context.options.seed, index);
  while (!context.stopping) {
    if (rng.chance(context.options.hostileShare)) {
      await sendHostileRequest(rng, context);
    } else {
      await sendNormalRequest(rng, context);
    }
  }
}

// Cuts off every request in flight (the server is gone or frozen: waiting is pointless).
function cutOffInFlight(context) {
  for (const cancel of [...context.inFlight]) cancel();
}

// Waits for the client loops to end their last request; resolves how many did not in time.
async function drainClients(loops, deadlineMs) {
  let finished = 0;
  loops.forEach((loop) => loop.then(() => finished++));
  const allDone = Promise.all(loops).then(() => true);
  const timedOut = sleep(deadlineMs).then(() => false);
  await Promise.race([allDone, timedOut]);
  return loops.length - finished;
}

// Polls /metrics until nothing runs, waits or holds KV blocks; resolves {idle, values, afterMs,
// tokens} (tokens: the engine's prompt and generation token counters, for the summary).
async function waitForIdleMetrics(server) {
  const started = Date.now();
  let values = {};
  let tokens = {};
  while (Date.now() - started < IDLE_DEADLINE_MS && server.isAlive()) {
    const response = await getPath(server.port, '/metrics', 2000);
    if (response.status === 200) {
      values = {
        running: metricValue(response.body, 'vllm:num_requests_running'),
        waiting: metricValue(response.body, 'vllm:num_requests_waiting'),
        kvCacheUsage: metricValue(response.body, 'vllm:kv_cache_usage_perc'),
      };
      tokens = {
        prompt: metricValue(response.body, 'vllm:prompt_tokens_total'),
        generated: metricValue(response.body, 'vllm:generation_tokens_total'),
      };
      if (values.running === 0 && values.waiting === 0 && values.kvCacheUsage === 0) {
        return { idle: true, values, afterMs: Date.now() - started, tokens };
      }
    } else {
      values = { error: response.status ?? response.error };
    }
    await sleep(250);
  }
  return { idle: false, values, afterMs: Date.now() - started, tokens };
}

// The median RSS sampled between fromMs and toMs of the load; NaN without a sample there.
function medianKbBetween(rss, [fromMs, toMs]) {
  return quantile(rss.filter((sample) => sample.atMs >= fromMs && sample.atMs <= toMs).map((sample) => sample.kb), 0.5);
}

// Runs the client loops until the duration ends, the server exits or it stops answering, then
// lets them finish their last request. Resolves {endReason, loadEndMs, rssEndOfLoadKb,
// aliveAtEndOfLoad, loopsLeft, drainedAfterMs}.
async function runLoad(context, monitor) {
  const { options, server, clock } = context;
  const result = { endReason: null };
  let resolveLoadEnd;
  const loadEnded = new Promise((resolve) => { resolveLoadEnd = resolve; });
  const endLoad = (reason, cutOff = false) => {
    if (result.endReason === null) {
      Object.assign(result, { endReason: reason, loadEndMs: clock(), rssEndOfLoadKb: readRssKb(server.pid) });
      context.stopping = true;
      resolveLoadEnd();
    }
    if (cutOff) cutOffInFlight(context);
  };
  monitor.onUnresponsive = () => endLoad('the server stopped answering /health', true);
  server.exited.then(({ code, signal }) => endLoad(`the server exited (code ${code}, signal ${signal})`, true));
  const durationTimer = setTimeout(() => endLoad('duration reached'), options.durationMs);

  const loops = Array.from({ length: options.clients }, (_, index) => clientLoop(index, context));
  await loadEnded;
  clearTimeout(durationTimer);
  result.aliveAtEndOfLoad = server.isAlive();
  // Every request ends within stuckMs of its last byte, so this deadline only trips on a bug here.
  result.loopsLeft = await drainClients(loops, options.stuckMs + 10000);
  if (result.loopsLeft > 0) cutOffInFlight(context);
  result.drainedAfterMs = clock() - result.loadEndMs;
  return result;
}

function summarizeRss(rss, durationMs, extra) {
  const windows = rssWindows(durationMs);
  return {
    warm: medianKbBetween(rss, windows.warm), end: medianKbBetween(rss, windows.end),
    peak: rss.length ? Math.max(...rss.map((sample) => sample.kb)) : NaN, windows, ...extra,
  };
}

// Starts the server, runs the load, checks the aftermath; resolves everything the checks and
// the summary need.
async function runSoak(options) {
  if (options.hostileShare > 0) prebuildHostileBodies();
  const port = options.port ?? await freePort();
  const server = await startServer({ binary: options.binary, shared: options.shared, port, extraArgs: options.serverArgs, logFile: options.logFile });
  const rssStartKb = readRssKb(server.pid);
  const loadStart = performance.now();
  const context = {
    options, server, stats: new SoakStats(), inFlight: new Set(), stopping: false,
    clock: () => performance.now() - loadStart,
    agent: new http.Agent({ keepAlive: true, maxSockets: Infinity }),
  };
  const monitor = startMonitor(server, context.clock);
  const load = await runLoad(context, monitor);
  const idle = await waitForIdleMetrics(server);
  await monitor.stop();
  const rssIdleKb = readRssKb(server.pid);
  const shutdown = await stopServer(server, SHUTDOWN_GRACE_MS);
  context.agent.destroy();
  return {
    options, server, stats: context.stats, monitor: monitor.samples, ...load, idle, shutdown,
    rssKb: summarizeRss(monitor.samples.rss, options.durationMs, { start: rssStartKb, endOfLoad: load.rssEndOfLoadKb, idle: rssIdleKb }),
  };
}

// The assertions: [{name, pass, detail}].
function evaluate(run) {
  const { stats, options, rssKb } = run;
  const normalKinds = [...stats.byKind.keys()].filter((kind) => kind !== 'hostile');
  const served = stats.count(['ok'], normalKinds);
  const serverErrors = stats.count(['server_error']);
  const badHostile = stats.count(['unexpected_status', 'bad_response', 'network_error'], ['hostile']);
  const badNormal = stats.count(['bad_response', 'network_error'], normalKinds);
  const stuck = stats.count(['stuck', 'cut_off']);
  const healthMaxMs = Math.max(0, ...run.monitor.healthMs);
  const growth = rssKb.end / rssKb.warm - 1;
  const durationReached = run.endReason === 'duration reached';
  return [
    { name: 'the load was served', pass: durationReached && served >= options.clients,
      detail: `${served} complete normal responses; the load ended: ${run.endReason} at ${(run.loadEndMs / 1000).toFixed(1)} s` },
    { name: 'the server is alive after the load', pass: run.aliveAtEndOfLoad,
      detail: run.aliveAtEndOfLoad ? '' : `exit ${JSON.stringify(run.server.exitInfo())}` },
    { name: 'no 5xx but 503', pass: serverErrors === 0,
      detail: `${serverErrors} server errors; ${stats.results.get('overloaded')} overloaded (503/429)` },
    { name: 'hostile requests get a 4xx, a 503 or a clean close', pass: badHostile === 0,
      detail: `${badHostile} did not (of ${stats.byKind.get('hostile')?.sum() ?? 0})` },
    { name: 'normal requests get complete, well-formed responses', pass: badNormal === 0,
      detail: `${badNormal} did not (of ${stats.count(['ok', 'bad_response', 'network_error'], normalKinds)} read to the end)` },
    { name: 'no request stuck, every client loop ended', pass: stuck === 0 && run.loopsLeft === 0,
      detail: `${stats.count(['stuck'])} stuck, ${stats.count(['cut_off'])} cut off, ${run.loopsLeft} loops still in a request; drained in ${(run.drainedAfterMs / 1000).toFixed(1)} s` },
    { name: `/health answers in under ${HEALTH_LIMIT_MS} ms`, pass: run.monitor.healthFailures.length === 0 && healthMaxMs < HEALTH_LIMIT_MS,
      detail: `max ${healthMaxMs.toFixed(1)} ms; ${run.monitor.healthFailures.length} failed probes ${run.monitor.healthFailures.slice(0, 3).join('; ')}` },
    { name: `metrics back to idle within ${IDLE_DEADLINE_MS / 1000} s`, pass: run.idle.idle,
      detail: `${JSON.stringify(run.idle.values)} after ${(run.idle.afterMs / 1000).toFixed(1)} s` },
    { name: `RSS flat within +${RSS_GROWTH_LIMIT * 100} %`, pass: Number.isFinite(growth) && growth <= RSS_GROWTH_LIMIT,
      detail: `warm ${mib(rssKb.warm)}, end ${mib(rssKb.end)} (${(growth * 100).toFixed(1)} %)` },
    { name: 'SIGTERM stops the server with exit code 0', pass: run.aliveAtEndOfLoad && run.shutdown.code === 0 && !run.shutdown.killed,
      detail: `code ${run.shutdown.code}, signal ${run.shutdown.signal}${run.shutdown.killed ? ', needed SIGKILL' : ''}` },
  ];
}

// About a dozen of the RSS samples, evenly spread: "0 s 88.7, 10 s 101.2, ..." (MiB).
function rssTimeline(rss) {
  const step = Math.max(1, Math.ceil(rss.length / 12));
  return rss.filter((_, index) => index % step === 0 || index === rss.length - 1)
    .map(({ atMs, kb }) => `${(atMs / 1000).toFixed(0)} s ${(kb / 1024).toFixed(1)}`).join(', ') + ' (MiB)';
}

function printSummary(run) {
  const { options, stats, monitor, rssKb } = run;
  const seconds = run.loadEndMs / 1000;
  const fmtMs = (ms) => (Number.isNaN(ms) ? 'n/a' : `${ms.toFixed(1)} ms`);
  console.log(`soak: ${options.durationMs / 1000} s, ${options.clients} clients, seed ${options.seed}, ` +
    `hostile share ${options.hostileShare}, disconnect share ${options.disconnectShare}, server port ${run.server.port}`);
  console.log(`load: ${stats.total} requests in ${seconds.toFixed(1)} s (${(stats.total / seconds).toFixed(1)}/s), ended: ${run.endReason}`);
  for (const [kind, tally] of [...stats.byKind].sort()) console.log(`  ${kind} ${tally.sum()}: ${tally.format()}`);
  const { prompt, generated } = run.idle.tokens;
  if (generated !== undefined) console.log(`tokens: ${prompt} prompt, ${generated} generated (${(generated / seconds).toFixed(0)}/s over the load)`);
  console.log(`statuses: ${stats.statuses.format(' x')}`);
  console.log(`client disconnects: ${stats.disconnects.format() || 'none'} (timed: 0-400 ms after sending; mid_stream: after 1-24 events)`);
  for (const [name, tally] of [...stats.hostile].sort()) console.log(`  hostile ${name}: ${tally.format(' x')}`);
  const health = monitor.healthMs;
  console.log(`/health: ${health.length} probes, p50 ${fmtMs(quantile(health, 0.5))}, p99 ${fmtMs(quantile(health, 0.99))}, ` +
    `max ${fmtMs(health.length ? Math.max(...health) : NaN)}, ${monitor.healthFailures.length} failed, ` +
    `${monitor.healthStalled.length} left out (slow while the prober stalled: ${monitor.healthStalled.join('; ') || 'none'}); ` +
    `the client's event-loop delay: p99 ${fmtMs(monitor.clientLoopDelayMs.p99)}, max ${fmtMs(monitor.clientLoopDelayMs.max)}`);
  console.log(`RSS: start ${mib(rssKb.start)}, warm ${mib(rssKb.warm)} (median over ${rssKb.windows.warm.map((ms) => ms / 1000).join('-')} s), ` +
    `end ${mib(rssKb.end)} (median over ${rssKb.windows.end.map((ms) => ms / 1000).join('-')} s), ` +
    `at the end of the load ${mib(rssKb.endOfLoad)}, idle ${mib(rssKb.idle)}, peak ${mib(rssKb.peak)}`);
  console.log(`RSS over time: ${rssTimeline(monitor.rss)}`);
  if (stats.problems.length) console.log(`first problems:\n  ${stats.problems.join('\n  ')}`);
}

async function main() {
  const options = parseOptions();
  const run = await runSoak(options);
  printSummary(run);
  const checks = evaluate(run);
  for (const check of checks) console.log(`${check.pass ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail}`);
  const failed = checks.filter((check) => !check.pass).length;
  if (failed > 0) console.log(`--- the server's last output ---\n${run.server.logTail().split('\n').slice(-40).join('\n')}`);
  console.log(`${checks.length - failed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
