// The translator live figure (chapter 4): the Bahdanau model of chapters 1 and 4, exported from
// lib.seq2seq, translates the reader's sentence greedily in the browser (the encoder once, then one
// decoder step per output word) and draws the alignment: one row per output word, one column per
// source word, the attention the decoder used to write it.
import { heatmap, html, textAndButton } from "../draw.js";
import { int64 } from "../runtime.js";
import { WordVocab } from "../tokenizers.js";

// the source and target tokenizers, built once per page from the translator's vocabulary file
let vocabularies = null;

// Long by design: a closure over the figure's controls and its current result; its parts (drawing,
// running the model, the controls' handlers) are short and share that state.
export function mountTranslator(root, example, ctx) {
  const { form, input, compute } = textAndButton(root, "English-like sentence", example.source, 50,
    "source sentence", "Translate");
  // beside the greyed button, why it is grey until the model is loaded (reader s22: only the prose,
  // several lines above the figure, said so); the load button sits just under the input (reader s30:
  // at the figure's bottom it was 450 px below it at 1280 px, 700 at 360)
  const hint = html("span", { class: "book-live-status book-live-hint", id: "book-live-translator-hint" },
    form, "Load the model first: the button just below.");
  compute.setAttribute("aria-describedby", hint.id);
  const words = html("details", { class: "book-live-vocab" }, root);
  html("summary", {}, words, `The source language's ${example.source_words.length} words`);
  html("p", {}, words, example.source_words.join(" "));
  const output = html("p", { class: "book-live-translation" }, root);
  const map = html("div", { class: "book-live-map" }, root);

  function draw(source, target, attention) {
    output.textContent = `Translation: ${target.filter((t) => t !== "<eos>").join(" ")}`;
    heatmap(map, attention, target, source, { title: "alignment: rows are output words, " +
      "columns source words", xlabel: "source word", ylabel: "output word",
      corner: "output \\ source", minCell: 16 });
    root.dataset.values = JSON.stringify(attention);
    root.dataset.tokens = JSON.stringify(target);
  }

  async function run() {
    root.dataset.state = "running";
    try {
      const manifest = await ctx.manifest();
      const maxIn = manifest.models.translator_encoder.max_tokens;
      const maxOut = manifest.models.translator_decoder.max_output;
      vocabularies ??= ctx.vocabulary("translator_encoder", true).then((v) => [
        new WordVocab(v.source, v.specials.unk, v.specials.eos),
        new WordVocab(v.target, v.specials.unk, v.specials.eos),
      ]);
      const [source, target] = await vocabularies;
      let enc = source.encode(input.value);
      const notes = [];
      if (!enc.tokens.length) {
        ctx.message(root, "Type a sentence first: the text is empty.", "warning");
        // the previous sentence's translation and heatmap would read as this input's
        output.textContent = "";
        map.replaceChildren();
        delete root.dataset.values;
        delete root.dataset.tokens;
        root.dataset.state = "ready";
        return;
      }
      if (enc.tokens.length > maxIn) {
        notes.push(`The sentence has ${enc.tokens.length} words; the model was trained on at most ` +
          `${maxIn}: cut to ${maxIn} words.`);
        enc = source.encode(enc.tokens.slice(0, maxIn).join(" "));
      }
      if (enc.unknown.length) {
        notes.push(`Not in the corpus's vocabulary, so read as <unk>: ${enc.unknown.map((w) => `“${w}”`).join(", ")}. ` +
          "The model only knows the generated language's words (open the list). " +
          "For an <unk> it writes what it finds likeliest there: usually a wrong word, or no word at all.");
      }
      const S = enc.ids.length;
      const out = await ctx.run("translator_encoder", { src_ids: { data: int64(enc.ids), dims: [1, S] } });
      const memory = { data: out.memory.data, dims: out.memory.dims };
      let state = { data: out.state.data, dims: out.state.dims };
      const mask = { data: int64(enc.ids.map(() => 1)), dims: [1, S] };
      let token = manifest.models.translator_decoder.bos ?? 1;
      const ids = [];
      const rows = [];
      for (let t = 0; t < maxOut; t++) {
        const step = await ctx.run("translator_decoder", { prev_token: { data: int64([token]), dims: [1] },
          state, memory, src_mask: mask });
        const logits = step.logits.data;
        token = 0;
        for (let v = 1; v < logits.length; v++) if (logits[v] > logits[token]) token = v;
        ids.push(token);
        rows.push(Array.from(step.attention.data));
        state = { data: step.state_out.data, dims: step.state_out.dims };
        if (token === target.eosId) break;
      }
      ctx.message(root, notes.join(" "), notes.length ? "warning" : "info");
      draw(enc.tokens, target.decode(ids), rows);
      root.dataset.state = "computed";
    } catch (err) {
      ctx.message(root, `The model could not run: ${err.message}`, "error");
      root.dataset.state = "error";
    }
  }

  compute.addEventListener("click", run);
  draw(example.source.split(" "), example.tokens, example.attention);
  root.dataset.state = "example";
  ctx.loadModel(root, ["translator_encoder", "translator_decoder"], undefined, form).then(() => {
    compute.disabled = false;
    hint.remove();
    compute.removeAttribute("aria-describedby");
    root.dataset.state = "ready";
    return run();
  }).catch((err) => {
    ctx.message(root, err.message, "error");
    root.dataset.state = "error";
  });
}
