// The masked-softmax table (chapter 3) with editable unmasked scores, computed in the page as
// lib.attention.masked_softmax does: masked entries get weight exactly 0, each row's softmax runs over
// the keys it may see, and a row that may see nothing gets zeros.
import { scrollBox, heatmap, html } from "../draw.js";

export function maskedSoftmax(scores, mask) {
  return scores.map((row, i) => {
    const allowed = row.map((_, j) => mask[i][j]);
    if (!allowed.some(Boolean)) return row.map(() => 0);
    const max = Math.max(...row.filter((_, j) => allowed[j]));
    const e = row.map((s, j) => (allowed[j] ? Math.exp(s - max) : 0));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / total);
  });
}

export function mountMaskedSoftmax(root, example, ctx) {
  const n = example.scores.length;
  const labels = example.labels;
  const table = html("table", { class: "book-live-scores" }, scrollBox("the scores", root));
  const caption = html("caption", {}, table, "");
  const head = html("tr", {}, html("thead", {}, table));
  html("th", {}, head, "query \\ key");
  labels.forEach((l) => html("th", {}, head, l));
  const body = html("tbody", {}, table);
  const inputs = example.scores.map((row, i) => {
    const tr = html("tr", {}, body);
    html("th", {}, tr, labels[i]);
    return row.map((v, j) => {
      const td = html("td", {}, tr);
      // 4.5em wide, 3.2em without spinners on a phone (live.css): the 4 x 4 table fits a 360 px screen
      const box = html("input", { type: "number", step: 0.01, value: v,
        "aria-label": `score of query ${labels[i]} for key ${labels[j]}` }, td);
      return box;
    });
  });
  const causalLabel = html("label", {}, root, " causal mask ");
  const causal = html("input", { type: "checkbox", class: "book-live-causal" }, causalLabel);
  causal.checked = example.causal;
  const map = html("div", { class: "book-live-map" }, root);

  function redraw() {
    const mask = labels.map((_, i) => labels.map((__, j) => !causal.checked || j <= i));
    // the heading says what the toggle does now
    caption.textContent = causal.checked
      ? "Scores (edit the unmasked ones); hatched cells with a dashed edge are masked, a query never sees a later key: switch the mask off to edit them."
      : "Scores (edit them); no mask: every query sees every key.";
    // a masked score is not read: its box is disabled (skipped by the Tab key, and announced as
    // unavailable), not merely faded, which would leave readable-looking text below contrast; its cell is
    // hatched with a dark dashed edge (live.css), told apart without colour (review s24: the grey alone
    // was 1.1:1 against the white of the others)
    inputs.forEach((row, i) => row.forEach((box, j) => {
      box.disabled = !mask[i][j];
      box.parentElement.classList.toggle("book-live-masked", !mask[i][j]);
    }));
    const raw = inputs.map((row) => row.map((box) => box.value.trim()));
    const scores = raw.map((row) => row.map(Number));
    if (raw.some((row) => row.some((v) => v === "" || !Number.isFinite(Number(v))))) {
      ctx.message(root, "Every score must be a number.", "warning");
      root.dataset.state = "error";
      return;
    }
    ctx.message(root, "", "info");
    const weights = maskedSoftmax(scores, mask);
    // a 4 x 4 table: cells of 48 px with 13 px numbers, readable at the page's own size
    heatmap(map, weights, labels, labels, { title: "attention weights after the masked softmax",
      xlabel: "key", cell: 48, valueSize: 13 });
    root.dataset.values = JSON.stringify(weights);
    root.dataset.state = "computed";
  }

  inputs.flat().forEach((box) => box.addEventListener("input", redraw));
  causal.addEventListener("change", redraw);
  redraw();
}
