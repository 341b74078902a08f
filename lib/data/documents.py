"""Synthetic restaurant reviews for document classification with a hierarchical attention network.

Each document is a short review: a few sentences of lower-case words. Its label answers one question,
**did the reviewer like the food?**, by this rule (``label_of``):

    The *key sentences* are the sentences that give an opinion about a dish (``DISHES``): "the soup
    was superb .". A document has one or two of them, and they agree. The label is 1 (liked the food)
    if their opinion word is positive (``POSITIVE``) and 0 if it is negative (``NEGATIVE``). Nothing
    else counts: opinions about anything else (``OTHERS``: "the music was awful .") and sentences that
    mention a dish without an opinion ("my friend ordered the fish .") do not change the label.

So the label depends on a few key words (the opinion words of the key sentences) in a few key
sentences, and a model must tell a key sentence from a distractor that uses the same opinion words
about something else. A hierarchical attention network should give its largest sentence weight to a
key sentence and, inside it, its largest word weights to the opinion word (and the dish). Counting
positive against negative words over the whole document, without looking at what they are about,
does not find the label reliably (``count_rule`` is that baseline).

A document has between ``min_sentences`` and ``max_sentences`` sentences: 1 or 2 key sentences,
1 to 3 distractor opinions (about ``OTHERS``, each positive or negative at random) and neutral
sentences for the rest, in random order. Sentences come from a handful of templates shared by key
and distractor sentences, so the template does not tell a key sentence from a distractor; no template
is used twice in a document. Deterministic: one ``random.Random(seed)``.

Shapes: docs [B, S, W] long (S sentences of at most W words, padded with pad_id 0); labels [B].
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterator, Sequence

import torch
from torch import Tensor

from lib._validate import check_int
from lib.data._batching import endless, index_batches
from lib.data.translation import Vocab

__all__ = [
    "DISHES",
    "OTHERS",
    "POSITIVE",
    "NEGATIVE",
    "Document",
    "generate_documents",
    "label_of",
    "count_rule",
    "build_vocab",
    "DocBatch",
    "make_batch",
    "batches",
    "epochs",
]

DISHES = ("soup", "pasta", "fish", "salad", "bread", "dessert", "curry", "steak")
OTHERS = ("waiter", "music", "parking", "weather", "room", "table", "bill", "queue")
POSITIVE = ("great", "superb", "lovely", "wonderful", "excellent", "perfect")
NEGATIVE = ("awful", "terrible", "dreadful", "poor", "horrible", "disappointing")

# Opinion templates: S = subject (a dish or another thing), O = opinion word.
_OPINION = (
    "the S was O .",
    "the S was really O .",
    "i thought the S was O .",
    "we all agreed that the S was O .",
    "honestly the S was quite O .",
    "the S seemed O to me .",
    "to be fair the S was O tonight .",
)
# Neutral templates: X = any subject (a dish or another thing), D = a dish (what can be ordered or
# brought to the table), N = a number word.
_NEUTRAL = (
    "we arrived at N .",
    "my friend ordered the D .",
    "we sat near the window .",
    "the place was busy on a friday .",
    "they brought the D after N minutes .",
    "we paid by card .",
    "it was our first visit .",
    "the menu changes every week .",
    "i asked about the X .",
    "we came back the next day .",
)
_NUMBERS = ("seven", "eight", "ten", "twenty", "thirty")


@dataclass(frozen=True)
class Document:
    """A review: its sentences (tuples of words), its label (1: liked the food, 0: did not), the
    indices of its key sentences, and the (sentence, word) positions of the key sentences' opinion
    words (``key_words``) and dishes (``dish_words``)."""

    sentences: tuple[tuple[str, ...], ...]
    label: int
    key_sentences: tuple[int, ...]
    key_words: tuple[tuple[int, int], ...]
    dish_words: tuple[tuple[int, int], ...]


def _fill(template: str, **slots: str) -> tuple[str, ...]:
    return tuple(slots.get(w, w) for w in template.split())


def label_of(sentences: Sequence[Sequence[str]]) -> int:
    """The label rule, computed from the words alone: 1 if the opinion words of the sentences that
    mention a dish are positive, 0 if negative. ValueError if no sentence gives an opinion about a
    dish, or if such sentences disagree (the generator never makes either)."""
    polarities = set()
    for sentence in sentences:
        if any(w in DISHES for w in sentence):
            for w in sentence:
                if w in POSITIVE or w in NEGATIVE:
                    polarities.add(w in POSITIVE)
    if len(polarities) != 1:
        raise ValueError(
            f"sentences: expected opinions about dishes that agree, got polarities {polarities}"
        )
    return int(polarities.pop())


def count_rule(sentences: Sequence[Sequence[str]]) -> int:
    """The baseline that ignores what an opinion is about: 1 if the document has more positive than
    negative opinion words, 0 if fewer, and 1 on a tie."""
    positive = sum(w in POSITIVE for s in sentences for w in s)
    negative = sum(w in NEGATIVE for s in sentences for w in s)
    return int(positive >= negative)


def generate_documents(
    n: int, seed: int = 0, min_sentences: int = 4, max_sentences: int = 8
) -> list[Document]:
    """``n`` reviews, labels balanced at random (each 1 or 0 with probability 1/2). Deterministic:
    the same arguments give the same documents on every machine."""
    check_int(n, "n", 1)
    check_int(min_sentences, "min_sentences", 4)  # room for 2 key and 2 distractor sentences
    check_int(max_sentences, "max_sentences", min_sentences)
    if max_sentences > len(_NEUTRAL) + 2:
        raise ValueError(
            f"max_sentences: expected at most {len(_NEUTRAL) + 2} (there are {len(_NEUTRAL)} neutral templates, each used at most once), got {max_sentences}"
        )
    rng = random.Random(seed)
    documents = []
    for _ in range(n):
        label = rng.randint(0, 1)
        n_sentences = rng.randint(min_sentences, max_sentences)
        n_key = rng.randint(1, 2)
        n_distractor = rng.randint(1, min(3, n_sentences - n_key))
        n_neutral = n_sentences - n_key - n_distractor
        kinds = ["key"] * n_key + ["distractor"] * n_distractor + ["neutral"] * n_neutral
        rng.shuffle(kinds)
        neutral = iter(rng.sample(_NEUTRAL, kinds.count("neutral")))  # no template twice
        opinions = iter(rng.sample(_OPINION, n_key + n_distractor))
        sentences, key_sentences, key_words, dish_words = [], [], [], []
        for i, kind in enumerate(kinds):
            if kind == "neutral":
                # one draw fills either slot: X any subject, D the dish at the same index mod 8
                pick = rng.randrange(len(DISHES) + len(OTHERS))
                subject, dish = (DISHES + OTHERS)[pick], DISHES[pick % len(DISHES)]
                sentences.append(_fill(next(neutral), X=subject, D=dish, N=rng.choice(_NUMBERS)))
                continue
            if kind == "key":
                subject, positive = rng.choice(DISHES), bool(label)
            else:
                subject, positive = rng.choice(OTHERS), rng.random() < 0.5
            opinion = rng.choice(POSITIVE if positive else NEGATIVE)
            sentence = _fill(next(opinions), S=subject, O=opinion)
            sentences.append(sentence)
            if kind == "key":
                key_sentences.append(i)
                key_words.append((i, sentence.index(opinion)))
                dish_words.append((i, sentence.index(subject)))
        doc = Document(
            tuple(sentences), label, tuple(key_sentences), tuple(key_words), tuple(dish_words)
        )
        assert label_of(doc.sentences) == label  # the documented rule holds
        documents.append(doc)
    return documents


def build_vocab() -> Vocab:
    """The closed vocabulary of every word the generator can write (lib.data.Vocab, sorted)."""
    words = {w for t in _OPINION + _NEUTRAL for w in t.split()} - {"S", "O", "X", "D", "N"}
    words |= set(DISHES + OTHERS + POSITIVE + NEGATIVE + _NUMBERS)
    return Vocab(sorted(words))


@dataclass
class DocBatch:
    """docs [B, S, W] long (padded with pad_id = 0: shorter sentences, and whole missing sentences);
    labels [B] long."""

    docs: Tensor
    labels: Tensor

    def __len__(self) -> int:
        return self.docs.shape[0]


def _check_documents(documents) -> None:
    if len(documents) == 0:
        raise ValueError("documents: expected at least one Document, got an empty sequence")
    bad = [type(d).__name__ for d in documents if not isinstance(d, Document)]
    if bad:
        raise ValueError(f"documents: expected Document objects, got {bad[0]}")


def make_batch(documents: Sequence[Document], vocab: Vocab) -> DocBatch:
    """Encode and pad documents to [B, S, W] (S: most sentences in the batch, W: longest sentence)."""
    _check_documents(documents)
    S = max(len(d.sentences) for d in documents)
    W = max(len(s) for d in documents for s in d.sentences)
    docs = torch.full((len(documents), S, W), vocab.pad_id, dtype=torch.long)  # [B, S, W]
    for b, d in enumerate(documents):
        for i, sentence in enumerate(d.sentences):
            docs[b, i, : len(sentence)] = torch.tensor(vocab.encode(sentence))
    return DocBatch(docs, torch.tensor([d.label for d in documents]))


def _epoch(documents, vocab, batch_size, shuffle, rng) -> Iterator[DocBatch]:
    for chunk in index_batches(len(documents), batch_size, shuffle, rng):
        yield make_batch([documents[i] for i in chunk], vocab)


def batches(
    documents: Sequence[Document],
    vocab: Vocab,
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
) -> Iterator[DocBatch]:
    """One epoch: every document once, in batches (order shuffled by ``random.Random(seed)``)."""
    _check_documents(documents)
    check_int(batch_size, "batch_size", 1)
    return _epoch(documents, vocab, batch_size, shuffle, random.Random(seed))


def epochs(
    documents: Sequence[Document],
    vocab: Vocab,
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
) -> Iterator[DocBatch]:
    """Endless batches, epoch after epoch, reshuffled each time by one ``random.Random(seed)``
    (for ``lib.train.fit``, which stops after its number of steps)."""
    _check_documents(documents)
    check_int(batch_size, "batch_size", 1)
    rng = random.Random(seed)
    return endless(lambda: _epoch(documents, vocab, batch_size, shuffle, rng))
