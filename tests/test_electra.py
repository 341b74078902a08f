"""Tests of lib/electra.py: the discriminator's labels are exactly the replaced positions, the loss is the
paper's formula, no gradient reaches the generator from the discriminator, shared embeddings, bad input."""

import pytest
import torch
import torch.nn.functional as F

from lib.bert import IGNORE_INDEX, BertConfig
from lib.electra import Electra, ElectraConfig, corrupt
from tests.tolerance import assert_float_close

V, MASK, SPECIALS = 40, 4, [0, 1, 2, 3, 4]  # 0 pad, 1 [CLS], 2 [SEP], 3 [UNK], 4 [MASK]


def small(seed=0, **overrides):
    torch.manual_seed(seed)
    bert = BertConfig(
        vocab_size=V,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=16,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return Electra(ElectraConfig(bert, **{"generator_layers": 1, **overrides})).eval()


def batch(seed=0, B=6, T=12):
    ids = torch.randint(5, V, (B, T), generator=torch.Generator().manual_seed(seed))
    ids[:, 0], ids[:, -1] = 1, 2  # [CLS] ... [SEP]
    ids[0, 8:] = 0  # padding in the first row
    return ids, (ids != 0).long()


def test_labels_are_exactly_the_replaced_positions():
    model, (ids, mask) = small(), batch()
    c = corrupt(
        model.generator,
        ids,
        mask_token_id=MASK,
        special_ids=SPECIALS,
        mask_prob=0.5,
        attention_mask=mask,
        generator=torch.Generator().manual_seed(0),
    )
    chosen = c.mlm_labels != IGNORE_INDEX
    assert torch.equal(c.masked, ids.masked_fill(chosen, MASK))  # [MASK] exactly where chosen
    assert torch.equal(c.mlm_labels[chosen], ids[chosen])
    assert torch.equal(c.corrupted[~chosen], ids[~chosen])  # untouched elsewhere
    assert torch.equal(c.replaced, c.corrupted != ids)  # the labels
    assert not c.replaced[~chosen].any()
    assert not chosen[torch.isin(ids, torch.tensor(SPECIALS))].any()  # specials and padding never
    # an untrained generator samples almost uniformly: most chosen tokens are replaced, but a sample that
    # equals the original is labelled "original", as in the paper
    assert 0 < c.replaced.sum() <= chosen.sum()


def test_a_sample_equal_to_the_original_is_labelled_original():
    model, (ids, _) = small(), batch()
    with torch.no_grad():  # a generator that always predicts the original token
        model.generator.predictions.bias.zero_()
        model.generator.predictions.bias[7] = 1e4
    ids = torch.full_like(ids, 7)
    c = corrupt(
        model.generator,
        ids,
        mask_token_id=MASK,
        special_ids=SPECIALS,
        mask_prob=0.5,
        generator=torch.Generator().manual_seed(1),
    )
    assert (c.mlm_labels != IGNORE_INDEX).sum() > 10 and not c.replaced.any()


def test_the_loss_is_mlm_plus_lambda_times_the_discriminator_loss():
    model, (ids, mask) = small(), batch()
    out = model(
        ids, MASK, SPECIALS, attention_mask=mask, generator=torch.Generator().manual_seed(0)
    )
    c = out.corruption
    # the same corruption again, by hand, from the same random numbers
    again = corrupt(
        model.generator,
        ids,
        mask_token_id=MASK,
        special_ids=SPECIALS,
        mask_prob=0.15,
        attention_mask=mask,
        generator=torch.Generator().manual_seed(0),
    )
    assert all(torch.equal(a, b) for a, b in zip(c, again))
    gen_logits = model.generator(c.masked, None, mask).logits
    mlm = F.cross_entropy(
        gen_logits[c.mlm_labels != IGNORE_INDEX], c.mlm_labels[c.mlm_labels != IGNORE_INDEX]
    )
    logits = model.discriminator(c.corrupted, None, mask).logits
    real = mask.bool()
    p = torch.sigmoid(logits[real])
    y = c.replaced[real].float()
    disc = -(y * p.log() + (1 - y) * (1 - p).log()).mean()  # over the real tokens only
    # cross_entropy on the same logits, perhaps another selection: log-softmax over V + the mean
    n_mlm, n_real = int((c.mlm_labels != IGNORE_INDEX).sum()), int(real.sum())
    assert_float_close(out.mlm_loss, mlm, terms=V + n_mlm)
    # binary_cross_entropy_with_logits against sigmoid, log, the products and 1 - y, the mean over the
    # real tokens
    assert_float_close(out.disc_loss, disc, terms=1 + 1 + 3 + n_real)
    # the loss is its parts: one product and one sum
    assert_float_close(out.loss, out.mlm_loss + 50.0 * out.disc_loss, terms=2)
    assert out.disc_logits.shape == ids.shape


def test_no_gradient_reaches_the_generator_from_the_discriminator():
    model, (ids, mask) = small(), batch()
    out = model(
        ids, MASK, SPECIALS, attention_mask=mask, generator=torch.Generator().manual_seed(0)
    )
    out.disc_loss.backward()
    own = [p for n, p in model.generator.named_parameters() if not n.startswith("bert.embeddings")]
    assert own and all(p.grad is None for p in own)
    assert model.discriminator.dense_prediction.weight.grad.abs().sum() > 0
    # the shared embeddings do learn from the discriminator
    assert model.discriminator.bert.embeddings.word_embeddings.weight.grad.abs().sum() > 0


def test_embeddings_are_shared_and_counted_once():
    model = small()
    assert model.generator.bert.embeddings is model.discriminator.bert.embeddings
    assert (
        model.generator.predictions.decoder.weight
        is model.discriminator.bert.embeddings.word_embeddings.weight
    )
    unique = sum(p.numel() for p in model.parameters())
    separate = sum(p.numel() for p in model.discriminator.parameters()) + sum(
        p.numel() for p in model.generator.parameters()
    )
    shared = sum(p.numel() for p in model.discriminator.bert.embeddings.parameters())
    assert unique == separate - shared
    assert (
        len(model.generator.bert.encoder.layer) == 1
        and len(model.discriminator.bert.encoder.layer) == 3
    )


def test_a_few_steps_lower_both_losses():
    model, (ids, mask) = small(), batch(B=16)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    first = last = None
    for step in range(40):
        out = model(
            ids,
            MASK,
            SPECIALS,
            attention_mask=mask,
            generator=torch.Generator().manual_seed(step % 4),
        )
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        first = first or (out.mlm_loss.item(), out.disc_loss.item())
        last = (out.mlm_loss.item(), out.disc_loss.item())
    assert last[0] < first[0] - 0.5  # the generator learns the (repeated) batch
    assert last[1] < first[1]  # the discriminator learns which tokens are replaced


def test_generator_and_discriminator_outputs_name_their_fields():
    """Both return NamedTuples whose type does not depend on the flags: logits, then the encoder's
    attentions and hidden states (tuples, one per layer) when asked for, None otherwise."""
    model, (ids, mask) = small(), batch()
    gen = model.generator(ids, None, mask)
    assert gen.logits.shape == (*ids.shape, V) and gen.attentions is gen.hidden_states is None
    disc = model.discriminator(ids, None, mask, return_attention=True, return_hidden_states=True)
    assert disc.logits.shape == ids.shape and type(disc) is type(model.discriminator(ids))
    assert len(disc.attentions) == 3 and all(a.shape == (6, 4, 12, 12) for a in disc.attentions)
    assert len(disc.hidden_states) == 4 and torch.equal(
        disc.hidden_states[-1],
        model.discriminator.bert(ids, None, mask, return_attention=True).sequence_output,
    )
    # the weights are asked for, the logits are those of the path without them (fused vs explicit
    # attention): the embeddings' sum of 3 and LN 32, 3 layers (q/k/v 32, scores 8 + scaling, softmax
    # and sum over 12, dense 32, LN 32, intermediate 32, output 64, LN 32), the head (dense 32 +
    # activation, out 32 + bias)
    terms = 2 + 32 + 3 * (32 + 8 + 1 + 12 + 12 + 32 + 32 + 32 + 64 + 32) + (32 + 1) + (32 + 1)
    assert_float_close(disc.logits, model.discriminator(ids, None, mask).logits, terms=terms)


def test_bad_input():
    cfg = small().config.discriminator
    with pytest.raises(
        ValueError,
        match=r"generator_layers: expected an int in 1..3 \(the discriminator's depth\), got 4",
    ):
        ElectraConfig(cfg, generator_layers=4)
    with pytest.raises(ValueError, match=r"mask_prob: expected a probability in \(0, 1\], got 0"):
        ElectraConfig(cfg, mask_prob=0)
    with pytest.raises(ValueError, match="disc_weight: expected a number >= 0, got -1"):
        ElectraConfig(cfg, disc_weight=-1)
    with pytest.raises(TypeError, match="discriminator: expected a BertConfig"):
        ElectraConfig({"hidden_size": 32})
    model, (ids, _) = small(), batch()
    with pytest.raises(
        ValueError,
        match=r"input_ids: expected ids in \[0, 40\), got ids from 0 to 40",
    ):
        model(torch.tensor([[0, 40]]), MASK, SPECIALS)
    with pytest.raises(ValueError, match="input_ids: expected a \\[B, T\\] tensor of token ids"):
        model(ids.float(), MASK, SPECIALS)
    with pytest.raises(ValueError, match=r"special_ids: expected a collection of ids in \[0, 40\)"):
        model(ids, MASK, [0, 99])
    with pytest.raises(ValueError, match=r"mask_token_id: expected an id in \[0, 40\), got 40"):
        model(ids, 40, SPECIALS)
