"""The holes issue 16 listed, each closed: a test per hole (each failed before its fix)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from lib.bert import IGNORE_INDEX
from lib.bert_heads import pretraining_loss
from lib.bpe import BPETokenizer
from lib.gpt import sampling_distribution
from lib.train import fit, lr_at
from lib.wordpiece import WordPieceTokenizer, wordpiece_split


def test_fit_never_lets_a_nan_loss_into_the_weights():
    model = nn.Linear(2, 1)
    before = [p.detach().clone() for p in model.parameters()]
    batches = iter([torch.ones(1, 2)] * 5)

    def loss_fn(m, x):
        return m(x).sum() * float("nan")

    with pytest.raises(FloatingPointError, match="the weights were not updated"):
        fit(model, batches, loss_fn, steps=5, lr=0.1)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_fit_stops_on_a_gradient_that_is_not_finite():
    model = nn.Linear(1, 1, bias=False)
    nn.init.zeros_(model.weight)

    def loss_fn(m, x):  # finite (0) at w = 0, but d sqrt(|w|) / dw is not
        return m.weight.abs().sqrt().sum()

    with pytest.raises(FloatingPointError, match="gradient norm"):
        fit(model, iter([torch.ones(1, 1)] * 3), loss_fn, steps=3, lr=0.1)
    assert model.weight.item() == 0.0


def test_lr_at_refuses_steps_past_the_schedule():
    assert lr_at(9, steps=10, lr=1.0, decay="linear") == pytest.approx(0.1)
    for step in (10, 11, -1, 2.0):
        with pytest.raises(ValueError, match="step: expected an int in \\[0, steps=10\\)"):
            lr_at(step, steps=10, lr=1.0, decay="linear")


def test_sampling_distribution_refuses_nan():
    logits = torch.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="temperature"):
        sampling_distribution(logits, float("nan"))
    with pytest.raises(ValueError, match="temperature"):
        sampling_distribution(logits, math.inf)
    with pytest.raises(ValueError, match="logits: expected numbers, got NaN"):
        sampling_distribution(torch.tensor([1.0, float("nan")]), 1.0)


def test_wordpiece_split_of_an_empty_word():
    assert wordpiece_split("ab") == ["a", "##b"]
    with pytest.raises(ValueError, match="word: expected a non-empty str"):
        wordpiece_split("")


def test_decode_accepts_a_tensor_and_says_what_is_wrong():
    vocab = {
        t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##s"])
    }
    tok = WordPieceTokenizer(vocab)
    assert tok.decode(torch.tensor([2, 5, 6, 3])) == tok.decode([2, 5, 6, 3]) == "hellos"
    with pytest.raises(ValueError, match="1-D tensor of integer token ids"):
        tok.decode(torch.tensor([[5, 6]]))
    bpe = BPETokenizer.train("low lower newest widest", 3)
    ids = bpe.encode("low")
    assert bpe.decode(torch.tensor(ids)) == bpe.decode(ids)


def test_pretraining_loss_names_a_label_outside_the_vocabulary():
    logits = torch.zeros(1, 3, 5)
    labels = torch.tensor([[IGNORE_INDEX, 2, 4]])
    assert pretraining_loss(logits, None, labels).item() == pytest.approx(math.log(5))
    with pytest.raises(ValueError, match="mlm_labels: expected token ids in \\[0, 5\\)"):
        pretraining_loss(logits, None, torch.tensor([[IGNORE_INDEX, 2, 5]]))
