// Positional encoding for any position, dimension and base (chapter 8), computed in the page:
// PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(pos / base^(2i/d))  (Vaswani et al. 2017,
// sec. 3.5; lib.positional.sinusoidal_encoding). No model, nothing to download.
import { colour, el, html, numbersTable } from "../draw.js";

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
// and 1 and its label; its colours are those of the table (colour((v + 1) / 2)).
export function colourBar(container, tableHeight) {
  const barH = Math.max(120, tableHeight);
  const width = 64;
  const svg = el("svg", { width, height: barH + 12, viewBox: `0 0 ${width} ${barH + 12}`, role: "img",
    class: "book-live-colourbar-svg", "font-size": 11, "font-family": "sans-serif" });
  el("title", {}, svg).textContent =
    "colour scale of the table: dark blue is -1, grey 0, yellow +1";
  const steps = 60;
  for (let k = 0; k < steps; k++) {
    el("rect", { x: 2, y: 6 + barH - (k + 1) * barH / steps, width: 14, height: barH / steps + 0.5,
      fill: colour(k / (steps - 1)) }, svg);
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

// The P x D table on the canvas, one coloured cell per value, and position p's row framed in orange.
function drawTable(canvas, P, D, b, p) {
  const scale = Math.max(1, Math.floor(560 / D));
  const rowH = Math.max(1, Math.floor(300 / P));
  canvas.width = D * scale;
  canvas.height = P * rowH;
  const g = canvas.getContext("2d");
  for (let pos = 0; pos < P; pos++) {
    const row = encoding(pos, D, b);
    for (let j = 0; j < D; j++) {
      g.fillStyle = colour((row[j] + 1) / 2);
      g.fillRect(j * scale, pos * rowH, scale, rowH);
    }
  }
  g.strokeStyle = "#e8710a";
  g.lineWidth = 2;
  g.strokeRect(0, p * rowH, D * scale, Math.max(rowH, 2));
}

// Position p's row as a curve with its scale: values -1, 0 and 1 up the left, the dimensions 0 to
// D - 1 across; 18-unit text, about 10.5 CSS px when a phone shrinks the 560-unit picture to its column.
function rowCurve(vec, p) {
  const D = vec.length;
  const width = 560;
  const height = 150;
  const left = 40;
  const top = 10;
  const plot = 100; // the height from 1 down to -1
  const x = (j) => left + (j + 0.5) * (width - left - 4) / D;
  const y = (v) => top + plot / 2 - v * plot / 2;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    class: "book-live-curve", "font-size": 18, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = `PE[${p}, :] over the ${D} dimensions`;
  for (const v of [1, 0, -1]) {
    el("line", { x1: left, x2: width - 4, y1: y(v), y2: y(v), stroke: v === 0 ? "#bbb" : "#e4e4e4" }, svg);
    el("text", { x: left - 6, y: y(v), "text-anchor": "end", "dominant-baseline": "middle" }, svg)
      .textContent = v < 0 ? "\u22121" : String(v);
  }
  const below = top + plot + 30;
  el("text", { x: x(0), y: below, "text-anchor": "start" }, svg).textContent = "0";
  el("text", { x: (left + width) / 2, y: below, "text-anchor": "middle" }, svg).textContent = "dimension j";
  el("text", { x: width - 4, y: below, "text-anchor": "end" }, svg).textContent = String(D - 1);
  const pts = Array.from(vec, (v, j) => `${x(j)},${y(v)}`);
  el("polyline", { points: pts.join(" "), fill: "none", stroke: "#1f5fa8", "stroke-width": 1.5 }, svg);
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
  // the table and its colour bar side by side: cividis over [-1, 1], as the static picture
  // (lib.viz.live.positional_encoding_figure) draws it with matplotlib
  // the table's axes, said in words above it (the canvas has no room for tick labels on a phone)
  const axes = html("p", { class: "book-live-axes", style: "margin: 0.3em 0; font-size: 0.9em" }, root);
  const row = html("div", { class: "book-live-table-row",
    style: "display: flex; align-items: flex-start; gap: 8px; max-width: 100%" }, root);
  // the table shrinks to the screen (a phone), the bar keeps its width
  const canvas = html("canvas", { class: "book-live-table", role: "img", style: "flex: 0 1 auto; min-width: 0",
    "aria-label": "the positional-encoding table: one row per position, one column per dimension" }, row);
  const legend = html("div", { class: "book-live-colourbar", style: "flex: 0 0 auto" }, row);
  const line = html("div", { class: "book-live-line" }, root);
  const status = html("p", { class: "book-live-status" }, root);

  // the bar as tall as the table is drawn (a phone shrinks the canvas), redrawn when that changes
  const fitBar = () => colourBar(legend, Math.round(canvas.getBoundingClientRect().height) || canvas.height);
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(fitBar).observe(canvas);

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
    fitBar();
    axes.textContent = `Table: one row per position (0 at the top, ${P - 1} at the bottom), one column ` +
      `per dimension j (0 at the left, ${D - 1} at the right). Curve below: PE[${p}, j] (from -1 to 1) ` +
      "against the dimension j.";
    const vec = encoding(p, D, b);
    line.replaceChildren(rowCurve(vec, p), numbersTable(Array.from(vec, (v) => [v]),
      Array.from(vec, (_, j) => String(j)), [`PE[${p}, j]`], `PE[${p}, :]: the ${D} values of position ${p}`,
      "dimension j"));
    status.textContent = `Row ${p} (orange) of the ${P} x ${D} table, drawn below as a curve over the ` +
      `dimensions: fast sines on the left, slow ones on the right (wavelengths from 2π to ` +
      `${wavelength(2 * Math.PI * b ** ((D - 2) / D))}).`;
    root.dataset.values = JSON.stringify(Array.from(vec));
    root.dataset.state = "computed";
  }

  for (const box of [positions, dims, base, position]) box.addEventListener("input", redraw);
  redraw();
}
