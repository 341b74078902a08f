// The Playground's training worker: onnxruntime-web (WebAssembly, one thread) runs the exported
// training step (tools/export_playground.py: weights and Adam's state in, loss and new state out)
// again and again, so the page stays responsive. Where K or more steps remain before the next
// held-out check (or the end of a "step" request), one run of the K-step graph (the step unrolled K
// times: K batches in, K losses and the state after them out) does K steps, so a run's overhead
// (copying every weight and Adam's state in and out of WebAssembly) is paid once per K steps. The
// batches and initial weights come from tasks.js, equal to lib.playground's. Messages in: init,
// play, pause, step, probe, weights, unroll (for benchmarks/playground.py: k = 1, single steps only,
// as before the K-step graph; with bytes, another K-step graph, to compare values of K), time (for
// benchmarks/playground.py: run any graph of float inputs n times, e.g. the step's matrix products alone).
// Messages out: ready, progress, heldout, heldtest, probe, diverged, stopped, paused, weights, unrolled, timed,
// error. test: another test length for the same run (the answer: heldtest).
// The probe (the forward pass) takes its length as an input: 8 for the maps and the held-out accuracy,
// with `more` (the position vectors past the table's 8 rows) empty. A test length N beyond the training
// length 8 (config.testLength): every held-out check also runs the probe at 32 on 256 held-out
// sequences of length N, keys at N and beyond masked (tools/export_playground.py long_feeds), and
// "heldout" carries that accuracy as `test`.
import * as ort from "onnxruntime-web/wasm";
import { LENGTH, Mulberry32, VOCAB, initWeights, makeBatch } from "./tasks.js";

ort.env.wasm.numThreads = 1;
ort.env.wasm.proxy = false;
ort.env.wasm.wasmPaths = { wasm: new URL("ort-wasm-simd-threaded.wasm", import.meta.url).href };
ort.env.logLevel = "error";

const HELD_EVERY = 25; // held-out accuracy and the probe's attention every 25 steps
const DIVERGED = 3 * Math.log(16); // lib.playground.DIVERGED: three times the loss of a uniform guess
// run: {config, step, steps, K, probe, params, m, v, names, shapes, t, rng, held, playing}; params: one
// Float32Array per parameter; m, v: Adam's moments of every weight, one flat Float32Array each
// (lib.playground.train_step: the graph pays per operator, so Adam works on one vector)
let run = null;

function sinusoidal(rows, cols) {
  const out = new Float32Array(rows * cols); // lib.positional.sinusoidal_encoding
  for (let p = 0; p < rows; p++) {
    for (let j = 0; j < cols; j++) {
      const angle = p * 10000 ** (-(j - (j % 2)) / cols);
      out[p * cols + j] = j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  }
  return out;
}

// bool [T, T], True where query i may attend key j: causal or all, and only keys before `keys`.
function mask(causal, T = LENGTH, keys = T) {
  const m = new Uint8Array(T * T);
  for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) m[i * T + j] = (!causal || j <= i) && j < keys ? 1 : 0;
  return new ort.Tensor("bool", m, [T, T]);
}

// The held-out batch at the test length N, fed to the probe at length T as
// tools/export_playground.py long_feeds writes it: x padded with zeros to [B, T], the keys at N and
// beyond masked, `more` the position vectors past the table's 8 rows (sinusoidal's, else zeros).
function longTest(c, entry, heldOut) {
  const N = c.testLength, T = entry.test_length;
  const { x, y } = makeBatch(c.task, heldOut.size, new Mulberry32((c.seed ^ heldOut.salt) >>> 0), N);
  const padded = new BigInt64Array(heldOut.size * T);
  for (let b = 0; b < heldOut.size; b++) padded.set(x.subarray(b * N, (b + 1) * N), b * T);
  const D = entry.params.find((p) => p.name === "pos").shape[1];
  const more = c.positional === "sinusoidal" ? sinusoidal(T, D).subarray(LENGTH * D) : new Float32Array((T - LENGTH) * D);
  return { N, T, x: padded, y, mask: mask(c.causal, T, N), more: new ort.Tensor("float32", more, [T - LENGTH, D]) };
}

// One graph runs at a time: every session.run goes through this queue (a probe asked for while the
// model trains waits for the current step).
let queue = Promise.resolve();
function serial(fn) {
  const p = queue.then(fn);
  queue = p.catch(() => {});
  return p;
}

const scalar = (v) => new ort.Tensor("float32", new Float32Array([v]), []);

const session = (bytes, level = "all") => ort.InferenceSession.create(new Uint8Array(bytes),
  { executionProviders: ["wasm"], graphOptimizationLevel: level });

async function init(msg) {
  const [step, probe, steps] = await Promise.all([msg.stepBytes, msg.probeBytes, msg.stepsBytes]
    .map((b) => b ? session(b) : null));
  const c = msg.config;
  const D = msg.entry.params.find((p) => p.name === "pos").shape[1];
  const plan = msg.entry.params.map((p) => p.name !== "pos" ? p
    : { ...p, init: { learned: "uniform", sinusoidal: "sinusoidal" }[c.positional] || "zeros" });
  const params = initWeights(plan, c.seed, sinusoidal);
  const size = params.reduce((s, w) => s + w.length, 0);
  run = {
    config: c, step, steps, unroll: msg.entry.unroll, K: steps ? msg.entry.unroll : 1, probe,
    names: plan.map((p) => p.name), shapes: plan.map((p) => p.shape),
    params, m: new Float32Array(size), v: new Float32Array(size), t: 0, rng: new Mulberry32(c.seed),
    held: makeBatch(c.task, msg.heldOut.size, new Mulberry32((c.seed ^ msg.heldOut.salt) >>> 0)),
    mask: mask(c.causal), playing: false, none: new ort.Tensor("float32", new Float32Array(0), [0, D]),
    test: c.testLength > LENGTH ? longTest(c, msg.entry, msg.heldOut) : null, entry: msg.entry, heldOut: msg.heldOut,
  };
  return { type: "ready", parameters: size };
}

// The graph's inputs: extra, the parameters p0 .. pN-1 and, for a training step, m and v.
function feedsOf(extra, adam) {
  const feeds = { ...extra };
  run.params.forEach((w, i) => { feeds[`p${i}`] = new ort.Tensor("float32", w, run.shapes[i]); });
  if (adam) {
    feeds.m = new ort.Tensor("float32", run.m, [run.m.length]);
    feeds.v = new ort.Tensor("float32", run.v, [run.v.length]);
  }
  return feeds;
}

// k steps (1 or run.K) on k new batches: the step records of those trained, up to and including
// the first whose loss diverged (its update is not kept, and training stops there).
function steps(k) {
  return serial(() => stepsNow(k));
}

function stepFeeds(x, y, k, t) {
  const c = run.config;
  const dims = k === 1 ? [c.batch, LENGTH] : [k, c.batch, LENGTH];
  return feedsOf({
    x: new ort.Tensor("int64", x, dims), y: new ort.Tensor("int64", y, dims), lr: scalar(c.lr),
    step: scalar(t), train_pos: scalar(c.positional === "learned" ? 1 : 0), mask: run.mask,
  }, true);
}

const healthy = (loss) => Number.isFinite(loss) && loss <= DIVERGED;

function keep(out) {
  run.params = run.params.map((_, i) => out[`new_p${i}`].data);
  run.m = out.new_m.data;
  run.v = out.new_v.data;
}

async function stepsNow(k) {
  const c = run.config;
  const drawn = run.rng.state;
  if (k > 1) {
    const batches = Array.from({ length: k }, () => makeBatch(c.task, c.batch, run.rng));
    const size = c.batch * LENGTH;
    const x = new BigInt64Array(k * size), y = new BigInt64Array(k * size);
    batches.forEach((b, i) => { x.set(b.x, i * size); y.set(b.y, i * size); });
    const out = await run.steps.run(stepFeeds(x, y, k, run.t + 1));
    const losses = out.loss.data;
    if (losses.every(healthy)) {
      const records = Array.from(losses, (loss, i) => ({
        t: run.t + 1 + i, loss, tokenAcc: out.token_acc.data[i], seqAcc: out.seq_acc.data[i] }));
      run.t += k;
      keep(out);
      return records;
    }
    // one of the K diverged: the same batches again, one step at a time, to stop at that step with
    // the generator where single steps would have left it
    run.rng.state = drawn;
  }
  const records = [];
  for (let i = 0; i < k; i++) {
    const { x, y } = makeBatch(c.task, c.batch, run.rng);
    run.t += 1;
    const out = await run.step.run(stepFeeds(x, y, 1, run.t));
    const loss = out.loss.data[0];
    records.push({ t: run.t, loss, tokenAcc: out.token_acc.data[0], seqAcc: out.seq_acc.data[0] });
    if (!healthy(loss)) break;
    keep(out);
  }
  return records;
}

async function forward(x, batch) {
  const out = await serial(() => run.probe.run(feedsOf({ x: new ort.Tensor("int64", x, [batch, LENGTH]), mask: run.mask,
    more: run.none }, false)));
  return { logits: out.logits.data, attentions: out.attentions.data, dims: out.attentions.dims };
}

// Shares of positions and of sequences right: logits [n, T, V] read on their first N positions
// against y [n, N].
function accuracy(logits, y, n, N, T) {
  let tokens = 0, sequences = 0;
  for (let b = 0; b < n; b++) {
    let all = true;
    for (let t = 0; t < N; t++) {
      const row = logits.subarray((b * T + t) * VOCAB, (b * T + t + 1) * VOCAB);
      let best = 0;
      for (let v = 1; v < VOCAB; v++) if (row[v] > row[best]) best = v;
      const right = BigInt(best) === y[b * N + t];
      tokens += right;
      all = all && right;
    }
    sequences += all;
  }
  return { tokenAcc: tokens / (n * N), seqAcc: sequences / n };
}

async function heldOut() {
  const n = run.held.x.length / LENGTH;
  const { logits } = await forward(run.held.x, n);
  const out = { type: "heldout", t: run.t, ...accuracy(logits, run.held.y, n, LENGTH, LENGTH) };
  const test = run.test;
  if (test) {
    const got = await serial(() => run.probe.run(feedsOf({ x: new ort.Tensor("int64", test.x, [n, test.T]),
      mask: test.mask, more: test.more }, false), ["logits"])); // the maps are read at 8 only
    out.test = { length: test.N, ...accuracy(got.logits.data, test.y, n, test.N, test.T) };
  }
  return out;
}

// Another test length for the same model (the probe takes its length as an input): the held-out
// sequences at that length from now on, and the accuracy of the weights now on them ("heldtest"; no
// `test` at the training length).
async function retest(n) {
  run.config = { ...run.config, testLength: n };
  run.test = n > LENGTH ? longTest(run.config, run.entry, run.heldOut) : null;
  const out = { type: "heldtest", t: run.t, length: n };
  const test = run.test;
  if (test) {
    const size = test.y.length / test.N;
    const got = await serial(() => {
      out.t = run.t; // the weights evaluated: those after the step now done
      return run.probe.run(feedsOf({ x: new ort.Tensor("int64", test.x, [size, test.T]), mask: test.mask,
        more: test.more }, false), ["logits"]);
    });
    out.test = { length: test.N, ...accuracy(got.logits.data, test.y, size, test.N, test.T) };
  }
  return out;
}

async function probe(ids) {
  const x = BigInt64Array.from(ids.map(BigInt));
  const { logits, attentions, dims } = await forward(x, 1);
  const V = logits.length / LENGTH;
  const answer = [];
  for (let t = 0; t < LENGTH; t++) {
    const row = logits.subarray(t * V, (t + 1) * V);
    let best = 0;
    for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
    answer.push(best);
  }
  return { type: "probe", t: run.t, answer, attentions: Array.from(attentions), layers: dims[0], heads: dims[2] };
}

// Runs steps until paused (or n steps), posting progress in chunks so the page draws as it learns. A
// newer "play" or "step" takes over from a run of train still in progress (which then stops quietly):
// otherwise the older one, finishing, would switch the newer one off. Play (n null) also stops by
// itself ("stopped") at the next multiple of stop.budget steps, or once the held-out accuracies (token
// and sequence) have come out the same at stop.patience checks in a row since Play was pressed.
let trainer = 0;
async function train(n, probeIds, stop = null) {
  const me = ++trainer;
  run.playing = true;
  let done = 0;
  const target = stop && stop.budget ? (Math.floor(run.t / stop.budget) + 1) * stop.budget : Infinity;
  let same = 0;
  while (run.playing && trainer === me && (n === null || done < n)) {
    const start = performance.now();
    const chunk = [];
    while (performance.now() - start < 50 && trainer === me && (n === null || done < n)) {
      const left = Math.min(HELD_EVERY - (run.t % HELD_EVERY), n === null ? Infinity : n - done);
      const records = await steps(run.K > 1 && left >= run.K ? run.K : 1);
      chunk.push(...records);
      done += records.length;
      const s = records[records.length - 1];
      if (!healthy(s.loss)) {
        run.playing = false;
        self.postMessage({ type: "progress", steps: chunk });
        self.postMessage({ type: "diverged", t: s.t, loss: Number.isFinite(s.loss) ? s.loss.toFixed(1) : String(s.loss) });
        return;
      }
      if (run.t % HELD_EVERY === 0) break;
    }
    self.postMessage({ type: "progress", steps: chunk, ms: performance.now() - start });
    if (run.t % HELD_EVERY === 0 || !run.playing || (n !== null && done >= n)) {
      const held = await heldOut();
      self.postMessage(held);
      if (probeIds) self.postMessage(await probe(probeIds));
      if (stop && run.t % HELD_EVERY === 0 && trainer === me) {
        const last = run.lastHeld;
        same = last && last.tokenAcc === held.tokenAcc && last.seqAcc === held.seqAcc ? same + 1 : 0;
        run.lastHeld = held;
        const reason = run.t >= target ? "budget" : stop.patience && same >= stop.patience ? "plateau" : null;
        if (reason && run.playing) {
          run.playing = false;
          self.postMessage({ type: "stopped", t: run.t, reason, budget: stop.budget, patience: stop.patience,
            seqAcc: held.seqAcc, tokenAcc: held.tokenAcc });
          return;
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 0)); // let "pause" and "probe" in
  }
  if (trainer !== me) return;
  run.playing = false;
  self.postMessage({ type: "paused", t: run.t });
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    if (msg.type === "init") self.postMessage(await init(msg));
    else if (msg.type === "play") train(null, msg.probe, { budget: msg.budget, patience: msg.patience });
    else if (msg.type === "step") await train(msg.n || 1, msg.probe);
    else if (msg.type === "pause") { if (run) run.playing = false; }
    else if (msg.type === "probe") self.postMessage(await probe(msg.ids));
    else if (msg.type === "test") self.postMessage(await retest(msg.testLength));
    else if (msg.type === "unroll") { // benchmarks/playground.py: k = 1, single steps; bytes: another K-step graph
      if (msg.bytes) [run.steps, run.unroll] = [await session(msg.bytes), msg.k];
      run.K = msg.k > 1 && run.steps ? run.unroll : 1;
      self.postMessage({ type: "unrolled", k: run.K });
    }
    else if (msg.type === "time") { // benchmarks/playground.py: any graph of float inputs, run n times
      const graph = await session(msg.bytes, msg.level || "all");
      const feeds = Object.fromEntries(Object.entries(msg.shapes).map(([name, shape]) => {
        const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
        for (let i = 0; i < data.length; i++) data[i] = Math.sin(i); // any values: the time is the same
        return [name, new ort.Tensor("float32", data, shape)];
      }));
      const ms = []; // per run, timed over `chunk` runs (a worker's clock ticks in 0.1 ms)
      const chunk = msg.chunk || 1;
      for (let i = 0; i < msg.n; i++) {
        const t0 = performance.now();
        for (let j = 0; j < chunk; j++) await serial(() => graph.run(feeds));
        ms.push((performance.now() - t0) / chunk);
      }
      await graph.release();
      self.postMessage({ type: "timed", ms });
    }
    else if (msg.type === "weights") {
      self.postMessage({ type: "weights", names: run.names, shapes: run.shapes, data: run.params, t: run.t });
    } else throw new Error(`unknown message ${msg.type}`);
  } catch (err) {
    if (run) run.playing = false;
    self.postMessage({ type: "error", error: String(err && err.message ? err.message : err) });
  }
};
