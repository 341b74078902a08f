// The Playground's tasks, equal to lib.playground's (tests/test_playground.py runs this file under node
// and compares every batch): Mulberry32 for the draws, then copy, reverse, sort, brackets, induction, position.

export const LENGTH = 8;
export const MAX_LENGTH = 64; // lib.playground.MAX_LENGTH: the longest sequence makeBatch draws (a test length)
export const VOCAB = 16;
export const NONE = 15; // induction's answer where x_t has not occurred before; position's start symbol
export const TASKS = ["copy", "reverse", "sort", "brackets", "induction", "position"];
const ALPHABET = { copy: 10, reverse: 10, sort: 10, induction: 6, position: 10 };
const BRACKETS = "()[]";

export class Mulberry32 {
  constructor(seed) {
    this.state = seed >>> 0;
  }
  random() {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  randint(n) {
    return Math.floor(this.random() * n);
  }
}

function sequence(task, rng, L) {
  if (task === "brackets") {
    const x = [], y = new Array(L).fill(0), stack = [];
    let opened = 0;
    for (let t = 0; t < L; t++) {
      if (opened < L / 2 && (stack.length === 0 || rng.random() < 0.5)) {
        const kind = rng.randint(2), digit = rng.randint(4);
        stack.push([t, kind, digit]);
        x.push(8 * kind + digit);
        opened++;
      } else {
        const [start, kind, digit] = stack.pop();
        const closing = rng.randint(4);
        x.push(8 * kind + 4 + closing);
        y[start] = closing;
        y[t] = digit;
      }
    }
    return [x, y];
  }
  if (task === "position") {
    const x = [NONE], y = [];
    for (let t = 1; t < L; t++) x.push(rng.randint(ALPHABET[task]));
    for (let t = 0; t < L; t++) y.push(t);
    return [x, y];
  }
  const x = [];
  for (let t = 0; t < L; t++) x.push(rng.randint(ALPHABET[task]));
  if (task === "copy") return [x, x.slice()];
  if (task === "reverse") return [x, x.slice().reverse()];
  if (task === "sort") return [x, x.slice().sort((a, b) => a - b)];
  const last = new Map(), y = [];
  x.forEach((s, t) => {
    y.push(last.has(s) ? x[last.get(s) + 1] : NONE);
    last.set(s, t);
  });
  return [x, y];
}

// Why `task` has no sequences of `length` (lib.playground._check_length), or null if it has.
export function lengthProblem(task, length) {
  if (!Number.isInteger(length) || length < 2 || length > MAX_LENGTH) {
    return `length: expected a whole number from 2 to ${MAX_LENGTH}, got ${length}`;
  }
  if (task === "brackets" && length % 2) return `length: brackets come in pairs, expected an even length, got ${length}`;
  if (task === "position" && length > VOCAB) {
    return `length: position's answers are positions, symbols 0 to ${VOCAB - 1}; expected at most ${VOCAB}, got ${length}`;
  }
  return null;
}

// batchSize sequences of task -> {x, y}: BigInt64Array [B * L] each (the graphs' int64 inputs).
// length: L, 8 for training; longer for a test (lib.playground.make_batch).
export function makeBatch(task, batchSize, rng, length = LENGTH) {
  if (!TASKS.includes(task)) throw new Error(`task: expected one of ${TASKS.join(", ")}, got ${task}`);
  const problem = lengthProblem(task, length);
  if (problem) throw new Error(problem);
  const L = length;
  const x = new BigInt64Array(batchSize * L), y = new BigInt64Array(batchSize * L);
  for (let b = 0; b < batchSize; b++) {
    const [xs, ys] = sequence(task, rng, L);
    for (let t = 0; t < L; t++) {
      x[b * L + t] = BigInt(xs[t]);
      y[b * L + t] = BigInt(ys[t]);
    }
  }
  return { x, y };
}

// How the page writes a symbol (lib.playground.symbols), and reads one back (null if not in the task).
export function symbol(task, id) {
  if (task === "brackets") return BRACKETS[Math.floor(id / 4)] + String(id % 4);
  return id === NONE ? "-" : String(id);
}

// How the page writes an answer: for brackets the answer is a digit (the partner's), not a bracket.
export function answerSymbol(task, id) {
  return task === "brackets" ? String(id) : symbol(task, id);
}

// Whether id is one of the task's answers; an untrained model may answer with any of the VOCAB ids.
export function isAnswer(task, id) {
  if (task === "brackets") return id >= 0 && id < 4;
  if (task === "position") return id >= 0 && id < VOCAB;
  return (id >= 0 && id < ALPHABET[task]) || (task === "induction" && id === NONE);
}

export function parseSequence(task, text) {
  const parts = text.trim().split(/[\s,]+/).filter((s) => s.length);
  const ids = [], bad = [];
  for (const p of parts) {
    let id = null;
    if (task === "brackets") {
      const m = /^([()[\]])([0-3])$/.exec(p);
      if (m) id = 4 * BRACKETS.indexOf(m[1]) + Number(m[2]);
    } else if (task === "position" && p === symbol(task, NONE)) {
      id = NONE;
    } else if (/^\d+$/.test(p) && Number(p) < ALPHABET[task]) {
      id = Number(p);
    }
    if (id === null) bad.push(p);
    else ids.push(id);
  }
  return { ids, bad };
}

// Initial weights as lib.playground.init_weights draws them (same order, same generator).
export function initWeights(params, seed, sinusoidal) {
  const rng = new Mulberry32(seed);
  return params.map((p) => {
    const n = p.shape.reduce((a, b) => a * b, 1);
    const w = new Float32Array(n);
    if (p.init === "uniform") for (let i = 0; i < n; i++) w[i] = (2 * rng.random() - 1) * p.bound;
    else if (p.init === "ones") w.fill(1);
    else if (p.init === "sinusoidal") w.set(sinusoidal(p.shape[0], p.shape[1]));
    return w;
  });
}

// The right answer for an input of the task (lib.playground.answer), or null if it is not one.
export function answer(task, x) {
  if (task === "brackets") {
    const y = new Array(x.length).fill(0), stack = [];
    for (let t = 0; t < x.length; t++) {
      const s = x[t];
      if (Math.floor(s / 4) % 2 === 0) stack.push(t);
      else if (!stack.length || Math.floor(x[stack[stack.length - 1]] / 8) !== Math.floor(s / 8)) return null;
      else {
        const start = stack.pop();
        y[start] = s % 4;
        y[t] = x[start] % 4;
      }
    }
    return stack.length ? null : y;
  }
  if (task === "position") {
    const valid = x[0] === NONE && x.slice(1).every((s) => s >= 0 && s < ALPHABET[task]);
    return valid ? x.map((_, t) => t) : null;
  }
  if (!(task in ALPHABET) || x.some((s) => s < 0 || s >= ALPHABET[task])) return null;
  if (task === "copy") return x.slice();
  if (task === "reverse") return x.slice().reverse();
  if (task === "sort") return x.slice().sort((a, b) => a - b);
  const last = new Map(), y = [];
  x.forEach((s, t) => {
    y.push(last.has(s) ? x[last.get(s) + 1] : NONE);
    last.set(s, t);
  });
  return y;
}
