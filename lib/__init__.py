"""The library of the book: small, tested implementations of the models and figures the chapters
show. Models never plot; plots never train.

Modules, one concept each:

- :mod:`lib.attention` -- scores, masked softmax, scaled dot-product and multi-head attention.
- :mod:`lib.attention_fast` -- the fast path of multi-head attention at inference (torch's tricks: one in-projection, the softmax in place) beside the readable one.
- :mod:`lib.positional` -- sinusoidal, learned and binary position encodings.
- :mod:`lib.seq2seq` -- RNN encoder-decoders: no attention, Bahdanau's, Luong's (global and local).
- :mod:`lib.hard_attention` -- the decoder that reads one sampled source state (Xu et al. 2015).
- :mod:`lib.captioning` -- image captioning with soft and hard attention over regions.
- :mod:`lib.han` -- the hierarchical attention network for document classification.
- :mod:`lib.transformer` -- the encoder-decoder Transformer of Vaswani et al. 2017.
- :mod:`lib.decoding` -- greedy search, sampling and beam search, written once for every model.
- :mod:`lib.ngram` -- the bigram language model by counting, and the sentences LMs read.
- :mod:`lib.rnnlm` -- recurrent language models, forward and backward; perplexity and sampling.
- :mod:`lib.word2vec` -- word2vec's skip-gram with negative sampling, nearest neighbours.
- :mod:`lib.rnn_classifier` -- a sentence classifier that starts from word vectors or a language model.
- :mod:`lib.elmo` -- ELMo's character CNN, biLM and scalar mix.
- :mod:`lib.gpt` -- GPT-2 with its key/value cache, and the GPT classifier.
- :mod:`lib.gpt_fast` -- the fast path of generation (the preallocated key/value cache, the forward pass with its module calls unrolled) beside the readable one.
- :mod:`lib.rope` -- rotary position embedding: both pairings, Llama 3's scaling, the row permutation between them.
- :mod:`lib.flash` -- attention at scale: the online softmax, attention in tiles, FlashAttention's recomputing backward.
- :mod:`lib.alibi` -- ALiBi's slopes (any head count) and linear biases.
- :mod:`lib.memory` -- the peak bytes held by the tensors a block of PyTorch code creates.
- :mod:`lib.llama` -- the modern decoder (Llama 3, Qwen3, Mistral): RMSNorm, SwiGLU, grouped-query and sliding-window attention, caches.
- :mod:`lib.bert` -- BERT: embeddings, encoder layers, pooler, presets.
- :mod:`lib.bert_heads` -- BERT's pretraining and fine-tuning heads, the pretraining loss.
- :mod:`lib.pretraining_data` -- BERT's pretraining data: masked tokens, sentence pairs, batches.
- :mod:`lib.albert` -- ALBERT: factorized embeddings, shared layers, sentence-order prediction.
- :mod:`lib.electra` -- ELECTRA: generator, discriminator, replaced-token detection.
- :mod:`lib.xlnet` -- XLNet's permutation and two-stream attention masks.
- :mod:`lib.bpe` -- byte-pair encoding: the paper's merge loop, a tokenizer, and a fast path.
- :mod:`lib.basic_tokenizer` -- BERT's basic tokenizer: words and punctuation, before WordPiece.
- :mod:`lib.wordpiece` -- WordPiece: the likelihood criterion and BERT's tokenizer.
- :mod:`lib.playground` -- the Attention Playground's tasks and tiny Transformer, trained step by step.
- :mod:`lib.pretrained` -- published checkpoints read into the library's models (MiniLM, GPT-2, Llama, Qwen3, Mistral).
- :mod:`lib.checkpoints` -- the models the book trained, shipped as safetensors.
- :mod:`lib.data` -- the generated corpora: translation pairs, stories, documents, shapes.
- :mod:`lib.train` -- ``fit`` and ``evaluate``: the one training loop of every chapter.
- :mod:`lib.metrics` -- scores of generated text (BLEU).
- :mod:`lib.prose` -- numbers the text states about a trained model, checked against this run's.
- :mod:`lib.viz` -- every plot and view: heatmaps, tables, head views, interactive and live figures.
- :mod:`lib.exercises` -- the checkers of the chapters' exercises.

One vocabulary across the models (tests/test_conventions.py checks every model against it):

- Shapes are written B batch, T tokens (S source, T target in encoder-decoders), D width, H heads,
  V vocabulary; every model file starts with its shape legend.
- Masks are boolean, True where a query may attend (``lib.attention.causal_mask``,
  ``padding_mask``), broadcastable to [B, H, Tq, Tk]; ``additive_mask`` is the one place that turns
  one into the additive 0 / -inf form.

In (the arguments of every model's ``forward``):

==========================  ================================================================
``input_ids`` [B, T]        token ids of a single-stream model (GPT, BERT and its family, the
                            language models, ELMo, the classifiers)
``attention_mask`` [B, T]   padding: bool or 0/1, True / 1 at real tokens, on every model and
                            classifier that can see padding. The RNN encoder-decoders take
                            ``src_lengths`` instead, because they pack their sequences.
``return_attention``        ask a model for its attention weights (``need_weights`` on a layer,
                            torch's name, as in ``nn.MultiheadAttention``)
``return_hidden_states``    ask a model for every layer's output
==========================  ================================================================

Out: every ``forward`` returns a NamedTuple whose type never depends on a flag (a field not asked
for is None), so ``out.logits`` reads as what it is and unpacking still works:

============================  ==============================================================
``logits``                    the model's scores, before any softmax
``loss``                      None unless targets or labels are given
``attentions``                a tuple, one tensor [B, H, Tq, Tk] per layer (H = 1 for
                              single-head and RNN attention)
``encoder_attentions``,       the encoder-decoders' three kinds, each a tuple per layer:
``decoder_attentions``,       [B, H, S, S], [B, H, T, T] (causal self-attention) and
``cross_attentions``          [B, H, T, S]; an RNN decoder's attention over its source across
                              the target steps is one layer, ``(w [B, 1, T, S],)``, and the
                              captioner's over image regions ``(w [B, 1, T, R],)``
``hidden_states``             a tuple: the embedding output, then each layer's output [B, T, D]
============================  ==============================================================

- Each model family computes its training loss in one place: GPT in ``forward(targets=...)``
  (as nanoGPT), BERT in ``lib.bert_heads.pretraining_loss``, the others in a ``loss`` method (``Seq2Seq.loss``,
  ``RNNLM.loss``, ``BiLM.lm_loss``, ``Captioner.loss``), ELECTRA in ``Electra.forward`` (its
  ``ElectraOutput.loss``, generator and discriminator together).
- Decoding has one entry-point style: module functions that take the model first,
  ``greedy_decode(model, ...)``, ``beam_search(model, ...)`` and, where the family samples,
  ``sample(model, ...)``, built on each module's ``step_function`` and ``lib.decoding``; every one
  returns a ``lib.decoding.Decoded(tokens, log_prob, attentions)``.
- Bad input raises ``TypeError`` or ``ValueError`` at the public function, naming the argument,
  what was expected and what was received: one line at the door (the detail in
  ``lib._checks.<module>``, built on the primitives of ``lib._validate``); layers the library's own
  models call do not check again (they call the unchecked ``_masked_softmax``, ``_attend``,
  ``_split_heads``, ..., and build ``MultiHeadAttention`` and the score modules with
  ``check_inputs=False``).
- Randomness comes from a ``torch.Generator`` or a seed argument; the same seed gives the same
  numbers on every run and every device (``lib._random``).
- Checkpoint key names are those of the published checkpoints (GPT-2, BERT), so loading is a loop.
"""

import torch as _torch

# nn.LSTM runs on oneDNN by default on a CPU, whose matrix products block by the processor's cache sizes:
# off, so that the library's LSTMs (lib.rnnlm, lib.elmo, lib.rnn_classifier) run on ATen's, whose products
# go through MKL on the book's kernel path, the same on Intel and AMD (README, "Numbers on any CPU").
_torch.backends.mkldnn.enabled = False


__version__ = "0.1.0"
