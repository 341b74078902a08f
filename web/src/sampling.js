// The distribution a sampler draws the next token from, exactly as
// lib.decoding.sampling_distribution computes it (tests/test_live_sampling.py compares the two
// under node): (1) temperature: softmax of logits / T; T = 0 puts all mass on the argmax (the first
// on ties); (2) top-k: keep the k most probable (ties with the k-th kept too); (3) top-p: keep the
// smallest set of most probable tokens whose total is >= p (at least the most probable one);
// renormalise.
export function samplingDistribution(logits, temperature = 1, topK = null, topP = null) {
  const V = logits.length;
  if (!(temperature >= 0)) throw new Error(`temperature: expected a number >= 0, got ${temperature}`);
  if (topK !== null && !(Number.isInteger(topK) && topK >= 1)) {
    throw new Error(`top-k: expected an integer >= 1, got ${topK}`);
  }
  if (topP !== null && !(topP > 0 && topP <= 1)) throw new Error(`top-p: expected a number in (0, 1], got ${topP}`);
  if (temperature === 0) {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[v] > logits[best]) best = v;
    return Float64Array.from({ length: V }, (_, v) => (v === best ? 1 : 0));
  }
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x / temperature);
  let probs = Float64Array.from(logits, (x) => Math.exp(x / temperature - max));
  let total = probs.reduce((a, b) => a + b, 0);
  probs = probs.map((p) => p / total);
  if (topK !== null && topK < V) {
    const kth = [...probs].sort((a, b) => b - a)[topK - 1];
    probs = probs.map((p) => (p < kth ? 0 : p));
  }
  if (topP !== null && topP < 1) {
    const order = [...probs.keys()].sort((a, b) => probs[b] - probs[a] || a - b);
    const sum = probs.reduce((a, b) => a + b, 0);
    const keep = new Uint8Array(V);
    let before = 0;
    for (const v of order) {
      if (before < topP * sum) keep[v] = 1;
      before += probs[v];
    }
    probs = probs.map((p, v) => (keep[v] ? p : 0));
  }
  total = probs.reduce((a, b) => a + b, 0);
  return probs.map((p) => p / total);
}

// The three settings boxes of a live figure (their text, as typed) -> the arguments of
// samplingDistribution, or an Error whose message says what the box needs (the figure shows it, as it
// shows an unknown word). Empty top-k or 0: no cut; top-p 1: no cut. top-p 0 keeps what the definition
// keeps as p goes to 0, the most probable token alone (the nucleus always holds it): greedy decoding,
// so it is returned as temperature 0, with a note that says so.
export function readSettings(temperature, topK, topP) {
  const number = (text) => (String(text).trim() === "" ? NaN : Number(text));
  const t = number(temperature);
  if (!(Number.isFinite(t) && t >= 0)) {
    throw new Error(`Temperature must be a number of at least 0 (0 = greedy); got "${temperature}".`);
  }
  const k = String(topK).trim() === "" ? 0 : number(topK);
  if (!(Number.isInteger(k) && k >= 0)) {
    throw new Error(`Top-k must be a whole number: the number of tokens to keep, or 0 for no cut; got "${topK}".`);
  }
  const p = number(topP);
  if (!(p >= 0 && p <= 1)) {
    throw new Error(`Top-p must be a number from 0 to 1 (1 = no cut); got "${topP}".`);
  }
  if (p === 0) {
    return { temperature: 0, topK: null, topP: null,
      note: "Top-p = 0: the nucleus shrinks to the most probable token alone, so this is greedy decoding." };
  }
  return { temperature: t, topK: k > 0 ? k : null, topP: p < 1 ? p : null, note: "" };
}

// A small seeded generator (mulberry32), so that "sample" can be replayed.
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function draw(probs, random) {
  let u = random();
  for (let v = 0; v < probs.length; v++) {
    u -= probs[v];
    if (u < 0) return v;
  }
  return probs.length - 1;
}
