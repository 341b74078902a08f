// The live figures by kind (data-live="KIND" on the page): each mounts itself on its element.
import { mountAttention, mountPair } from "./minilm.js";
import { mountTranslator } from "./translator.js";
import { mountGpt } from "./gpt.js";
import { mountMaskedSoftmax } from "./masked_softmax.js";
import { mountPositional } from "./posenc.js";
import { mountScores } from "./scores.js";
import { mountPlayground } from "./playground.js";

export const FIGURES = {
  "minilm-attention": mountAttention,
  "minilm-pair": mountPair,
  translator: mountTranslator,
  gpt: mountGpt,
  "masked-softmax": mountMaskedSoftmax,
  "positional-encoding": mountPositional,
  "score-functions": mountScores,
  playground: mountPlayground,
};
