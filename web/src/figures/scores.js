// Score functions (chapter 3), live: drag the query and the keys in the plane (or type their
// coordinates) and the attention weights of each score function follow, computed in the page as
// lib.attention computes them: cosine, additive v_a^T tanh(W_q q + W_k k), general q^T W_a k, dot q.k,
// scaled dot q.k/sqrt(d) (Bahdanau et al. 2015, eq. 6; Luong et al. 2015, eq. 8), each followed by a
// softmax over the keys, in the order of the chapter's tables. W_a, W_q, W_k and v_a are the example's (seeded in the chapter).
import { colour, el, html, ink } from "../draw.js";

const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const matvec = (M, x) => M.map((row) => dot(row, x));   // M [out][in] (nn.Linear's weight)

export function scores(q, keys, p) {
  const norm = (a) => Math.sqrt(dot(a, a));
  return {
    cosine: keys.map((k) => dot(q, k) / (Math.max(norm(q), 1e-8) * Math.max(norm(k), 1e-8))),
    additive: keys.map((k) => {
      const h = matvec(p.W_q, q).map((x, i) => Math.tanh(x + matvec(p.W_k, k)[i]));
      return dot(p.v_a, h);
    }),
    general: keys.map((k) => dot(q, matvec(p.W_a, k))),
    dot: keys.map((k) => dot(q, k)),
    "scaled dot": keys.map((k) => dot(q, k) / Math.sqrt(k.length)),
  };
}

// The plane's half-width for these points: the longest coordinate and 30% for its point's label,
// rounded up to a half, at least 1 (lib.viz.live.score_plane_span, the same rule)
export function planeSpan(points) {
  const longest = Math.max(...points.flat().map(Math.abs));
  return Math.max(1, Math.ceil(2 * 1.3 * longest) / 2);
}

function softmax(xs) {
  const m = Math.max(...xs);
  const e = xs.map((x) => Math.exp(x - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

// Long by design: a closure over the figure's controls and its current result; its parts (drawing,
// running the model, the controls' handlers) are short and share that state.
export function mountScores(root, example, ctx) {
  let dragging = null; // the index of the point being dragged
  const points = [example.query, ...example.keys].map((p) => [...p]);
  const names = ["q", ...example.keys.map((_, i) => `k${i + 1}`)];
  const size = 300;
  // the plane fits the vectors (at -4 .. 4 the chapter's unit vectors were 35-40 px long); it is
  // refitted after each change, and during a drag only when the point leaves it, so that the
  // dragged point stays under the pointer
  let span = planeSpan(points);
  const toPx = ([x, y]) => [size / 2 + (x / span) * (size / 2), size / 2 - (y / span) * (size / 2)];
  const fromPx = (px, py) => [((px - size / 2) / (size / 2)) * span, ((size / 2 - py) / (size / 2)) * span];
  const views = html("div", { class: "book-live-views" }, root);
  const svg = el("svg", { width: size, height: size, viewBox: `0 0 ${size} ${size}`, role: "img",
    class: "book-live-plane",
    // 14 px: the plane is scaled to the column (about 285 px on a 360 px phone), its names to 13 px
    // (at 12 px they showed at 11, read as 6-8 px: chapter 3's live figure)
    "font-size": 14, "font-family": "sans-serif", style: "touch-action: none; border: 1px solid #ddd" });
  el("title", {}, svg).textContent = "the query q and the keys in the plane: drag them";
  views.appendChild(svg);
  const right = html("div", {}, views);
  const form = html("div", { class: "book-live-controls" }, right);
  const boxes = names.map((n, i) => {
    const wrap = html("label", {}, form, `${n} `);
    return [0, 1].map((c) => html("input", { type: "number", step: 0.1, value: points[i][c].toFixed(2),
      class: `book-live-${n}-${c}`, style: "width: 4.5em", "aria-label": `${n} coordinate ${c + 1}` }, wrap));
  });
  const table = html("div", { class: "book-live-table" }, right);
  // the table's rows in the order of the static picture's bars: the example's weights, as
  // lib.viz.live wrote them (cosine, additive, general, dot, scaled dot: the chapter's order)
  const names5 = Object.keys(scores([0, 0], [[0, 0]], example.params));
  const given = Object.keys(example.weights || {});
  const order = given.length === names5.length && names5.every((n) => given.includes(n)) ? given : names5;

  function redraw(fromBoxes = false) {
    if (fromBoxes) {
      const raw = boxes.map((pair) => pair.map((b) => b.value.trim()));
      if (raw.flat().some((v) => v === "" || !Number.isFinite(Number(v)))) {
        ctx.message(root, "Every coordinate must be a number.", "warning");
        return;
      }
      raw.forEach((pair, i) => { points[i] = pair.map(Number); });
    }
    ctx.message(root, "", "info");
    if (dragging === null || points[dragging].some((v) => Math.abs(v) > span)) span = planeSpan(points);
    root.dataset.span = span;
    svg.querySelectorAll("g.pt, .axis").forEach((n) => n.remove());
    el("line", { class: "axis", x1: 0, x2: size, y1: size / 2, y2: size / 2, stroke: "#ccc" }, svg);
    el("line", { class: "axis", y1: 0, y2: size, x1: size / 2, x2: size / 2, stroke: "#ccc" }, svg);
    // the scale, which changes with the vectors: the coordinate at the end of each axis
    el("text", { class: "axis", x: size - 4, y: size / 2 + 18, "text-anchor": "end", fill: "#555" },
      svg).textContent = String(span);
    el("text", { class: "axis", x: size / 2 + 5, y: 16, fill: "#555" }, svg).textContent = String(span);
    points.forEach((p, i) => {
      const [x, y] = toPx(p);
      const g = el("g", { class: "pt", "data-index": i, style: "cursor: grab" }, svg);
      el("line", { x1: size / 2, y1: size / 2, x2: x, y2: y, stroke: i === 0 ? "#e8710a" : "#1f5fa8",
        "stroke-width": 2 }, g);
      el("circle", { cx: x, cy: y, r: 8, fill: i === 0 ? "#e8710a" : "#1f5fa8" }, g);
      // the name beyond the point's end, on the side it points to: off its own line
      const left = x < size / 2, below = y > size / 2;
      const t = el("text", { x: x + (left ? -10 : 10), y: y + (below ? 20 : -8),
        "text-anchor": left ? "end" : "start" }, g);
      t.textContent = names[i];
    });
    const q = points[0];
    const keys = points.slice(1);
    const all = scores(q, keys, example.params);
    const weights = {};
    // the keys' names alone in the heading, the rest in the caption: with "weight on k1" headings the
    // table was wider than a 360 px screen
    const t = html("table", { class: "book-live-ranking book-live-shaded" });
    html("caption", {}, t, "The weight of q on each key, by score function (shaded as the heatmaps: dark 0, yellow 1)");
    const head = html("tr", {}, html("thead", {}, t));
    html("th", { scope: "col" }, head, "score");
    names.slice(1).forEach((n) => html("th", { scope: "col" }, head, n));
    const body = html("tbody", {}, t);
    for (const name of order) {
      weights[name] = softmax(all[name]);
      const tr = html("tr", {}, body);
      html("th", { scope: "row" }, tr, name);
      // each weight shaded by its value on the heatmaps' scale (the masked-softmax figure's), its
      // number kept in black or white, whichever reads better on the shade
      // two decimals, as the prose quotes them (three ran the k3 column past a 360 px screen)
      weights[name].forEach((w) => html("td", { style: `background: ${colour(w)}; color: ${ink(w)}`,
        "data-weight": w }, tr, w.toFixed(2)));
    }
    table.replaceChildren(t);
    if (!fromBoxes) boxes.forEach((pair, i) => pair.forEach((b, c) => { b.value = points[i][c].toFixed(2); }));
    root.dataset.values = JSON.stringify(weights);
    root.dataset.state = "computed";
  }

  svg.addEventListener("pointerdown", (e) => {
    const g = e.target.closest("g.pt");
    if (g) { dragging = Number(g.dataset.index); svg.setPointerCapture(e.pointerId); }
  });
  svg.addEventListener("pointermove", (e) => {
    if (dragging === null) return;
    const r = svg.getBoundingClientRect();
    const k = size / r.width; // the plane is scaled down on a narrow screen
    points[dragging] = fromPx((e.clientX - r.left) * k, (e.clientY - r.top) * k).map((v) => Math.round(v * 100) / 100);
    redraw();
  });
  svg.addEventListener("pointerup", () => {
    if (dragging === null) return;
    dragging = null;
    redraw(); // refit the plane to where the point was left
  });
  boxes.flat().forEach((b) => b.addEventListener("input", () => redraw(true)));
  redraw();
}
