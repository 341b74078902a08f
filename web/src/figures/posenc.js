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
  const canvas = html("canvas", { class: "book-live-table", role: "img",
    "aria-label": "the positional-encoding table: one row per position, one column per dimension" }, root);
  const line = html("div", { class: "book-live-line" }, root);
  const status = html("p", { class: "book-live-status" }, root);

  function redraw() {
    const P = Number(positions.value);
    const D = Number(dims.value);
    const b = Number(base.value);
    const p = Number(position.value);
    const problems = [];
    if (!Number.isInteger(P) || P < 1 || P > 512) problems.push("positions: a whole number from 1 to 512");
    if (!Number.isInteger(D) || D < 2 || D > 1024) problems.push("d_model: a whole number from 2 to 1024");
    if (!(b > 1) || !Number.isFinite(b)) problems.push("base: a finite number above 1");
    if (!Number.isInteger(p) || p < 0 || p >= P) problems.push(`position: a whole number from 0 to ${P - 1}`);
    if (problems.length) {
      ctx.message(root, `Expected ${problems.join("; ")}.`, "warning");
      root.dataset.state = "error";
      return;
    }
    ctx.message(root, "", "info");
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
    const vec = encoding(p, D, b);
    const width = 560;
    const height = 120;
    const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
      class: "book-live-curve", "font-size": 11, "font-family": "sans-serif" });
    el("title", {}, svg).textContent = `PE[${p}, :] over the ${D} dimensions`;
    el("line", { x1: 0, x2: width, y1: height / 2, y2: height / 2, stroke: "#bbb" }, svg);
    const pts = Array.from(vec, (v, j) => `${(j + 0.5) * width / D},${height / 2 - v * (height / 2 - 6)}`);
    el("polyline", { points: pts.join(" "), fill: "none", stroke: "#1f5fa8", "stroke-width": 1.5 }, svg);
    line.replaceChildren(svg, numbersTable(Array.from(vec, (v) => [v]), Array.from(vec, (_, j) => String(j)),
      [`PE[${p}, j]`], `PE[${p}, :]: the ${D} values of position ${p}`, "dimension j"));
    status.textContent = `Row ${p} (orange) of the ${P} x ${D} table, drawn below as a curve over the ` +
      `dimensions: fast sines on the left, slow ones on the right (wavelengths from 2π to ` +
      `${(2 * Math.PI * b ** ((D - 2) / D)).toPrecision(3)}).`;
    root.dataset.values = JSON.stringify(Array.from(vec));
    root.dataset.state = "computed";
  }

  for (const box of [positions, dims, base, position]) box.addEventListener("input", redraw);
  redraw();
}
