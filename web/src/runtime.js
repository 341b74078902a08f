// The context every live figure gets (ctx): the manifest, models loaded on the reader's request into
// the worker, inference, the models' vocabulary files, and messages shown inside the figure.

// A tensor feed of int64 ids for ctx.run: BigInt64Array from numbers.
export function int64(values) {
  return BigInt64Array.from(values, (v) => BigInt(v));
}

// Long by design: a closure over the page's one worker, its pending calls and the models loaded or
// loading; each part below (the worker's calls, the download steps, ctx's methods) is short.
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

  const allLoading = (names) => names.every((n) => loaded.has(n));

  // Megabytes as the button writes them: one decimal under 10 MB, so that chapter 4's translator
  // (0.5 MB of ONNX files) is not rounded up to 1 MB
  const megabytes = (bytes) => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;

  // The load button, stating the download size. Resolves true on a click here, false when another
  // figure of the page starts loading the same models.
  function offerDownload(bar, names, label, modelBytes, runtime) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "book-live-button";
    button.textContent = `${label} (downloads ${megabytes(modelBytes + runtime)} once: ` +
      `the model ${megabytes(modelBytes)}` +
      (runtime ? `, the runtime ${megabytes(runtime)})` : ")");
    bar.appendChild(button);
    return new Promise((resolve) => {
      button.addEventListener("click", () => { button.remove(); resolve(true); }, { once: true });
      const check = () => {
        if (allLoading(names)) { waiting.delete(check); button.remove(); resolve(false); }
      };
      waiting.add(check);
    });
  }

  async function followOtherFigure(bar, names) {
    const note = document.createElement("span");
    note.textContent = "Loading the model (started by another figure of this page)...";
    bar.append(note);
    await Promise.all(names.map((n) => loaded.get(n)));
    bar.remove();
  }

  // A progress bar over `total` bytes; show(done) moves it, say(text) writes beside it.
  function progressBar(bar, total) {
    const progress = document.createElement("progress");
    progress.max = total;
    progress.value = 0;
    progress.setAttribute("aria-label", "downloading the model");
    const note = document.createElement("span");
    note.className = "book-live-progress-note";
    bar.append(progress, note);
    let done = 0;
    return {
      add(n) {
        done += n;
        progress.value = done;
        note.textContent = ` ${(done / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
      },
      say(text) { note.textContent = text; },
    };
  }

  // The bytes of models/<file>, read as they arrive so that the progress bar moves.
  async function download(file, progress) {
    const reader = (await fetchChecked(`models/${file}`)).body.getReader();
    const chunks = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      progress.add(value.length);
    }
    const buffer = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
    let offset = 0;
    for (const c of chunks) { buffer.set(c, offset); offset += c.length; }
    return buffer;
  }

  // The promise of model `name` running in the worker, started once per page.
  function startLoading(name, file, progress) {
    if (!loaded.has(name)) {
      loaded.set(name, (async () => {
        const buffer = await download(file, progress);
        progress.say(" starting the model...");
        await call({ type: "load", name, bytes: buffer.buffer }, [buffer.buffer]);
      })());
      loaded.get(name).catch(() => loaded.delete(name));
    }
    return loaded.get(name);
  }

  const ctx = {
    base,
    manifest() {
      if (!manifestPromise) manifestPromise = fetchChecked("models/manifest.json").then((r) => r.json());
      return manifestPromise;
    },

    // Renders a button stating the download size (at the bottom of `container`, or just after the
    // element `after`); on click downloads the model with a progress bar and starts its session in
    // the worker. Resolves when the model can run.
    async loadModel(container, names, label = "Run the real model in your browser", after = null) {
      names = Array.isArray(names) ? names : [names];
      if (allLoading(names)) return Promise.all(names.map((n) => loaded.get(n)));
      const manifest = await ctx.manifest();
      const entries = names.map((n) => manifest.models[n]);
      const modelBytes = entries.reduce((s, e) => s + e.bytes + (e.vocab_bytes || 0), 0);
      const runtime = runtimeStarted ? 0 : manifest.runtime_bytes || 0;
      const bar = container.querySelector(".book-live-load") || document.createElement("div");
      bar.className = "book-live-load";
      bar.innerHTML = "";
      if (after) after.after(bar);
      else container.appendChild(bar);
      if (!(await offerDownload(bar, names, label, modelBytes, runtime))) {
        await followOtherFigure(bar, names);
        return undefined;
      }
      if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
        throw new Error("This browser cannot run the model: it lacks WebAssembly or Web Workers. " +
          "The figure shows the precomputed example.");
      }
      runtimeStarted = true;
      const progress = progressBar(bar, modelBytes);
      const ready = names.map((name, i) => startLoading(name, entries[i].file, progress));
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

    // The vocabulary file of model `name` (manifest.models[name].vocab), fetched once: its text, or
    // with json, the parsed object. Each figure builds its own tokenizer from it.
    vocabulary(name, json = false) {
      if (!vocabs.has(name)) {
        vocabs.set(name, ctx.manifest().then((manifest) => fetchChecked(`models/${manifest.models[name].vocab}`))
          .then((response) => (json ? response.json() : response.text())));
      }
      return vocabs.get(name);
    },

    // Any file of the site's live folder, checked: an HTTP error is an Error that names the file.
    fetch: fetchChecked,

    message(container, text, level = "info") {
      let box = container.querySelector(".book-live-message");
      if (!box) {
        box = document.createElement("p");
        box.className = "book-live-message";
        box.setAttribute("role", "status");
        // above the figure's output panes, under its controls: a note about the prompt (a word read as
        // <unk>, a bad setting) sat 900 px below the prompt box on a phone (reader s17, chapter 13)
        const views = container.querySelector(":scope > .book-live-views");
        container.insertBefore(box, views);
      }
      box.dataset.level = level;
      box.textContent = text;
      box.hidden = !text;
    },
  };
  return ctx;
}
