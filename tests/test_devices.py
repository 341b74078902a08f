"""Every model, sampler and training loop runs on any device (issue 16).

Two checks per case (a small model of each family, its forward, loss, generation and a training
step):

- ``test_runs_on_every_device``: on every device this machine has (the CPU here; Colab's GPU where
  there is one), with the model and its inputs moved there;
- ``test_no_tensor_is_created_on_the_default_device``: on the CPU, with torch's default device set
  to ``meta`` while the case runs. A tensor the library creates without saying where
  (``torch.arange(T)`` instead of ``torch.arange(T, device=x.device)``) then lands on ``meta``, and
  the first operation that mixes it with the model's tensors raises. That is the bug that breaks
  the library on a GPU, caught on a machine without one.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
import torch

from lib.albert import Albert, AlbertConfig
from lib.bert import BertConfig
from lib.bert_heads import BertForPreTraining, pretraining_loss
from lib.captioning import Captioner
from lib.captioning import greedy_decode as caption_greedy
from lib.electra import Electra, ElectraConfig
from lib.elmo import BiLM, ELMoConfig
from lib.gpt import GPT, GPTConfig
from lib.gpt import beam_search as gpt_beam
from lib.gpt import greedy_decode as gpt_greedy
from lib.gpt import sample as gpt_sample
from lib.han import HierarchicalAttentionNetwork
from lib.pretraining_data import mask_tokens
from lib.rnnlm import RNNLM, sample
from lib.seq2seq import BahdanauDecoder, Encoder, Seq2Seq, beam_search, greedy_decode
from lib.train import fit
from lib.transformer import Transformer, TransformerConfig
from lib.transformer import beam_search as transformer_beam
from lib.transformer import greedy_decode as transformer_greedy

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
V = 24
BERT = dict(
    vocab_size=V,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
)


def gen():
    return torch.Generator().manual_seed(0)  # a CPU generator, as the chapters use


def ids(device, B=2, T=6, low=5):
    return torch.randint(low, V, (B, T), generator=gen()).to(device)


def gpt(device):
    model = GPT(GPTConfig(vocab_size=V, block_size=16, n_layer=2, n_head=2, n_embd=16)).to(device)
    x = ids(device)

    def run():
        out = model(x, targets=x)
        out.loss.backward()
        gpt_sample(model, x, 3, temperature=1.0, top_k=5, top_p=0.9, generator=gen())
        gpt_greedy(model, x, 3)
        gpt_beam(model, x[:1], 3, beam_width=2)

    return run


def bert(device):
    model = BertForPreTraining(BertConfig(**BERT)).to(device)
    x = ids(device)

    def run():
        inputs, labels = mask_tokens(x, V, 4, [0, 1, 2, 3, 4], generator=gen())
        mlm_logits, nsp_logits, *_ = model(inputs)
        nsp = torch.zeros(x.shape[0], dtype=torch.long, device=x.device)
        pretraining_loss(mlm_logits, nsp_logits, labels, nsp).backward()

    return run


def albert(device):
    model = Albert(
        AlbertConfig(
            vocab_size=V,
            embedding_size=8,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=16,
        )
    ).to(device)
    x = ids(device)
    return lambda: model(x)


def electra(device):
    model = Electra(ElectraConfig(BertConfig(**BERT), generator_layers=1)).to(device)
    x = ids(device)

    def run():
        out = model(x, 4, [0, 1, 2, 3, 4], generator=gen())
        (out.mlm_loss + out.disc_loss).backward()

    return run


def transformer(device):
    config = TransformerConfig(
        src_vocab_size=V, tgt_vocab_size=V, d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=16
    )
    model = Transformer(config).to(device)
    src, tgt = ids(device), ids(device)

    def run():
        logits = model(src, tgt).logits
        logits.sum().backward()
        model.eval()
        transformer_greedy(model, src, 5, 1, 2)
        transformer_beam(model, src[:1], 5, 1, 2, beam_width=2)

    return run


def seq2seq(device):
    model = Seq2Seq(Encoder(V, 8, 8), BahdanauDecoder(V, 8, 8, 16, 8)).to(device)
    src = ids(device)
    lengths = torch.tensor([6, 4])

    def run():
        logits = model(src, lengths, src).logits
        logits.sum().backward()
        model.eval()
        greedy_decode(model, src, lengths, 5, 1, 2)
        beam_search(model, src[:1], lengths[:1], 5, 1, 2, beam_width=2)

    return run


def rnnlm(device):
    model = RNNLM(V, 8, 8).to(device)
    x = ids(device)
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[1, 4:] = False

    def run():
        model.loss(x, mask).backward()
        sample(model, 2, bos_id=1, eos_id=2, max_len=5, seed=0)

    return run


def bilm(device):
    model = BiLM(ELMoConfig(vocab_size=V, word_dim=8, hidden_dim=8, n_layers=1)).to(device)
    x = ids(device)
    mask = torch.ones_like(x, dtype=torch.bool)
    mask[1, 4:] = False

    def run():
        out = model(x, mask)
        out.forward_logits.sum().backward()
        model.token_nll(x, mask)

    return run


def captioner(device):
    model = Captioner(V, d_feature=8, d_emb=8, d_hidden=8, d_attn=8).to(device)
    images = torch.rand(2, 3, 16, 16, generator=gen()).to(device)
    tgt = ids(device)

    def run():
        model.loss(images, tgt, tgt).backward()
        caption_greedy(model, images, 5, 1, 2)

    return run


def han(device):
    model = HierarchicalAttentionNetwork(V, d_emb=8, d_word=8, d_sentence=8, d_attn=8).to(device)
    docs = torch.randint(1, V, (2, 3, 4), generator=gen()).to(device)
    return lambda: model(docs)


def training_step(device):
    model = GPT(GPTConfig(vocab_size=V, block_size=16, n_layer=1, n_head=2, n_embd=16)).to(device)
    batch = ids("cpu")  # the loop moves each batch to the model's device

    def run():
        fit(model, [batch], lambda m, b: m(b, targets=b).loss, steps=1, progress=False, seed=0)

    return run


CASES = [
    gpt,
    bert,
    albert,
    electra,
    transformer,
    seq2seq,
    rnnlm,
    bilm,
    captioner,
    han,
    training_step,
]


@contextmanager
def tensors_created_on_meta():
    torch.set_default_device("meta")
    try:
        yield
    finally:
        torch.set_default_device("cpu")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_runs_on_every_device(case, device):
    torch.manual_seed(0)
    case(device)()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_no_tensor_is_created_on_the_default_device(case):
    torch.manual_seed(0)
    run = case("cpu")  # the model and its inputs: real CPU tensors
    with tensors_created_on_meta():
        run()


def test_the_meta_check_catches_a_tensor_created_without_a_device():
    x = torch.ones(2, 3)
    with tensors_created_on_meta(), pytest.raises((RuntimeError, NotImplementedError)):
        (x + torch.arange(3)).sum().item()


def test_fit_and_evaluate_move_each_batch_to_the_model(monkeypatch):
    """The training loop sends every tensor of a batch to the model's device, whatever holds it."""
    from typing import NamedTuple

    from lib.train import evaluate, to_device

    class Pair(NamedTuple):
        x: torch.Tensor
        y: torch.Tensor

    batch = {"a": [torch.ones(2), (torch.zeros(1), 3)], "b": Pair(torch.ones(1), torch.ones(1))}
    moved = to_device(batch, torch.device("meta"))
    assert moved["a"][0].device.type == "meta" and moved["a"][1][0].device.type == "meta"
    assert moved["a"][1][1] == 3 and isinstance(moved["b"], Pair)
    assert moved["b"].y.device.type == "meta" and batch["b"].y.device.type == "cpu"
    model = torch.nn.Linear(2, 1)
    seen = []
    evaluate(model, [batch], lambda m, b: seen.append(b["b"].x.device.type) or 1.0)
    assert seen == ["cpu"]
