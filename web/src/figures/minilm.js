// MiniLM live figures (chapters 6 and 15): the real all-MiniLM-L6-v2, exported from lib.bert.Bert, on the
// reader's own sentence. "minilm-attention": a layer x head selector, the heatmap and a head view.
// "minilm-pair": two sentences and a word pair; heads ranked by how much the weight from one word to
// the other differs between the sentences, shown as the weight in A minus the weight in B (chapter
// 15's "tired"/"wide" test).
import { headView, heatmap, html, scrollBox, textAndButton } from "../draw.js";
import { int64 } from "../runtime.js";
import { WordPiece } from "../tokenizers.js";

// the tokenizer, built once per page from the model's vocabulary file
let wordPiece = null;

// [L][H][T][T] nested arrays from the flat output
function unflatten(data, dims) {
  const [L, H, T] = dims;
  const out = [];
  for (let l = 0; l < L; l++) {
    const layer = [];
    for (let h = 0; h < H; h++) {
      const rows = [];
      for (let i = 0; i < T; i++) {
        const start = ((l * H + h) * T + i) * T;
        rows.push(Array.from(data.subarray(start, start + T)));
      }
      layer.push(rows);
    }
    out.push(layer);
  }
  return out;
}

// Tokenize, check, run; returns {tokens, attentions} or null after showing why not.
async function attend(root, ctx, text) {
  const manifest = await ctx.manifest();
  const max = manifest.models.minilm.max_tokens;
  if (!text.trim()) {
    ctx.message(root, "Type a sentence first: the text is empty.", "warning");
    return null;
  }
  wordPiece ??= ctx.vocabulary("minilm").then((text) => new WordPiece(text));
  const tokenizer = await wordPiece;
  const enc = tokenizer.encode(text, max);
  const notes = [];
  if (enc.truncated) {
    notes.push(`The text has ${enc.nWordPieces} tokens; the model here reads at most ${max}: ` +
      `cut to ${max} tokens.`);
  }
  if (enc.unknown) {
    notes.push(`${enc.unknown} word(s) are not in MiniLM's vocabulary (emoji, rare scripts, ` +
      "symbols) and became [UNK].");
  }
  if (enc.tokens.length === 2) {
    ctx.message(root, "Nothing is left to read after tokenization (only spaces or control " +
      "characters): type a sentence.", "warning");
    return null;
  }
  const T = enc.ids.length;
  const out = await ctx.run("minilm", {
    input_ids: { data: int64(enc.ids), dims: [1, T] },
    attention_mask: { data: int64(enc.ids.map(() => 1)), dims: [1, T] },
    token_type_ids: { data: int64(enc.ids.map(() => 0)), dims: [1, T] },
  });
  ctx.message(root, notes.join(" "), notes.length ? "warning" : "info");
  return { tokens: enc.tokens, attentions: unflatten(out.attentions.data, out.attentions.dims),
    ms: out.ms };
}

function select(parent, label, n, value) {
  const wrap = html("label", { class: "book-live-select" }, parent, `${label} `);
  const s = html("select", { "aria-label": label }, wrap);
  for (let i = 0; i < n; i++) html("option", { value: i }, s, String(i));
  s.value = String(value);
  return s;
}

// The chapter's caption (a child of the figure, under its static picture) describes the example as
// the figure opens: hidden while the figure shows anything else, so that its numbers never stand
// beside the reader's. Returns mark(isExample).
function exampleCaption(root) {
  const caption = root.querySelector(":scope > .book-live-caption");
  return (isExample) => {
    if (caption) caption.hidden = !isExample;
  };
}

// A closure over the figure's controls and its current result; its parts (drawing, running the
// model, the controls' handlers) share that state.
export function mountAttention(root, example, ctx) {
  const perMille = example.attentions_per_mille;
  example.attentions = perMille.map((l) => l.map((h) => h.map((r) => r.map((v) => v / 1000))));
  const L = example.attentions.length;
  const H = example.attentions[0].length;
  let current = { tokens: example.tokens, attentions: example.attentions };
  const { form, input, compute } = textAndButton(root, "Sentence", example.text, 60,
    "sentence for MiniLM", "Compute");
  const layer = select(form, "layer", L, example.layer ?? 3);
  const head = select(form, "head", H, example.head ?? 1);
  const views = html("div", { class: "book-live-views" }, root);
  const map = html("div", { class: "book-live-map" }, views);
  const lines = html("div", { class: "book-live-lines" }, views);
  const status = html("p", { class: "book-live-status" }, root);
  const markCaption = exampleCaption(root);

  function draw() {
    const m = current.attentions[+layer.value][+head.value];
    markCaption(JSON.stringify(current.tokens) === JSON.stringify(example.tokens) &&
      +layer.value === (example.layer ?? 3) && +head.value === (example.head ?? 1));
    heatmap(map, m, current.tokens, current.tokens, {
      title: `layer ${layer.value}, head ${head.value}: rows are queries, columns keys`,
      xlabel: "keys (attended to), named at the top" });
    headView(lines, m, current.tokens);
    // what the lines mean, above them (a reader met this picture with no word on it: review ch06
    // s32, item 4)
    lines.prepend(html("p", { class: "book-live-caption" }, null, "The same head drawn as lines: " +
      "each query (left) to each key (right), a line as dark as its weight."));
    root.dataset.tokens = JSON.stringify(current.tokens);
  }

  async function run() {
    root.dataset.state = "running";
    try {
      const result = await attend(root, ctx, input.value);
      if (result) {
        current = result;
        root.dataset.values = JSON.stringify(result.attentions);
        status.textContent = `Computed in your browser in ${result.ms.toFixed(0)} ms ` +
          `(${result.tokens.length} tokens).`;
        draw();
        root.dataset.state = "computed";
      } else root.dataset.state = "ready";
    } catch (err) {
      ctx.message(root, `The model could not run: ${err.message}`, "error");
      root.dataset.state = "error";
    }
  }

  layer.addEventListener("change", draw);
  head.addEventListener("change", draw);
  compute.addEventListener("click", run);
  draw();
  root.dataset.state = "example";
  status.textContent = "Showing the precomputed example. Load the model to type your own sentence.";
  ctx.loadModel(root, "minilm").then(() => {
    compute.disabled = false;
    root.dataset.state = "ready";
    status.textContent = "The model is ready: type a sentence and press Compute (or Enter).";
    return run();
  }).catch((err) => {
    ctx.message(root, err.message, "error");
    root.dataset.state = "error";
  });
}

function rankHeads(attA, attB, q, k, n = 5) {
  const rows = [];
  attA.forEach((layer, l) => layer.forEach((m, h) => {
    rows.push([l, h, m[q][k] - attB[l][h][q][k], m[q][k], attB[l][h][q][k]]);
  }));
  rows.sort((x, y) => Math.abs(y[2]) - Math.abs(x[2]));
  return rows.slice(0, n);
}

// Long by design: a closure over the figure's controls and its current result; its parts (drawing,
// running the model, the controls' handlers) are short and share that state.
export function mountPair(root, example, ctx) {
  const form = html("div", { class: "book-live-controls" }, root);
  const fields = {};
  for (const [key, label, size] of [["a", "Sentence A", 60], ["b", "Sentence B", 60],
    ["from", "from word", 10], ["to", "to word", 10]]) {
    const wrap = html("label", { class: "book-live-text" }, form, `${label} `);
    fields[key] = html("input", { type: "text", class: `book-live-input book-live-${key}`,
      value: example[key], size, "aria-label": label }, wrap);
  }
  const compute = html("button", { type: "button", class: "book-live-compute", disabled: "" }, form,
    "Rank the heads");
  // why the button is grey, as chapter 4's translator says it (reader s32); the load button just below
  const hint = html("span", { class: "book-live-status book-live-hint", id: "book-live-pair-hint" },
    form, "Load the model first: the button just below.");
  compute.setAttribute("aria-describedby", hint.id);
  const table = html("div", { class: "book-live-table" }, root);
  const markCaption = exampleCaption(root);

  function show(rows, a, b, isExample) {
    markCaption(isExample);
    // the caption above the box that scrolls, so that it wraps to a phone's width and stays whole; the
    // column that ranks, A − B, right after the head's name, so that a phone shows it without scrolling
    const caption = `Heads ranked by how much the weight from "${a}" to "${b}" differs ` +
      "between the sentences: A − B is the weight in sentence A minus the weight in sentence B, " +
      "positive where A gives more.";
    const t = html("table", { class: "book-live-ranking", "aria-label": caption });
    const head = html("tr", {}, html("thead", {}, t));
    for (const c of ["layer", "head", "A − B", "weight in A", "weight in B"]) html("th", {}, head, c);
    const body = html("tbody", {}, t);
    for (const [l, h, change, wa, wb] of rows) {
      const tr = html("tr", {}, body);
      // the difference to three decimals: 0.025 shown as "-0.03" would read as "as much as 0.03"
      const diff = (change >= 0 ? "+" : "−") + Math.abs(change).toFixed(3);
      for (const v of [l, h, diff, wa.toFixed(2), wb.toFixed(2)]) {
        html("td", {}, tr, String(v));
      }
    }
    table.replaceChildren();
    html("p", { class: "book-live-caption", "aria-hidden": "true" }, table, caption);
    scrollBox("ranking of the heads", table).appendChild(t);
    root.dataset.values = JSON.stringify(rows.map((r) => [r[0], r[1], r[2]]));
  }

  // Why the two words cannot be compared across the sentences, in words a reader can act on; "" if they can.
  function misaligned(tokensA, tokensB, from, to) {
    const rule = `"${from}" and "${to}" must each be one token, at the same place in both sentences.`;
    for (const word of [from, to]) {
      for (const [name, tokens] of [["A", tokensA], ["B", tokensB]]) {
        if (tokens.indexOf(word) < 0) {
          return `${rule} "${word}" is not a token of sentence ${name}: ${tokens.join(" ")}`;
        }
      }
      const i = tokensA.indexOf(word);
      if (tokensB[i] !== word) {
        return `${rule} "${word}" is token ${i + 1} of A but token ${tokensB.indexOf(word) + 1} of B. ` +
          `Tokens of A: ${tokensA.join(" ")}. Tokens of B: ${tokensB.join(" ")}`;
      }
    }
    return "";
  }

  function clear() {  // no table of earlier words under a message about these ones
    markCaption(false);
    table.replaceChildren();
    delete root.dataset.values;
  }

  async function run() {
    root.dataset.state = "running";
    try {
      const from = fields.from.value.trim().toLowerCase();
      const to = fields.to.value.trim().toLowerCase();
      const A = await attend(root, ctx, fields.a.value);
      if (!A) { root.dataset.state = "ready"; return; }
      const B = await attend(root, ctx, fields.b.value);
      if (!B) { root.dataset.state = "ready"; return; }
      const q = A.tokens.indexOf(from);
      const k = A.tokens.indexOf(to);
      const problem = misaligned(A.tokens, B.tokens, from, to);
      if (problem) {
        ctx.message(root, problem, "warning");
        clear();
        root.dataset.state = "ready";
        return;
      }
      const same = fields.a.value === example.a && fields.b.value === example.b &&
        from === example.from && to === example.to;
      show(rankHeads(A.attentions, B.attentions, q, k), from, to, same);
      root.dataset.state = "computed";
    } catch (err) {
      clear();
      ctx.message(root, `The model could not run: ${err.message}`, "error");
      root.dataset.state = "error";
    }
  }

  compute.addEventListener("click", run);
  show(example.top_heads.map(([l, h, c, wa, wb]) => [l, h, c, wa, wb]), example.from, example.to,
    true);
  root.dataset.state = "example";
  ctx.loadModel(root, "minilm", undefined, form).then(() => {
    compute.disabled = false;
    hint.remove();
    compute.removeAttribute("aria-describedby");
    root.dataset.state = "ready";
  }).catch((err) => {
    ctx.message(root, err.message, "error");
    root.dataset.state = "error";
  });
}
