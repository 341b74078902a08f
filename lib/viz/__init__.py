"""Every plotting helper and view of the book (README, "Decisions": interactive figures).

- :func:`attention_heatmap` -- one attention matrix [Tq, Tk] as an annotated heatmap.
- :func:`masked_softmax_table` -- scores, masked scores and weights side by side.
- :func:`head_view` -- bertviz's head view of a model's per-layer attention.
- :func:`model_view` -- bertviz's model view: every layer and head of it at once.
- :func:`encoder_decoder_view` -- bertviz's encoder-decoder mode (encoder, decoder and
  cross-attention).
- :func:`interactive` -- THE one mechanism for interactive figures (precomputed states behind a
  client-side slider, so they respond in Jupyter/Colab and on the static site alike); built on it,
  :func:`causal_mask_explorer` (the masked-softmax table, one query at a time) and
  :func:`sampling_explorer` (a next-token distribution under temperature, top-k and top-p) and
  :func:`rope_explorer` (RoPE's score of a query and a key at positions m and n; :func:`rope_scores`).
- :func:`table`, :func:`markdown_table` -- a Markdown table shown in the notebook and on the site.
- :func:`vectors`, :func:`image_regions`, :func:`region_attention`, :func:`document_attention`,
  :func:`tinted_block`, :func:`transformer_diagram` -- the chapters' other drawings (2-D vectors,
  a captioner's attention over image regions, a document's two levels of attention, a block of
  numbers tinted by head, the Transformer's architecture); :func:`soft_lookup`,
  :func:`encoding_vector`, :func:`encoding_dimension`, :func:`fine_tuning_task` (a soft lookup
  among 2-D values, a positional encoding's vector or dimension, BERT's fine-tuning set-ups);
  :func:`training_curve` (a training run's loss, every step and its moving average).
- :func:`seq2seq_diagram`, :func:`bahdanau_diagram`, :func:`luong_diagram`, :func:`luong_step_diagram`,
  :func:`captioning_diagram`, :func:`han_diagram`, :func:`elmo_diagram` (``lib.viz.diagrams``)
  and :func:`self_attention_diagram`, :func:`multi_head_diagram`, :func:`gpt_diagram`,
  :func:`bert_input_diagram`, :func:`bert_pretraining_diagram`, :func:`electra_diagram`
  (``lib.viz.transformer_diagrams``) -- the architectures of chapters 1, 4-7, 12-14 and 16, drawn
  from the library's configs; each Figure carries its ``alt_text``.
- :func:`tiling_diagram`, :func:`tile_explorer`, :func:`tile_states` (``lib.viz.tiles``) --
  FlashAttention's tiles (chapter 18): the grid and the two memories, and its loop step by step.
- :func:`show_source` -- a piece of the library's own source, as it is now, highlighted in the
  chapter that teaches it.
- :func:`set_style`, :data:`SEQUENTIAL_CMAP`, :data:`DIVERGING_CMAP` -- the book's look.

Importing this package does not choose a matplotlib backend and does not change any setting:
notebooks keep their inline backend, tests choose Agg; call :func:`set_style` to get the book's
look. Plots never train and models never plot.
"""

from lib.viz import diagrams, figures, transformer_diagrams
from lib.viz.diagrams import *  # noqa: F403 (its __all__ is part of this package's)
from lib.viz.figures import *  # noqa: F403 (its __all__ is part of this package's)
from lib.viz.headview import encoder_decoder_view, head_view, model_view
from lib.viz.heatmap import (
    DIVERGING_CMAP,
    SEQUENTIAL_CMAP,
    attention_heatmap,
    masked_softmax_table,
    set_style,
)
from lib.viz.interactive import (
    PHONE_RC,
    causal_mask_explorer,
    interactive,
    rope_explorer,
    rope_scores,
    sampling_explorer,
    sampling_probabilities,
)
from lib.viz.source import show_source
from lib.viz.tables import markdown_table, table
from lib.viz.tiles import tile_explorer, tile_states, tiling_diagram
from lib.viz.transformer_diagrams import *  # noqa: F403 (its __all__ is part of this package's)

__all__ = [
    "show_source",
    "table",
    "markdown_table",
    "SEQUENTIAL_CMAP",
    "DIVERGING_CMAP",
    "set_style",
    "attention_heatmap",
    "masked_softmax_table",
    "head_view",
    "model_view",
    "encoder_decoder_view",
    "interactive",
    "PHONE_RC",
    "causal_mask_explorer",
    "sampling_explorer",
    "rope_explorer",
    "rope_scores",
    "sampling_probabilities",
    "tiling_diagram",
    "tile_states",
    "tile_explorer",
    *figures.__all__,
    *diagrams.__all__,
    *transformer_diagrams.__all__,
]
