// Positional encoding for any position, dimension and base (chapter 8), computed in the page:
// PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d))  (Vaswani et al. 2017,
// sec. 3.5; lib.positional.sinusoidal_encoding). No model, nothing to download.
import { diverging, el, html, numbersTable } from "../draw.js";

export function encoding(pos, d, base) {
  const out = new Float64Array(d);
  for (let j = 0; j < d; j++) {
    const angle = pos * base ** (-(j - (j % 2)) / d);
    out[j] = j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  }
  return out;
}

// a wavelength as a reader writes it: 54,410 rather than 5.44e+4; 3 significant digits below 100
const wavelength = (x) => (x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toPrecision(3));

// A vertical colour bar for values in [-1, 1] (PE's range), as tall as the table, with ticks at -1, 0
// and 1 and its label; its colours are those of the table (diverging(v), PuOr as in the chapter's figures).
export function colourBar(container, tableHeight) {
  const barH = Math.max(120, tableHeight);
  const width = 64;
  const svg = el("svg", { width, height: barH + 12, viewBox: `0 0 ${width} ${barH + 12}`, role: "img",
    class: "book-live-colourbar-svg", "font-size": FONT, "font-family": "sans-serif" });
  el("title", {}, svg).textContent =
    "colour scale of the table: orange is -1, white 0, purple +1";
  const steps = 60;
  for (let k = 0; k < steps; k++) {
    el("rect", { x: 2, y: 6 + barH - (k + 1) * barH / steps, width: 14, height: barH / steps + 0.5,
      fill: diverging(2 * k / (steps - 1) - 1) }, svg);
  }
  el("rect", { x: 2, y: 6, width: 14, height: barH, fill: "none", stroke: "#555" }, svg);
  [-1, 0, 1].forEach((v) => {
    const y = 6 + barH - ((v + 1) / 2) * barH;
    el("line", { x1: 16, x2: 20, y1: y, y2: y, stroke: "#555" }, svg);
    const t = el("text", { x: 22, y: y + 4, fill: "currentColor" }, svg);
    t.textContent = v === -1 ? "\u22121" : String(v);
  });
  const x = width - 6;
  const label = el("text", { x, y: 6 + barH / 2, "text-anchor": "middle", fill: "currentColor",
    transform: `rotate(-90 ${x} ${6 + barH / 2})` }, svg);
  label.textContent = "PE value";
  svg.dataset.range = JSON.stringify([-1, 1]);
  container.replaceChildren(svg);
  return svg;
}

// What is wrong with the reader's settings, one phrase per field; empty when all four are valid.
function settingProblems(P, D, b, p) {
  const problems = [];
  if (!Number.isInteger(P) || P < 1 || P > 512) problems.push("positions: a whole number from 1 to 512");
  // PE pairs dimensions 2i and 2i+1 (a sine and a cosine of one frequency): d_model must be even,
  // or the last dimension is a sine without its cosine and the wavelengths below are wrong
  if (!Number.isInteger(D) || D < 2 || D > 1024) problems.push("d_model: a whole number from 2 to 1024");
  else if (D % 2) problems.push(`d_model: an even number (sines and cosines come in pairs), got ${D}; ` +
    `try ${D - 1} or ${D + 1}`);
  if (!(b > 1) || !Number.isFinite(b)) problems.push("base: a finite number above 1");
  // the position's range is known only when the number of positions is valid
  const validP = Number.isInteger(P) && P >= 1 && P <= 512;
  if (!Number.isInteger(p) || p < 0 || (validP && p >= P)) {
    problems.push(validP ? `position: a whole number from 0 to ${P - 1}`
      : "position: a whole number from 0 to positions - 1");
  }
  return problems;
}

// The P x D table on the canvas, one coloured cell per value, and position p's row framed in black and
// white (seen on orange, white and purple cells alike).
function drawTable(canvas, P, D, b, p) {
  const scale = Math.max(1, Math.floor(560 / D));
  const rowH = Math.max(1, Math.floor(300 / P));
  canvas.width = D * scale;
  canvas.height = P * rowH;
  const g = canvas.getContext("2d");
  for (let pos = 0; pos < P; pos++) {
    const row = encoding(pos, D, b);
    for (let j = 0; j < D; j++) {
      g.fillStyle = diverging(row[j]);
      g.fillRect(j * scale, pos * rowH, scale, rowH);
    }
  }
  const frame = [0, p * rowH, D * scale, Math.max(rowH, 2)];
  g.strokeStyle = "#000";
  g.lineWidth = 3;
  g.strokeRect(...frame);
  g.strokeStyle = "#fff";
  g.lineWidth = 1;
  g.strokeRect(...frame);
}

// The curve's and the tick labels' geometry, in CSS pixels: the curve is drawn at the size the page shows
// the table (a phone shrinks the canvas), so no scaling changes its 13 px text (at 11 px a phone's
// reader read its digits at 6-8 px: chapter 8's live figure); "511" fits the gutter.
const FONT = 13;
const GUTTER = 30; // left of the table: its position ticks, and the curve's -1, 0, 1
// the plot's top margin (the key), height (1 down to -1), room under it (the ticks' labels and
// "dimension j")
const CURVE = { top: FONT + 14, plot: 90, below: 12 + 2 * FONT + 6 };
// the row's sines (even j) and cosines (odd j) as two curves, in the colours of the slider figures
// above them (matplotlib's C0 and C1 there): one line through both zig-zagged between them, a solid
// band at 1024 dimensions (reader s32, ch08, 3)
const SERIES = [
  { parity: 0, name: "sin", key: "sin (even j)", stroke: "#006BA4" },
  { parity: 1, name: "cos", key: "cos (odd j)", stroke: "#FF800E" },
];

// Round tick values for 0 .. n - 1 that fit in `span` pixels: 0, multiples of a step of 1, 2, 2.5 or 5
// times a power of ten, and n - 1, each at least 40 px from the next.
export function ticks(n, span) {
  if (n <= 1) return [0];
  const most = Math.max(2, Math.min(5, Math.floor(span / 40) + 1));
  const raw = (n - 1) / (most - 1);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((v) => v >= raw && Number.isInteger(v)) ||
    10 * power;
  const out = [];
  for (let v = 0; v <= n - 1 - step / 2; v += step) out.push(v);
  out.push(n - 1);
  return out;
}

// The table's position ticks (its rows 0, a round one or two, P - 1), in the gutter left of the canvas,
// each at the middle of its row as the page shows it (height: the canvas's CSS height).
function positionTicks(container, P, height) {
  const svg = el("svg", { width: GUTTER, height, viewBox: `0 0 ${GUTTER} ${height}`, role: "img",
    class: "book-live-table-ticks-svg", "font-size": FONT, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = `positions 0 to ${P - 1}, top to bottom`;
  for (const pos of ticks(P, height)) {
    const y = ((pos + 0.5) / P) * height;
    el("line", { x1: GUTTER - 3, x2: GUTTER, y1: y, y2: y, stroke: "#555" }, svg);
    el("text", { x: GUTTER - 5, y: Math.min(Math.max(y, FONT / 2), height - FONT / 2), "text-anchor": "end",
      "dominant-baseline": "middle", fill: "currentColor" }, svg).textContent = String(pos);
  }
  container.replaceChildren(svg);
}

// Position p's row as two curves under the table, its sines and its cosines, with their key above: the
// plot area starts `left` px from the curve's box and is `width` px wide, the canvas's own offset and
// width, so the point of dimension j lies straight below column j of the table; values -1, 0 and 1 up
// the left, round dimensions (ticks) across.
function rowCurve(vec, p, left, width) {
  const D = vec.length;
  const total = left + width + 2 * FONT; // room for half of the last tick's label, up to 1023
  const height = CURVE.top + CURVE.plot + CURVE.below;
  const x = (j) => left + ((j + 0.5) / D) * width;
  const y = (v) => CURVE.top + CURVE.plot / 2 - (v * CURVE.plot) / 2;
  const svg = el("svg", { width: total, height, viewBox: `0 0 ${total} ${height}`, role: "img",
    class: "book-live-curve", "font-size": FONT, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = `PE[${p}, :] over the ${D} dimensions, sines (even j) and cosines ` +
    "(odd j) as two curves, each point below its column of the table";
  SERIES.forEach((s, k) => {
    const x0 = left + k * 8 * FONT;
    el("line", { x1: x0, x2: x0 + 18, y1: FONT / 2 + 2, y2: FONT / 2 + 2, stroke: s.stroke,
      "stroke-width": 2.5 }, svg);
    el("text", { x: x0 + 22, y: FONT / 2 + 2, "dominant-baseline": "middle", fill: "currentColor",
      class: "book-live-curve-key" }, svg).textContent = s.key;
  });
  for (const v of [1, 0, -1]) {
    el("line", { x1: left, x2: left + width, y1: y(v), y2: y(v), stroke: v === 0 ? "#bbb" : "#e4e4e4" }, svg);
    el("text", { x: left - 5, y: y(v), "text-anchor": "end", "dominant-baseline": "middle",
      fill: "currentColor" }, svg).textContent = v < 0 ? "\u22121" : String(v);
  }
  const axis = CURVE.top + CURVE.plot + 2;
  for (const j of ticks(D, width)) {
    el("line", { x1: x(j), x2: x(j), y1: axis, y2: axis + 4, stroke: "#555" }, svg);
    el("text", { x: x(j), y: axis + 6 + FONT, "text-anchor": "middle", fill: "currentColor" }, svg)
      .textContent = String(j);
  }
  el("text", { x: left + width / 2, y: axis + 8 + 2 * FONT, "text-anchor": "middle", fill: "currentColor" }, svg)
    .textContent = "dimension j";
  for (const s of SERIES) {
    const pts = [];
    for (let j = s.parity; j < D; j += 2) pts.push(`${x(j).toFixed(1)},${y(vec[j]).toFixed(1)}`);
    el("polyline", { points: pts.join(" "), fill: "none", stroke: s.stroke, "stroke-width": 1.5,
      "data-series": s.name }, svg);
  }
  svg.dataset.plot = JSON.stringify([left, width]);
  return svg;
}

// Long by design: a closure over the figure's controls and its current result; its parts (drawing,
// running the model, the controls' handlers) are short and share that state.
export function mountPositional(root, example, ctx) {
  const form = html("div", { class: "book-live-controls" }, root);
  const field = (name, value, attrs) => {
    const wrap = html("label", {}, form, `${name} `);
    return html("input", { type: "number", value, class: `book-live-${name.replace(/ /g, "-")}`,
      style: "width: 6em", "aria-label": name, ...attrs }, wrap);
  };
  const positions = field("positions", example.positions, { min: 1, max: 512, step: 1 });
  const dims = field("d_model", example.d_model, { min: 2, max: 1024, step: 2 });
  const base = field("base", example.base, { min: 1.0001, step: 1000 });
  const position = field("position", example.position, { min: 0, step: 1 });
  // the table and its colour bar side by side: PuOr over [-1, 1], as the static picture
  // (lib.viz.live.positional_encoding_figure) draws it with matplotlib
  // the table's axes, said in words above it (the canvas has no room for tick labels on a phone)
  const axes = html("p", { class: "book-live-axes", style: "margin: 0.3em 0; font-size: 0.9em" }, root);
  const row = html("div", { class: "book-live-table-row",
    style: "display: flex; align-items: flex-start; gap: 8px; max-width: 100%" }, root);
  // the table's position ticks left of it, in the gutter where the curve below has its -1, 0, 1
  const gutter = html("div", { class: "book-live-table-ticks", style: `flex: 0 0 ${GUTTER}px; margin-right: -8px` }, row);
  // the table shrinks to the screen (a phone), the bar keeps its width
  const canvas = html("canvas", { class: "book-live-table", role: "img", style: "flex: 0 1 auto; min-width: 0",
    "aria-label": "the positional-encoding table: one row per position, one column per dimension" }, row);
  const legend = html("div", { class: "book-live-colourbar", style: "flex: 0 0 auto" }, row);
  const line = html("div", { class: "book-live-line" }, root);
  const status = html("p", { class: "book-live-status" }, root);

  const curveBox = html("div", { class: "book-live-curve-box" }, line);
  let shown = null; // [vec, p, P] of the last valid settings

  // The bar as tall as the table is drawn, the position ticks beside its rows and the curve under its
  // columns (a phone shrinks the canvas), all redrawn when that size changes.
  function fit() {
    const box = canvas.getBoundingClientRect();
    colourBar(legend, Math.round(box.height) || canvas.height);
    if (!shown) return;
    const [vec, p, P] = shown;
    positionTicks(gutter, P, box.height || canvas.height);
    // the canvas's left edge and width as the page lays them out (before layout: the gutter and its width)
    const left = box.width ? box.left - curveBox.getBoundingClientRect().left : GUTTER;
    curveBox.replaceChildren(rowCurve(vec, p, left, box.width || canvas.width));
  }
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(fit).observe(canvas);

  function redraw() {
    const P = Number(positions.value);
    const D = Number(dims.value);
    const b = Number(base.value);
    const p = Number(position.value);
    const problems = settingProblems(P, D, b, p);
    if (problems.length) {
      ctx.message(root, `Expected ${problems.join("; ")}.`, "warning");
      status.textContent = "Not redrawn: the table and curve are still those of the last valid settings.";
      root.dataset.state = "error";
      return;
    }
    ctx.message(root, "", "info");
    drawTable(canvas, P, D, b, p);
    const vec = encoding(p, D, b);
    shown = [vec, p, P];
    fit();
    axes.textContent = `Table: one row per position (0 at the top, ${P - 1} at the bottom), one column ` +
      `per dimension j (0 at the left, ${D - 1} at the right). Curves below: PE[${p}, j] (from -1 to 1) ` +
      "against the dimension j, sines (even j) and cosines (odd j) apart, each point below its column.";
    line.replaceChildren(curveBox, numbersTable(Array.from(vec, (v) => [v]),
      Array.from(vec, (_, j) => String(j)), [`PE[${p}, j]`], `PE[${p}, :]: the ${D} values of position ${p}`,
      "dimension j", line));
    status.textContent = `Row ${p} (framed) of the ${P} x ${D} table, drawn above as two curves over the ` +
      `dimensions: fast sines on the left, slow ones on the right (wavelengths from 2π to ` +
      `${wavelength(2 * Math.PI * b ** ((D - 2) / D))}).`;
    root.dataset.values = JSON.stringify(Array.from(vec));
    root.dataset.state = "computed";
  }

  for (const box of [positions, dims, base, position]) box.addEventListener("input", redraw);
  redraw();
}
