// The Attention Playground (issue 24): the reader trains a tiny Transformer in the page and watches its
// heads form. Training runs in a Web Worker (../playground/worker.js) on the training step exported from
// lib.playground; every setting and the seed live in the URL (#task=reverse&layers=1&...), so a link
// reproduces the run. The example drawn before Play is the same run computed by lib in the kernel: its
// curves and its attention maps on the probe. Play trains until a step budget (the example run's
// length, again on each Play) or until the held-out accuracy has stopped changing (PATIENCE checks in a row), and says which.
// A test length beyond the training length 8 adds a second held-out curve: the same model on longer held-out
// sequences (issue 32). Not every combination is exported (tools/export_playground.py): RoPE and ALiBi at
// width 32 only, no test length for learned positions (no vector past position 7), RMSNorm and fewer
// key/value heads than heads (grouped-query attention, chapter 17) at 2 layers, 4 heads, width 32 only,
// RMSNorm alone or 2 key/value heads alone with a position table, both with RoPE (chapter 17's layer); the
// form disables what is not offered and says why (notOffered, reconcile).
import { colour, el, html } from "../draw.js";
import { LENGTH, TASKS, VOCAB, answer as rightAnswer, answerSymbol, isAnswer, lengthProblem, parseSequence, symbol }
  from "../playground/tasks.js";

const CHOICES = {
  task: TASKS,
  layers: [1, 2],
  heads: [1, 2, 4],
  kv: [1, 2, 4],
  width: [16, 32, 64],
  pos: ["learned", "sinusoidal", "none", "rope", "alibi"],
  norm: ["layernorm", "rmsnorm"],
  mask: ["bidirectional", "causal"],
  lr: [0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 1],
  batch: [8, 16, 32, 64, 128],
  test: [8, 16, 32],
};
const LABELS = { task: "task", layers: "layers", heads: "heads", kv: "key/value heads", width: "width",
  pos: "positions", norm: "norm", mask: "attention", lr: "learning rate", batch: "batch", seed: "seed",
  test: "test length" };
// What tools/export_playground.py exports (IN_ATTENTION_SIZES, TEST_LENGTHS, MODERN_SIZE, MODERN;
// tests/test_playground.py holds the two equal): RoPE and ALiBi have graphs at width 32 only; RMSNorm and
// fewer key/value heads at one size, as three sets [norm, kv, positions] ("learned": every table kind);
// every test length.
export const OFFER = { inAttention: ["rope", "alibi"], inAttentionWidths: [32], testLengths: [16, 32],
  modern: { layers: 2, heads: 4, width: 32,
    sets: [["rmsnorm", 4, "learned"], ["layernorm", 2, "learned"], ["rmsnorm", 2, "rope"]] } };
const NAMES = { rope: "RoPE", alibi: "ALiBi" };
const MODERN_SIZE = ["layers", "heads", "width"];

// The settings change the Transformer's layer (chapter 17): RMSNorm, or fewer key/value heads than heads.
export const modern = (s) => s.norm === "rmsnorm" || s.kv !== s.heads;
const modernName = (s) => [s.norm === "rmsnorm" ? "RMSNorm" : null,
  s.kv !== s.heads ? `${s.kv} key/value head${s.kv === 1 ? "" : "s"} for ${s.heads} heads` : null]
  .filter(Boolean).join(" and ");
const TABLES = ["learned", "sinusoidal", "none"]; // one graph serves every table kind
const modernSet = (norm, kv) => OFFER.modern.sets.find(([n, k]) => n === norm && k === kv);
const offeredModern = (norm, kv) => Boolean(modernSet(norm, kv));
// The positions the set of (norm, kv) is exported with.
const modernPositions = (norm, kv) => (modernSet(norm, kv)[2] === "learned" ? TABLES : [modernSet(norm, kv)[2]]);
const modernWhere = (s) => {
  const m = OFFER.modern;
  const pos = offeredModern(s.norm, s.kv) && modernPositions(s.norm, s.kv).includes("rope")
    ? "with RoPE only (chapter 17's layer)" : "with a position table only (learned, sinusoidal or none)";
  return `in the browser, such models come at ${m.layers} layers, ${m.heads} heads, width ${m.width} only (the book's ` +
    `small Llama's shape, chapter 17), ${pos}: each combination needs a training program of its own, and the ` +
    "book ships three (RMSNorm, 2 key/value heads, both with RoPE)";
};

// The manifest's name of the graphs the settings s train (tools/export_playground.py key).
export function graphKey(s) {
  return `L${s.layers}-H${s.heads}-D${s.width}` + (OFFER.inAttention.includes(s.pos) ? `-${s.pos}` : "") +
    (s.norm === "rmsnorm" ? "-rmsnorm" : "") + (s.kv !== s.heads ? `-kv${s.kv}` : "");
}

// Why each value of each setting is not offered with the other settings of s: {key: {value: why}}.
export function notOffered(s) {
  const out = { layers: {}, heads: {}, kv: {}, width: {}, pos: {}, norm: {}, test: {} };
  for (const k of CHOICES.kv) {
    if (k > s.heads || s.heads % k) {
      out.kv[k] = `each key/value head serves the same number of query heads: with ${s.heads} ` +
        `head${s.heads === 1 ? "" : "s"}, choose a divisor of ${s.heads}`;
    } else if (k !== s.heads && !offeredModern(s.norm, k)) {
      const m = OFFER.modern;
      const kvs = [...new Set(m.sets.map(([, kv]) => kv).filter((kv) => kv !== m.heads))];
      out.kv[k] = `${k} key/value head${k === 1 ? "" : "s"} for ${s.heads} heads is not available in the ` +
        `browser: fewer key/value heads than heads come as ${kvs.join(" or ")} for ${m.heads} heads only (each ` +
        "combination needs a training program of its own, and the book ships a few)";
    }
  }
  if (modern(s)) {
    for (const key of MODERN_SIZE) {
      for (const v of CHOICES[key]) {
        if (v !== OFFER.modern[key]) out[key][v] = `${modernName(s)}: ${modernWhere(s)}`;
      }
    }
    if (offeredModern(s.norm, s.kv)) {
      for (const p of CHOICES.pos) {
        if (!modernPositions(s.norm, s.kv).includes(p)) out.pos[p] = `${modernName(s)}: ${modernWhere(s)}`;
      }
    }
  }
  if (OFFER.inAttention.includes(s.pos)) {
    for (const w of CHOICES.width) {
      if (!OFFER.inAttentionWidths.includes(w)) out.width[w] = `in the browser, ${NAMES[s.pos]} models come in ` +
        `width ${OFFER.inAttentionWidths.join(", ")} only (each size needs a training program of its own, and the ` +
        "book ships a few)";
    }
  }
  for (const n of CHOICES.test) {
    if (n === LENGTH) continue;
    if (s.pos === "learned") out.test[n] = `learned positions have a table of ${LENGTH} rows and no vector for ` +
      `position ${LENGTH} and beyond, so a model with them cannot read a longer sequence: choose sinusoidal, none, ` +
      "RoPE or ALiBi to test at a longer length";
    else if (lengthProblem(s.task, n)) {
      out.test[n] = lengthReason(s.task, n);
    }
  }
  return out;
}

// Why the task has no sequences of length n, said of the task (not of the value asked for: the form
// may show another, e.g. 8 after a change to the position task replaced 32).
function lengthReason(task, n) {
  if (task === "position") {
    return `the position task answers with positions, symbols 0 to ${VOCAB - 1}, so its sequences are at most ` +
      `${VOCAB} long`;
  }
  if (task === "brackets" && n % 2) return "the brackets task's sequences come in pairs, so their lengths are even";
  return `the ${task} task has no sequences of ${n}: ${lengthProblem(task, n).replace(/^length: /, "").replace(/, got \d+$/, "")}`;
}

// s with every setting that is not offered replaced (width by 32, a test length by 8; RMSNorm or fewer
// key/value heads move the size to theirs), and what changed.
export function reconcile(s) {
  const out = { ...s };
  const notes = [];
  if (out.kv > out.heads || out.heads % out.kv) {
    const why = notOffered(out).kv[out.kv];
    notes.push(`key/value heads ${out.kv} is not offered: ${why}; key/value heads set to ${out.heads}`);
    out.kv = out.heads;
  }
  if (out.kv !== out.heads && !offeredModern(out.norm, out.kv)) {
    notes.push(`key/value heads ${out.kv} is not offered: ${notOffered(out).kv[out.kv]}; key/value heads set to ${out.heads}`);
    out.kv = out.heads;
  }
  if (modern(out)) {
    const m = OFFER.modern;
    const mha = out.kv === out.heads;
    const moved = MODERN_SIZE.filter((k) => out[k] !== m[k]);
    if (moved.length) {
      for (const k of moved) out[k] = m[k];
      if (mha) out.kv = out.heads;
      notes.push(`${modernName(out)}: ${modernWhere(out)}; ` +
        moved.map((k) => `${LABELS[k]} set to ${m[k]}`).join(", "));
    }
    const positions = modernPositions(out.norm, out.kv);
    if (!positions.includes(out.pos)) {
      notes.push(`positions ${out.pos} are not offered with ${modernName(out)}: ${modernWhere(out)}; ` +
        `positions set to ${positions[0]}`);
      out.pos = positions[0];
    }
  }
  const no = notOffered(out);
  if (no.width[out.width]) {
    notes.push(`width ${out.width} is not offered with ${NAMES[out.pos]}: ${no.width[out.width]}; width set to ${OFFER.inAttentionWidths[0]}`);
    out.width = OFFER.inAttentionWidths[0];
  }
  if (no.test[out.test]) {
    notes.push(`test length ${out.test} is not offered: ${no.test[out.test]}; test length set to ${LENGTH}`);
    out.test = LENGTH;
  }
  return { settings: out, notes };
}

// Settings from the URL, clamped: unknown keys and values out of range are reported, never used; a
// combination that is not offered (reconcile) is changed and reported.
export function readSettings(hash, defaults) {
  const settings = { test: LENGTH, norm: "layernorm", ...defaults };
  const problems = [];
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  if (settings.kv === undefined) settings.kv = settings.heads; // multi-head attention where none is named
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
      // a link that names heads and no key/value heads: as many as heads (multi-head attention)
      if (key === "heads" && !params.has("kv") && options.includes(v)) settings.kv = v;
    } else if (key !== "probe") {
      problems.push(`${key} (not a setting): ignored`);
    } else {
      settings.probe = raw;
    }
  }
  const { settings: offered, notes } = reconcile(settings);
  return { settings: offered, problems: problems.concat(notes) };
}

export function writeSettings(s) {
  const keys = ["task", "layers", "heads", "kv", "width", "pos", "norm", "mask", "lr", "batch", "seed", "test"];
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

const LOSS = "#e8710a"; // the training loss (left axis), as lib.viz.playground draws it
const HELD = "#1f77b4"; // held-out sequences right (right axis)
const TEST = "#9e3d9e"; // held out at the test length (right axis, dashed)
// The previous run's held-out curves, drawn over this run's: length 8 in dark grey dots, the test length in
// black long dashes, both with round caps, on one 13 px period (the dashes first, the dots in their gaps),
// so that where the two lie at the same value (both at 100%) the line shows dash, dot, dash.
const PREV_HELD_COLOUR = "#666";
const PREV_TEST_COLOUR = "#000";
const PREV_HELD = { stroke: PREV_HELD_COLOUR, "stroke-width": 3.5, "stroke-dasharray": "0 13",
  "stroke-dashoffset": -10, "stroke-linecap": "round" };
const PREV_TEST = { stroke: PREV_TEST_COLOUR, "stroke-width": 2, "stroke-dasharray": "6 7", "stroke-linecap": "round" };
const PREV_INSET = 3; // px: a previous curve at 0% (or 100%) is drawn this far inside the frame, not on its line
const CURVES = "training loss (orange, left axis) and held-out sequences right (blue, right axis, %) against steps";
// The previous run's label: the settings in which it differs from those now chosen ("positions ALiBi").
export function prevLabel(was, now) {
  const shown = (k, v) => (k === "pos" ? NAMES[v] || v : v);
  const keys = Object.keys(LABELS).filter((k) => String(was[k]) !== String(now[k]));
  return keys.length ? keys.map((k) => `${LABELS[k]} ${shown(k, was[k])}`).join(", ") : "the same settings";
}
export const BUDGET = 300; // steps per Play where the example has no run (else its run's length: 300 or 400)
export const PATIENCE = 6; // held-out checks (every 25 steps) with the same accuracy before Play stops

// About n round tick values from 0 to at least max: [0, s, 2s, ...] with s = 1, 2 or 5 times 10^k.
export function ticks(max, n = 4) {
  const raw = Math.max(max, 1e-9) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let k = 0; k * step < max - 1e-9 * step || k === 0; k++) out.push(k * step);
  out.push(out.length * step);
  return out.map((v) => Number(v.toPrecision(6)));
}

// The frame, the step ticks below, the loss ticks (left) and accuracy ticks (right, %), and the labels.
function drawAxes({ g, text, X, YL, YR, m, w, h }, xs, ys, width, height) {
  el("rect", { x: m.left, y: m.top, width: w, height: h, fill: "none", stroke: "#999" }, g);
  xs.forEach((t) => {
    el("line", { x1: X(t), x2: X(t), y1: m.top + h, y2: m.top + h + 4, stroke: "#777" }, g);
    text(X(t), m.top + h + 16, String(t), { "text-anchor": "middle", class: "book-pg-xtick" });
  });
  ys.forEach((v) => {
    el("line", { x1: m.left - 4, x2: m.left, y1: YL(v), y2: YL(v), stroke: LOSS }, g);
    el("line", { x1: m.left, x2: m.left + w, y1: YL(v), y2: YL(v), stroke: "#999", "stroke-opacity": 0.3 }, g);
    text(m.left - 6, YL(v) + 4, String(v), { "text-anchor": "end", class: "book-pg-ytick" });
  });
  [0, 0.25, 0.5, 0.75, 1].forEach((v) => {
    el("line", { x1: m.left + w, x2: m.left + w + 4, y1: YR(v), y2: YR(v), stroke: HELD }, g);
    text(m.left + w + 6, YR(v) + 4, `${100 * v}`, { class: "book-pg-y2tick" });
  });
  text(m.left + w / 2, height - 6, "step", { "text-anchor": "middle", class: "book-pg-xlabel" });
  const yl = m.top + h / 2;
  text(12, yl, "loss", { "text-anchor": "middle", transform: `rotate(-90 12 ${yl})`, class: "book-pg-ylabel" });
  const x2 = width - 8;
  text(x2, yl, "held-out right (%)", { "text-anchor": "middle", transform: `rotate(90 ${x2} ${yl})`,
    class: "book-pg-y2label" });
}

// The previous run's held-out curves, grey dots and black dashes, drawn over this run's and over the loss
// (see PREV_HELD). Their settings and end values are in the legend above the chart (legend's prev), not
// written inside the plot, where they covered the curves.
function drawPrevious({ g, X, YR, m, h }, prev) {
  const Y = (v) => Math.min(m.top + h - PREV_INSET, Math.max(m.top + PREV_INSET, YR(v)));
  const line = (pts) => pts.map(([t, v]) => `${X(t).toFixed(1)},${Y(v).toFixed(1)}`).join(" ");
  if (prev.held.length) {
    el("polyline", { points: line(prev.held), fill: "none", ...PREV_HELD, class: "book-pg-prev-held" }, g);
  }
  if (prev.heldTest.length) {
    el("polyline", { points: line(prev.heldTest), fill: "none", ...PREV_TEST, class: "book-pg-prev-held-test" }, g);
  }
}

// This run's loss (left axis), held-out accuracy (wide, with dots) and test-length accuracy (dashed).
function drawCurves({ g, X, YL, YR }, finite, held, heldTest) {
  if (finite.length) {
    el("polyline", { points: finite.map(([t, v]) => `${X(t).toFixed(1)},${YL(v).toFixed(1)}`).join(" "),
      fill: "none", stroke: LOSS, "stroke-width": 2, class: "book-pg-loss" }, g);
  }
  if (held.length) {
    el("polyline", { points: held.map(([t, v]) => `${X(t).toFixed(1)},${YR(v).toFixed(1)}`).join(" "),
      fill: "none", stroke: HELD, "stroke-width": 5, class: "book-pg-held" }, g);
    // wide, under the thin dashed curve of the test length: both show where they coincide (at 100%)
    for (const [t, v] of held) el("circle", { cx: X(t), cy: YR(v), r: 4, fill: HELD }, g);
  }
  if (heldTest.length) {
    el("polyline", { points: heldTest.map(([t, v]) => `${X(t).toFixed(1)},${YR(v).toFixed(1)}`).join(" "),
      fill: "none", stroke: TEST, "stroke-width": 1.5, "stroke-dasharray": "5 3", class: "book-pg-held-test" }, g);
    for (const [t, v] of heldTest) el("rect", { x: X(t) - 2.5, y: YR(v) - 2.5, width: 5, height: 5, fill: TEST }, g);
  }
}

// The loss (left axis) and held-out sequence accuracy (right axis, %) against steps, in an SVG drawn
// at the width it is shown (width CSS px; text at 11 px, 13 below 400 px: a phone's). The legend is HTML,
// above it (it wraps on a phone). heldTest: the held-out accuracy at the test length, dashed. prev: the
// previous run's held-out curves {held, heldTest, label}, drawn over this run's and labelled, or null.
export function chart(svg, losses, held, width, heldTest = [], prev = null) {
  const height = 200;
  const m = { left: 48, right: 48, top: 10, bottom: 40 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  svg.replaceChildren();
  for (const [k, v] of Object.entries({ width, height, viewBox: `0 0 ${width} ${height}` })) svg.setAttribute(k, v);
  const finite = losses.filter((p) => Number.isFinite(p[1]));
  const before = prev ? [...prev.held, ...prev.heldTest] : [];
  const lastStep = Math.max(0, ...finite.map((p) => p[0]), ...held.map((p) => p[0]), ...heldTest.map((p) => p[0]),
    ...before.map((p) => p[0]));
  const xs = ticks(Math.max(lastStep, 10), width < 400 ? 3 : 5);
  // no step yet: the scale of a first step's loss (a uniform guess over 16 symbols: ln 16 = 2.8)
  const ys = ticks(finite.length ? Math.max(1e-3, ...finite.map((p) => p[1])) : Math.log(16), 4);
  const X = (t) => m.left + (t / xs[xs.length - 1]) * w;
  const YL = (v) => m.top + h - (v / ys[ys.length - 1]) * h;
  const YR = (v) => m.top + h - v * h;
  // 13 px on a phone: its ticks and titles at 11 read at the edge of legibility (a reader, s24)
  const g = el("g", { "font-size": width < 400 ? 13 : 11, "font-family": "sans-serif", fill: "currentColor" }, svg);
  const text = (x, y, s, attrs = {}) => {
    const t = el("text", { x, y, ...attrs }, g);
    t.textContent = s;
    return t;
  };
  const f = { g, text, X, YL, YR, m, w, h };
  drawAxes(f, xs, ys, width, height);
  drawCurves(f, finite, held, heldTest);
  if (prev) drawPrevious(f, prev);
  if (!finite.length && !held.length && !before.length) {
    text(m.left + w / 2, m.top + h / 2, "no step yet", { "text-anchor": "middle", fill: "#777" });
  }
  svg.dataset.xticks = JSON.stringify(xs);
  svg.dataset.yticks = JSON.stringify(ys);
}

// The legend; pg.legendTest(n) shows the test-length curve's entry (n > 8) or hides it; pg.legendPrev(prev)
// the previous run's entry, with the last values of its curves ({held, heldTest, label}), or hides it (null).
function legend(parent) {
  const box = html("div", { class: "book-pg-legend" }, parent);
  const items = [];
  for (const [stroke, text, dot] of [[LOSS, "training loss (left axis)", false],
    [HELD, `held-out sequences right, % (right axis; length ${LENGTH}, checked every 25 steps)`, "circle"],
    [TEST, "", "square"]]) {
    const item = html("span", { class: "book-pg-legend-item" }, box);
    const key = el("svg", { width: 26, height: 12, "aria-hidden": "true" }, item);
    el("line", { x1: 1, x2: 25, y1: 6, y2: 6, stroke, "stroke-width": 2,
      ...(dot === "square" ? { "stroke-dasharray": "5 3" } : {}) }, key);
    if (dot === "circle") el("circle", { cx: 13, cy: 6, r: 2.5, fill: stroke }, key);
    if (dot === "square") el("rect", { x: 10.5, y: 3.5, width: 5, height: 5, fill: stroke }, key);
    items.push(html("span", {}, item, text));
  }
  const testItem = items[2].parentNode;
  testItem.classList.add("book-pg-legend-test");
  const prevItem = html("span", { class: "book-pg-legend-item book-pg-legend-prev", hidden: "" }, box);
  // both patterns, one above the other, at the chart's own size: grey dots, black dashes
  const key = el("svg", { width: 40, height: 16, "aria-hidden": "true", class: "book-pg-legend-key" }, prevItem);
  el("line", { x1: 2, x2: 38, y1: 4, y2: 4, ...PREV_HELD }, key);
  el("line", { x1: 2, x2: 38, y1: 12, y2: 12, ...PREV_TEST }, key);
  const prevText = html("span", {}, prevItem);
  const test = (n) => {
    testItem.hidden = !(n > LENGTH);
    items[2].textContent = n > LENGTH ? `held out at length ${n}: sequences right, % (right axis, dashed)` : "";
  };
  const last = (pts) => (pts.length ? `${(100 * pts[pts.length - 1][1]).toFixed(1)}%` : "");
  const prev = (p) => {
    prevItem.hidden = !p;
    if (!p) {
      prevText.textContent = "";
      return;
    }
    const ends = [p.held.length ? `grey dots, length ${LENGTH}: ${last(p.held)}` : "",
      p.heldTest.length ? `black dashes, test length: ${last(p.heldTest)}` : ""].filter(Boolean);
    prevText.textContent = `on top: the previous run's held-out curves (${p.label}; at its end, ${ends.join("; ")})`;
  };
  return { test, prev };
}

// One head's attention on the probe: an SVG heatmap with the probe's tokens on both axes (queries in
// rows, keys in columns; each cell's title gives positions and weight). Its text at MAP_FONT, the
// chart's phone size: at 11 px a phone's reader read its labels at 7-9 px (reader s42, chapter 8).
const MAP_FONT = 13;
function attentionMap(parent, weights, labels, title) {
  const cell = 24;
  const n = labels.length;
  const left = 50;
  const top = 38;
  const width = left + n * cell + 4;
  const height = top + n * cell + 4;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "font-size": MAP_FONT, "font-family": "sans-serif", class: "book-pg-map-svg" }, parent);
  const g = el("g", { fill: "currentColor" }, svg);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const w = weights[i * n + j];
      const r = el("rect", { x: left + j * cell, y: top + i * cell, width: cell, height: cell, fill: colour(w) }, svg);
      el("title", {}, r).textContent = `query ${i} (${labels[i]}) -> key ${j} (${labels[j]}): ${w.toFixed(3)}`;
    }
  }
  const label = (x, y, s, attrs) => {
    const t = el("text", { x, y, ...attrs }, g);
    t.textContent = s;
  };
  label(left + (n * cell) / 2, MAP_FONT, "key (position 0 to 7)", { "text-anchor": "middle", class: "book-pg-axis" });
  labels.forEach((s, j) => label(left + j * cell + cell / 2, top - 6, s, { "text-anchor": "middle", class: "book-pg-key" }));
  labels.forEach((s, i) => label(left - 5, top + i * cell + cell / 2 + 4, s, { "text-anchor": "end", class: "book-pg-query" }));
  const y = top + (n * cell) / 2;
  label(MAP_FONT, y, "query", { "text-anchor": "middle", transform: `rotate(-90 ${MAP_FONT} ${y})`, class: "book-pg-axis" });
  svg.dataset.rows = JSON.stringify(labels);
  svg.dataset.cols = JSON.stringify(labels);
  el("title", {}, svg).textContent = title;
  return svg;
}

// The colour scale of the maps: attention weight 0 (dark blue) to 1 (yellow).
function mapScale(parent) {
  const svg = el("svg", { width: 210, height: 34, viewBox: "0 0 210 34", role: "img", class: "book-pg-scale",
    "font-size": MAP_FONT, "font-family": "sans-serif" }, parent);
  el("title", {}, svg).textContent = "colour scale of the maps: attention weight 0 (dark blue) to 1 (yellow)";
  for (let k = 0; k < 50; k++) el("rect", { x: 8 + k * 2.8, y: 2, width: 3.3, height: 10, fill: colour(k / 49) }, svg);
  const g = el("g", { fill: "currentColor" }, svg);
  [[8, "0"], [78, "0.5"], [148, "1"]].forEach(([x, s]) => {
    const t = el("text", { x, y: 26, "text-anchor": "middle" }, g);
    t.textContent = s;
  });
  const t = el("text", { x: 158, y: 11 }, g);
  t.textContent = "weight";
  return svg;
}

// The figure, in parts: the controls (buildControls), what they show (the curve, the maps, the probe:
// curveView, mapsView, readProbe), the training worker (workerClient), the buttons (wireControls) and
// the picture before Play (showExample). They share `pg`: the root, ctx, the example, the elements,
// the settings now chosen (pg.current()) and the run's state (root.playground).
export function mountPlayground(root, example, ctx) {
  const { settings, problems } = readSettings(location.hash, example.defaults);
  const pg = { root, ctx, example, ui: buildControls(root, settings, example) };
  if (problems.length) ctx.message(root, `Settings from the link changed: ${problems.join("; ")}.`, "warning");
  pg.state = { worker: null, ready: null, losses: [], held: [], heldTest: [], prev: null, t: 0, playing: false,
    diverged: false, stopped: null, note: "", budget: example.history.length || BUDGET, patience: PATIENCE };
  root.playground = pg.state; // the run, for the browser tests and curious readers
  pg.current = () => currentSettings(pg.ui.inputs);
  offerView(pg);
  curveView(pg);
  mapsView(pg);
  captionNote(pg);
  workerClient(pg);
  wireControls(pg);
  showExample(pg, settings);
}

// The form (one select per setting, the seed a number), the buttons, the probe box and the panes.
function buildControls(root, settings, example) {
  const form = html("div", { class: "book-live-controls book-pg-controls" }, root);
  const inputs = {};
  for (const key of Object.keys(LABELS)) {
    const wrap = html("label", {}, form, `${LABELS[key]} `);
    if (key === "test") wrap.title = `the length of a second set of held-out sequences; training is at ${LENGTH}`;
    if (key === "kv") {
      wrap.title = "as many as heads: multi-head attention; fewer: grouped-query attention (chapter 17), in the " +
        `browser 2 for ${OFFER.modern.heads} heads only (a greyed-out option says why on hover)`;
    }
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
  const button = (name, text) => html("button", { type: "button", class: `book-live-button book-pg-${name}` },
    buttons, text);
  const ui = { inputs, play: button("play", "Play"), stepBtn: button("step", "One step"),
    reset: button("reset", "Reset"), save: button("save", "Download weights") };
  const probeWrap = html("label", {}, root, "probe sequence ");
  ui.probeBox = html("input", { type: "text", class: "book-pg-probe", size: 30, "aria-label": "probe sequence",
    value: settings.probe || example.probes[settings.task] }, probeWrap);
  ui.offer = html("p", { class: "book-pg-offer", "aria-live": "polite" }, root);
  ui.answer = html("p", { class: "book-pg-answer", "aria-live": "polite" }, root);
  ({ test: ui.legendTest, prev: ui.legendPrev } = legend(root));
  ui.svg = el("svg", { class: "book-pg-curve", role: "img", "aria-label": CURVES });
  ui.svg.style.maxWidth = "100%";
  ui.svg.style.height = "auto";
  root.appendChild(ui.svg);
  ui.stats = html("p", { class: "book-pg-stats", "aria-live": "polite" }, root);
  ui.mapsNote = html("p", { class: "book-pg-maps-note" }, root);
  ui.maps = html("div", { class: "book-pg-maps" }, root);
  ui.scale = html("div", { class: "book-pg-scale-box" }, root);
  return ui;
}

function currentSettings(inputs) {
  const s = {};
  for (const key of Object.keys(LABELS)) s[key] = key === "seed" ? Number(inputs.seed.value) : inputs[key].value;
  for (const key of ["layers", "heads", "kv", "width", "lr", "batch", "test"]) s[key] = Number(s[key]);
  return s;
}

// pg.showOffer(): the options not offered with the settings now chosen are disabled, and the note under
// the form says why (its text in root.dataset.offer). pg.reconcileForm(): replaces what is not offered.
function offerView(pg) {
  const { root, ui } = pg;
  pg.showOffer = () => {
    const no = notOffered(pg.current());
    const why = new Map(); // reason -> the settings' values it greys out ("layers 1", "heads 1 and 2")
    for (const key of Object.keys(no)) {
      for (const option of ui.inputs[key].options) {
        option.disabled = Object.hasOwn(no[key], option.value);
        option.title = no[key][option.value] || "";
      }
      const values = Object.keys(no[key]);
      // key/value heads: some are always greyed out (a divisor of heads; 2 for 4 heads only), said on the
      // options and the label, not in the note
      if (values.length && key !== "kv") {
        const reason = no[key][values[0]];
        why.set(reason, [...(why.get(reason) || []), `${LABELS[key]} ${values.join(" and ")}`]);
      }
    }
    ui.offer.textContent = [...why].map(([reason, what]) => `${what.join(", ")} not offered: ${reason}.`).join(" ");
    root.dataset.offer = ui.offer.textContent;
    ui.legendTest(pg.current().test);
  };
  pg.reconcileForm = () => {
    const { settings, notes } = reconcile(pg.current());
    for (const key of Object.keys(settings)) if (ui.inputs[key]) ui.inputs[key].value = String(settings[key]);
    pg.showOffer();
    return notes;
  };
}

// pg.drawCurve(): the curves and the status line, at the width the chart is shown (root's width less its
// padding: drawn at root's whole width, a phone showed it 7% smaller), drawn again when that width changes.
function curveView(pg) {
  const { root, state, ui } = pg;
  let drawnWidth = 0;
  const chartWidth = () => {
    const style = getComputedStyle(root);
    const inner = root.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return Math.round(Math.max(260, Math.min(600, (root.clientWidth && Math.floor(inner)) || 520)));
  };
  pg.drawCurve = () => {
    drawnWidth = chartWidth();
    const prev = state.prev && { ...state.prev, label: prevLabel(state.prev.settings, pg.current()) };
    chart(ui.svg, state.losses, state.held, drawnWidth, state.heldTest, prev);
    ui.legendPrev(prev);
    const n = pg.current().test;
    ui.svg.setAttribute("aria-label", CURVES + (n > LENGTH ? `, and held out at length ${n} (purple, dashed)` : "") +
      (prev ? `; on top, in grey dots and black dashes, the previous run's held-out curves (${prev.label})` : ""));
    const last = state.losses[state.losses.length - 1];
    const held = state.held[state.held.length - 1];
    const test = state.heldTest[state.heldTest.length - 1];
    ui.stats.textContent = (last ? `step ${last[0]}: loss ${last[1].toFixed(4)}` +
      (held ? `, held-out sequences right ${(100 * held[1]).toFixed(1)}%` : "") +
      (held && test ? ` (at length ${pg.current().test}: ${(100 * test[1]).toFixed(1)}%)` : "") : "step 0: no training yet") +
      (state.stopped ? `. ${state.stopped}` : "") + (state.note ? ` ${state.note}` : "");
    root.dataset.steps = String(state.t);
  };
  if (typeof ResizeObserver !== "undefined") {
    new ResizeObserver(() => { if (chartWidth() !== drawnWidth) pg.drawCurve(); }).observe(root);
  }
}

// pg.clearMaps(text) and pg.drawMaps(msg, ids, when): one attention map per layer and head on the
// probe, with what the model answers. msg: {t, layers, heads, attentions (flat [layers, heads, L, L]),
// answer}, from the worker or the example. pg.probeIds(): the probe's ids, or null after a warning.
function mapsView(pg) {
  const { root, ui } = pg;
  pg.clearMaps = (text) => {
    ui.maps.replaceChildren();
    ui.scale.replaceChildren();
    ui.answer.textContent = "";
    ui.mapsNote.textContent = text;
    delete root.dataset.answer;
    delete root.dataset.mapsStep;
  };
  pg.drawMaps = (msg, ids, when) => {
    ui.maps.replaceChildren();
    const s = pg.current();
    const labels = ids.map((i) => symbol(s.task, i));
    for (let l = 0; l < msg.layers; l++) {
      for (let h = 0; h < msg.heads; h++) headMap(ui.maps, msg, l, h, labels);
    }
    if (!ui.scale.firstChild) mapScale(ui.scale);
    ui.mapsNote.textContent = `Attention of each head on the probe ${labels.join(" ")} ${when}: ` +
      "one row per query position, one column per key position; each row sums to 1.";
    const right = rightAnswer(s.task, ids);
    const wrong = right ? msg.answer.filter((a, t) => a !== right[t]).length : null;
    // an id that is none of the task's answers (an untrained model's) is written "?", and the line says so
    const said = msg.answer.map((a) => (isAnswer(s.task, a) ? answerSymbol(s.task, a) : "?"));
    ui.answer.textContent = `input ${labels.join(" ")}  ->  model's answer ${said.join(" ")}` +
      (said.includes("?") ? " (? = a token outside the task's symbols)" : "") +
      (right ? `; right answer ${right.map((a) => answerSymbol(s.task, a)).join(" ")} (${wrong ? `${wrong} wrong` : "all right"})` : "");
    root.dataset.answer = msg.answer.join(",");
    root.dataset.mapsStep = String(msg.t);
  };
  pg.probeIds = () => readProbe(pg, pg.current().task, ui.probeBox.value);
}

// The map of head h of layer l, its description naming each query's strongest key.
function headMap(parent, msg, l, h, labels) {
  const box = html("figure", { class: "book-pg-map" }, parent);
  const at = (l * msg.heads + h) * LENGTH * LENGTH;
  const weights = msg.attentions.slice(at, at + LENGTH * LENGTH);
  const rows = [];
  for (let i = 0; i < LENGTH; i++) {
    const row = weights.slice(i * LENGTH, (i + 1) * LENGTH);
    const top = row.indexOf(Math.max(...row));
    rows.push(`${labels[i]} -> ${labels[top]} (${row[top].toFixed(2)})`);
  }
  const map = attentionMap(box, weights, labels, `layer ${l}, head ${h}`);
  map.setAttribute("aria-label", `layer ${l}, head ${h}: each query's strongest key: ${rows.join(", ")}`);
  html("figcaption", {}, box, `layer ${l}, head ${h}`);
}

const after = (t) => (t ? `after step ${t}` : "at step 0 (the initial weights, before any training)");

// The probe's ids, or null after a warning that says what is wrong with it. A valid probe takes down
// the warning an earlier one left, if it still shows: "The probe needs 8 symbols; got 0" (the box
// emptied on the way to a new probe) stayed beside the new probe's right answer (reader s39b, chapter 9).
function readProbe(pg, task, text) {
  const { ids, bad } = parseSequence(task, text);
  let warning = null;
  if (bad.length || ids.length !== LENGTH) {
    warning = `The probe needs ${LENGTH} symbols of this task` +
      (bad.length ? `; not in its alphabet: ${bad.join(" ")}` : `; got ${ids.length}`) + ".";
  } else if (!rightAnswer(task, ids)) {
    warning = task === "brackets" ? "The brackets of the probe do not nest: each ( closes with ), each [ with ]."
      : "The probe of this task is the start symbol - and then 7 digits.";
  }
  const box = pg.root.querySelector(".book-live-message");
  if (warning) {
    pg.ctx.message(pg.root, warning, "warning");
    pg.probeWarning = warning;
    return null;
  }
  if (pg.probeWarning && box && !box.hidden && box.textContent === pg.probeWarning) pg.ctx.message(pg.root, "", "info");
  pg.probeWarning = null;
  return ids;
}

// The chapter's run's settings: its test length is 8 where the example names none (chapters before 18).
const chapterSettings = (example) => ({ test: LENGTH, norm: "layernorm", kv: example.defaults.heads,
  ...example.defaults });

// The caption describes the chapter's run: when the controls (or the link) ask for other settings, or
// the page shows a run of its own (after Play, Reset or One step), say so.
// pg.differs(): the settings that differ from the chapter's run; pg.markCaption() shows the note if any
// differ or if the run shown is not the chapter's.
function captionNote(pg) {
  const caption = pg.root.querySelector(".book-live-caption");
  const note = caption ? html("span", { class: "book-pg-caption-note", hidden: "" }, caption, "") : null;
  pg.differs = () => {
    const s = pg.current();
    const defaults = chapterSettings(pg.example);
    return Object.keys(defaults).filter((k) => String(s[k]) !== String(defaults[k]));
  };
  pg.markCaption = () => {
    if (!note) return;
    const differs = pg.differs().length > 0;
    const own = pg.root.dataset.example !== "chapter" || pg.state.worker !== null;
    note.hidden = !differs && !own;
    note.textContent = differs
      ? " (This caption describes the chapter's run, not the settings now chosen.)"
      : " (This caption describes the chapter's run, not the run trained in this page.)";
  };
}

// The training worker: pg.ensure() starts one for the settings now chosen (once), pg.resetRun()
// replaces it, pg.fail(text) stops with an error. Only the current worker speaks: a run replaced by
// Reset or a new setting is never drawn.
function workerClient(pg) {
  const { root, ctx, state } = pg;
  pg.fail = (text) => {
    stopPlaying(pg);
    root.dataset.state = "error";
    ctx.message(root, text, "error");
    if (state.onError) state.onError(new Error(text));
  };
  pg.ensure = async () => {
    if (!state.ready) {
      state.ready = startRun(pg).catch((err) => { state.ready = null; pg.fail(err.message); throw err; });
    }
    return state.ready;
  };
  // A new test length for the run in the worker: its dashed curve starts again, from the weights it
  // has now (the curves at length 8 and the maps stay).
  pg.retest = async () => {
    await state.ready;
    const n = pg.current().test;
    state.heldTest = [];
    delete root.dataset.heldoutTest;
    delete root.dataset.retested;
    history.replaceState(null, "", writeSettings(pg.current()));
    pg.markCaption();
    state.worker.postMessage({ type: "test", testLength: n });
    pg.drawCurve();
    ctx.message(root, n > LENGTH
      ? `Test length ${n}: the same run, evaluated on held-out sequences of ${n} from step ${state.t} on (the ` +
        "dashed curve starts there)."
      : `Test length ${LENGTH}: the same run, evaluated at its training length only.`, "info");
  };
  // Reset (or any new setting): the previous run's curve, status and maps go at once; the new run's
  // maps (its initial weights) are drawn when its worker is ready.
  pg.resetRun = async () => {
    if (state.worker) state.worker.terminate();
    if (root.dataset.state !== "computed") root.dataset.state = "computed"; // a new run clears an error
    Object.assign(state, { worker: null, ready: null, note: "" });
    clearRun(state);
    stopPlaying(pg);
    root.dataset.run = "";
    delete root.dataset.heldout;
    delete root.dataset.heldoutTest;
    delete root.dataset.stopped;
    root.dataset.example = "reset";
    ctx.message(root, "", "info");
    history.replaceState(null, "", writeSettings(pg.current()));
    pg.markCaption();
    pg.drawCurve();
    pg.clearMaps("The attention maps of the new run's initial weights are being computed.");
    await pg.ensure();
    pg.drawCurve();
  };
}

function clearRun(state) {
  Object.assign(state, { losses: [], held: [], heldTest: [], t: 0, diverged: false, stopped: null });
}

function stopPlaying(pg) {
  pg.state.playing = false;
  pg.ui.play.textContent = "Play";
}

// Downloads the graphs of the chosen model size, starts a worker on them and waits for it to be ready;
// then asks for the maps of the new run's initial weights.
async function startRun(pg) {
  const { root, ctx, state } = pg;
  if (typeof WebAssembly === "undefined" || typeof Worker === "undefined") {
    throw new Error("this browser has no WebAssembly or no Web Workers, which the Playground needs; " +
      "the picture above is the same run computed by the library");
  }
  const s = pg.current();
  history.replaceState(null, "", writeSettings(s));
  const manifest = await (await ctx.fetch("playground/manifest.json")).json();
  const name = graphKey(s);
  const entry = manifest.models[name];
  if (!entry) throw new Error(`this copy of the book has no training program for ${name}`);
  // the probe runs at the training length and at a test length alike (one graph, its length an input)
  const bytes = await Promise.all([entry.step, entry.probe, entry.steps].map(async (f) =>
    (await ctx.fetch(`playground/${f}`)).arrayBuffer()));
  if (state.worker) state.worker.terminate();
  const worker = new Worker(new URL("playground_worker.js", ctx.base), { type: "module" });
  state.worker = worker;
  clearRun(state);
  if (root.dataset.example === "chapter") state.note = ""; // the library's run is no longer shown
  pg.markCaption(); // the maps and curve shown are now this page's run
  pg.drawCurve();
  pg.clearMaps("The attention maps of the new run's initial weights are being computed.");
  worker.onmessage = (event) => { if (state.worker === worker) onMessage(pg, event.data); };
  worker.onerror = (event) => { if (state.worker === worker) pg.fail(event.message || "the training worker failed"); };
  await new Promise((resolve, reject) => {
    state.onReady = resolve;
    state.onError = reject;
    worker.postMessage({ type: "init", config: { task: s.task, positional: s.pos, causal: s.mask === "causal",
      lr: s.lr, batch: s.batch, seed: s.seed, testLength: s.test }, entry, heldOut: manifest.held_out,
      stepBytes: bytes[0], probeBytes: bytes[1], stepsBytes: bytes[2] }, bytes);
  });
  root.dataset.run = "ready"; // a run is loaded in the worker (dataset.state stays "computed")
  const ids = pg.probeIds();
  if (ids) worker.postMessage({ type: "probe", ids });
}

// What the worker says (playground/worker.js lists its messages), one handler each.
const ON_MESSAGE = {
  ready(pg) {
    pg.state.onReady();
  },
  progress(pg, msg) {
    const { state } = pg;
    for (const s of msg.steps) state.losses.push([s.t, s.loss]);
    state.t = msg.steps.length ? msg.steps[msg.steps.length - 1].t : state.t;
    pg.drawCurve();
  },
  heldout(pg, msg) {
    pg.state.held.push([msg.t, msg.seqAcc]);
    pg.root.dataset.heldout = String(msg.seqAcc);
    if (msg.test && msg.test.length === pg.current().test) addTest(pg, msg.t, msg.test);
    pg.drawCurve();
  },
  heldtest(pg, msg) { // the same run at another test length (wireControls), from the weights now
    if (msg.test && msg.test.length === pg.current().test) addTest(pg, msg.t, msg.test);
    pg.root.dataset.retested = String(msg.length);
    pg.drawCurve();
  },
  probe(pg, msg) {
    const ids = pg.probeIds();
    if (ids) pg.drawMaps(msg, ids, after(msg.t));
  },
  stopped(pg, msg) {
    stopPlaying(pg);
    pg.state.stopped = msg.reason === "budget"
      ? `Stopped: step budget of ${msg.budget} steps reached (press Play to train up to ${msg.budget} more)`
      : `Stopped: held-out accuracy unchanged for ${msg.patience} evaluations (${msg.patience * 25} steps; ` +
        "press Play to train on)";
    pg.root.dataset.stopped = msg.reason;
    pg.drawCurve();
  },
  diverged(pg, msg) {
    pg.state.diverged = true;
    stopPlaying(pg);
    pg.root.dataset.state = "diverged";
    pg.ctx.message(pg.root, `Training stopped at step ${msg.t}: the loss became ${msg.loss}, more than three ` +
      "times that of a uniform guess (8.3). " +
      "The learning rate is too large for this model; choose a smaller one and press Reset.", "error");
  },
  paused(pg) {
    stopPlaying(pg);
  },
  weights(pg, msg) {
    const settings = Object.fromEntries(Object.entries(pg.current()).map(([k, v]) => [k, String(v)]));
    const blob = new Blob([safetensors(msg.names, msg.shapes, msg.data, { ...settings, step: String(msg.t) })]);
    const a = html("a", { href: URL.createObjectURL(blob), download: "playground.safetensors" }, pg.root);
    a.click();
    a.remove();
  },
  error(pg, msg) {
    pg.fail(`The Playground stopped: ${msg.error}`);
  },
};

// A point of the test-length curve, in step order (the answer to "test" may come after a later check).
function addTest(pg, t, test) {
  const points = pg.state.heldTest.filter((p) => p[0] !== t);
  points.push([t, test.seqAcc, test.tokenAcc]);
  pg.state.heldTest = points.sort((a, b) => a[0] - b[0]);
  pg.root.dataset.heldoutTest = String(points[points.length - 1][1]);
}

function onMessage(pg, msg) {
  if (Object.hasOwn(ON_MESSAGE, msg.type)) ON_MESSAGE[msg.type](pg, msg);
}

// Play/Pause, One step, Reset, Download weights, a new setting, a new probe.
function wireControls(pg) {
  wireRunButtons(pg);
  wireSettings(pg);
}

// Play/Pause, One step, Reset and Download weights: messages to the run's worker.
function wireRunButtons(pg) {
  const { root, state, ui } = pg;
  const clearStop = () => {
    state.stopped = null;
    state.note = "";
    delete root.dataset.stopped;
  };
  ui.play.addEventListener("click", async () => {
    await pg.ensure();
    if (state.diverged) return;
    state.playing = !state.playing;
    ui.play.textContent = state.playing ? "Pause" : "Play";
    if (state.playing && (state.stopped || state.note)) {
      clearStop();
      pg.drawCurve();
    }
    state.worker.postMessage(state.playing
      ? { type: "play", probe: pg.probeIds(), budget: state.budget, patience: state.patience }
      : { type: "pause" });
  });
  ui.stepBtn.addEventListener("click", async () => {
    await pg.ensure();
    if (state.stopped || state.note) clearStop();
    if (!state.diverged && !state.playing) state.worker.postMessage({ type: "step", n: 1, probe: pg.probeIds() });
  });
  ui.reset.addEventListener("click", () => pg.resetRun().catch(() => {}));
  ui.save.addEventListener("click", async () => {
    await pg.ensure();
    state.worker.postMessage({ type: "weights" });
  });
}

// A new setting (a new run, or only a new test length) and a new probe.
function wireSettings(pg) {
  const { ctx, example, root, state, ui } = pg;
  let before = pg.current(); // the settings before this change
  // the test length the reader last chose: a change that cannot test there (learned positions, the
  // position task) sets 8, and a later change that can sets it back
  let wantedTest = before.test;
  for (const key of Object.keys(ui.inputs)) ui.inputs[key].addEventListener("change", () => {
    if (key === "task") ui.probeBox.value = example.probes[ui.inputs.task.value];
    // new heads with as many key/value heads as heads before: multi-head attention still
    if (key === "heads" && before.kv === before.heads) ui.inputs.kv.value = ui.inputs.heads.value;
    if (key === "test") wantedTest = Number(ui.inputs.test.value);
    const was = before;
    const notes = pg.reconcileForm(); // e.g. ALiBi chosen at width 64: width 32, and the note says so
    const now = pg.current();
    if (now.test !== wantedTest && !notOffered({ ...now, test: wantedTest }).test[wantedTest]) {
      ui.inputs.test.value = String(wantedTest);
      pg.showOffer();
      notes.push(`test length set back to ${wantedTest}, the length you chose`);
    }
    before = pg.current();
    const changed = Object.keys(LABELS).filter((k) => String(was[k]) !== String(before[k]));
    // only the test length: the same model, evaluated at the new length from the weights it has now
    if (changed.length === 1 && changed[0] === "test" && state.ready) {
      pg.retest().catch(() => {});
      return;
    }
    // a new run: the one it replaces stays drawn (if it has held-out points; else the one before), but
    // not after a change of task: another task's held-out share is no mark for this one
    if (changed.includes("task")) {
      state.prev = null;
    } else if (state.held.length || state.heldTest.length) {
      state.prev = { settings: was, held: state.held.slice(), heldTest: state.heldTest.slice() };
    }
    const library = root.dataset.example === "chapter" && changed.includes("test");
    pg.resetRun().then(() => {
      const said = notes.length ? [`Changed: ${notes.join("; ")}.`] : [];
      if (library) {
        said.push(`The chapter's run was computed by the library, not in this page, so it cannot be evaluated at ` +
          `another length here: a new run starts (press Play); the chapter's run stays drawn, dark and dotted.`);
      }
      if (said.length) ctx.message(root, said.join(" "), "info");
    }).catch(() => {});
  });
  ui.probeBox.addEventListener("change", () => {
    const ids = pg.probeIds();
    if (ids && state.worker) {
      ctx.message(root, "", "info");
      state.worker.postMessage({ type: "probe", ids });
    }
  });
}

// Before the reader presses anything: the run the library computed in the kernel (its curves and
// maps). The figure shows computed results from now on (dataset.state, as every live figure);
// dataset.run says whether a run is loaded in the worker. A link may ask for other settings than the
// chapter's run: then neither the run's curve nor the chapter's caption describes what the controls
// show, and the figure says so; its maps are those of the link's run before training (its initial
// weights, computed in the page).
function showExample(pg, settings) {
  const { example, root, state } = pg;
  root.dataset.state = "computed";
  pg.showOffer();
  const other = pg.differs();
  if (other.length) {
    const change = other.map((k) => `${LABELS[k] || k} ${settings[k]} (the chapter's: ${chapterSettings(example)[k]})`)
      .join(", ");
    state.note = `The link's settings differ from the chapter's run: ${change}. Press Play to train them here.`;
    pg.markCaption();
    pg.drawCurve();
    pg.clearMaps("The attention maps of this run's initial weights are being computed.");
    root.dataset.example = "other";
    pg.ensure().catch(() => {}); // its worker draws the maps of its initial weights when ready
    return;
  }
  state.losses = example.history.map((loss, i) => [i + 1, loss]);
  state.held = example.held_out;
  state.heldTest = example.held_test || [];
  state.note = "(computed by the library when the book was made; press Play to train here)";
  pg.drawCurve();
  const ids = pg.probeIds();
  if (example.probe && ids) pg.drawMaps(example.probe, ids, `${after(example.probe.t)} (the library's run)`);
  else pg.clearMaps("Press Play or One step to compute the attention maps here.");
  root.dataset.example = "chapter";
}
