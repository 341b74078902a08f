// Drawing helpers of the live figures: SVG built by hand, no library. The colours are matplotlib's
// cividis (the book's SEQUENTIAL_CMAP: colour-blind-safe, monotone in lightness), sampled at 9 stops.
const SVG = "http://www.w3.org/2000/svg";
const CIVIDIS = ["#00224e", "#1a386f", "#434e6c", "#61656f", "#7d7c78", "#9b9476", "#bcae6c",
  "#dec958", "#fee838"];

function hex(c) {
  return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
}

export function colour(value, lo = 0, hi = 1) {
  const t = Math.min(1, Math.max(0, (value - lo) / (hi - lo || 1))) * (CIVIDIS.length - 1);
  const i = Math.min(CIVIDIS.length - 2, Math.floor(t));
  const a = hex(CIVIDIS[i]);
  const b = hex(CIVIDIS[i + 1]);
  const mix = a.map((x, k) => Math.round(x + (b[k] - x) * (t - i)));
  return `rgb(${mix.join(",")})`;
}

export function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

export function html(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// A row of controls: a labelled text box and its button, disabled until the figure's model is loaded;
// Enter in the box presses the button. Returns { form, input, compute } (the button).
export function textAndButton(root, label, value, size, name, button) {
  const form = html("div", { class: "book-live-controls" }, root);
  const wrap = html("label", { class: "book-live-text" }, form, `${label} `);
  const input = html("input", { type: "text", class: "book-live-input", value, size,
    "aria-label": name }, wrap);
  const compute = html("button", { type: "button", class: "book-live-compute", disabled: "" }, form,
    button);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && !compute.disabled) compute.click(); });
  return { form, input, compute };
}

// The heatmaps' labels: 13 px (at 11 px, a phone's reader read them at 6-8 px: chapter 3's and the
// MiniLM live figures), about 8.5 px a character.
const LABEL = 13;
const CHAR = 8.5;

// A heatmap of matrix [rows][cols] in [0, 1] with row and column labels, the value in each cell when
// there is room, and a colour bar. The matrix is written into data-values (JSON), the labels into
// data-rows / data-cols, so that tests and readers' tools can read what is drawn. opts.cell: the
// cell's side in px; opts.valueSize: the font size of the values in the cells (default 11, as the
// labels': at 8.5 a phone's reader read them at 6 px, MiniLM's figure in chapter 6). Column
// labels that fit their cell are written level, with opts.xlabel just above them; longer ones are
// turned by 60 degrees, and opts.xlabel goes under the matrix.
export function heatmap(container, matrix, rowLabels, colLabels, opts = {}) {
  const cell = opts.cell || Math.max(14, Math.min(34, Math.floor(520 / Math.max(colLabels.length, 1))));
  // opts.ylabel: the rows' name, turned up the left edge (18 px more on the left)
  const left = (opts.left || 8 + CHAR * Math.max(...rowLabels.map((s) => s.length), 1))
    + (opts.ylabel ? 18 : 0);
  const level = CHAR * Math.max(...colLabels.map((s) => s.length), 1) <= cell - 6;
  const top = opts.top || (level ? (opts.xlabel ? 40 : 22)
    // a label turned by 60 degrees rises sin 60 = 0.87 of its length, about CHAR px a character
    // ("suitcase" was cut to "suitcas" with 6 px a character at 11 px)
    : 12 + CHAR * Math.max(...colLabels.map((s) => s.length), 1));
  const width = left + cell * colLabels.length + 70;
  const height = top + cell * rowLabels.length + (level ? 10 : 30); // room for a bottom xlabel
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    class: "book-live-heatmap", "font-size": LABEL, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = opts.title || "attention weights";
  matrix.forEach((row, i) => row.forEach((v, j) => {
    const r = el("rect", { x: left + j * cell, y: top + i * cell, width: cell, height: cell,
      fill: colour(v) }, svg);
    el("title", {}, r).textContent = `${rowLabels[i]} -> ${colLabels[j]}: ${v.toFixed(3)}`;
    if (cell >= 26) {
      const size = opts.valueSize || 11; // ".27" at 11 px: 18 px of a cell of 26 or more
      const dy = 0.4 * size; // the baseline, to centre the text
      const t = el("text", { x: left + j * cell + cell / 2, y: top + i * cell + cell / 2 + dy,
        "text-anchor": "middle", "font-size": size,
        fill: v > 0.55 ? "#000" : "#fff" }, svg);
      t.textContent = v.toFixed(2).replace(/^0/, "");
    }
  }));
  rowLabels.forEach((s, i) => {
    const t = el("text", { x: left - 4, y: top + i * cell + cell / 2 + 0.35 * LABEL, "text-anchor": "end" }, svg);
    t.textContent = s;
  });
  colLabels.forEach((s, j) => {
    const x = left + j * cell + cell / 2 + (level ? 0 : 4);
    const t = el("text", level ? { x, y: top - 6, "text-anchor": "middle" }
      : { x, y: top - 4, transform: `rotate(-60 ${x} ${top - 4})` }, svg);
    t.textContent = s;
  });
  colourBar(svg, left + cell * colLabels.length + 16, top, cell * rowLabels.length);
  if (opts.xlabel) {
    const t = el("text", level
      ? { x: left + cell * colLabels.length / 2, y: top - 24, "text-anchor": "middle" }
      : { x: left, y: height - 8 }, svg);
    t.textContent = opts.xlabel;
  }
  if (opts.ylabel) {
    const y = top + cell * rowLabels.length / 2;
    const t = el("text", { x: 12, y, "text-anchor": "middle", transform: `rotate(-90 12 ${y})` }, svg);
    t.textContent = opts.ylabel;
  }
  svg.dataset.values = JSON.stringify(matrix);
  svg.dataset.rows = JSON.stringify(rowLabels);
  svg.dataset.cols = JSON.stringify(colLabels);
  // At its own size (labels stay readable) in a scroll container that says when it scrolls (a phone
  // shows about 9 of 16 columns), and the same numbers as a table for screen readers and copying.
  const scroller = scrollBox(opts.title || "attention weights");
  scroller.appendChild(svg);
  container.replaceChildren(scroller, numbersTable(matrix, rowLabels, colLabels,
    opts.title || "attention weights", opts.corner || "query \\ key"));
  return svg;
}

// The heatmap's colour bar: 50 steps from 0 (bottom) to 1 (top), x px from the left, barH px tall
// from top, labelled 0, 0.5 and 1.
function colourBar(svg, x, top, barH) {
  for (let k = 0; k < 50; k++) {
    el("rect", { x, y: top + barH - (k + 1) * barH / 50, width: 12, height: barH / 50 + 0.5,
      fill: colour(k / 49) }, svg);
  }
  [0, 0.5, 1].forEach((v) => {
    const t = el("text", { x: x + 16, y: top + barH - v * barH + 0.35 * LABEL }, svg);
    t.textContent = v.toFixed(1);
  });
}

// A horizontal scroll container that the keyboard can scroll (tabindex 0, named region); the site's
// scroll-cue script (book/_static/reader.js) marks it with a visible "scroll sideways" cue when its
// content is wider than the screen.
export function scrollBox(name, parent = null) {
  return html("div", { class: "book-scroll", role: "region", tabindex: "0",
    "aria-label": `${name} (scrolls sideways when wider than the screen)` }, parent);
}

// The numbers of a matrix as a table, folded under a summary: the text alternative of a heatmap.
export function numbersTable(matrix, rowLabels, colLabels, title, corner = "") {
  const details = html("details", { class: "book-live-numbers" });
  html("summary", {}, details, "The numbers, as a table");
  const box = scrollBox(`table: ${title}`, details);
  const table = html("table", { class: "book-live-numbers-table" }, box);
  html("caption", {}, table, title);
  const head = html("tr", {}, html("thead", {}, table));
  html("th", { scope: "col" }, head, corner);
  colLabels.forEach((c) => html("th", { scope: "col" }, head, c));
  const body = html("tbody", {}, table);
  matrix.forEach((row, i) => {
    const tr = html("tr", {}, body);
    html("th", { scope: "row" }, tr, rowLabels[i]);
    row.forEach((v) => html("td", {}, tr, Number(v).toFixed(3)));
  });
  return details;
}

// bertviz's head view for one head: the tokens in two columns, a line from each query (left) to each
// key (right) whose opacity is the weight; selecting a token shows only its lines. 360 px wide, it is
// scaled to the column (about 285 px inside a figure on a 360 px phone): its 14 px words show at 11 px
// (at 12 px they showed at 9.5, read as 6-8 px: a reader's report on the MiniLM figure, chapter 6).
export function headView(container, matrix, tokens, selected = null) {
  const rowH = 20;
  const width = 360;
  const height = rowH * tokens.length + 10;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    class: "book-live-headview",
    "font-size": 14, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = "head view: lines from each token (left) to the tokens it attends to (right)";
  const xl = 110;
  const xr = width - 110;
  matrix.forEach((row, i) => {
    if (selected !== null && i !== selected) return;
    row.forEach((w, j) => {
      if (w < 0.01) return;
      el("line", { x1: xl + 4, y1: 10 + i * rowH + 4, x2: xr - 4, y2: 10 + j * rowH + 4,
        stroke: "#1f5fa8", "stroke-width": 2, "stroke-opacity": w.toFixed(3) }, svg);
    });
  });
  tokens.forEach((s, i) => {
    // the baseline 9 px under the row's line (at y + 4): the 14 px word centred on its lines
    const l = el("text", { x: xl - 4, y: 10 + i * rowH + 9, "text-anchor": "end",
      class: "book-live-token", "font-weight": i === selected ? "bold" : "normal" }, svg);
    l.textContent = s;
    l.dataset.index = i;
    const r = el("text", { x: xr + 4, y: 10 + i * rowH + 9 }, svg);
    r.textContent = s;
  });
  container.replaceChildren(svg);
  return svg;
}
