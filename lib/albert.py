"""ALBERT, "A Lite BERT" (Lan et al. 2020, "ALBERT: A Lite BERT for Self-supervised Learning of Language
Representations", ICLR): BERT with far fewer parameters, by two changes to its architecture (sec. 3.1).

1. **Factorized embedding parameterization.** BERT's token embedding is a V x H matrix: the width of
   the vocabulary table is tied to the hidden width H. ALBERT looks tokens up in a narrow V x E table
   (E = 128) and projects them to H with an E x H matrix: V E + E H parameters instead of V H. For
   V = 30,000 and H = 768 that is 3.9M instead of 23M; for H = 4096 (xxlarge) 4.4M instead of 123M.
2. **Cross-layer parameter sharing.** All L encoder layers are *one* layer applied L times (attention
   and feed-forward shared, the paper's default "all-shared"): the encoder's parameters no longer grow
   with depth.

The third change, a pretraining task, is data, not architecture: sentence-order prediction (SOP) replaces
BERT's next-sentence prediction; the negative example is two consecutive segments *swapped*, so that the
task is about coherence, not about topic (sec. 3.1, "Inter-sentence coherence loss").

Shape legend: B batch, T tokens, E embedding_size, D hidden_size, V vocab_size, L num_hidden_layers.

Pipeline: token + segment + position embeddings of width E -> LayerNorm -> ``embedding_hidden_mapping_in``
(E -> D) -> the shared ``lib.bert.BertLayer`` L times (post-LN, as BERT) -> sequence output [B, T, D];
the pooler maps the [CLS] vector to the pooled output [B, D].

Deviations, on purpose:
- The layer is ``lib.bert.BertLayer``, so its parameter names are BERT's (``attention.self.query`` ...),
  not those of the published ALBERT checkpoints (``attention.query``, ``ffn``, ``ffn_output``,
  ``full_layer_layer_norm``...): ``HF_NAMES`` lists the renaming and ``state_dict_from_hf`` applies it.
- The feed-forward nonlinearity is the exact GELU (erf), as in ``lib.bert``; the released ALBERT v2
  configs use the tanh approximation ("gelu_new"), which differs by less than 1e-3 per activation.
- Only the two extremes of sharing: all layers shared (``share_layers=True``, the paper's ALBERT) or none
  (``False``, which is BERT with factorized embeddings); the paper's attention-only and FFN-only
  variants (Table 4) and layer groups are not implemented. No SOP head, no MLM head.
- No dropout: ALBERT's authors removed it (sec. 4.9), and the released configs set it to 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from lib._validate import check_bool, check_int, check_type
from lib.bert import (
    BertConfig,
    BertEmbeddings,
    BertLayer,
    BertOutput,
    BertPooler,
    bert_inputs,
    init_weights,
    run_layers,
)

__all__ = ["AlbertConfig", "Albert", "count_parameters", "HF_NAMES", "state_dict_from_hf"]


@dataclass(frozen=True)
class AlbertConfig:
    """Hyper-parameters of ALBERT, with the names of the published ``config.json`` files.

    Presets: the four models of Lan et al. 2020, Table 1 (E = 128, vocabulary 30,000 SentencePiece
    tokens, 512 positions, all layers shared). ``share_layers=False`` gives the unshared model of the
    same shape (BERT with factorized embeddings). ``bert_layer_config`` is the BertConfig of the one
    layer (the same width, heads and feed-forward size).
    """

    vocab_size: int = 30000
    embedding_size: int = 128
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    share_layers: bool = True
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02

    def __post_init__(self):
        e = self.embedding_size
        check_int(e, "embedding_size", 1)
        check_bool(self.share_layers, "share_layers")
        self.bert_layer_config  # BertConfig checks every field the two configurations share

    @property
    def bert_layer_config(self) -> BertConfig:
        return BertConfig(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_position_embeddings,
            type_vocab_size=self.type_vocab_size,
            layer_norm_eps=self.layer_norm_eps,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            initializer_range=self.initializer_range,
        )

    @classmethod
    def base(cls, **overrides) -> "AlbertConfig":
        """ALBERT-base (Table 1): L=12, H=768, E=128, 12 heads; 11,683,584 parameters (paper: 12M)."""
        return cls(**overrides)

    @classmethod
    def large(cls, **overrides) -> "AlbertConfig":
        """ALBERT-large (Table 1): L=24, H=1024, E=128, 16 heads; 17,683,968 parameters (paper: 18M)."""
        return cls(
            **{
                "hidden_size": 1024,
                "num_hidden_layers": 24,
                "num_attention_heads": 16,
                "intermediate_size": 4096,
                **overrides,
            }
        )

    @classmethod
    def xlarge(cls, **overrides) -> "AlbertConfig":
        """ALBERT-xlarge (Table 1): L=24, H=2048, E=128, 16 heads (the released config's count; the
        paper does not give it); 58,724,864 parameters (paper: 60M)."""
        return cls(
            **{
                "hidden_size": 2048,
                "num_hidden_layers": 24,
                "num_attention_heads": 16,
                "intermediate_size": 8192,
                **overrides,
            }
        )

    @classmethod
    def xxlarge(cls, **overrides) -> "AlbertConfig":
        """ALBERT-xxlarge (Table 1): L=12, H=4096, E=128, 64 heads; 222,595,584 parameters (paper: 235M)."""
        return cls(
            **{
                "hidden_size": 4096,
                "num_hidden_layers": 12,
                "num_attention_heads": 64,
                "intermediate_size": 16384,
                **overrides,
            }
        )


class Albert(nn.Module):
    """The ALBERT encoder with its pooler (Lan et al. 2020, sec. 3.1): what ``AlbertModel``
    checkpoints hold.

    Submodules: ``embeddings`` (``lib.bert.BertEmbeddings`` at width E, no dropout),
    ``embedding_hidden_mapping_in`` (nn.Linear(E, D)), ``layers`` (an nn.ModuleList holding *one*
    ``BertLayer`` when ``share_layers``, else L of them), ``pooler``.

    forward(input_ids [B, T], token_type_ids [B, T] or None, attention_mask [B, T] (1 = real token)
    or None, return_attention=False, return_hidden_states=False) -> ``lib.bert.BertOutput``.
    """

    def __init__(self, config: AlbertConfig):
        super().__init__()
        check_type(config, "config", AlbertConfig)
        self.config = config
        layer_config = config.bert_layer_config
        # BERT's embedding layer, narrower: every table of width E (the heads are unused there)
        embedding_config = replace(
            layer_config, hidden_size=config.embedding_size, num_attention_heads=1
        )
        self.embeddings = BertEmbeddings(embedding_config)  # [B, T] -> [B, T, E]
        self.embedding_hidden_mapping_in = nn.Linear(config.embedding_size, config.hidden_size)
        n_distinct = 1 if config.share_layers else config.num_hidden_layers
        self.layers = nn.ModuleList(BertLayer(layer_config) for _ in range(n_distinct))
        self.pooler = BertPooler(layer_config)
        init_weights(self, config.initializer_range)

    def layer(self, i: int) -> BertLayer:
        """The module that computes layer i (0-based): the same one for every i when layers are shared."""
        return self.layers[0 if self.config.share_layers else i]

    def forward(
        self,
        input_ids: Tensor,
        token_type_ids: Tensor | None = None,
        attention_mask: Tensor | None = None,
        return_attention: bool = False,
        return_hidden_states: bool = False,
    ) -> BertOutput:
        c = self.config
        # BERT's checks, default segments and mask
        token_type_ids, mask = bert_inputs(c, input_ids, token_type_ids, attention_mask)
        embedded = self.embeddings(input_ids, token_type_ids)  # [B, T, E]
        x = self.embedding_hidden_mapping_in(embedded)  # [B, T, D]
        # BERT's stack, with the one shared layer (or each of L) in every position
        layers = [self.layer(i) for i in range(c.num_hidden_layers)]
        x, hidden_states, attentions = run_layers(layers, x, mask, return_attention)
        return BertOutput(
            x,  # [B, T, D]
            self.pooler(x),  # [B, D]
            attentions if return_attention else None,
            hidden_states if return_hidden_states else None,
        )


def count_parameters(config: AlbertConfig) -> int:
    """Number of parameters of Albert(config) (encoder and pooler, no heads), built on the meta device.

    base 11,683,584 = embeddings 3,906,048 (30000*128 + 512*128 + 2*128 + LayerNorm 2*128) + projection
    128*768 + 768 = 99,072 + one layer 7,087,872 (the same as one of BERT-base's) + pooler 590,592.
    Unshared (``share_layers=False``) it is 89,650,176: BERT-base with ALBERT's 30,000-token vocabulary
    (109,081,344) less the 19,431,168 that the factorized embeddings save.
    """
    check_type(config, "config", AlbertConfig)
    with torch.device("meta"):
        model = Albert(config)
    return sum(p.numel() for p in model.parameters())


# The published checkpoints' names (transformers' AlbertModel) of the parameters of layer 0, against ours.
HF_NAMES = {
    "attention.query": "attention.self.query",
    "attention.key": "attention.self.key",
    "attention.value": "attention.self.value",
    "attention.dense": "attention.output.dense",
    "attention.LayerNorm": "attention.output.LayerNorm",
    "ffn": "intermediate.dense",
    "ffn_output": "output.dense",
    "full_layer_layer_norm": "output.LayerNorm",
}


def state_dict_from_hf(hf_state: dict[str, Tensor]) -> dict[str, Tensor]:
    """A state dict of transformers' ``AlbertModel`` (one layer group of one shared layer) renamed for
    ``Albert``: ``encoder.albert_layer_groups.0.albert_layers.0.<hf name>`` -> ``layers.0.<our name>``
    (``HF_NAMES``), ``encoder.embedding_hidden_mapping_in`` -> ``embedding_hidden_mapping_in``,
    ``pooler`` (a Linear there) -> ``pooler.dense``; ``embeddings.position_ids`` and
    ``token_type_ids`` buffers are dropped."""
    prefix = "encoder.albert_layer_groups.0.albert_layers.0."
    out = {}
    for key, value in hf_state.items():
        if key.startswith("albert."):
            key = key[len("albert.") :]
        if key in ("embeddings.position_ids", "embeddings.token_type_ids"):
            continue
        if key.startswith(prefix):
            module, param = key[len(prefix) :].rsplit(".", 1)
            if module not in HF_NAMES:
                raise ValueError(f"hf_state: unexpected key {key!r}")
            out[f"layers.0.{HF_NAMES[module]}.{param}"] = value
        elif key.startswith("encoder.embedding_hidden_mapping_in."):
            out[key[len("encoder.") :]] = value
        elif key.startswith("pooler."):
            out["pooler.dense." + key[len("pooler.") :]] = value
        elif key.startswith("embeddings."):
            out[key] = value
        else:
            raise ValueError(
                f"hf_state: unexpected key {key!r} (only a single shared layer group is supported)"
            )
    return out
