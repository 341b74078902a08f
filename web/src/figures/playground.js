// The Attention Playground (issue 24): the reader trains a tiny Transformer in the page and watches its
// heads form. Training runs in a Web Worker (../playground/worker.js) on the training step exported from
// lib.playground; every setting and the seed live in the URL (#task=reverse&layers=1&...), so a link
// reproduces the run. The example drawn before Play is the same run computed by lib in the kernel.
import { colour, html } from "../draw.js";
import { LENGTH, TASKS, answer as rightAnswer, answerSymbol, parseSequence, symbol } from "../playground/tasks.js";

const CHOICES = {
  task: TASKS,
  layers: [1, 2],
  heads: [1, 2, 4],
  width: [16, 32, 64],
  pos: ["learned", "sinusoidal", "none"],
  mask: ["bidirectional", "causal"],
  lr: [0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 1],
  batch: [8, 16, 32, 64, 128],
};
const LABELS = { task: "task", layers: "layers", heads: "heads", width: "width", pos: "positions",
  mask: "attention", lr: "learning rate", batch: "batch", seed: "seed" };

// Settings from the URL, clamped: unknown keys and values out of range are reported, never used.
export function readSettings(hash, defaults) {
  const settings = { ...defaults };
  const problems = [];
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  for (const [key, raw] of params) {
    if (key === "seed") {
      const v = Number(raw);
      if (Number.isInteger(v) && v >= 0 && v <= 4294967295) settings.seed = v;
      else problems.push(`seed=${raw} (a whole number from 0 to 4294967295): kept ${settings.seed}`);
    } else if (key in CHOICES) {
      const options = CHOICES[key];
      const v = typeof options[0] === "number" ? Number(raw) : raw;
      if (options.includes(v)) settings[key] = v;
      else problems.push(`${key}=${raw} (one of ${options.join(", ")}): kept ${settings[key]}`);
    } else if (key !== "probe") {
      problems.push(`${key} (not a setting): ignored`);
    } else {
      settings.probe = raw;
    }
  }
  return { settings, problems };
}

export function writeSettings(s) {
  const keys = ["task", "layers", "heads", "width", "pos", "mask", "lr", "batch", "seed"];
  return "#" + keys.map((k) => `${k}=${encodeURIComponent(s[k])}`).join("&");
}

function safetensors(names, shapes, arrays, meta) {
  let offset = 0;
  const header = { __metadata__: meta };
  names.forEach((n, i) => {
    header[n] = { dtype: "F32", shape: shapes[i], data_offsets: [offset, offset + arrays[i].byteLength] };
    offset += arrays[i].byteLength;
  });
  let text = JSON.stringify(header);
  text += " ".repeat((8 - (text.length % 8)) % 8);
  const head = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += a.byteLength;
  }
  return out;
}

function curve(svg, series, width, height) {
  svg.innerHTML = "";
  const NS = "http://www.w3.org/2000/svg";
  const n = Math.max(2, ...series.map((s) => s.points.length ? s.points[s.points.length - 1][0] : 0));
  for (const s of series) {
    const path = document.createElementNS(NS, "polyline");
    const pts = s.points.map(([x, y]) => `${(x / n) * width},${height - s.scale(y) * height}`);
    path.setAttribute("points", pts.join(" "));
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", s.colour);
    path.setAttribute("stroke-width", "2");
    svg.appendChild(path);
  }
}

export function mountPlayground(root, example, ctx) {
  const { settings, problems } = readSettings(location.hash, example.defaults);
  const form = html("div", { class: "book-live-controls book-pg-controls" }, root);
  const inputs = {};
  for (const key of Object.keys(LABELS)) {
    const wrap = html("label", {}, form, `${LABELS[key]} `);
    if (key === "seed") {
      inputs.seed = html("input", { type: "number", min: 0, max: 4294967295, step: 1, value: settings.seed,
        style: "width: 7em", "aria-label": "seed" }, wrap);
    } else {
      const sel = html("select", { "aria-label": LABELS[key], class: `book-pg-${key}` }, wrap);
      for (const v of CHOICES[key]) html("option", { value: String(v) }, sel, String(v));
      sel.value = String(settings[key]);
      inputs[key] = sel;
    }
  }
  const buttons = html("div", { class: "book-live-controls" }, root);
  const play = html("button", { type: "button", class: "book-live-button book-pg-play" }, buttons, "Play");
  const stepBtn = html("button", { type: "button", class: "book-live-button book-pg-step" }, buttons, "One step");
  const reset = html("button", { type: "button", class: "book-live-button book-pg-reset" }, buttons, "Reset");
  const save = html("button", { type: "button", class: "book-live-button book-pg-save" }, buttons, "Download weights");
  const probeWrap = html("label", {}, root, "probe sequence ");
  const probeBox = html("input", { type: "text", class: "book-pg-probe", size: 30, "aria-label": "probe sequence",
    value: settings.probe || example.probes[settings.task] }, probeWrap);
  const answer = html("p", { class: "book-pg-answer", "aria-live": "polite" }, root);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "book-pg-curve");
  svg.setAttribute("viewBox", "0 0 400 120");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "training loss (orange) and held-out sequence accuracy (blue) against steps");
  svg.style.width = "100%";
  svg.style.maxWidth = "520px";
  root.appendChild(svg);
  const stats = html("p", { class: "book-pg-stats", "aria-live": "polite" }, root);
  const maps = html("div", { class: "book-pg-maps" }, root);
  if (problems.length) ctx.message(root, `Settings from the link changed: ${problems.join("; ")}.`, "warning");

  const state = { worker: null, ready: null, losses: [], held: [], t: 0, playing: false, diverged: false };
  root.playground = state; // the run, for the browser tests and curious readers

  function current() {
    const s = {};
    for (const key of Object.keys(LABELS)) s[key] = key === "seed" ? Number(inputs.seed.value) : inputs[key].value;
    for (const key of ["layers", "heads", "width", "lr", "batch"]) s[key] = Number(s[key]);
    return s;
  }

  function drawCurve() {
    const maxLoss = Math.max(1e-9, ...state.losses.map((p) => p[1]).filter(Number.isFinite));
    curve(svg, [
      { points: state.losses.filter((p) => Number.isFinite(p[1])), scale: (y) => y / maxLoss, colour: "#e8710a" },
      { points: state.held, scale: (y) => y, colour: "#1f77b4" },
    ], 400, 120);
    const last = state.losses[state.losses.length - 1];
    const held = state.held[state.held.length - 1];
    stats.textContent = last ? `step ${last[0]}: loss ${last[1].toFixed(4)}` +
      (held ? `, held-out sequences right ${(100 * held[1]).toFixed(1)}%` : "") : "";
    root.dataset.steps = String(state.t);
  }

  function drawMaps(msg, ids) {
    maps.innerHTML = "";
    const s = current();
    const labels = ids.map((i) => symbol(s.task, i));
    for (let l = 0; l < msg.layers; l++) {
      for (let h = 0; h < msg.heads; h++) {
        const box = html("figure", { class: "book-pg-map" }, maps);
        const cell = 16;
        const canvas = html("canvas", { width: LENGTH * cell, height: LENGTH * cell, role: "img" }, box);
        const g = canvas.getContext("2d");
        const rows = [];
        for (let i = 0; i < LENGTH; i++) {
          const row = [];
          for (let j = 0; j < LENGTH; j++) {
            const w = msg.attentions[(l * msg.heads + h) * LENGTH * LENGTH + i * LENGTH + j];
            row.push(w);
            g.fillStyle = colour(w);
            g.fillRect(j * cell, i * cell, cell, cell);
          }
          const top = row.indexOf(Math.max(...row));
          rows.push(`${labels[i]} -> ${labels[top]} (${row[top].toFixed(2)})`);
        }
        canvas.setAttribute("aria-label", `layer ${l}, head ${h}: each query's strongest key: ${rows.join(", ")}`);
        html("figcaption", {}, box, `layer ${l}, head ${h}`);
      }
    }
    const right = rightAnswer(s.task, ids);
    const wrong = right ? msg.answer.filter((a, t) => a !== right[t]).length : null;
    answer.textContent = `input ${labels.join(" ")}  ->  model's answer ${msg.answer.map((a) => answerSymbol(s.task, a)).join(" ")}` +
      (right ? `; right answer ${right.map((a) => answerSymbol(s.task, a)).join(" ")} (${wrong ? `${wrong} wrong` : "all right"})` : "");
    root.dataset.answer = msg.answer.join(",");
  }

  function probeIds() {
    const task = current().task;
    const { ids, bad } = parseSequence(task, probeBox.value);
    if (bad.length || ids.length !== LENGTH) {
      ctx.message(root, `The probe needs ${LENGTH} symbols of this task` +
        (bad.length ? `; not in its alphabet: ${bad.join(" ")}` : `; got ${ids.length}`) + ".", "warning");
      return null;
    }
    if (!rightAnswer(task, ids)) {
      ctx.message(root, task === "brackets" ? "The brackets of the probe do not nest: each ( closes with ), each [ with ]."
        : "The probe of this task is the start symbol - and then 7 digits.", "warning");
      return null;
    }
    return ids;
  }

  async function start() {
    if (typeof WebAssembly === "undefined" || typeof Worker === "undefined") {
      throw new Error("this browser has no WebAssembly or no Web Workers, which the Playground needs; " +
        "the picture above is the same run computed by the library");
    }
    const s = current();
    history.replaceState(null, "", writeSettings(s));
    const manifest = await (await fetch(new URL("playground/manifest.json", ctx.base))).json();
    const entry = manifest.models[`L${s.layers}-H${s.heads}-D${s.width}`];
    const bytes = await Promise.all([entry.step, entry.probe, entry.steps].map(async (f) =>
      (await fetch(new URL(`playground/${f}`, ctx.base))).arrayBuffer()));
    if (state.worker) state.worker.terminate();
    const worker = new Worker(new URL("playground_worker.js", ctx.base), { type: "module" });
    state.worker = worker;
    state.losses = [];
    state.held = [];
    state.t = 0;
    state.diverged = false;
    worker.onmessage = (event) => on(event.data);
    worker.onerror = (event) => fail(event.message || "the training worker failed");
    await new Promise((resolve, reject) => {
      state.onReady = resolve;
      state.onError = reject;
      worker.postMessage({ type: "init", config: { task: s.task, positional: s.pos, causal: s.mask === "causal",
        lr: s.lr, batch: s.batch, seed: s.seed }, entry, heldOut: manifest.held_out,
        stepBytes: bytes[0], probeBytes: bytes[1], stepsBytes: bytes[2] }, bytes);
    });
    root.dataset.run = "ready"; // a run is loaded in the worker (dataset.state stays "computed")
  }

  function fail(text) {
    state.playing = false;
    play.textContent = "Play";
    root.dataset.state = "error";
    ctx.message(root, text, "error");
    if (state.onError) state.onError(new Error(text));
  }

  function on(msg) {
    if (msg.type === "ready") state.onReady();
    else if (msg.type === "progress") {
      for (const s of msg.steps) state.losses.push([s.t, s.loss]);
      state.t = msg.steps.length ? msg.steps[msg.steps.length - 1].t : state.t;
      drawCurve();
    } else if (msg.type === "heldout") {
      state.held.push([msg.t, msg.seqAcc]);
      root.dataset.heldout = String(msg.seqAcc);
      drawCurve();
    } else if (msg.type === "probe") {
      const ids = probeIds();
      if (ids) drawMaps(msg, ids);
    } else if (msg.type === "diverged") {
      state.diverged = true;
      state.playing = false;
      play.textContent = "Play";
      root.dataset.state = "diverged";
      ctx.message(root, `Training stopped at step ${msg.t}: the loss became ${msg.loss}, more than three ` +
        "times that of a uniform guess (8.3). " +
        "The learning rate is too large for this model; choose a smaller one and press Reset.", "error");
    } else if (msg.type === "paused") {
      state.playing = false;
      play.textContent = "Play";
    } else if (msg.type === "weights") {
      const blob = new Blob([safetensors(msg.names, msg.shapes, msg.data,
        { ...Object.fromEntries(Object.entries(current()).map(([k, v]) => [k, String(v)])), step: String(msg.t) })]);
      const a = html("a", { href: URL.createObjectURL(blob), download: "playground.safetensors" }, root);
      a.click();
      a.remove();
    } else if (msg.type === "error") fail(`The Playground stopped: ${msg.error}`);
  }

  async function ensure() {
    if (!state.ready) state.ready = start().catch((err) => { state.ready = null; fail(err.message); throw err; });
    return state.ready;
  }

  async function resetRun() {
    if (state.worker) state.worker.terminate();
    if (root.dataset.state !== "computed") root.dataset.state = "computed"; // a new run clears an error
    state.worker = null;
    state.ready = null;
    root.dataset.run = "";
    state.playing = false;
    play.textContent = "Play";
    ctx.message(root, "", "info");
    history.replaceState(null, "", writeSettings(current()));
    await ensure();
    drawCurve();
    const ids = probeIds();
    if (ids) state.worker.postMessage({ type: "probe", ids });
  }

  play.addEventListener("click", async () => {
    await ensure();
    if (state.diverged) return;
    state.playing = !state.playing;
    play.textContent = state.playing ? "Pause" : "Play";
    state.worker.postMessage(state.playing ? { type: "play", probe: probeIds() } : { type: "pause" });
  });
  stepBtn.addEventListener("click", async () => {
    await ensure();
    if (!state.diverged && !state.playing) state.worker.postMessage({ type: "step", n: 1, probe: probeIds() });
  });
  reset.addEventListener("click", () => resetRun().catch(() => {}));
  save.addEventListener("click", async () => {
    await ensure();
    state.worker.postMessage({ type: "weights" });
  });
  for (const key of Object.keys(inputs)) inputs[key].addEventListener("change", () => {
    if (key === "task") probeBox.value = example.probes[inputs.task.value];
    resetRun().catch(() => {});
  });
  probeBox.addEventListener("change", () => {
    const ids = probeIds();
    if (ids && state.worker) {
      ctx.message(root, "", "info");
      state.worker.postMessage({ type: "probe", ids });
    }
  });
  // Before the reader presses anything: the run the library computed in the kernel. The figure shows
  // computed results from now on (dataset.state, as every live figure); dataset.run says whether a
  // run is loaded in the worker.
  root.dataset.state = "computed";
  // A link may ask for other settings than the chapter's run: then neither the run's curve nor the
  // chapter's caption describes what the controls show, and the figure says so.
  const other = Object.keys(example.defaults).filter((k) => String(settings[k]) !== String(example.defaults[k]));
  if (other.length) {
    const change = other.map((k) => `${LABELS[k] || k} ${settings[k]} (the chapter's: ${example.defaults[k]})`).join(", ");
    stats.textContent = `The link's settings differ from the chapter's run: ${change}. No step yet: press Play to train them here.`;
    const caption = root.querySelector(".book-live-caption");
    if (caption) html("span", { class: "book-pg-caption-note" }, caption, " (This caption describes the chapter's run, not the link's settings.)");
    root.dataset.example = "other";
    return;
  }
  state.losses = example.history.map((loss, i) => [i + 1, loss]);
  state.held = example.held_out;
  drawCurve();
  stats.textContent += " (computed by the library when the book was built; press Play to train here)";
  root.dataset.example = "chapter";
}
