// The GPT live figure (chapter 13): the small GPT trained on the book's stories (lib.gpt.GPT, exported
// to ONNX) reads the reader's prompt; the figure shows the next-token distribution under temperature,
// top-k and top-p (lib.decoding.sampling_distribution's rules, web/src/sampling.js), lets the reader append
// the greedy or a sampled token, and draws the last token's causal attention in every layer and head.
import { heatmap, html, el, numbersTable, textAndButton } from "../draw.js";
import { int64 } from "../runtime.js";
import { draw as drawToken, readSettings, samplingDistribution, seededRandom } from "../sampling.js";
import { WordVocab } from "../tokenizers.js";

// the tokenizer, built once per page from the model's vocabulary file
let storyVocab = null;

// A token as a label: a bare "." is a speck beside a bar or under a column (Fig. 13.4 writes it so too).
const shown = (token) => (token === "." ? "(period)" : token);

// The most probable next tokens as bars. 320 px wide with 14 px text: scaled to a 360 px phone's
// column (about 300 px) its words show at 13 px (420 px wide at 12 px, they showed at 8.6 px). Only
// the tokens that can be drawn: after a cut that keeps one token, the zeros listed in vocabulary
// order (<pad>, <bos>, ...) told nothing (reader s27, chapter 13, point 6).
function bars(container, probs, itos, n = 15) {
  const order = [...probs.keys()].filter((v) => probs[v] > 0)
    .sort((a, b) => probs[b] - probs[a] || a - b).slice(0, n);
  const rowH = 22;
  const width = 320;
  const font = 14;
  // the tokens' column: about 8 px a character at 14 px, 64 px at least
  const left = Math.min(120, Math.max(64, 10 + 8 * Math.max(...order.map((v) => itos[v].length), 1)));
  const span = width - left - 4 - 46; // the longest bar, and room for "0.123" after it
  const height = rowH * order.length + 8;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "font-size": font, "font-family": "sans-serif", class: "book-live-bars" });
  el("title", {}, svg).textContent = "the most probable next tokens";
  order.forEach((v, i) => {
    const y = 4 + i * rowH;
    const t = el("text", { x: left - 4, y: y + 15, "text-anchor": "end" }, svg);
    t.textContent = shown(itos[v]);
    el("rect", { x: left, y, width: Math.max(1, probs[v] * span), height: rowH - 4, fill: "#1f5fa8" }, svg);
    const p = el("text", { x: left + 4 + probs[v] * span, y: y + 15 }, svg);
    p.textContent = probs[v].toFixed(3);
  });
  container.replaceChildren(svg, numbersTable(order.map((v) => [probs[v]]), order.map((v) => itos[v]),
    ["probability"], "the most probable next tokens", "token", container));
}

// The prompt as the model reads it: <bos> and the ids (the last maxTokens of them), the tokens read
// (an unknown word is <unk> to the model, and so in the heatmap's labels), and notes for the reader.
function encodePrompt(vocab, text, maxTokens) {
  const enc = vocab.encode(text);
  const notes = [];
  if (!enc.tokens.length) {
    notes.push("The prompt is empty: the model predicts the first word of a story, after <bos>.");
  }
  if (enc.unknown.length) {
    notes.push(`Not in the stories' vocabulary, so read as <unk>: ${enc.unknown.map((w) => `“${w}”`).join(", ")}. ` +
      "Write punctuation apart (\"too tired .\") and use the stories' words.");
  }
  let ids = [vocab.bosId, ...enc.ids];
  let tokens = ["<bos>", ...enc.ids.map((id, i) => (id === vocab.unkId ? vocab.itos[id] : enc.tokens[i]))];
  if (ids.length > maxTokens) {
    notes.push(`The prompt has ${ids.length} tokens; the model reads at most ${maxTokens}: ` +
      `cut to the last ${maxTokens} tokens.`);
    ids = ids.slice(-maxTokens);
    tokens = tokens.slice(-maxTokens);
  }
  return { ids, tokens, notes };
}

// From the model's outputs for T tokens: the last token's logits [V] and its attention in every
// layer and head, [L][H][T].
function lastToken(out, T) {
  const [, , V] = out.logits.dims;
  const logits = Array.from(out.logits.data.subarray((T - 1) * V, T * V));
  const [L, H] = out.attentions.dims;
  const lastAttention = [];
  for (let l = 0; l < L; l++) {
    const layer = [];
    for (let h = 0; h < H; h++) {
      const start = ((l * H + h) * T + (T - 1)) * T;
      layer.push(Array.from(out.attentions.data.subarray(start, start + T)));
    }
    lastAttention.push(layer);
  }
  return { logits, lastAttention };
}

// The prompt box and Compute, the sampling settings with the two step buttons, and the two panes.
function gptControls(root, example) {
  const { input, compute } = textAndButton(root, "Prompt", example.prompt, 50,
    "prompt in the story language", "Compute");
  const settings = html("div", { class: "book-live-controls" }, root);
  const field = (name, value, attrs) => {
    const wrap = html("label", {}, settings, `${name} `);
    return html("input", { type: "number", value, class: `book-live-${name.replace(/ /g, "-")}`,
      style: "width: 5em", "aria-label": name, ...attrs }, wrap);
  };
  const temperature = field("temperature", "1", { min: 0, max: 5, step: 0.1 });
  const topK = field("top-k", "0", { min: 0, step: 1, title: "0 = off" });
  const topP = field("top-p", "1", { min: 0, max: 1, step: 0.05, title: "1 = off; 0 = greedy" });
  // the two step buttons wrap together (at 1280 px "Sample step" was left alone on a line of its own)
  const steps = html("span", { class: "book-live-steps" }, settings);
  const greedy = html("button", { type: "button", class: "book-live-greedy", disabled: "" }, steps,
    "Greedy step");
  const sample = html("button", { type: "button", class: "book-live-sample", disabled: "" }, steps,
    "Sample step");
  const views = html("div", { class: "book-live-views" }, root);
  const barBox = html("div", {}, views);
  const map = html("div", { class: "book-live-map" }, views);
  return { input, compute, temperature, topK, topP, greedy, sample, barBox, map };
}

// The story language's words (loaded once for the page), with <bos>'s id for the prompt's start.
function storyVocabulary(ctx) {
  storyVocab ??= ctx.vocabulary("gpt", true).then((v) => {
    const vocab = new WordVocab(v.tokens, v.specials.unk, v.specials.eos);
    vocab.bosId = v.specials.bos;
    return vocab;
  });
  return storyVocab;
}

// Long by design: a closure over the figure's current prediction (its tokens, logits and last-token
// attention); its parts (distribution, redraw, run, step) are short and share that state.
export function mountGpt(root, example, ctx) {
  const { input, compute, temperature, topK, topP, greedy, sample, barBox, map } = gptControls(root, example);
  const random = seededRandom(0);
  let current = { tokens: example.tokens, logits: null, probs: example.next_probs,
    lastAttention: example.last_attention, itos: example.itos };

  // what the prompt's encoding had to say (unknown words, a cut); the settings add their own note
  let promptNotes = [];

  function distribution() {
    const s = readSettings(temperature.value, topK.value, topP.value);  // throws on a bad setting
    const probs = current.logits ? samplingDistribution(current.logits, s.temperature, s.topK, s.topP)
      : Float64Array.from(current.probs);
    return { probs, note: s.note };
  }

  // A document ends at <eos>: the steps stop there, as the chapter's samples are shown up to it (the
  // training stream would go on with <bos> and a new document; reader s32, chapter 13, point 7).
  const ended = () => current.tokens.at(-1) === "<eos>";

  function redraw() {
    let probs = null;
    let note;
    try {
      ({ probs, note } = distribution());
    } catch (err) {
      note = err.message;  // a bad setting: said, and no bars or map drawn from it
    }
    const end = ended() ? "The text ended with <eos>: the steps stop there. Edit the prompt to go on."
      : "";
    const notes = [...promptNotes, note, end].filter((n) => n);
    ctx.message(root, notes.join(" "), promptNotes.length || !probs ? "warning" : "info");
    root.dataset.values = JSON.stringify(probs ? Array.from(probs) : []);
    root.dataset.tokens = JSON.stringify(current.tokens);
    if (!probs) {
      // the previous prompt's map would sit beside an error (reader s32, chapter 13, point 7)
      barBox.replaceChildren();
      map.replaceChildren();
      return probs;
    }
    bars(barBox, probs, current.itos);
    const rows = [];
    const labels = [];
    current.lastAttention.forEach((layer, l) => layer.forEach((row, h) => {
      rows.push(row);
      labels.push(`layer ${l}, head ${h}`);
    }));
    heatmap(map, rows, labels, current.tokens.map(shown), { title: "attention of the last token", cell: 24,
      xlabel: "earlier tokens it attends to" });
    return probs;
  }

  async function run() {
    root.dataset.state = "running";
    try {
      const manifest = await ctx.manifest();
      const entry = manifest.models.gpt;
      const vocab = await storyVocabulary(ctx);
      const { ids, tokens, notes } = encodePrompt(vocab, input.value, entry.max_tokens);
      const T = ids.length;
      const out = await ctx.run("gpt", { input_ids: { data: int64(ids), dims: [1, T] } });
      const { logits, lastAttention } = lastToken(out, T);
      current = { tokens, logits, probs: null, lastAttention, itos: vocab.itos };
      promptNotes = notes;
      redraw();
      root.dataset.state = "computed";
    } catch (err) {
      ctx.message(root, `The model could not run: ${err.message}`, "error");
      root.dataset.state = "error";
    }
  }

  function step(pick) {
    const probs = redraw();  // a bad setting or an ended text: its message, and no step
    if (!probs || ended()) return Promise.resolve();
    const v = pick(probs);
    input.value = `${input.value.trim()} ${current.itos[v]}`;
    return run();
  }

  compute.addEventListener("click", run);
  for (const box of [temperature, topK, topP]) box.addEventListener("input", redraw);
  greedy.addEventListener("click", () => step((p) => p.indexOf(Math.max(...p))));
  sample.addEventListener("click", () => step((p) => drawToken(p, random)));
  redraw();
  root.dataset.state = "example";
  ctx.loadModel(root, "gpt").then(() => {
    for (const b of [compute, greedy, sample]) b.disabled = false;
    root.dataset.state = "ready";
    return run();
  }).catch((err) => {
    ctx.message(root, err.message, "error");
    root.dataset.state = "error";
  });
}
