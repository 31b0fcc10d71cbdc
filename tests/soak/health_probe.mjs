// A worker thread that probes /health and posts each result ({status, error, ms, stallMs}) to
// its parent. A thread of its own because the main thread is busy with hundreds of streams: its
// event-loop lag would be measured as the server's latency. stallMs is how long this thread
// itself went unscheduled during the probe (a timer's lateness): on a loaded machine a probe
// can be slow because the prober did not run, which says nothing about the server.
import { parentPort, workerData } from 'node:worker_threads';
import { getPath, sleep } from './server.mjs';

const TICK_MS = 20;
const { port, intervalMs, retryMs, timeoutMs } = workerData;
let stopped = false;
parentPort.on('message', (message) => {
  if (message === 'stop') stopped = true;
});

let stallMs = 0;
let lastTick = performance.now();
const tickLateness = () => performance.now() - lastTick - TICK_MS;
const ticker = setInterval(() => {
  stallMs = Math.max(stallMs, tickLateness());
  lastTick = performance.now();
}, TICK_MS);

while (!stopped) {
  stallMs = 0;
  const probe = await getPath(port, '/health', timeoutMs);
  parentPort.postMessage({ ...probe, stallMs: Math.max(stallMs, tickLateness()) });
  // Soon again after a failed probe: a frozen server is declared so within a few timeouts.
  await sleep(probe.status === 200 ? intervalMs : retryMs);
}
clearInterval(ticker);
parentPort.close();
