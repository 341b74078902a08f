// The only script a chapter page loads for its live figures (small; onnxruntime-web is loaded by the
// worker, and only when the reader asks for a model). Finds every <div class="book-live"
// data-live="KIND">, reads its example (JSON in a <script type="application/json">) and mounts the
// figure registered for KIND. Asset addresses are relative to this script, so pages at any depth work.
import { FIGURES } from "./figures/index.js";
import { createContext } from "./runtime.js";

const base = new URL(".", document.currentScript ? document.currentScript.src : location.href).href;

function mountAll() {
  const ctx = createContext(base);
  window.bookLive = ctx; // the page's runtime, for the benchmarks (make bench) and curious readers
  for (const root of document.querySelectorAll(".book-live[data-live]")) {
    const mount = FIGURES[root.dataset.live];
    const holder = root.querySelector(".book-live-example");
    if (!mount || !holder) {
      root.dataset.state = "error";
      continue;
    }
    const fallback = root.querySelector(".book-live-static");
    if (fallback) fallback.hidden = true; // the live figure draws the same example itself
    const note = root.querySelector(".book-live-print");
    if (note) note.hidden = true; // "this is the static example" (print shows it again)
    try {
      mount(root, JSON.parse(holder.textContent), ctx);
    } catch (err) {
      if (fallback) fallback.hidden = false;
      root.dataset.state = "error";
      ctx.message(root, `This figure could not start: ${err.message}`, "error");
    }
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
else mountAll();
