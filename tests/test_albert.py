"""Tests of lib/albert.py: parameter counts equal transformers' AlbertModel for the paper's four sizes, the
same outputs as AlbertModel with the same weights, one layer shared by all, factorized embeddings, bad input."""

from dataclasses import replace

import pytest
import torch

from lib.albert import Albert, AlbertConfig, count_parameters, state_dict_from_hf
from lib.bert import BertConfig
from lib.bert import count_parameters as bert_count_parameters

transformers = pytest.importorskip("transformers")


def hf_config(c: AlbertConfig, **overrides):
    return transformers.AlbertConfig(
        vocab_size=c.vocab_size,
        embedding_size=c.embedding_size,
        hidden_size=c.hidden_size,
        num_hidden_layers=c.num_hidden_layers,
        num_attention_heads=c.num_attention_heads,
        intermediate_size=c.intermediate_size,
        max_position_embeddings=c.max_position_embeddings,
        type_vocab_size=c.type_vocab_size,
        layer_norm_eps=c.layer_norm_eps,
        **overrides,
    )


@pytest.mark.parametrize(
    "preset, expected",
    [("base", 11_683_584), ("large", 17_683_968), ("xlarge", 58_724_864), ("xxlarge", 222_595_584)],
)
def test_parameter_counts_are_transformers_albert_models(preset, expected):
    config = getattr(AlbertConfig, preset)()
    with torch.device("meta"):
        reference = transformers.AlbertModel(hf_config(config))
    assert count_parameters(config) == sum(p.numel() for p in reference.parameters()) == expected


def test_the_two_savings_add_up_to_bert_base():
    """Unshared ALBERT-base is BERT-base with factorized embeddings; sharing then removes 11 of 12 layers."""
    base = AlbertConfig.base()
    unshared = count_parameters(replace(base, share_layers=False))
    bert = bert_count_parameters(BertConfig.base(vocab_size=30000))
    # words 30000 x (768 - 128) - 128 x 768 - 768, positions and segments 514 x
    # 640, LayerNorm 2 x 640
    saved_by_factorizing = 19_431_168
    assert bert - unshared == saved_by_factorizing
    one_layer = 4 * (768 * 768 + 768) + 2 * 768 * 3072 + 3072 + 768 + 4 * 768
    assert unshared - count_parameters(base) == 11 * one_layer == 11 * 7_087_872


def test_every_layer_is_the_same_module_when_shared():
    model = Albert(
        AlbertConfig(
            vocab_size=50,
            embedding_size=8,
            hidden_size=16,
            num_hidden_layers=3,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=12,
        )
    )
    assert len(model.layers) == 1 and model.layer(0) is model.layer(2)
    assert model.embeddings.word_embeddings.weight.shape == (50, 8)
    assert model.embedding_hidden_mapping_in.weight.shape == (16, 8)
    unshared = Albert(replace(model.config, share_layers=False))
    assert len(unshared.layers) == 3 and unshared.layer(0) is not unshared.layer(2)


def test_outputs_equal_transformers_albert_with_the_same_weights():
    config = AlbertConfig(
        vocab_size=60,
        embedding_size=12,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=48,
        max_position_embeddings=16,
    )
    torch.manual_seed(0)
    reference = transformers.AlbertModel(
        hf_config(
            config, hidden_act="gelu", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0
        )
    ).eval()
    ours = Albert(config).eval()
    missing, unexpected = ours.load_state_dict(
        state_dict_from_hf(reference.state_dict()), strict=True
    )
    assert not missing and not unexpected
    ids = torch.randint(0, 60, (2, 9), generator=torch.Generator().manual_seed(1))
    types = torch.tensor([[0] * 5 + [1] * 4, [0] * 9])
    mask = torch.tensor([[1] * 9, [1] * 6 + [0] * 3])
    with torch.no_grad():
        expected = reference(input_ids=ids, token_type_ids=types, attention_mask=mask)
        out = ours(ids, types, mask)
    real = mask.bool()
    assert (out.sequence_output[real] - expected.last_hidden_state[real]).abs().max() < 1e-5
    assert (out.pooled_output - expected.pooler_output).abs().max() < 1e-5


def test_sharing_changes_the_output_of_a_layer_everywhere():
    """A change to the shared layer changes what every layer computes: there is only one."""
    model = Albert(
        AlbertConfig(
            vocab_size=30,
            embedding_size=8,
            hidden_size=16,
            num_hidden_layers=4,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=8,
        )
    ).eval()
    ids = torch.randint(0, 30, (1, 6), generator=torch.Generator().manual_seed(0))
    before = model(ids, return_hidden_states=True).hidden_states
    with torch.no_grad():
        # (a constant bias would vanish in the LayerNorm)
        model.layer(3).intermediate.dense.weight.mul_(3.0)
    after = model(ids, return_hidden_states=True).hidden_states
    changes = [(a - b).abs().max().item() for a, b in zip(after, before)]
    assert changes[0] == 0 and all(c > 1e-3 for c in changes[1:])


def test_bad_input():
    with pytest.raises(ValueError, match="embedding_size: expected an int >= 1, got 0"):
        AlbertConfig(embedding_size=0)
    with pytest.raises(
        ValueError, match="hidden_size=100 is not divisible by num_attention_heads=12"
    ):
        AlbertConfig(hidden_size=100)
    with pytest.raises(TypeError, match="share_layers: expected a bool, got str"):
        AlbertConfig(share_layers="yes")
    with pytest.raises(TypeError, match="config: expected an AlbertConfig, got BertConfig"):
        Albert(BertConfig())
    with pytest.raises(TypeError, match="config: expected an AlbertConfig, got dict"):
        count_parameters({})
    model = Albert(
        AlbertConfig(
            vocab_size=30,
            embedding_size=8,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=8,
        )
    )
    with pytest.raises(ValueError, match=r"input_ids: expected ids in \[0, 30\)"):
        model(torch.tensor([[1, 30]]))
    with pytest.raises(ValueError, match="input_ids: expected at most max_position_embeddings=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match=r"attention_mask: expected shape \[B, T\] = \(1, 3\)"):
        model(
            torch.zeros(1, 3, dtype=torch.long), attention_mask=torch.ones(1, 4, dtype=torch.long)
        )
    with pytest.raises(ValueError, match="hf_state: unexpected key 'encoder.albert_layer_groups.1"):
        state_dict_from_hf(
            {"encoder.albert_layer_groups.1.albert_layers.0.ffn.weight": torch.zeros(1)}
        )
