"""The library of the book: small, tested implementations of the models and figures the chapters
show. Models never plot; plots never train.

Modules, one concept each:

- :mod:`lib.attention` -- scores, masked softmax, scaled dot-product and multi-head attention.
- :mod:`lib.positional` -- sinusoidal, learned and binary position encodings.
- :mod:`lib.seq2seq` -- RNN encoder-decoders: no attention, Bahdanau's, Luong's (global and local).
- :mod:`lib.hard_attention` -- the decoder that reads one sampled source state (Xu et al. 2015).
- :mod:`lib.captioning` -- image captioning with soft and hard attention over regions.
- :mod:`lib.han` -- the hierarchical attention network for document classification.
- :mod:`lib.transformer` -- the encoder-decoder Transformer of Vaswani et al. 2017.
- :mod:`lib.decoding` -- greedy search, sampling and beam search, written once for every model.
- :mod:`lib.lm` -- n-gram and RNN language models, word2vec's skip-gram.
- :mod:`lib.elmo` -- ELMo's character CNN, biLM and scalar mix.
- :mod:`lib.gpt` -- GPT-2 with its key/value cache, and the GPT classifier.
- :mod:`lib.bert` -- BERT, its pretraining heads and fine-tuning heads, the pretraining loss.
- :mod:`lib.pretraining_data` -- BERT's pretraining data: masked tokens, sentence pairs, batches.
- :mod:`lib.albert` -- ALBERT: factorized embeddings, shared layers, sentence-order prediction.
- :mod:`lib.electra` -- ELECTRA: generator, discriminator, replaced-token detection.
- :mod:`lib.xlnet` -- XLNet's permutation and two-stream attention masks.
- :mod:`lib.tokenization` -- byte-pair encoding and BERT's WordPiece tokenizer.
- :mod:`lib.pretrained` -- published checkpoints read into the library's models (MiniLM, GPT-2).
- :mod:`lib.checkpoints` -- the models the book trained, shipped as safetensors.
- :mod:`lib.data` -- the generated corpora: translation pairs, stories, documents, shapes.
- :mod:`lib.train` -- ``fit`` and ``evaluate``: the one training loop of every chapter.
- :mod:`lib.metrics` -- scores of generated text (BLEU).
- :mod:`lib.viz` -- every plot and view: heatmaps, tables, head views, interactive and live figures.
- :mod:`lib.exercises` -- the checkers of the chapters' exercises.

One vocabulary across the models:

- Shapes are written B batch, T tokens (S source, T target in encoder-decoders), D width, H heads,
  V vocabulary; every docstring starts with its shapes.
- Masks are boolean, True where a query may attend (``lib.attention.causal_mask``,
  ``padding_mask``); the BERT family also takes Hugging Face's 0/1 ``attention_mask`` [B, T].
- Attention weights are asked for with ``return_attention=True`` on a model (GPT, BERT, ALBERT,
  the Transformer) and ``need_weights=True`` on a layer (torch's name, as in
  ``nn.MultiheadAttention``); per-layer hidden states with ``return_hidden_states=True``.
- A model returns a NamedTuple of named fields (``GPTOutput``, ``BertOutput``,
  ``PreTrainingOutput``, ``Decoded``, ...), so that ``out.logits`` reads as what it is and
  unpacking still works.
- Each model family computes its training loss in one place: GPT in ``forward(targets=...)``
  (as nanoGPT), BERT in ``pretraining_loss``, the others in a ``loss`` method (``Seq2Seq.loss``,
  ``RNNLM.loss``, ``BiLM.lm_loss``, ``Captioner.loss``), ELECTRA in ``Electra.forward`` (its
  ``ElectraOutput.loss``, generator and discriminator together).
- Padding is an ``attention_mask`` [B, T] (True or 1 at real tokens) wherever a model masks keys;
  the RNN encoder-decoders take ``src_lengths`` (they pack the sequences), and ``GPTClassifier``
  ``lengths`` (causal attention never sees the padding, only the position to read matters).
- Decoding goes through ``lib.decoding``: each model module has a ``step_function``, and every
  greedy, sampling and beam-search call returns a ``lib.decoding.Decoded``.
- Bad input raises ``TypeError`` or ``ValueError`` at the public function, naming the argument,
  what was expected and what was received (``lib._validate``).
- Randomness comes from a ``torch.Generator`` or a seed argument; the same seed gives the same
  numbers on every run and every device (``lib._random``).
- Checkpoint key names are those of the published checkpoints (GPT-2, BERT), so loading is a loop.
"""

__version__ = "0.1.0"
