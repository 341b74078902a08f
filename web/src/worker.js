// The live figures' inference worker: onnxruntime-web (WebAssembly, one thread), so the page never
// freezes while a model runs. The WebAssembly file is the site's own copy, next to this script
// (never a CDN). Messages: {id, type: "load", name, bytes} -> {id, ok}; {id, type: "run", name,
// feeds: {input: {type, data, dims}}} -> {id, ok, outputs: {name: {data, dims}}, ms}.
import * as ort from "onnxruntime-web/wasm";

ort.env.wasm.numThreads = 1; // no SharedArrayBuffer, so no cross-origin-isolation headers needed
ort.env.wasm.proxy = false;
ort.env.wasm.wasmPaths = { wasm: new URL("ort-wasm-simd-threaded.wasm", import.meta.url).href };
ort.env.logLevel = "error";

const sessions = new Map();

async function handle(msg) {
  if (msg.type === "load") {
    if (!sessions.has(msg.name)) {
      const session = await ort.InferenceSession.create(new Uint8Array(msg.bytes),
        { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
      sessions.set(msg.name, session);
    }
    return {};
  }
  if (msg.type === "run") {
    const session = sessions.get(msg.name);
    if (!session) throw new Error(`model ${msg.name} is not loaded`);
    const feeds = {};
    for (const [k, v] of Object.entries(msg.feeds)) feeds[k] = new ort.Tensor(v.type, v.data, v.dims);
    const start = performance.now();
    const result = await session.run(feeds);
    const ms = performance.now() - start;
    const outputs = {};
    for (const [k, t] of Object.entries(result)) outputs[k] = { data: t.data, dims: t.dims };
    return { outputs, ms };
  }
  throw new Error(`unknown message ${msg.type}`);
}

self.onmessage = async (event) => {
  const msg = event.data;
  try {
    self.postMessage({ id: msg.id, ok: true, ...(await handle(msg)) });
  } catch (err) {
    self.postMessage({ id: msg.id, ok: false, error: String(err && err.message ? err.message : err) });
  }
};
