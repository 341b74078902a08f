// Drawing helpers of the live figures: SVG built by hand, no library. The colours are matplotlib's
// cividis (the book's SEQUENTIAL_CMAP: colour-blind-safe, monotone in lightness), sampled at 9 stops.
const SVG = "http://www.w3.org/2000/svg";
const CIVIDIS = ["#00224e", "#1a386f", "#434e6c", "#61656f", "#7d7c78", "#9b9476", "#bcae6c",
  "#dec958", "#fee838"];

function hex(c) {
  return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
}

// matplotlib's PuOr (the book's DIVERGING_CMAP: values that can be negative), sampled at 9 stops:
// orange at the low end, white in the middle, purple at the high end
const PUOR = ["#7f3b08", "#be630a", "#ef9e3c", "#fed7a2", "#f6f6f7", "#cecde4", "#988dbe", "#5d3790",
  "#2d004b"];

function shade(stops, value, lo, hi) {
  const t = Math.min(1, Math.max(0, (value - lo) / (hi - lo || 1))) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(t));
  const a = hex(stops[i]);
  const b = hex(stops[i + 1]);
  const mix = a.map((x, k) => Math.round(x + (b[k] - x) * (t - i)));
  return `rgb(${mix.join(",")})`;
}

export function colour(value, lo = 0, hi = 1) {
  return shade(CIVIDIS, value, lo, hi);
}

// The diverging colour of value in [lo, hi] (PuOr), for signed values such as chapter 8's PE table.
export function diverging(value, lo = -1, hi = 1) {
  return shade(PUOR, value, lo, hi);
}

// The text colour on colour(value): black or white, whichever contrasts more with the shade (WCAG's
// relative luminance; at least 4.6:1 on every cividis shade, so normal-size text passes AA).
export function ink(value, lo = 0, hi = 1) {
  const lin = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const [r, g, b] = colour(value, lo, hi).slice(4, -1).split(",").map((c) => lin(Number(c) / 255));
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) ? "#000" : "#fff";
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
// turned by 60 degrees, and opts.xlabel goes under the matrix. The title (opts.title) is written
// above the picture as its caption.
//
// On a screen narrower than the picture (a phone) it is drawn in three parts, all at their own size
// (labels 13 px): the colour bar lies under the matrix instead of beside it, and if the matrix is still
// wider than the figure it scrolls sideways with its row labels pinned at the left edge (a separate
// picture, position: sticky), so that every row stays named while the reader scrolls to the last
// column (at 360 px the rows of chapter 6's MiniLM heatmap scrolled out of view).
export function heatmap(container, matrix, rowLabels, colLabels, opts = {}) {
  const title = opts.title || "attention weights";
  // opts.ylabel: the rows' name, turned up the left edge (18 px more on the left)
  const left = (opts.left || 8 + CHAR * Math.max(...rowLabels.map((s) => s.length), 1))
    + (opts.ylabel ? 18 : 0);
  const room = available(container);
  let cell = opts.cell || Math.max(14, Math.min(34, Math.floor(520 / Math.max(colLabels.length, 1))));
  if (room > 0 && left + cell * colLabels.length + 70 > room) {
    // narrower cells where that makes the matrix fit beside its row labels with its numbers kept
    // (26 px at least: chapter 4's translation of six words, 34 px cells, ran 9 px past a phone);
    // opts.minCell: down to that many px, the numbers left to the table below under 26 (chapter 4's
    // translator, 16: a sentence of 11 words fits a phone whole, reader s39_r04)
    const n = Math.max(colLabels.length, 1);
    let fit = Math.floor((room - left - 16) / n);
    if (opts.minCell) {
      // room for the last column's label too, turned, which runs past the matrix (overhang below)
      const half = (CHAR * Math.max(...colLabels.map((s) => s.length), 1)) / 2;
      while (fit > opts.minCell && left + fit * n + Math.max(0, 4 + half - fit / 2) + 6 > room) fit--;
    }
    if (fit >= Math.min(opts.minCell || 26, 26) && fit < cell) cell = fit;
  }
  const longest = CHAR * Math.max(...colLabels.map((s) => s.length), 1);
  const level = longest <= cell - 6;
  const top = opts.top || (level ? (opts.xlabel ? 40 : 22)
    // a label turned by 60 degrees rises sin 60 = 0.87 of its length, about CHAR px a character
    // ("suitcase" was cut to "suitcas" with 6 px a character at 11 px)
    : 12 + longest);
  const matrixW = cell * colLabels.length;
  const matrixH = cell * rowLabels.length;
  const bottom = level ? 10 : 30; // room for a bottom xlabel
  const width = left + matrixW + 70;
  const height = top + matrixH + bottom;
  const split = room > 0 && width > room;
  // the matrix's own picture when split: from the first column to the end of the last column's label
  // (a turned label runs cos 60 = 0.5 of its length to the right of its cell), or of the xlabel
  const overhang = level ? Math.max(0, longest / 2 - cell / 2) : 4 + longest / 2 - cell / 2;
  const xlabelW = opts.xlabel && !level ? CHAR * opts.xlabel.length : 0;
  const x0 = split ? 0 : left; // where the matrix starts in its picture
  const svgW = split ? Math.ceil(Math.max(matrixW + Math.max(overhang, 0) + 4, xlabelW + 4)) : width;
  const svg = el("svg", { width: svgW, height, viewBox: `0 0 ${svgW} ${height}`, role: "img",
    class: "book-live-heatmap", "font-size": LABEL, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = title;
  matrix.forEach((row, i) => row.forEach((v, j) => {
    const r = el("rect", { x: x0 + j * cell, y: top + i * cell, width: cell, height: cell,
      fill: colour(v) }, svg);
    el("title", {}, r).textContent = `${rowLabels[i]} -> ${colLabels[j]}: ${v.toFixed(3)}`;
    if (cell >= 26) {
      const size = opts.valueSize || 11; // ".27" at 11 px: 18 px of a cell of 26 or more
      const dy = 0.4 * size; // the baseline, to centre the text
      const t = el("text", { x: x0 + j * cell + cell / 2, y: top + i * cell + cell / 2 + dy,
        "text-anchor": "middle", "font-size": size,
        fill: ink(v) }, svg);
      t.textContent = v.toFixed(2).replace(/^0/, "");
    }
  }));
  // the row labels (and the ylabel): in the matrix's picture, or in a picture of their own, pinned
  const rows = split ? el("svg", { width: left, height, viewBox: `0 0 ${left} ${height}`,
    class: "book-live-heatmap-rows", "aria-hidden": "true", "font-size": LABEL,
    "font-family": "sans-serif" }) : svg;
  rowLabels.forEach((s, i) => {
    const t = el("text", { x: left - 4, y: top + i * cell + cell / 2 + 0.35 * LABEL, "text-anchor": "end" }, rows);
    t.textContent = s;
  });
  colLabels.forEach((s, j) => {
    const x = x0 + j * cell + cell / 2 + (level ? 0 : 4);
    const t = el("text", level ? { x, y: top - 6, "text-anchor": "middle" }
      : { x, y: top - 4, transform: `rotate(-60 ${x} ${top - 4})` }, svg);
    t.textContent = s;
  });
  if (!split) colourBar(svg, left + matrixW + 16, top, matrixH);
  if (opts.xlabel) {
    const t = el("text", level
      ? { x: x0 + matrixW / 2, y: top - 24, "text-anchor": "middle" }
      : { x: x0, y: height - 8 }, svg);
    t.textContent = opts.xlabel;
  }
  if (opts.ylabel) {
    const y = top + matrixH / 2;
    const t = el("text", { x: 12, y, "text-anchor": "middle", transform: `rotate(-90 12 ${y})` }, rows);
    t.textContent = opts.ylabel;
  }
  svg.dataset.values = JSON.stringify(matrix);
  svg.dataset.rows = JSON.stringify(rowLabels);
  svg.dataset.cols = JSON.stringify(colLabels);
  // The title as the figure's caption, above the box that scrolls (so it stays in view); the picture
  // at its own size (labels stay readable) in a scroll container that says when it scrolls (a phone
  // shows about 9 of 16 columns); the same numbers as a table for screen readers and copying.
  const caption = html("p", { class: "book-live-caption", "aria-hidden": "true" }, null, title);
  const scroller = scrollBox(title);
  if (split) {
    const line = html("div", { class: "book-live-heatmap-split" }, scroller);
    line.append(rows, svg);
  } else {
    scroller.appendChild(svg);
  }
  const parts = [caption, scroller];
  if (split) parts.push(horizontalBar(Math.min(room, 240)));
  container.replaceChildren(...parts, numbersTable(matrix, rowLabels, colLabels, title,
    opts.corner || "query \\ key", container));
  if (split) {
    // the two pictures cut to what they draw (the labels' widths above are estimates): the row labels
    // and the matrix side by side fit the screen when they can
    fitToContent(rows, left, left);
    fitToContent(svg, 0, matrixW);
  }
  return svg;
}

// Narrow an SVG, drawn in the page, to its content's extent and at least [x0, x1] (2 px to spare).
function fitToContent(svg, x0, x1) {
  let box;
  try {
    box = svg.getBBox();
  } catch {
    return; // not rendered (a hidden figure): keep the estimate
  }
  if (!box.width) return;
  const a = Math.floor(Math.min(x0, box.x) - 2);
  const b = Math.ceil(Math.max(x1, box.x + box.width) + 2);
  const h = svg.viewBox.baseVal.height;
  svg.setAttribute("width", b - a);
  svg.setAttribute("viewBox", `${a} 0 ${b - a} ${h}`);
}

// The width a figure's drawing may take in its live figure: the figure's content box (0 if unknown).
function available(container) {
  const root = container.closest ? container.closest(".book-live") : null;
  if (!root || !root.clientWidth) return 0;
  const s = getComputedStyle(root);
  return root.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
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

// The colour bar laid flat under a heatmap on a narrow screen: 0 (left) to 1 (right), width px wide,
// labelled 0, 0.5 and 1 under it at the labels' size.
function horizontalBar(width) {
  const barW = width - 24;
  const svg = el("svg", { width, height: 34, viewBox: `0 0 ${width} 34`, role: "img",
    class: "book-live-colourbar", "font-size": LABEL, "font-family": "sans-serif" });
  el("title", {}, svg).textContent = "colour bar: dark for 0, bright for 1";
  for (let k = 0; k < 50; k++) {
    el("rect", { x: 12 + k * barW / 50, y: 2, width: barW / 50 + 0.5, height: 12,
      fill: colour(k / 49) }, svg);
  }
  [0, 0.5, 1].forEach((v) => {
    const t = el("text", { x: 12 + v * barW, y: 30, "text-anchor": "middle" }, svg);
    t.textContent = v.toFixed(1);
  });
  return svg;
}

// A horizontal scroll container that the keyboard can scroll (tabindex 0, named region); the site's
// scroll-cue script (book/_static/reader.js) marks it with a visible "scroll sideways" cue when its
// content is wider than the screen.
export function scrollBox(name, parent = null) {
  return html("div", { class: "book-scroll", role: "region", tabindex: "0",
    "aria-label": `${name} (scrolls sideways when wider than the screen)` }, parent);
}

// The numbers of a matrix as a table, folded under a summary: the text alternative of a heatmap.
// `replacing`: the element whose table this one replaces when the figure is drawn again; the new
// table is open if that one was, so a reader who opened it keeps it open while moving the figure.
export function numbersTable(matrix, rowLabels, colLabels, title, corner = "", replacing = null) {
  const details = html("details", { class: "book-live-numbers" });
  details.open = replacing?.querySelector("details.book-live-numbers")?.open === true;
  html("summary", {}, details, "The numbers, as a table");
  // the title above the box that scrolls, so that it stays whole and in view when the table is wider
  // than a phone (the table is named by it for screen readers)
  html("p", { class: "book-live-numbers-caption", "aria-hidden": "true" }, details, title);
  const box = scrollBox(`table: ${title}`, details);
  const table = html("table", { class: "book-live-numbers-table", "aria-label": title }, box);
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
