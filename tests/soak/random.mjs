// A small seeded PRNG (mulberry32): every client loop gets its own stream, so the sequence of
// requests one client sends is the same on every run with the same --seed (the interleaving of
// the clients still depends on timing).

// Returns a function giving floats in [0, 1), with int(lo, hi), pick(items) and chance(p).
export function makeRng(seed, streamIndex = 0) {
  let state = (Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(streamIndex + 1, 0xc2b2ae35)) >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  next.pick = (items) => items[Math.floor(next() * items.length)];
  next.chance = (probability) => next() < probability;
  return next;
}

// Picks a key of `weights` ({name: weight}) with probability proportional to its weight.
export function pickWeighted(rng, weights) {
  const entries = Object.entries(weights);
  let roll = rng() * entries.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [name, weight] of entries) {
    roll -= weight;
    if (roll < 0) return name;
  }
  return entries[entries.length - 1][0];
}
