// Counting what happened during the soak, and the small statistics of the summary.

// Counts per key; formats as "key count, key count" (largest first).
export class Tally {
  constructor() {
    this.counts = new Map();
  }

  add(key, amount = 1) {
    this.counts.set(key, (this.counts.get(key) ?? 0) + amount);
  }

  get(key) {
    return this.counts.get(key) ?? 0;
  }

  sum(keys = [...this.counts.keys()]) {
    return keys.reduce((total, key) => total + this.get(key), 0);
  }

  format(separator = ' ') {
    return [...this.counts].sort((a, b) => b[1] - a[1]).map(([key, count]) => `${key}${separator}${count}`).join(', ');
  }
}

// Everything the client loops report: per request kind its results, all statuses seen, the
// hostile outcomes per case, the first few problems in words.
export class SoakStats {
  constructor(maxProblems = 12) {
    this.total = 0;
    this.results = new Tally();
    this.byKind = new Map();      // kind -> Tally of results
    this.statuses = new Tally();  // HTTP status, or how the exchange ended without one
    this.hostile = new Map();     // hostile case -> Tally of outcomes
    this.disconnects = new Tally();
    this.problems = [];
    this.maxProblems = maxProblems;
  }

  recordNormal({ kind, status, result, detail, disconnect }) {
    this.record(kind, result, status ?? (result === 'disconnected' ? 'left before a status' : result), detail);
    if (result === 'disconnected') this.disconnects.add(disconnect);
  }

  recordHostile(name, outcome, result) {
    this.record('hostile', result, outcome, result === 'ok' || result === 'overloaded' ? '' : `${name}: ${outcome}`);
    if (!this.hostile.has(name)) this.hostile.set(name, new Tally());
    this.hostile.get(name).add(outcome);
  }

  record(kind, result, statusLabel, detail) {
    this.total++;
    this.results.add(result);
    if (!this.byKind.has(kind)) this.byKind.set(kind, new Tally());
    this.byKind.get(kind).add(result);
    this.statuses.add(String(statusLabel));
    const problem = !['ok', 'disconnected', 'overloaded'].includes(result);
    if (problem && this.problems.length < this.maxProblems) this.problems.push(`${kind} ${result}: ${String(detail).slice(0, 400)}`);
  }

  // How many requests of `kinds` (all when omitted) ended with one of `results`.
  count(results, kinds = [...this.byKind.keys()]) {
    return kinds.reduce((total, kind) => total + (this.byKind.get(kind)?.sum(results) ?? 0), 0);
  }
}

// The q-quantile (0..1) of numbers, nearest rank; NaN when empty.
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export const mib = (kb) => (kb == null || Number.isNaN(kb) ? 'n/a' : `${(kb / 1024).toFixed(1)} MiB`);
