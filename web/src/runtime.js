// The context every live figure gets (ctx): the manifest, models loaded on the reader's request into
// the worker, inference, tokenizers, and messages shown inside the figure.
import { WordPiece, WordVocab } from "./tokenizers.js";

export function createContext(base) {
  let manifestPromise = null;
  let worker = null;
  let nextId = 1;
  const pending = new Map();
  const loaded = new Map(); // name -> promise of the session being ready
  const vocabs = new Map();
  const waiting = new Set(); // figures whose load button waits: told when a model starts loading
  let runtimeStarted = false;

  function url(path) {
    return new URL(path, base).href;
  }

  function getWorker() {
    if (!worker) {
      worker = new Worker(url("worker.js"), { type: "module" });
      worker.onmessage = (event) => {
        const { id, ok, error, ...rest } = event.data;
        const p = pending.get(id);
        pending.delete(id);
        if (p) (ok ? p.resolve(rest) : p.reject(new Error(error)));
      };
      worker.onerror = (event) => {
        for (const p of pending.values()) p.reject(new Error(event.message || "the worker failed"));
        pending.clear();
      };
    }
    return worker;
  }

  function call(msg, transfer = []) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      getWorker().postMessage({ id, ...msg }, transfer);
    });
  }

  async function fetchChecked(path) {
    const response = await fetch(url(path));
    if (!response.ok) throw new Error(`could not load ${path} (HTTP ${response.status})`);
    return response;
  }

  const ctx = {
    base,
    manifest() {
      if (!manifestPromise) manifestPromise = fetchChecked("models/manifest.json").then((r) => r.json());
      return manifestPromise;
    },

    // Renders a button stating the download size; on click downloads the model with a progress bar
    // and starts its session in the worker. Resolves when the model can run.
    async loadModel(container, names, label = "Run the real model in your browser") {
      names = Array.isArray(names) ? names : [names];
      const started = () => names.every((n) => loaded.has(n));
      if (started()) return Promise.all(names.map((n) => loaded.get(n)));
      const manifest = await ctx.manifest();
      const entries = names.map((n) => manifest.models[n]);
      const modelBytes = entries.reduce((s, e) => s + e.bytes + (e.vocab_bytes || 0), 0);
      const runtime = runtimeStarted ? 0 : manifest.runtime_bytes || 0;
      const bar = container.querySelector(".book-live-load") || document.createElement("div");
      bar.className = "book-live-load";
      bar.innerHTML = "";
      const button = document.createElement("button");
      button.type = "button";
      button.className = "book-live-button";
      button.textContent = `${label} (downloads ${((modelBytes + runtime) / 1e6).toFixed(0)} MB once: ` +
        `the model ${(modelBytes / 1e6).toFixed(0)} MB` +
        (runtime ? `, the runtime ${(runtime / 1e6).toFixed(0)} MB)` : ")");
      bar.appendChild(button);
      container.appendChild(bar);
      // Resolves on a click here, or when another figure of the page starts loading the same model.
      const clicked = await new Promise((resolve) => {
        button.addEventListener("click", () => resolve(true), { once: true });
        const check = () => { if (started()) { waiting.delete(check); resolve(false); } };
        waiting.add(check);
      });
      if (!clicked) {
        button.remove();
        const note = document.createElement("span");
        note.textContent = "Loading the model (started by another figure of this page)...";
        bar.append(note);
        await Promise.all(names.map((n) => loaded.get(n)));
        bar.remove();
        return undefined;
      }
      if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
        throw new Error("This browser cannot run the model: it lacks WebAssembly or Web Workers. " +
          "The figure shows the precomputed example.");
      }
      runtimeStarted = true;
      button.remove();
      const progress = document.createElement("progress");
      progress.max = modelBytes;
      progress.value = 0;
      progress.setAttribute("aria-label", "downloading the model");
      const note = document.createElement("span");
      note.className = "book-live-progress-note";
      bar.append(progress, note);
      let done = 0;
      const ready = names.map((name, i) => {
        if (!loaded.has(name)) {
          loaded.set(name, (async () => {
            const response = await fetchChecked(`models/${entries[i].file}`);
            const reader = response.body.getReader();
            const chunks = [];
            for (;;) {
              const { done: end, value } = await reader.read();
              if (end) break;
              chunks.push(value);
              done += value.length;
              progress.value = done;
              note.textContent = ` ${(done / 1e6).toFixed(1)} of ${(modelBytes / 1e6).toFixed(1)} MB`;
            }
            const buffer = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
            let offset = 0;
            for (const c of chunks) { buffer.set(c, offset); offset += c.length; }
            note.textContent = " starting the model...";
            await call({ type: "load", name, bytes: buffer.buffer }, [buffer.buffer]);
          })());
          loaded.get(name).catch(() => loaded.delete(name));
        }
        return loaded.get(name);
      });
      for (const check of [...waiting]) check();
      try {
        await Promise.all(ready);
      } finally {
        bar.remove();
      }
      return undefined;
    },

    async run(name, feeds) {
      const msg = {};
      for (const [k, v] of Object.entries(feeds)) {
        const type = v.data instanceof BigInt64Array ? "int64" : "float32";
        msg[k] = { type, data: v.data, dims: v.dims };
      }
      const result = await call({ type: "run", name, feeds: msg });
      result.outputs.ms = result.ms;
      return result.outputs;
    },

    async tokenizer(name) {
      if (!vocabs.has(name)) {
        vocabs.set(name, (async () => {
          const manifest = await ctx.manifest();
          if (name === "minilm") {
            const text = await (await fetchChecked(`models/${manifest.models.minilm.vocab}`)).text();
            return new WordPiece(text);
          }
          if (name === "translation_source" || name === "translation_target") {
            const v = await (await fetchChecked(`models/${manifest.models.translator_encoder.vocab}`)).json();
            return new WordVocab(name === "translation_source" ? v.source : v.target, v.specials.unk,
              v.specials.eos);
          }
          if (name === "stories") {
            const v = await (await fetchChecked(`models/${manifest.models.gpt.vocab}`)).json();
            const vocab = new WordVocab(v.tokens, v.specials.unk, v.specials.eos);
            vocab.bosId = v.specials.bos;
            return vocab;
          }
          throw new Error(`no tokenizer ${name}`);
        })());
      }
      return vocabs.get(name);
    },

    message(container, text, level = "info") {
      let box = container.querySelector(".book-live-message");
      if (!box) {
        box = document.createElement("p");
        box.className = "book-live-message";
        box.setAttribute("role", "status");
        container.appendChild(box);
      }
      box.dataset.level = level;
      box.textContent = text;
      box.hidden = !text;
    },
  };
  return ctx;
}
