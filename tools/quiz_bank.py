"""A quiz and exam question bank with variants (issue 36, item 7), exported for Moodle and Canvas.

    python tools/quiz_bank.py --moodle quiz.xml                     # 5 variants of each question
    python tools/quiz_bank.py --qti quiz.zip --variants 10          # Canvas: a QTI 1.2 package
    python tools/quiz_bank.py --moodle quiz.xml --variants 20 --seed 2027 --chapters 02 03
    python tools/quiz_bank.py --markdown exam.md --student jsmith   # one student's paper; exam-key.md
    python tools/quiz_bank.py --markdown exam.md --no-key           # one paper (variant 0), no key

Each question is a function of a seed (:data:`QUESTIONS`): its numbers are drawn from the seed and
its answer is computed by the book's library (``lib.attention.masked_softmax``,
``MultiHeadAttention``'s parameters, ``sinusoidal_encoding``, ``count_parameters``...), so the key
cannot disagree with the book. Three kinds:

- **numerical**: one number, with an absolute tolerance sized to the digits the question asks for;
- **multiple choice**: the right value and wrong ones, each wrong one a mistake that the chapter's
  checker names (:class:`Choice` ``mistake``: its checker and a phrase of the checker's message, read
  from the checker's code by tools/instructor_notes.py; a test checks that each is there), and its
  feedback is the checker's own advice for that mistake;
- **written** (Moodle's essay): the question, and for the grader the criteria and a model answer.

Twenty-one questions repeat a graded exercise (:data:`EXERCISE_REPEATS` marks each with the exercise,
found by the rule its comment gives): the command leaves them out, and says so, unless
``--include-exercise-repeats`` (a quiz after those deadlines, or a term that does not grade them).

Variant k of a question has the seed ``sha256(seed/question/k)``; ``--student ID`` draws one variant
per question from the student's id instead (the same id, the same paper). The Moodle XML file has one
category per question (``$course$/attention-book/<chapter>/<question>``) holding its variants: a quiz
that takes one *random question* from each category gives each student their own numbers. The
format is Moodle's XML question format (docs.moodle.org/en/Moodle_XML_format; its importer,
question/format/xml/format.php, requires a name and reads questiontext, answer fraction, tolerance,
single, shuffleanswers, answernumbering, responseformat and graderinfo as written here).
``--qti`` writes the same questions as an IMS QTI 1.2 package for Canvas (tools/quiz_qti.py says
how: one question group per question, from which a quiz draws one variant per student).

Chapters 1-18 (chapter 5: soft attention's context, and soft against hard attention; chapter 13 also
a temperature and greedy decoding's document; chapter 18 also plain attention's memory and arithmetic
intensity: course review s36, M1; chapter 4: Bahdanau's additive score and a beam's candidates; chapter 9: a
LayerNorm and the Transformer's learning-rate schedule; chapter 1: a gradient through many steps, and maximum likelihood;
chapter 16 also the cost of pretraining, 6ND, and sentence-order prediction): every chapter from 10 on has a computed question (a BPE merge count, a
perplexity, ELMo's mix and softmax, GPT-3's size, BERT's labels and size, mean pooling, ALBERT's
size, a RoPE angle, a GQA cache, an ALiBi slope, the online softmax's sum), and written ones on
subwords, ELMo, GPT, BERT's masked LM, GQA and FlashAttention.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import html
import math
import os
import random
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))


@dataclass(frozen=True)
class Choice:
    text: str
    correct: bool
    feedback: str = ""
    mistake: tuple[str, str, str] | None = None  # (chapter module, checker, phrase of its message)


@dataclass
class Question:
    id: str
    chapter: str
    kind: str  # "numerical", "multichoice" or "essay"
    title: str
    text: str  # HTML
    answer: float | None = None
    tolerance: float = 0.0
    choices: list[Choice] = field(default_factory=list)
    criteria: list[str] = field(default_factory=list)
    model: str = ""
    feedback: str = ""  # general feedback: how the answer is computed
    seed: int = 0
    params: dict = field(default_factory=dict)  # the numbers drawn, by name


def _seed(base: int | str, question: str, k: int | str) -> int:
    return int(hashlib.sha256(f"{base}/{question}/{k}".encode()).hexdigest()[:15], 16)


def _advice(mistake: tuple) -> str:
    """The checker's own words for a mistake, from its phrase on, its computed parts filled from the
    question's own numbers: ``mistake`` is (module, checker, phrase) or (module, checker, phrase,
    {placeholder: value}) (lecturer review s23, M4: "leaves out the ...", "has length ...."). A
    placeholder the choice's phrase keeps and the question does not fill is an error, not '...'."""
    module, checker, phrase, *fills = mistake
    text = _message(module, checker, phrase)
    given = fills[0] if fills else {}

    def fill(m: re.Match) -> str:  # a placeholder, by its name or its expression's opening
        return next((str(v) for n, v in given.items() if m.group(1).startswith(n)), m.group())

    text = re.sub(r"‹([^›]*)›", fill, text)
    # a bracket of the student's own counts that the question has no numbers for ("(‹kinds›: [CLS],
    # ...)", "(‹chosen / n_ordinary› of the tokens, ...)") is left out, not shown half-filled
    text = re.sub(r"\s*\([^()]*‹[^()]*\)", "", text)
    if "‹" in text:
        raise ValueError(f"mistake: {checker}'s {phrase!r} needs {text!r} filled by the question")
    return text


@functools.lru_cache(maxsize=None)
def _message(module: str, checker: str, phrase: str) -> str:
    """The checker's message that holds ``phrase``, from the phrase on (its placeholders ‹...›)."""
    import instructor_notes

    for m in instructor_notes.mistakes(_import(module), checker):
        if phrase in m.message:
            return m.message[m.message.index(phrase) :]
    raise ValueError(f"mistake: {checker} has no message with {phrase!r}")


def _import(module: str):
    import importlib

    return importlib.import_module(module)


def _choices(right: str, wrong: list[tuple[str, tuple]], why: str) -> list[Choice]:
    """The right choice and the wrong ones (each with the checker's advice as its feedback); None if
    two show the same text (the question draws new numbers)."""
    texts = [right] + [w for w, _ in wrong]
    if len(set(texts)) != len(texts):
        return []
    out = [Choice(right, True, why)]
    out += [Choice(t, False, f"{t}: {_advice(m)}", m[:3]) for t, m in wrong]
    return out


def _far_apart(choices: list[Choice]) -> bool:
    """No wrong number within one unit of the right one's last decimal (0.000 beside a key of 0.001
    catches a student who truncates rather than rounds: lecturer review s9): the question draws again."""
    right = next(c.text for c in choices if c.correct)
    decimals = len(right.partition(".")[2])
    return all(
        abs(float(c.text) - float(right)) >= 1.5 * 10**-decimals for c in choices if not c.correct
    )


# --- the questions: chapter 1 ------------------------------------------------------------------------


def q01_vanishing(rng: random.Random) -> Question:
    while True:  # a product that three decimals do not round to 0 (lecturer review s34, m5)
        gain = rng.choice([0.7, 0.75, 0.8, 0.85, 0.9, 0.95])
        k = rng.randint(5, 40)
        factor = math.prod([gain] * k)  # one value, tested and stated
        if (gain, k) not in ((0.8, 20), (0.8, 40)) and factor >= 0.05:
            break
    return Question(
        "q01_vanishing", "01", "numerical", "A gradient through many steps",
        f"<p>In a recurrent network the influence of an early state on a late one is a product of one "
        f"Jacobian per step. Suppose each of them shrinks every vector by the same factor {gain}. To "
        f"what fraction of its size does a change in the state reach the state {k} steps later? Give "
        "three decimals.</p>",
        answer=round(factor, 3), tolerance=0.0015, params={"gain": gain, "k": k},
        feedback=f"<p>One factor per step: {gain}<sup>{k}</sup> = {factor:.4f}; the training signal "
        "comes back along the same product, shrunk as much.</p>",
    )  # fmt: skip


# --- the questions: chapter 2 ------------------------------------------------------------------------


def q02_soft_weight(rng: random.Random) -> Question:
    from lib.attention import masked_softmax

    scores = rng.sample(range(-3, 4), 4)
    lam = rng.choice([0.5, 1.0, 2.0])
    j = rng.randrange(4)
    weights = masked_softmax(lam * torch.tensor(scores, dtype=torch.float64))
    return Question(
        "q02_soft_weight", "02", "numerical", "Soft lookup: one weight",
        f"<p>A soft lookup has four keys whose scores for a query are {scores}. With sharpness "
        f"&lambda; = {lam:g}, the weights are softmax(&lambda; s). What is the weight of key {j} "
        "(counting from 0)? Give three decimals.</p>",
        answer=round(weights[j].item(), 3), tolerance=0.0015, params={"scores": scores, "lam": lam, "j": j},
        feedback=f"<p>softmax({lam:g} &times; {scores}) = {[round(w, 3) for w in weights.tolist()]}.</p>",
    )  # fmt: skip


def q02_sharpen(rng: random.Random) -> Question:
    from lib.attention import masked_softmax

    while True:
        raw = [rng.randint(1, 9) for _ in range(3)]
        w = torch.tensor(raw, dtype=torch.float64) / sum(raw)
        gamma = rng.choice([2, 3])
        right = masked_softmax(gamma * w.log())[0].item()  # w**gamma / sum w**gamma, in log space
        m = "lib.exercises.ch02", "check_sharpen"
        choices = _choices(
            f"{right:.3f}",
            [
                (f"{torch.softmax(gamma * w, -1)[0].item():.3f}", (*m, "softmax(gamma * w)")),
                (f"{(w[0] ** gamma).item():.3f}", (*m, "w**gamma without the division")),
                (f"{(w ** (1 / gamma) / (w ** (1 / gamma)).sum())[0].item():.3f}", (*m, "w**(1/gamma)")),
            ],
            "<p>w<sub>0</sub><sup>&gamma;</sup> / &Sigma;<sub>j</sub> w<sub>j</sub><sup>&gamma;</sup>.</p>",
        )  # fmt: skip
        if choices and _far_apart(choices):
            break
    shown = ", ".join(f"{v:.3f}" for v in w.tolist())
    return Question(
        "q02_sharpen", "02", "multichoice", "NTM sharpening",
        f"<p>The neural Turing machine sharpens the weights w = ({shown}) with &gamma; = {gamma}: "
        "w&#771;(i) = w(i)<sup>&gamma;</sup> / &Sigma;<sub>j</sub> w(j)<sup>&gamma;</sup>. "
        "What is the sharpened weight of slot 0?</p>",
        choices=choices, params={"w": w.tolist(), "gamma": gamma},
    )  # fmt: skip


# --- chapter 3 ----------------------------------------------------------------------------------------------


def q03_scaled_score(rng: random.Random) -> Question:
    from lib.attention import scaled_dot_product_score

    d = rng.choice([4, 9, 16])
    q = [rng.randint(-2, 2) for _ in range(d)]
    k = [rng.randint(-2, 2) for _ in range(d)]
    t = lambda v: torch.tensor(v, dtype=torch.float64)[None, None]  # noqa: E731 [1, 1, d]
    score = scaled_dot_product_score(t(q), t(k))[0, 0, 0].item()
    return Question(
        "q03_scaled_score", "03", "numerical", "Scaled dot-product score",
        f"<p>q = {q} and k = {k} (d<sub>k</sub> = {d}). What is the scaled dot-product score "
        "q &middot; k / &radic;d<sub>k</sub>? Give two decimals.</p>",
        answer=round(score, 2), tolerance=0.006, params={"q": q, "k": k},
        feedback=f"<p>q &middot; k = {sum(a * b for a, b in zip(q, k))}, divided by &radic;{d} = {math.sqrt(d):g}.</p>",
    )  # fmt: skip


def q03_masked_weight(rng: random.Random) -> Question:
    from lib.attention import masked_softmax

    while True:
        scores = [rng.randint(-2, 3) for _ in range(4)]
        masked = sorted(rng.sample(range(4), rng.choice([1, 2])))
        mask = torch.tensor([i not in masked for i in range(4)])
        j = rng.choice([i for i in range(4) if i not in masked])
        s = torch.tensor(scores, dtype=torch.float64)
        right = masked_softmax(s, mask)[j].item()
        m = "lib.exercises.ch03", "check_masked_softmax"
        choices = _choices(
            f"{right:.3f}",
            [
                (f"{(torch.softmax(s, -1) * mask)[j].item():.3f}", (*m, "you set the masked weights to 0 after the softmax")),
                (f"{torch.softmax(s * mask, -1)[j].item():.3f}", (*m, "a masked score set to 0")),
                ("0.000", (*m, "non-zero exactly where the mask is False")),
            ],
            "<p>The masked scores are left out (set to &minus;&infin;) before the softmax, so the "
            "allowed weights sum to 1.</p>",
        )  # fmt: skip
        if choices and _far_apart(choices):
            break
    return Question(
        "q03_masked_weight", "03", "multichoice", "A masked softmax",
        f"<p>A row of scores is {scores}; the mask (True where the query may attend) is "
        f"{[bool(b) for b in mask.tolist()]}. What weight does the masked softmax give key {j} "
        "(counting from 0)?</p>",
        choices=choices, params={"scores": scores, "mask": mask.tolist(), "j": j},
    )  # fmt: skip


# --- chapter 4 ---------------------------------------------------------------------------------------------


def q04_additive_score(rng: random.Random) -> Question:
    while True:  # a score that two decimals do not round to 0
        v = [rng.choice([-2, -1, 1, 2]) for _ in range(2)]
        a = [rng.choice([-1, -0.5, 0, 0.5, 1]) for _ in range(2)]  # W s_{t-1}
        b = [rng.choice([-1, -0.5, 0, 0.5, 1]) for _ in range(2)]  # U h_j
        t = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
        score = (t(v) * torch.tanh(t(a) + t(b))).sum().item()
        if abs(score) >= 0.05:
            break
    return Question(
        "q04_additive_score", "04", "numerical", "Bahdanau's additive score",
        f"<p>Bahdanau's score of a source position j is v<sup>T</sup> tanh(W s<sub>t&minus;1</sub> + U "
        f"h<sub>j</sub>). With W s<sub>t&minus;1</sub> = {a}, U h<sub>j</sub> = {b} and v = {v}, what "
        "is the score? Give two decimals.</p>",
        answer=round(score, 2), tolerance=0.006, params={"v": v, "a": a, "b": b},
        feedback="<p>Add the two vectors, take tanh of each entry, then the dot product with v: "
        f"{score:.4f}.</p>",
    )  # fmt: skip


def q04_beam_candidates(rng: random.Random) -> Question:
    k, V = rng.choice([2, 3, 4, 5, 8, 10]), rng.choice([1000, 5000, 8000, 30000])
    return Question(
        "q04_beam_candidates", "04", "numerical", "The candidates of a beam",
        f"<p>Beam search keeps the k = {k} best partial translations; the target vocabulary has "
        f"V = {V:,} words. After the first step, how many one-word extensions does it score at each "
        "step before it keeps the k best?</p>",
        answer=k * V, tolerance=0, params={"k": k, "V": V},
        feedback=f"<p>Each of the k kept hypotheses is extended by each of the V words: "
        f"{k} &times; {V:,} = {k * V:,}.</p>",
    )  # fmt: skip


# --- chapter 5 ---------------------------------------------------------------------------------------------


def q05_soft_context(rng: random.Random) -> Question:
    from lib.attention import masked_softmax

    while True:  # a context that two decimals do not round to 0
        scores = [rng.randint(-2, 2) for _ in range(4)]
        a = [rng.choice([-3, -2, -1, 1, 2, 3, 4]) for _ in range(4)]  # one feature of each region
        weights = masked_softmax(torch.tensor(scores, dtype=torch.float64))
        z = (weights * torch.tensor(a, dtype=torch.float64)).sum().item()
        if abs(z) >= 0.05 and len(set(scores)) > 1:
            break
    return Question(
        "q05_soft_context", "05", "numerical", "Soft attention's context",
        f"<p>A captioner looks at an image of four regions, each described here by one feature: "
        f"a = {a}. At the next word its attention scores for the four regions are {scores}, and "
        "its weights are their softmax. Hard attention would sample one region from those weights "
        "and read its feature; soft attention reads the expected value of that feature. What is "
        "the soft context z? Give two decimals.</p>",
        answer=round(z, 2), tolerance=0.006, params={"scores": scores, "a": a},
        feedback=f"<p>The weights softmax({scores}) = {[round(w, 3) for w in weights.tolist()]}; "
        f"z = &Sigma;<sub>i</sub> &alpha;<sub>i</sub> a<sub>i</sub> = {z:.4f}.</p>",
    )  # fmt: skip


# --- chapter 6 ---------------------------------------------------------------------------------------------


def q06_causal_pairs(rng: random.Random) -> Question:
    from lib.attention import causal_mask

    T = rng.randint(5, 40)
    pairs = int(causal_mask(T).sum())
    return Question(
        "q06_causal_pairs", "06", "numerical", "A causal mask",
        f"<p>A decoder's self-attention over T = {T} tokens uses a causal mask. How many "
        "(query, key) pairs may attend?</p>",
        answer=pairs, tolerance=0, params={"T": T},
        feedback=f"<p>Query i sees keys 0 to i: 1 + 2 + ... + {T} = {T}({T} + 1)/2 = {pairs}.</p>",
    )  # fmt: skip


def q06_score_variance(rng: random.Random) -> Question:
    while True:
        sigma, d_k = rng.choice([2, 3, 0.5]), rng.choice([16, 64, 256])
        if d_k * sigma**4 != 1:  # a distractor equal to another: draw again
            break
    # the variance of q . k / sqrt(d_k) for independent zero-mean entries of standard deviation sigma
    right = sigma**4
    m = "lib.exercises.ch06", "check_wider_entries"
    fmt = lambda v: f"{v:g}"  # noqa: E731
    choices = _choices(
        fmt(right),
        [
            (fmt(sigma**2), (*m, "is the variance of one entry of q or of k")),
            (fmt(2 * sigma**2), (*m, "adds the variances of q_i and k_i")),
            (fmt(d_k * sigma**4), (*m, "looks like the variance of q . k before the division")),
            (fmt(1), (*m, "is the variance for entries of variance 1")),
        ],
        f"<p>One product q<sub>i</sub>k<sub>i</sub> has variance &sigma;<sup>4</sup> = {fmt(right)}, "
        f"the sum of d<sub>k</sub> of them d<sub>k</sub>&sigma;<sup>4</sup>, and the division by "
        "&radic;d<sub>k</sub> divides the variance by d<sub>k</sub>.</p>",
    )
    return Question(
        "q06_score_variance", "06", "multichoice", "Variance of a scaled score",
        f"<p>The entries of a query q and a key k are independent, with mean 0 and standard deviation "
        f"{fmt(sigma)}; d<sub>k</sub> = {d_k}. What is the variance of the scaled score "
        "q &middot; k / &radic;d<sub>k</sub>?</p>",
        choices=choices, params={"sigma": sigma, "d_k": d_k},
    )  # fmt: skip


# --- chapter 7 ----------------------------------------------------------------------------------------------


def q07_mha_parameters(rng: random.Random) -> Question:
    from lib.attention import MultiHeadAttention

    d, h = rng.choice([(32, 4), (64, 8), (96, 4), (128, 8), (256, 4), (512, 8)])
    with torch.device("meta"):
        mha = MultiHeadAttention(d, h)
    right = sum(p.numel() for p in mha.parameters())
    m = "lib.exercises.ch07", "check_one_head"
    choices = _choices(
        f"{right:,}",
        [
            (f"{h * right:,}", (*m, "the number of heads changes no matrix")),
            (f"{right // h:,}", (*m, "the number of heads changes no matrix")),
            (
                f"{4 * d * d:,}",
                (*m, "leaves out the", {"part": f"attention's four biases (4D = {4 * d})"}),
            ),
        ],
        f"<p>Four projections of {d} &times; {d} with their biases: 4D<sup>2</sup> + 4D, for any "
        "number of heads.</p>",
    )
    return Question(
        "q07_mha_parameters", "07", "multichoice", "Parameters of multi-head attention",
        f"<p>How many parameters has a multi-head attention layer with d<sub>model</sub> = {d} and "
        f"{h} heads (query, key, value and output projections, each with a bias)?</p>",
        choices=choices, params={"d": d, "h": h},
    )  # fmt: skip


def q07_attention_weights(rng: random.Random) -> Question:
    from lib.attention import MultiHeadAttention

    B, T, (d, h) = rng.randint(2, 8), rng.randint(5, 30), rng.choice([(32, 4), (64, 8), (48, 6)])
    with torch.device("meta"):  # shapes only: no memory, no arithmetic
        x = torch.zeros(B, T, d)
        _, weights = MultiHeadAttention(d, h)(x, x, x)
    return Question(
        "q07_attention_weights", "07", "numerical", "How many attention weights",
        f"<p>Self-attention with {h} heads (d<sub>model</sub> = {d}) runs on a batch of {B} "
        f"sequences of {T} tokens. How many attention weights does it compute?</p>",
        answer=weights.numel(), tolerance=0, params={"B": B, "T": T, "h": h},
        feedback=f"<p>The weights have shape [B, H, T, T] = {list(weights.shape)}.</p>",
    )  # fmt: skip


# --- chapter 8 ----------------------------------------------------------------------------------------------


def q08_pe_value(rng: random.Random) -> Question:
    from lib.positional import sinusoidal_encoding

    d = rng.choice([8, 16, 32])
    pos, col = rng.randint(1, 60), rng.randrange(6)
    value = sinusoidal_encoding(pos + 1, d).double()[pos, col].item()
    kind, i = ("sin", col // 2) if col % 2 == 0 else ("cos", col // 2)
    return Question(
        "q08_pe_value", "08", "numerical", "A sinusoidal position vector",
        f"<p>In the sinusoidal table with d<sub>model</sub> = {d} and base 10000, what is "
        f"PE[{pos}, {col}]? Give three decimals.</p>",
        answer=round(value, 3), tolerance=0.0015, params={"d": d, "pos": pos, "col": col},
        feedback=f"<p>Column {col} is a {kind} of pair i = {i}: {kind}({pos} / 10000^({2 * i}/{d})).</p>",
    )  # fmt: skip


def q08_last_wavelength(rng: random.Random) -> Question:
    from lib.positional import _frequencies

    base, d = rng.choice([100, 1000, 10000]), rng.choice([64, 128, 256])
    right = 2 * math.pi / _frequencies(d, base)[-1].item()
    m = "lib.exercises.ch08", "check_small_base"
    choices = _choices(
        f"{right:,.1f}",
        [
            (f"{2 * math.pi * base:,.1f}", (*m, "the limit for a very wide table")),
            (f"{2 * math.pi * base ** ((d - 1) / d):,.1f}", (*m, "you put the odd column's index")),
            (f"{right / (2 * math.pi):,.1f}", (*m, "the number of positions per radian")),
            (f"{2 * math.pi:,.1f}", (*m, "the wavelength of the first pair")),
        ],
        f"<p>Pair i turns at 1 / base<sup>2i/d</sup> radians per position; the last pair is "
        f"i = {d // 2 - 1}: 2&pi; &times; {base}<sup>{d - 2}/{d}</sup>.</p>",
    )  # fmt: skip
    return Question(
        "q08_last_wavelength", "08", "multichoice", "The slowest wavelength",
        f"<p>A sinusoidal table has d<sub>model</sub> = {d} and base {base}. How many positions "
        f"long is the wavelength of its last pair of columns ({d - 2} and {d - 1})?</p>",
        choices=choices, params={"base": base, "d": d},
    )  # fmt: skip


# --- chapter 9 ----------------------------------------------------------------------------------------------


def q09_encoder_layer(rng: random.Random) -> Question:
    from lib.transformer import EncoderLayer

    d, h = rng.choice([(64, 4), (128, 8), (256, 8), (512, 8)])
    d_ff = d * rng.choice([2, 4])
    with torch.device("meta"):
        layer = EncoderLayer(d, h, d_ff)
    right = sum(p.numel() for p in layer.parameters())
    return Question(
        "q09_encoder_layer", "09", "numerical", "Parameters of an encoder layer",
        f"<p>How many parameters has one Transformer encoder layer with d<sub>model</sub> = {d}, "
        f"{h} heads and d<sub>ff</sub> = {d_ff} (biases everywhere, two LayerNorms)?</p>",
        answer=right, tolerance=0, params={"d": d, "h": h, "d_ff": d_ff},
        feedback=f"<p>Attention 4({d}&sup2; + {d}), feed-forward 2&middot;{d}&middot;{d_ff} + {d_ff} + {d}, "
        f"LayerNorms 2&middot;2&middot;{d}: {right:,}.</p>",
    )  # fmt: skip


@functools.lru_cache(maxsize=None)
def _base_parameters(n_layers: int = 6) -> int:
    from lib.transformer import TransformerConfig, count_parameters

    return count_parameters(TransformerConfig.base(n_layers=n_layers))


def q09_total_layers(rng: random.Random) -> Question:
    N = rng.choice([8, 10, 12, 16])
    base, right = _base_parameters(), _base_parameters(N)
    encoder_layer = 2 * 512 * 2048 + 4 * 512**2
    m = "lib.exercises.ch09", "check_parameter_counts"
    choices = _choices(
        f"{right:,}",
        [
            (
                f"{round(N / 6 * base):,}",
                (
                    *m,
                    "the shared embedding does not grow with N",
                    {"'double' if N": "double" if N == 12 else "grow"},
                ),
            ),
            (f"{right - base:,}", (*m, "new layers add; the question asks for the total")),
            (
                f"{base + 2 * (N - 6) * encoder_layer:,}",
                (
                    *m,
                    "layers of an encoder layer's size",
                    {"'Six' if more": "Six" if N == 12 else N - 6},
                ),
            ),
        ],
        "<p>N counts the layers of the encoder and of the decoder each; the shared embedding "
        "stays as it is.</p>",
    )
    return Question(
        "q09_total_layers", "09", "multichoice", "A deeper Transformer (base)",
        f"<p>The Transformer (base) has {base:,} parameters (N = 6, d<sub>model</sub> = 512, "
        f"d<sub>ff</sub> = 2048, one shared 37,000-token embedding). How many has the same model with "
        f"N = {N}?</p>",
        choices=choices, params={"N": N},
    )  # fmt: skip


def q09_layer_norm(rng: random.Random) -> Question:
    while True:
        x = [rng.randint(-3, 4) for _ in range(4)]
        if len(set(x)) > 1:
            break
    j = rng.randrange(4)
    out = torch.nn.functional.layer_norm(torch.tensor(x, dtype=torch.float64), (4,))[j].item()
    mean = sum(x) / 4
    return Question(
        "q09_layer_norm", "09", "numerical", "A LayerNorm",
        f"<p>A LayerNorm with gain 1 and bias 0 (and &epsilon; = 10<sup>&minus;5</sup>) normalizes "
        f"the vector x = {x}. What is entry {j} of its output (counting from 0)? Give two "
        "decimals.</p>",
        answer=round(out, 2), tolerance=0.006, params={"x": x, "j": j},
        feedback=f"<p>Subtract the mean, {mean:g}, and divide by the standard deviation over the 4 "
        "entries (the variance divided by 4, not 3, plus &epsilon;, under the root): "
        f"{out:.4f}.</p>",
    )  # fmt: skip


def q09_warmup_lr(rng: random.Random) -> Question:
    d = rng.choice([256, 512, 1024])
    warmup = rng.choice([1000, 2000, 4000])
    step = rng.choice([100, 500, 1000, 3000, 5000, 10000, 20000])
    lr = d**-0.5 * min(step**-0.5, step * warmup**-1.5)
    return Question(
        "q09_warmup_lr", "09", "numerical", "The Transformer's learning-rate schedule",
        "<p>The original Transformer's learning rate at a step is d<sub>model</sub><sup>&minus;0.5</sup> "
        "&middot; min(step<sup>&minus;0.5</sup>, step &middot; warmup<sup>&minus;1.5</sup>). With "
        f"d<sub>model</sub> = {d} and warmup = {warmup:,}, what is it at step {step:,}? Give it in units "
        "of 10<sup>&minus;4</sup>, with two decimals.</p>",
        answer=round(lr * 1e4, 2), tolerance=0.006, params={"d": d, "warmup": warmup, "step": step},
        feedback=f"<p>{'During the warm-up the second term is the smaller: it grows linearly' if step < warmup else 'After the warm-up the first term is the smaller: it decays as the inverse square root'}; "
        f"the rate is {lr:.3e}.</p>",
    )  # fmt: skip


# --- chapter 10 ---------------------------------------------------------------------------------------------

_WORDS = ["low", "lower", "lowest", "newer", "newest", "wider", "widest", "slow"]


def q10_bpe_tokens(rng: random.Random) -> Question:
    from lib.bpe import bpe_steps

    words = {w: rng.randint(1, 9) for w in sorted(rng.sample(_WORDS, 4))}
    k = rng.choice([2, 3, 4])
    steps = bpe_steps(words, k, end_of_word=None)
    tokens = sum(words[w] * len(s) for w, s in steps[-1].segmentation.items())
    merges = ", ".join(f"{a} + {b} ({s.count} times)" for s in steps for a, b in [s.pair])
    shown = ", ".join(f"{w}: {c}" for w, c in words.items())
    split = ", ".join(f"{w} = {' '.join(s)}" for w, s in steps[-1].segmentation.items())
    return Question(
        "q10_bpe_tokens", "10", "numerical", "Tokens after BPE merges",
        f"<p>BPE learns {k} merges from the word counts {{{shown}}},"
        " starting from single characters, with no end-of-word marker;"
        " each merge joins the most frequent pair of adjacent symbols"
        " (counted over every occurrence of every word),"
        " a tie going to the alphabetically smallest pair."
        f" After the {k} merges, how many tokens does the whole corpus take"
        f" ({sum(words.values())} words)?</p>",
        answer=tokens, tolerance=0, params={"words": words, "k": k},
        feedback=f"<p>The merges: {merges}. The words become {split}; each word's tokens times its "
        f"count: {tokens}.</p>",
    )  # fmt: skip


def q10_pair_score(rng: random.Random) -> Question:
    from collections import Counter

    from lib.bpe import pair_counts
    from lib.wordpiece import wordpiece_split

    while True:
        words = {w: rng.randint(1, 9) for w in sorted(rng.sample(_WORDS, 4))}
        pieces = {w: wordpiece_split(w) for w in words}
        c_pair = pair_counts(pieces, words)
        c_piece = Counter()
        for w, p in pieces.items():
            for x in p:
                c_piece[x] += words[w]
        a, b = rng.choice(sorted(c_pair))
        c_ab, c_a, c_b = c_pair[a, b], c_piece[a], c_piece[b]
        m = "lib.exercises.ch10", "check_pair_score"
        choices = _choices(
            f"{c_ab / (c_a * c_b):.4f}",
            [
                (f"{c_ab}", (*m, "is c_ab, the count of the pair")),
                (f"{c_ab / c_a:.4f}", (*m, "You divided c_ab by one count only")),
                (f"{c_ab / c_b:.4f}", (*m, "You divided c_ab by one count only")),
            ],
            f"<p>c<sub>ab</sub> / (c<sub>a</sub> c<sub>b</sub>) = {c_ab} / ({c_a} &times; {c_b}), "
            "each occurrence weighted by its word's count.</p>",
        )  # fmt: skip
        if choices and _far_apart(choices):
            break
    shown = ", ".join(f"{' '.join(pieces[w])}: {c}" for w, c in words.items())
    return Question(
        "q10_pair_score", "10", "multichoice", "WordPiece's pair score",
        f"<p>A dictionary split into WordPiece pieces, with each word's count: {shown}. "
        f"What is the score c<sub>ab</sub> / (c<sub>a</sub> c<sub>b</sub>) of the pair ({a}, {b}), "
        "with every count weighted by its word's count?</p>",
        choices=choices, params={"words": words, "pair": [a, b]},
    )  # fmt: skip


# --- chapter 11 ---------------------------------------------------------------------------------------------


def q11_bigram_perplexity(rng: random.Random) -> Question:
    from lib.ngram import BigramLM

    subjects, verbs = ["the cat", "the dog", "a cat", "a dog"], ["sat", "ran", "slept"]
    train = sorted(
        {f"{rng.choice(subjects)} {rng.choice(verbs)}" for _ in range(rng.randint(3, 5))}
    )
    test = rng.choice(train)
    lm = BigramLM(train)
    ppl = lm.perplexity([test])
    tokens = ["<s>"] + test.split() + ["</s>"]
    probs = ", ".join(
        f"P({html.escape(w)} | {html.escape(v)}) = {lm.prob(w, v):.3g}"
        for v, w in zip(tokens, tokens[1:])
    )
    return Question(
        "q11_bigram_perplexity", "11", "numerical", "Perplexity of a bigram model",
        f"<p>A bigram model is estimated by counting (maximum likelihood, no smoothing) on the "
        f"sentences {'; '.join(repr(s) for s in train)}, each read as &lt;s&gt; w<sub>1</sub> ... "
        f"w<sub>n</sub> &lt;/s&gt;. What is its perplexity on the sentence '{test}' (its words and "
        "&lt;/s&gt; are predicted)? Give two decimals.</p>",
        answer=round(ppl, 2), tolerance=0.006, params={"train": train, "test": test},
        feedback=f"<p>{probs}; perplexity = exp(&minus;mean ln P) over the {len(tokens) - 1} "
        f"predicted tokens = {ppl:.4f}.</p>",
    )  # fmt: skip


# --- chapter 12 ---------------------------------------------------------------------------------------------


def q12_scalar_mix(rng: random.Random) -> Question:
    from lib.elmo import ScalarMix

    h = [rng.randint(-3, 3) for _ in range(3)]
    w = [rng.randint(-1, 2) for _ in range(3)]
    gamma = rng.choice([0.5, 1.0, 2.0])
    mix = ScalarMix(3, gamma).double()
    with torch.no_grad():
        mix.scalar_parameters.copy_(torch.tensor(w, dtype=torch.float64))
        value = mix(torch.tensor(h, dtype=torch.float64)[:, None]).item()  # [N, 1] -> [1]
        s = mix.weights.tolist()
    return Question(
        "q12_scalar_mix", "12", "numerical", "ELMo's mix of the layers",
        f"<p>ELMo mixes a token's three layers h<sub>0</sub>, h<sub>1</sub>, h<sub>2</sub> as "
        "&gamma; &Sigma;<sub>j</sub> s<sub>j</sub> h<sub>j</sub> with s = softmax(w). One coordinate "
        f"of the three layers is h = {h}; the task learned w = {w} and &gamma; = {gamma:g}. What is "
        "that coordinate of the ELMo vector? Give three decimals.</p>",
        answer=round(value, 3), tolerance=0.0015, params={"h": h, "w": w, "gamma": gamma},
        feedback=f"<p>s = softmax({w}) = {[round(x, 3) for x in s]}; {gamma:g} &times; "
        f"&Sigma; s<sub>j</sub> h<sub>j</sub> = {value:.4f}.</p>",
    )  # fmt: skip


@functools.lru_cache(maxsize=None)
def _elmo_softmax(V: int) -> int:
    from lib.elmo import ELMoConfig, count_parameters

    config = ELMoConfig(vocab_size=V, hidden_dim=512, cell_dim=4096, n_layers=2)
    return count_parameters(config) - count_parameters(config, softmax=False)


def q12_softmax_params(rng: random.Random) -> Question:
    V = rng.choice([10_000, 50_000, 100_000, 250_000, 793_471])
    right = _elmo_softmax(V)
    m = "lib.exercises.ch12", "check_elmo_size"
    choices = _choices(
        f"{right:,}",
        [
            (f"{V * 512:,}", (*m, "counts the weights, one per (word, input number) pair, but not the biases")),
            (f"{V * 4097:,}", (*m, "the softmax reads the LSTM's output after its projection")),
            (f"{V * 1025:,}", (*m, "counts about twice too many parameters")),
        ],
        f"<p>One softmax, shared by the two directions, reads H = 512 numbers: a weight per (word, "
        f"input) pair and a bias per word, V(H + 1) = {V:,} &times; 513.</p>",
    )  # fmt: skip
    return Question(
        "q12_softmax_params", "12", "multichoice", "The size of ELMo's softmax",
        f"<p>ELMo's biLM has LSTMs of 4096 cells whose output is projected to H = 512 numbers in each "
        f"direction, and a full softmax over a vocabulary of V = {V:,} words, shared by the forward "
        "and the backward language model. How many parameters does the softmax layer add?</p>",
        choices=choices, params={"V": V},
    )  # fmt: skip


# --- chapter 13 ---------------------------------------------------------------------------------------------

# GPT-3's models (Brown et al. 2020, Table 2.1): name, n_layer N, width D (13B left out: its
# d_model 5140 is not 40 heads of 128)
GPT3 = [("Small", 12, 768), ("Medium", 24, 1024), ("Large", 24, 1536), ("XL", 24, 2048),
        ("2.7B", 32, 2560), ("6.7B", 32, 4096), ("175B", 96, 12288)]  # fmt: skip


@functools.lru_cache(maxsize=None)
def _gpt_parameters(V: int, T: int, N: int, D: int) -> int:
    from lib.gpt import GPTConfig, count_parameters

    return count_parameters(
        GPTConfig(vocab_size=V, block_size=T, n_layer=N, n_head=D // 128, n_embd=D)
    )


def q13_gpt3_parameters(rng: random.Random) -> Question:
    name, N, D = rng.choice(GPT3)
    V, T = 50257, 2048
    right = _gpt_parameters(V, T, N, D)
    block = (right - (V + T) * D - 2 * D) // N
    m = "lib.exercises.ch13", "check_gpt3_size"
    choices = _choices(
        f"{right:,}",
        [
            (f"{12 * N * D * D:,}", (*m, "is 12 N D^2 alone")),
            (f"{right + V * D:,}", (*m, "counts the token embedding twice")),
            (f"{right - (N - 1) * block:,}", (*m, "has one block", {"n['N']": N})),
        ],
        f"<p>{N} blocks of {block:,} (12D<sup>2</sup> weights and 13D biases and LayerNorm "
        f"numbers), the token and position embeddings (V + T)D = {(V + T) * D:,} and the final "
        "LayerNorm 2D; the output layer is tied to the token embedding.</p>",
    )  # fmt: skip
    return Question(
        "q13_gpt3_parameters", "13", "multichoice", "The size of a GPT-3 model",
        f"<p>GPT-3 {name} is a GPT-2-shaped decoder with N = {N} blocks of width D = {D}, a "
        f"vocabulary of V = {V:,} tokens and a context of T = {T:,} learned positions; the output "
        "layer reuses the token embedding. Counting every weight, bias and LayerNorm parameter as "
        "the book's GPT does, how many parameters has it?</p>",
        choices=choices, params={"N": N, "D": D},
    )  # fmt: skip


def q13_temperature(rng: random.Random) -> Question:
    from lib.attention import masked_softmax

    while True:
        z = sorted(rng.sample(range(-2, 5), 4), reverse=True)  # the next token's logits
        tau = rng.choice([0.5, 2.0, 0.25, 4.0])
        j = rng.randrange(4)
        p = masked_softmax(torch.tensor(z, dtype=torch.float64) / tau)[j].item()
        if p >= 0.0005:
            break
    return Question(
        "q13_temperature", "13", "numerical", "Sampling at a temperature",
        f"<p>A language model's logits for the next token are z = {z} (a vocabulary of four "
        f"tokens). The decoder samples from softmax(z / &tau;) at temperature &tau; = {tau:g}. What "
        f"probability does it give token {j} (counting from 0)? Give three decimals.</p>",
        answer=round(p, 3), tolerance=0.0015, params={"z": z, "tau": tau, "j": j},
        feedback=f"<p>z / {tau:g} = {[v / tau for v in z]}; its softmax is "
        f"{[round(v, 3) for v in masked_softmax(torch.tensor(z, dtype=torch.float64) / tau).tolist()]}"
        f". A temperature below 1 sharpens the distribution, above 1 flattens it.</p>",
    )  # fmt: skip


def q13_greedy_document(rng: random.Random) -> Question:
    while True:
        first = rng.choice([0.55, 0.6, 0.65, 0.7])  # P(A); P(B) = 1 - P(A)
        after_a = sorted(rng.sample([0.1, 0.15, 0.2, 0.25, 0.3, 0.35], 3), reverse=True)
        after_a.append(round(1 - sum(after_a), 2))  # four next tokens after A
        after_b = rng.choice([0.8, 0.85, 0.9, 0.95])  # B's likeliest next token
        p = torch.tensor([first, 1 - first], dtype=torch.float64)
        best_next = torch.tensor([max(after_a), after_b], dtype=torch.float64)
        documents = p * best_next  # each first token with its likeliest second token
        if documents[1] > documents[0] + 0.01 and max(after_a) == after_a[0] and after_a[-1] > 0:
            break
    return Question(
        "q13_greedy_document", "13", "numerical", "Greedy is not the likeliest document",
        f"<p>A language model writes documents of two tokens. Its first token is A with probability "
        f"{first:g} or B with probability {1 - first:g}. After A, the next token's probabilities "
        f"are {after_a}; after B, the likeliest next token has probability {after_b:g}. Greedy "
        "decoding takes the likeliest token at each step. What is the probability of the likeliest "
        "two-token document? Give three decimals.</p>",
        answer=round(documents.max().item(), 3), tolerance=0.0015,
        params={"first": first, "after_a": after_a, "after_b": after_b},
        feedback=f"<p>Greedy takes A, then A's likeliest next token: {first:g} &times; "
        f"{max(after_a):g} = {documents[0].item():.4f}. Starting with B gives {1 - first:g} "
        f"&times; {after_b:g} = {documents[1].item():.4f}, the likeliest document: a less likely "
        "first token can lead to a likelier document.</p>",
    )  # fmt: skip


# --- chapter 14 ---------------------------------------------------------------------------------------------


def q14_mlm_labels(rng: random.Random) -> Question:
    import inspect

    from lib.pretraining_data import mask_tokens

    prob = inspect.signature(mask_tokens).parameters["prob"].default  # BERT's 0.15
    while True:
        B, T = rng.choice([8, 16, 32, 64]), rng.choice([32, 64, 128, 256])
        ordinary = T - 3  # [CLS] A [SEP] B [SEP]: three special tokens a row
        m = "lib.exercises.ch14", "check_mask_for_mlm"
        fmt = lambda v: f"{v:.1f}"  # noqa: E731
        choices = _choices(
            fmt(B * ordinary * prob),
            [
                (fmt(B * ordinary * prob * 0.8), (*m, "only the [MASK] positions carry a label")),
                (fmt(B * ordinary * prob * 0.9), (*m, "only the tokens you replaced ([MASK] or a random id) carry a label")),
                (fmt(B * T * prob), (*m, "you chose special tokens")),
                (fmt(B * T), (*m, "every position has a label")),
            ],
            f"<p>Every chosen token gets a label, whatever it became ([MASK], a random token or "
            f"itself): {prob:g} of the {B} &times; {ordinary} ordinary tokens.</p>",
        )  # fmt: skip
        if choices and _far_apart(choices):
            break
    return Question(
        "q14_mlm_labels", "14", "multichoice", "How many masked-LM labels",
        f"<p>A batch holds {B} sequences of {T} tokens, each [CLS] A [SEP] B [SEP]"
        " (three special tokens, no padding)."
        f" BERT's masked-LM corruption chooses each ordinary token with probability {prob:g},"
        " then makes 80% of the chosen tokens [MASK], 10% a random token"
        " and leaves 10% as they are."
        " On average, how many positions carry a label (not -100) for the loss?</p>",
        choices=choices, params={"B": B, "T": T, "prob": prob},
    )  # fmt: skip


# the compact BERTs of Turc et al. 2019 (and BERT-base): name, layers L, width D
BERTS = [
    ("Tiny", 2, 128),
    ("Mini", 4, 256),
    ("Small", 4, 512),
    ("Medium", 8, 512),
    ("Base", 12, 768),
]


@functools.lru_cache(maxsize=None)
def _bert_parameters(L: int, D: int) -> tuple[int, int, int]:
    """Bert's count, the vocabulary V, and the masked-LM head's own parameters (its tied E not counted)."""
    from torch import nn

    from lib.bert import BertConfig, count_parameters
    from lib.bert_heads import BertLMPredictionHead

    c = BertConfig(
        hidden_size=D, num_hidden_layers=L, num_attention_heads=D // 64, intermediate_size=4 * D
    )
    V = c.vocab_size
    with torch.device("meta"):
        head = (
            sum(p.numel() for p in BertLMPredictionHead(c, nn.Embedding(V, D)).parameters()) - V * D
        )
    return count_parameters(c), V, head


def q14_bert_parameters(rng: random.Random) -> Question:
    name, L, D = rng.choice(BERTS)
    right, V, head = _bert_parameters(L, D)
    m = "lib.exercises.ch14", "check_medium_size"
    choices = _choices(
        f"{right:,}",
        [
            (f"{right - D * D - D:,}", (*m, "leaves out the pooler")),
            (f"{right + head:,}", (*m, "includes the masked-LM head of pretraining")),
            (f"{right + V * D:,}", (*m, "counts the word embeddings twice")),
        ],
        f"<p>The embeddings ({V:,} + 512 + 2) &times; {D} and their LayerNorm, {L} layers of "
        f"12D<sup>2</sup> weights with their biases and two LayerNorms, and the pooler D<sup>2</sup> + D; "
        "no pretraining head.</p>",
    )  # fmt: skip
    return Question(
        "q14_bert_parameters", "14", "multichoice", "The size of a BERT",
        f"<p>BERT-{name} has L = {L} layers of width D = {D} (feed-forward 4D), BERT's vocabulary of "
        f"{V:,} WordPiece tokens, 512 positions and 2 segments. How many parameters has the encoder "
        "with its pooler (the book's Bert, no pretraining heads)?</p>",
        choices=choices, params={"L": L, "D": D},
    )  # fmt: skip


# --- chapter 15 ---------------------------------------------------------------------------------------------


def q15_mean_pooling(rng: random.Random) -> Question:
    import torch.nn.functional as F

    while True:
        h = torch.tensor(
            [[rng.randint(-3, 3) for _ in range(2)] for _ in range(8)], dtype=torch.float64
        )
        h = h.view(2, 4, 2)  # [B=2, T=4, D=2]: sentence 0 has 3 real tokens and 1 padding
        mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.float64)  # [B, T]
        mean = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)  # [B, D]
        if (mean.norm(dim=-1) == 0).any() or (mean.norm(dim=0) == 0).any():
            continue
        right = F.normalize(mean, dim=-1)[0, 0].item()
        m = "lib.exercises.ch15", "check_embed"
        choices = _choices(
            f"{right:.3f}",
            [
                (f"{mean[0, 0].item():.3f}", (*m, "you took the right mean but did not scale it to length 1")),
                (f"{F.normalize(h.mean(1), dim=-1)[0, 0].item():.3f}", (*m, "Use the attention_mask, in the model and in the mean")),
                (f"{F.normalize(mean, dim=0)[0, 0].item():.3f}", (*m, "you normalized over the sentences (dim 0)", {"norms[0]": f"{F.normalize(mean, dim=0)[0].norm().item():.3g}"})),
            ],
            f"<p>The mean of sentence 0's three real vectors is {[round(x, 3) for x in mean[0].tolist()]}; "
            "divided by its length it is the sentence vector.</p>",
        )  # fmt: skip
        if choices and _far_apart(choices):
            break
    rows = lambda b: ", ".join(str([int(x) for x in v]) for v in h[b].tolist())  # noqa: E731
    return Question(
        "q15_mean_pooling", "15", "multichoice", "A sentence vector by mean pooling",
        "<p>A batch of two sentences, padded to 4 tokens, comes out of a pretrained encoder with "
        f"last-layer vectors (D = 2): sentence 0: {rows(0)} (its last position is padding, "
        f"attention_mask [1, 1, 1, 0]); sentence 1: {rows(1)} (no padding). The sentence vector is "
        "the mean of the last layer's vectors over the real tokens, scaled to length 1. What is the "
        "first coordinate of sentence 0's vector?</p>",
        choices=choices, params={"h": h.tolist()},
    )  # fmt: skip


def q15_cosine(rng: random.Random) -> Question:
    import torch.nn.functional as F

    while True:
        a, b = ([rng.randint(-4, 4) for _ in range(3)] for _ in range(2))
        if any(a) and any(b) and a != b:
            break
    cosine = F.cosine_similarity(
        torch.tensor([a], dtype=torch.float64), torch.tensor([b], dtype=torch.float64)
    )
    return Question(
        "q15_cosine", "15", "numerical", "How alike two contextual vectors are",
        f"<p>A model's layer gives the word <i>bank</i> the vector {a} in one sentence and {b} in "
        "another (D = 3). What is their cosine similarity? Give it to two decimals.</p>",
        answer=round(cosine.item(), 2), tolerance=0.005, params={"a": a, "b": b},
        feedback="<p>The cosine is the dot product divided by the product of the lengths: "
        f"{sum(x * y for x, y in zip(a, b))} / ({math.hypot(*a):.3f} × {math.hypot(*b):.3f}) "
        f"= {cosine.item():.3f}.</p>",
    )  # fmt: skip


# --- chapter 16 ---------------------------------------------------------------------------------------------


# The ALBERT shapes the book names (Lan et al. 2020's four, Table 1) and prints the size of, in chapter
# 16 and in its exercise 2's model answer: (L, D, E). A question draws away from them, or its key would
# be a number a student reads in the public book or in a graded exercise's feedback (lecturer review
# s16, M5: ALBERT-large's 17,683,968 was chapter 16's exercise 2).
ALBERT_NAMED = {(12, 768, 128), (24, 1024, 128), (24, 2048, 128), (12, 4096, 128)}


def _albert_named_sizes() -> set[int]:
    """The parameter counts the book prints for ALBERT: its four presets, and ALBERT-base without
    the shared layer (chapter 16's table)."""
    from lib.albert import AlbertConfig, count_parameters

    presets = [AlbertConfig.base, AlbertConfig.large, AlbertConfig.xlarge, AlbertConfig.xxlarge]
    return {count_parameters(c()) for c in presets} | {
        count_parameters(AlbertConfig.base(share_layers=False))
    }


def q16_albert_parameters(rng: random.Random) -> Question:
    from lib.albert import AlbertConfig, count_parameters

    named = _albert_named_sizes()
    while True:  # other L, D and E than the book's; the count, which L does not change, too
        L = rng.choice([6, 8, 10, 16, 18, 20, 32])
        D = rng.choice([512, 640, 896, 1152, 1280, 1536, 1792, 2560, 3072])
        E = rng.choice([64, 96, 128, 192, 256])
        right = count_parameters(
            AlbertConfig(
                hidden_size=D,
                num_hidden_layers=L,
                num_attention_heads=D // 64,
                intermediate_size=4 * D,
                embedding_size=E,
            )
        )
        if (L, D, E) not in ALBERT_NAMED and right not in named:
            break
    return Question(
        "q16_albert_parameters", "16", "numerical", "The size of an ALBERT",
        f"<p>An ALBERT of L = {L} layers of width D = {D} (feed-forward 4D), one layer's "
        f"weights shared by all L, factorized embeddings of width E = {E} (30,000 tokens, 512 "
        "positions, 2 segments, a LayerNorm) projected to D by a linear layer with bias, and BERT's "
        "pooler. How many parameters has it (encoder and pooler, no heads)?</p>",
        answer=right, tolerance=0, params={"L": L, "D": D, "E": E},
        feedback=f"<p>Embeddings (30,000 + 512 + 2) &times; {E} + 2 &times; {E}, projection "
        f"{E} &times; {D} + {D}, ONE layer 12D<sup>2</sup> + 13D, pooler D<sup>2</sup> + D: "
        f"{right:,}, whatever L is.</p>",
    )  # fmt: skip


# the training setups that chapter 16's table of pretraining costs counts: a question draws others
PRETRAINING_NAMED = {(110e6, 1_000_000, 256, 128), (355e6, 500_000, 8192, 512)}


def q16_pretraining_flops(rng: random.Random) -> Question:
    while True:
        N = rng.choice([14e6, 66e6, 110e6, 125e6, 340e6, 355e6, 770e6])
        steps = rng.choice([100_000, 250_000, 500_000, 1_000_000])
        B, T = rng.choice([128, 256, 512, 1024, 2048]), rng.choice([128, 256, 512])
        if (N, steps, B, T) not in PRETRAINING_NAMED and 1 <= 6 * N * steps * B * T / 1e18 <= 9999:
            break
    D = steps * B * T
    exa = 6 * N * D / 1e18
    return Question(
        "q16_pretraining_flops", "16", "numerical", "The cost of pretraining",
        f"<p>A model of N = {N / 1e6:g} million parameters is pretrained for {steps:,} steps of "
        f"{B:,} sequences of {T} tokens. By the rule of thumb 6ND (N parameters, D tokens), about how "
        "many floating-point operations does its training take? Give the number in units of "
        "10<sup>18</sup> FLOPs, to the nearest whole number.</p>",
        answer=round(exa), tolerance=0.5, params={"N": N, "steps": steps, "B": B, "T": T},
        feedback=f"<p>D = {steps:,} &times; {B:,} &times; {T} = {D:,} tokens; 6 &times; {N:,.0f} "
        f"&times; {D:,} = {exa:,.1f} &times; 10<sup>18</sup> FLOPs: 2 per weight and token forward, 4 backward "
        "(attention's own products left out).</p>",
    )  # fmt: skip


# --- chapter 17 ---------------------------------------------------------------------------------------------


def q17_rope_angle(rng: random.Random) -> Question:
    from lib.rope import rope_frequencies

    Dh, theta = rng.choice([64, 128]), rng.choice([10_000, 500_000])
    i, m = rng.randint(1, 6), rng.randint(2, 500)
    angle = m * rope_frequencies(Dh, float(theta))[i].item()
    return Question(
        "q17_rope_angle", "17", "numerical", "A RoPE rotation angle",
        f"<p>RoPE with head width D<sub>h</sub> = {Dh} and &theta; = {theta:,} turns pair i of a query "
        f"or key at position m by the angle m &omega;<sub>i</sub>, &omega;<sub>i</sub> = "
        f"&theta;<sup>&minus;2i/D<sub>h</sub></sup>. By how many radians (not reduced modulo 2&pi;) is "
        f"pair i = {i} at position m = {m} turned? Give three decimals.</p>",
        answer=round(angle, 3), tolerance=0.0015, params={"Dh": Dh, "theta": theta, "i": i, "m": m},
        feedback=f"<p>{m} &times; {theta:,}<sup>&minus;{2 * i}/{Dh}</sup> = {angle:.4f}.</p>",
    )  # fmt: skip


def q17_kv_cache(rng: random.Random) -> Question:
    from lib.llama import LlamaConfig, kv_cache_bytes_per_token

    L, (H, Hkv), Dh = (
        rng.choice([16, 28, 32]),
        rng.choice([(32, 8), (16, 8), (32, 4), (16, 2)]),
        rng.choice([64, 128]),
    )
    T = rng.choice([4096, 8192, 32768, 131072])
    c = LlamaConfig(
        hidden_size=H * Dh,
        num_hidden_layers=L,
        num_attention_heads=H,
        num_key_value_heads=Hkv,
        head_dim=Dh,
    )
    mib = kv_cache_bytes_per_token(c) * T / 2**20
    return Question(
        "q17_kv_cache", "17", "numerical", "The key/value cache with grouped-query attention",
        f"<p>A decoder has {L} layers with grouped-query attention:"
        f" {H} query heads and {Hkv} key/value heads of width D<sub>h</sub> = {Dh}."
        " Its key/value cache holds bfloat16 numbers (2 bytes)."
        " How many MiB (2<sup>20</sup> bytes) does the cache take"
        f" for {T:,} tokens of one sequence?</p>",
        answer=mib, tolerance=0.5, params={"L": L, "H": H, "Hkv": Hkv, "Dh": Dh, "T": T},
        feedback=f"<p>2 (keys and values) &times; {L} layers &times; {Hkv} heads &times; {Dh} &times; "
        f"2 bytes = {kv_cache_bytes_per_token(c):,} bytes a token, times {T:,}, divided by 2<sup>20</sup>: "
        f"{mib:g} MiB (the {H} query heads do not count).</p>",
    )  # fmt: skip


# --- chapter 18 ---------------------------------------------------------------------------------------------


def q18_alibi_slope(rng: random.Random) -> Question:
    from lib.alibi import alibi_slopes

    H = rng.choice([4, 6, 8, 12, 16])
    h = rng.randrange(H)
    exponent = math.log2(alibi_slopes(H)[h].item())
    return Question(
        "q18_alibi_slope", "18", "numerical", "An ALiBi slope",
        f"<p>ALiBi gives head h of H heads a slope s<sub>h</sub>; for H a power of two, "
        "s<sub>h</sub> = 2<sup>&minus;8(h+1)/H</sup> (h counted from 0), and otherwise, as in the "
        "released code, the 2<sup>k</sup> slopes of the largest power of two 2<sup>k</sup> below H "
        "come first, then every other slope of 2<sup>k+1</sup> heads (the 1st, 3rd, ...) until there "
        f"are H. For H = {H}, head h = {h}'s slope is 2<sup>x</sup>: what is x? Give three decimals.</p>",
        answer=round(exponent, 3), tolerance=0.0015, params={"H": H, "h": h},
        feedback=f"<p>The slopes' exponents for H = {H}: "
        f"{[round(math.log2(s), 3) for s in alibi_slopes(H).tolist()]}.</p>",
    )  # fmt: skip


def q18_online_sum(rng: random.Random) -> Question:
    from lib.flash import online_softmax

    while True:
        x = [rng.randint(-3, 4) for _ in range(4)]
        run = online_softmax(torch.tensor(x, dtype=torch.float64), block=2)
        m, total = run.maximum.item(), run.total.item()
        m1, l1 = (v.item() for v in run.steps[0])
        l2 = sum(math.exp(v - max(x[2:])) for v in x[2:])  # the second tile alone
        c = "lib.exercises.ch18", "check_running_max_and_sum"
        choices = _choices(
            f"{total:.3f}",
            [
                (f"{m + math.log(total):.3f}", (*c, "your l is the log-sum-exp m + log l")),
                (f"{math.log(total):.3f}", (*c, "your l is the logarithm of the sum")),
                (f"{l1 + l2:.3f}", (*c, "check that each block's terms are taken against the new maximum")),
            ],
            f"<p>After the first tile m = {m1:g}, l = {l1:.4f}. After the second, m = {m:g}: the old "
            f"sum is multiplied by e<sup>{m1:g} &minus; {m:g}</sup> and each new term is "
            f"e<sup>x<sub>j</sub> &minus; {m:g}</sup>, so l = &Sigma;<sub>j</sub> "
            f"e<sup>x<sub>j</sub> &minus; {m:g}</sup> = {total:.4f}.</p>",
        )  # fmt: skip
        if choices and _far_apart(choices):
            break
    return Question(
        "q18_online_sum", "18", "multichoice", "The online softmax's running sum",
        f"<p>The online softmax reads the scores x = {x} in two tiles of two, keeping a running "
        "maximum m and a running sum l = &Sigma;<sub>j</sub> e<sup>x<sub>j</sub> &minus; m</sup> over "
        "the scores read so far. What is l after both tiles?</p>",
        choices=choices, params={"x": x},
    )  # fmt: skip


def q18_plain_memory(rng: random.Random) -> Question:
    T = rng.choice([1024, 1536, 2048, 3072, 4096, 6144, 8192])
    heads = rng.choice([1, 2, 4, 8, 12, 16])
    number = torch.empty((), dtype=torch.float32).element_size()  # bytes per float32 number
    mib = 2 * heads * T * T * number / 2**20
    return Question(
        "q18_plain_memory", "18", "numerical", "The memory of plain attention",
        f"<p>Plain attention over T = {T:,} tokens, in float32 (4 bytes a number), builds for each "
        f"head its T &times; T scores and its T &times; T weights and holds both at once. For "
        f"{heads} head{'s' if heads > 1 else ''}, how many MiB (2<sup>20</sup> bytes) do those "
        "matrices take?</p>",
        answer=mib, tolerance=0, params={"T": T, "heads": heads},
        feedback=f"<p>2 matrices &times; {heads} &times; {T:,}<sup>2</sup> numbers &times; 4 bytes = "
        f"{2 * heads * T * T * number:,} bytes = {mib:g} MiB; the tiled attention never holds "
        "them: its memory grows linearly in T.</p>",
    )  # fmt: skip


def q18_intensity(rng: random.Random) -> Question:
    T = rng.choice([256, 512, 1024, 2048, 4096])
    d = rng.choice([32, 64, 128])
    b = rng.choice([2, 4])
    flops = 4 * T * T * d  # QK^T and PV, 2 T^2 d each
    moved = (4 * T * T + 4 * T * d) * b  # read Q, K, write S; read S, write P; read P, V, write O
    return Question(
        "q18_intensity", "18", "numerical", "The arithmetic intensity of plain attention",
        f"<p>Plain attention for one head of width d = {d} over T = {T:,} tokens, {b} bytes a "
        "number, does 4T<sup>2</sup>d floating-point operations (QK<sup>T</sup> and PV) and moves "
        "4T<sup>2</sup> + 4Td numbers between the GPU's memory and its cores (read Q and K, write "
        "S; read S, write P; read P and V, write O). What is its arithmetic intensity, in FLOPs "
        "per byte? Give two decimals.</p>",
        answer=round(flops / moved, 2), tolerance=0.006, params={"T": T, "d": d, "b": b},
        feedback=f"<p>{flops:,} FLOPs / {moved:,} bytes = {flops / moved:.4f}, that is Td / ((T + d) "
        f"b), which nears d / b = {d / b:g} as T grows: far below the 156 to 208 FLOPs per byte an "
        "A100 needs to keep its arithmetic busy, so plain attention waits for memory.</p>",
    )  # fmt: skip


# --- written questions (essay), with the grader's criteria ---------------------------------------------


def _essay(qid: str, chapter: str, title: str, text: str, criteria: list[str], model: str):
    def make(rng: random.Random) -> Question:
        return Question(
            qid, chapter, "essay", title, f"<p>{text}</p>", criteria=criteria, model=model
        )

    make.__name__ = qid
    return make


WRITTEN = [
    _essay(
        "q01_likelihood", "01", "Maximum likelihood and cross-entropy",
        "An encoder-decoder is trained with the cross-entropy loss on the next word of the target "
        "translation. Why is that maximum-likelihood training, what is teacher forcing, and what loss "
        "per word does an untrained model start from, with V target words?",
        ["p(y | x) is a product of one factor per word; with a one-hot target the cross-entropy at "
         "a step is -log q(y_t), so summed over the steps it is the negative log-likelihood",
         "teacher forcing: in training the decoder reads the correct previous word at every step, "
         "whatever it would have predicted",
         "an untrained model gives every word about 1/V, so its loss starts at log V nats per word"],
        "p(y | x) is the product over the steps of p(y_t | y_<t, x); its logarithm is a sum of "
        "log-probabilities, and maximizing it is minimizing the negative log-likelihood. The "
        "cross-entropy between the one-hot target and the model's distribution is -log q(y_t), so "
        "the loss summed over the steps is the NLL. In training the decoder reads the correct "
        "previous word (teacher forcing). Untrained, every word gets about 1/V: log V nats per word.",
    ),
    _essay(
        "q16_sentence_order", "16", "Sentence-order prediction",
        "ALBERT replaces BERT's next-sentence prediction with sentence-order prediction. How does each "
        "build its negative examples, and why is the new task harder to solve by a shortcut?",
        ["next-sentence prediction's negative pairs a segment with a random segment of another text",
         "sentence-order prediction's negative is two consecutive segments in swapped order",
         "a random segment usually changes the topic, so NSP can be solved by the topic alone; "
         "swapped consecutive segments share it, so SOP needs the order of the text"],
        "BERT's negative example pairs a segment with a random one from elsewhere, which a change of "
        "topic often gives away. ALBERT's negative is two consecutive segments in swapped order: the "
        "topic is the same, so only the order (coherence) tells them apart.",
    ),
    _essay(
        "q05_soft_hard", "05", "Soft and hard attention",
        "Show, Attend and Tell trained a captioner with soft attention and with hard attention. What "
        "does each read from the image regions at a word, why can soft attention be trained by "
        "backpropagation alone, and how is hard attention trained instead?",
        ["hard attention samples one region s from the weights and reads its features, "
         "z = a_s; soft attention reads the weighted sum z = sum_i alpha_i a_i",
         "the soft context is the expectation of the sampled region's features, a smooth function "
         "of the weights, so the whole model is differentiable",
         "a sampled region has no gradient: hard attention maximizes a lower bound of the "
         "log-likelihood with a REINFORCE estimate (sampling), whose gradients are noisier"],
        "Hard attention samples one region from the weights at each word and reads only it (it "
        "crops the image); soft attention reads the weighted average of all the regions, which is "
        "the expected value of the sampled one. That average is a smooth function of the weights, "
        "so backpropagation trains the attention with the rest. A sample has no gradient: Xu et al. "
        "maximize a lower bound of the log-likelihood, estimated from the sampled regions "
        "(REINFORCE), with a moving-average baseline and an entropy bonus against the noise.",
    ),
    _essay(
        "q02_tie", "02", "What a hard lookup hides",
        "Two keys have exactly the same, highest score for a query. What does a hard lookup (argmax) "
        "return, what does a soft lookup return as its sharpness grows, and what does the hard lookup hide?",
        ["argmax returns one of the two (the first index), as if it were certain",
         "the softmax gives the two equal weights at every sharpness, so the output tends to their average",
         "the hard lookup hides the tie: which item comes back depends only on storage order"],
        "argmax takes the first of tied maxima and returns its value alone; the soft output gives both "
        "keys the same weight, tending to 1/2 each, so it approaches the midpoint of their values. "
        "The hard answer hides the ambiguity.",
    ),
    _essay(
        "q03_scaling", "03", "Why divide by the square root of d_k",
        "Why does scaled dot-product attention divide the scores by &radic;d<sub>k</sub>, and what "
        "goes wrong in training without it for large d<sub>k</sub>?",
        ["for entries of variance 1 the dot product has variance d_k (a sum of d_k products)",
         "dividing by sqrt(d_k) brings the variance back to 1, at every width",
         "without it the softmax saturates (one weight near 1), so its gradients vanish"],
        "q . k sums d_k products of variance 1, so its variance is d_k; large scores push the "
        "softmax into saturation, where its gradient is nearly 0. Dividing by sqrt(d_k) keeps the "
        "variance at 1 for any width.",
    ),
    _essay(
        "q06_causal", "06", "Why a decoder is masked",
        "A decoder is trained on whole sentences at once. Why does its self-attention need a causal "
        "mask, and what would a model trained without it learn?",
        ["at generation time token t is predicted before the later tokens exist",
         "in training the whole target is given, so each position could read the token it must predict",
         "without the mask the model learns to copy the next token and fails when generating"],
        "The model is trained to predict token t + 1 from tokens up to t. Given the whole sentence "
        "without a mask, position t could attend to token t + 1 and copy it: training loss falls, "
        "but at generation, where the future does not exist, the model has learned nothing usable.",
    ),
    _essay(
        "q08_order", "08", "Attention without positions",
        "Explain why self-attention without positional information cannot tell \"dog bites man\" from "
        "\"man bites dog\", and how adding a sinusoidal vector to each embedding changes that.",
        ["self-attention is permutation equivariant: permuting the inputs permutes the outputs",
         "so each word's output is the same in both sentences, only in another place",
         "adding a position-dependent vector makes the same word at another position a different input"],
        "Without positions each token's output depends on the set of tokens, not their order: "
        "permuting the input permutes the output. Adding PE[pos] to each embedding makes the inputs "
        "depend on position, so the scores, and the outputs, differ.",
    ),
    _essay(
        "q09_pre_ln", "09", "Pre-LN and post-LN",
        "Where does the LayerNorm sit in a post-LN and in a pre-LN Transformer layer, and why do most "
        "models since GPT-2 use pre-LN?",
        ["post-LN: x = LayerNorm(x + Sublayer(x)); pre-LN: x = x + Sublayer(LayerNorm(x))",
         "pre-LN keeps an identity path from input to output through the residuals",
         "so gradients are well-scaled at initialisation and training is stable without warm-up"],
        "Post-LN normalises after adding the residual; pre-LN normalises the sub-layer's input and "
        "leaves the residual stream untouched, so a clean identity path runs through the stack. "
        "Its gradients stay well-scaled, and it trains stably without the learning-rate warm-up "
        "post-LN needs (Xiong et al. 2020).",
    ),
    _essay(
        "q10_subwords", "10", "Why subword tokens",
        "A word-level vocabulary and a character-level one both have a problem that subword "
        "tokenization (BPE, WordPiece) solves. Name each problem, and say how a subword vocabulary "
        "handles a word that never occurred in its training text.",
        ["a word vocabulary is huge and still meets unknown words, which become one [UNK] token",
         "characters cover every word but make sequences long and each token carries little meaning",
         "subwords keep frequent words whole and split a rare or new word into known pieces,"
         " so nothing is lost"],
        "Words: the vocabulary grows with the corpus and an unseen word is mapped to [UNK], its "
        "meaning lost. Characters: no unknown word, but sequences several times longer and tokens "
        "with little meaning of their own. BPE and WordPiece learn a fixed-size vocabulary of "
        "frequent pieces: common words stay one token, a new word is split into pieces it has seen "
        "(down to characters), so every word can be written.",
    ),
    _essay(
        "q12_contextual", "12", "What ELMo adds to word vectors",
        "A word2vec vector and an ELMo vector for the word \"bank\": what differs between the two, "
        "where does ELMo's vector come from, and how does a downstream task use it?",
        ["word2vec gives a word one vector, whatever its sentence; ELMo's depends on the whole sentence",
         "ELMo's vectors are the layers of a bidirectional language model (a forward and a backward "
         "LSTM LM) trained on unlabelled text",
         "the task keeps the biLM frozen and learns a weighted mix of its layers (softmax weights and "
         "a scale gamma), added to its own input"],
        "word2vec's table has one vector per word, the same in \"river bank\" and \"bank loan\". ELMo "
        "runs a biLM pretrained as a language model in both directions over the sentence, so each "
        "token's layers depend on its context. A task freezes the biLM and learns "
        "gamma * sum_j s_j h_j, s = softmax(w), a task-specific mix of the layers, as an extra input.",
    ),
    _essay(
        "q13_pretrain_finetune", "13", "GPT's pretraining and fine-tuning",
        "Describe GPT's two stages: what it is trained on first, with which loss, and how the same "
        "model is then used for a labelled task such as classification.",
        ["pretraining: a Transformer decoder (causal self-attention) trained as a language model, "
         "the next token's cross-entropy, on a large unlabelled corpus (books)",
         "fine-tuning: the input gets a start and an end (extract) token, a new linear layer reads "
         "the last token's final hidden state, and every weight is trained further on the labels",
         "the last token because under the causal mask it alone has seen the whole input; the "
         "language model's loss can be added to the task's loss"],
        "GPT is first trained to predict the next token on unlabelled books, a causal decoder with "
        "the language model's cross-entropy. For a task the input gets a start and an extract token, "
        "a new linear layer reads the last token's final state (the only one that has seen every "
        "token under the causal mask), and the whole model is fine-tuned, the paper adding the "
        "language model's own loss.",
    ),
    _essay(
        "q14_mask_recipe", "14", "BERT's masked language model",
        "Why can BERT not be trained as a left-to-right language model, what does it predict instead, "
        "and why does it not replace every chosen token by [MASK]?",
        ["with full (bidirectional) attention each position could read the next word and copy it",
         "BERT chooses 15% of the tokens and predicts the original token at those positions only, "
         "from both sides (a cloze task)",
         "[MASK] never occurs after pretraining, so 80% become [MASK], 10% a random token, 10% stay: "
         "the model must represent every token, not only act at [MASK]"],
        "A bidirectional encoder sees every position, so a next-word objective is solved by copying "
        "(loss near 0, nothing learned). BERT hides 15% of the tokens and predicts them from their "
        "left and right context. Since fine-tuning inputs contain no [MASK], only 80% of the chosen "
        "tokens become [MASK], 10% a random word and 10% stay, all of them labelled.",
    ),
    _essay(
        "q17_gqa", "17", "Grouped-query attention",
        "What does grouped-query attention change in a decoder's attention layer, what does it save "
        "at generation time, and what is multi-query attention?",
        ["several query heads share one key/value head: H query heads, Hkv < H key/value heads",
         "the key/value cache stores only the Hkv heads, H / Hkv times smaller (fewer key/value "
         "weights too); the queries are unchanged",
         "multi-query attention is the extreme Hkv = 1; multi-head attention is Hkv = H"],
        "Queries keep their H heads, but keys and values have only Hkv heads, each read by a group of "
        "H / Hkv query heads. The cache, which holds keys and values of every past token in every "
        "layer, shrinks by H / Hkv (Llama 3.1 8B: 8 key/value heads for 32 query heads, 4 times). "
        "Hkv = 1 is multi-query attention.",
    ),
    _essay(
        "q18_flash", "18", "What FlashAttention saves",
        "FlashAttention computes exactly the same attention as the plain formula. What does it avoid "
        "storing, how can the softmax be computed tile by tile, and what does the backward pass keep?",
        ["the T x T matrix of scores or weights is never stored:"
         " memory grows linearly in T, not quadratically",
         "an online softmax keeps a running maximum m and sum l per query, rescaling the old sum and "
         "output by exp(m_old - m_new) when a tile brings a larger maximum",
         "the backward pass keeps the output and the log-sum-exp L = m + log l of each row and "
         "recomputes each tile's weights"],
        "Q, K and V are read in tiles; each query keeps its running maximum, sum and output "
        "accumulator, rescaled when the maximum grows, and divides once at the end: no T x T matrix, "
        "memory linear in T. The backward pass recomputes the weights of each tile as exp(S - L) "
        "from the saved log-sum-exp L, instead of storing them.",
    ),
]  # fmt: skip

QUESTIONS: dict[str, Callable[[random.Random], Question]] = {
    f.__name__: f
    for f in [
        q01_vanishing, q02_soft_weight, q02_sharpen, q03_scaled_score, q03_masked_weight,
        q04_additive_score, q04_beam_candidates, q05_soft_context, q06_causal_pairs,
        q06_score_variance, q07_mha_parameters, q07_attention_weights, q08_pe_value,
        q08_last_wavelength, q09_encoder_layer, q09_total_layers, q09_layer_norm, q09_warmup_lr,
        q10_bpe_tokens, q10_pair_score,
        q11_bigram_perplexity, q12_scalar_mix, q12_softmax_params, q13_gpt3_parameters,
        q13_temperature, q13_greedy_document,
        q14_mlm_labels, q14_bert_parameters, q15_mean_pooling, q15_cosine, q16_albert_parameters,
        q16_pretraining_flops, q17_rope_angle, q17_kv_cache, q18_alibi_slope, q18_online_sum,
        q18_plain_memory, q18_intensity,
    ]
}  # fmt: skip
QUESTIONS.update({f.__name__: f for f in WRITTEN})


# Questions that repeat a graded exercise (lecturer review s29, m9), each marked with the exercise:
# a quiz given before that exercise's deadline gives its answer or its method away. The command line
# leaves them out unless --include-exercise-repeats; bank() and paper() keep them unless told
# (``repeats=False``). Found by a rule (lecturer review s31, M2: chapters 9, 13 and 17 repeated four
# unmarked): a question that shares REPEAT_OVERLAP of its words with a graded exercise of its chapter
# is marked here or read in NOT_REPEATS (tests/test_quiz_bank.py). Every graded exercise: one that
# asks code has a method, and a question that computes what the exercise's function returns gives
# that method away (lecturer review s32, M3: chapter 18's ALiBi slope and online sum were unmarked).
EXERCISE_REPEATS = {
    "q02_tie": "chapter 2's exercise 1 (its written question: what the hard lookup hides)",
    "q06_score_variance": "chapter 6's exercise 2 (the scaled scores' variance for entries that"
    " are not of variance 1)",
    "q08_last_wavelength": "chapter 8's exercise 2 (`last_wavelength`: the slowest pair's"
    " wavelength for another base)",
    "q09_encoder_layer": "chapter 9's exercise 3 (its feedback counts a layer's feed-forward"
    " weights: part (b)'s method)",
    "q09_total_layers": "chapter 9's exercise 3 (part (c): a deeper Transformer (base))",
    "q09_pre_ln": "chapter 9's exercise 2 (its written answer: why pre-LN trains without a warm-up)",
    "q10_pair_score": "chapter 10's exercise 1 (WordPiece's pair score c_ab / (c_a c_b))",
    "q12_softmax_params": "chapter 12's exercise 2 (softmax_params: the same count, V(H + 1))",
    "q13_gpt3_parameters": "chapter 13's exercise 2 (the size of GPT-3: the same method)",
    "q13_pretrain_finetune": "chapter 13's exercise 3 (its written answer: why a decoder's"
    " classifier reads the last token, under the causal mask)",
    "q14_bert_parameters": "chapter 14's exercise 2 (the size of BERT-Medium: the same method)",
    "q16_albert_parameters": "chapter 16's exercise 2 (ALBERT-large's size: the same method)",
    "q17_kv_cache": "chapter 17's exercise 4 (part 1: the cache counts the key/value heads)",
    "q17_gqa": "chapter 17's exercise 4 (part 1: the cache holds only the Hkv key/value heads)",
    "q02_sharpen": "chapter 2's exercise 2 (`sharpen`: the question computes it for one row)",
    "q03_masked_weight": "chapter 3's exercise 4 (`my_masked_softmax`: the question computes it"
    " for one row)",
    "q08_pe_value": "chapter 8's exercise 1 (`my_sinusoidal`: the question computes one entry of"
    " the table from its formula)",
    "q15_mean_pooling": "chapter 15's exercise 2 (`embed`: the mean over the real tokens, scaled to"
    " length 1)",
    "q18_alibi_slope": "chapter 18's exercise 2 (`slopes_for`: the question states its rule for any"
    " number of heads)",
    "q18_online_sum": "chapter 18's exercise 1 (`running_max_and_sum`: the same sum, read in tiles)",
    "q18_flash": "chapter 18's exercises 1 and 4 (its model answer states the running maximum and"
    " sum, and the backward pass's weights recomputed from the saved log-sum-exp)",
}
# The rule's threshold: the share of a question's words (six-letter stems of its title, text,
# feedback, criteria and model answer) that a graded exercise's statement and model answer hold.
REPEAT_OVERLAP = 0.35
# Questions the rule finds that were read and repeat no graded exercise: question -> why.
NOT_REPEATS = {
    "q04_beam_candidates": "a count of the extensions a beam scores per step; exercise 3 rescores"
    " the finished hypotheses by their length and measures",
    "q09_warmup_lr": "the paper's schedule at one step, a formula the chapter prints; exercise 2"
    " trains with and without a warm-up and explains the losses",
    "q15_cosine": "the cosine of two vectors given; exercise 2 asks for the mean-pooled sentence"
    " vectors, exercise 3 where the weight of the heads on [CLS] goes",
    "q02_soft_weight": "one softmax weight; exercise 1 asks the limit with a duplicated key",
    "q03_scaled_score": "one scaled score; exercise 3 asks which score functions unit vectors tie",
    "q06_causal_pairs": "a count of the causal mask's pairs; exercise 3 computes the outputs one"
    " token at a time, with no mask",
    "q07_mha_parameters": "the parameters of multi-head attention; exercise 1 asks which digit one"
    " head gets right, exercise 2 copies the heads' weights without counting them",
    "q07_attention_weights": "a count of attention weights; exercise 1 is about one head's task,"
    " exercise 2 about how the heads' weights are stored",
    "q10_bpe_tokens": "the tokens after BPE learns its merges; exercise 1 is WordPiece's score,"
    " exercise 2 replays merges already learned",
    "q11_bigram_perplexity": "the chapter's unsmoothed bigram perplexity; exercise 1's method is the"
    " mix with the unigram frequency",
    "q12_scalar_mix": "ELMo's mix of its layers; exercises 2 and 4 count parameters and probe",
    "q12_contextual": "word2vec against ELMo for one word; exercise 3 compares word and character"
    " models' neighbours",
    "q14_mlm_labels": "the expected count of labels; exercise 1 writes the random corruption,"
    " whose rule its own statement gives",
    "q17_rope_angle": "one pair's angle, whose formula exercise 1 gives; its method is the pairing"
    " of split halves",
    "q13_temperature": "one probability of softmax(z / tau), a formula the chapter prints; exercise"
    " 3 reads the first word for a classifier, exercise 1 cuts the tail (top-p), with no temperature",
    "q13_greedy_document": "a document's probability as the product over its tokens; exercise 1"
    " writes top-p and compares it with top-k, and names greedy decoding only in passing",
}


def make(question: str, seed: int) -> Question:
    """One variant of ``question`` for ``seed`` (the same seed, the same numbers and answer)."""
    if question not in QUESTIONS:
        raise ValueError(f"question: expected one of {sorted(QUESTIONS)}, got {question!r}")
    rng = random.Random(seed)
    q = QUESTIONS[question](rng)
    for _ in range(100):  # "give three decimals" of an answer that rounds to 0.000: drawn again
        if not (q.kind == "numerical" and q.tolerance > 0 and q.answer == 0):
            break
        q = QUESTIONS[question](rng)
    q.seed = seed
    if q.kind == "multichoice" and (
        len(q.choices) < 3 or sum(c.correct for c in q.choices) != 1
        or len({c.text for c in q.choices}) != len(q.choices)
    ):  # fmt: skip
        raise ValueError(f"question: {question} drew choices that are not distinct at seed {seed}")
    return q


def bank(
    variants: int = 5,
    seed: int | str = 0,
    chapters: list[str] | None = None,
    repeats: bool = True,
) -> list[Question]:
    """Every question of ``chapters`` (prefixes "02", "06"...; default all), ``variants`` each
    (written questions once: they have no numbers); without those of :data:`EXERCISE_REPEATS`
    if not ``repeats``."""
    if isinstance(variants, bool) or not isinstance(variants, int) or variants < 1:
        raise ValueError(f"variants: expected an int >= 1, got {variants!r}")
    out = []
    for name, f in QUESTIONS.items():
        if chapters and name[1:3] not in chapters or not repeats and name in EXERCISE_REPEATS:
            continue
        written = f in WRITTEN
        for k in range(1 if written else variants):
            out.append(make(name, _seed(seed, name, k)))
    return out


def paper(
    student: str, seed: int | str = 0, chapters: list[str] | None = None, repeats: bool = True
) -> list[Question]:
    """One student's paper: one variant of each question, drawn from the student's id (without
    those of :data:`EXERCISE_REPEATS` if not ``repeats``)."""
    return [
        make(name, _seed(seed, name, f"student:{student}"))
        for name in QUESTIONS
        if (not chapters or name[1:3] in chapters) and (repeats or name not in EXERCISE_REPEATS)
    ]


def repeats_said(chapters: list[str] | None, included: bool) -> list[str]:
    """What the command says of the questions that repeat a graded exercise, among ``chapters``."""
    found = [(q, ex) for q, ex in EXERCISE_REPEATS.items() if not chapters or q[1:3] in chapters]
    if included:
        return [
            f"warning: {q} repeats {ex}: give it only after that exercise's deadline"
            for q, ex in found
        ]
    return [
        f"left out: {q}, which repeats {ex} (--include-exercise-repeats keeps it, for a quiz after "
        "that exercise's deadline or a term that does not grade it)"
        for q, ex in found
    ]


# --- Moodle XML --------------------------------------------------------------------------------------------

CATEGORY = "$course$/top/attention-book"


def _text(parent: ET.Element, tag: str, text: str, fmt: str | None = "html") -> ET.Element:
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = text
    return el


def moodle_xml(questions: list[Question]) -> str:
    """The questions in Moodle's XML format, one category per question holding its variants."""
    quiz = ET.Element("quiz")
    category = None
    for k, q in enumerate(questions):
        name = q.id
        if name != category:
            cat = ET.SubElement(quiz, "question", {"type": "category"})
            _text(cat, "category", f"{CATEGORY}/ch{q.chapter}/{name}", None)
            category = name
        el = ET.SubElement(quiz, "question", {"type": q.kind})
        _text(el, "name", f"{q.title} (seed {q.seed})", None)
        _text(el, "questiontext", q.text)
        # an essay's model answer goes to the graders only (graderinfo, below): Moodle shows general
        # feedback to the student after the attempt (lecturer review s11, M8)
        _text(el, "generalfeedback", q.feedback)
        # an essay is out of its rubric's points (one a criterion), as the grader reads them
        points = len(q.criteria) if q.kind == "essay" else 1
        ET.SubElement(el, "defaultgrade").text = str(points)
        ET.SubElement(el, "penalty").text = "0"
        ET.SubElement(el, "hidden").text = "0"
        ET.SubElement(el, "idnumber").text = f"{name}-{q.seed}"
        if q.kind == "numerical":
            answer = ET.SubElement(
                el, "answer", {"fraction": "100", "format": "moodle_auto_format"}
            )
            ET.SubElement(answer, "text").text = str(q.answer)
            ET.SubElement(answer, "tolerance").text = f"{q.tolerance:g}"
            _text(answer, "feedback", q.feedback)
        elif q.kind == "multichoice":
            ET.SubElement(el, "single").text = "true"
            ET.SubElement(el, "shuffleanswers").text = "true"
            ET.SubElement(el, "answernumbering").text = "abc"
            for c in q.choices:
                answer = ET.SubElement(
                    el, "answer", {"fraction": "100" if c.correct else "0", "format": "html"}
                )
                ET.SubElement(answer, "text").text = html.escape(c.text)
                _text(
                    answer,
                    "feedback",
                    f"<p>{html.escape(c.feedback)}</p>" if not c.correct else c.feedback,
                )
        elif q.kind == "essay":
            ET.SubElement(el, "responseformat").text = "editor"
            ET.SubElement(el, "responserequired").text = "1"
            ET.SubElement(el, "responsefieldlines").text = "10"
            ET.SubElement(el, "attachments").text = "0"
            criteria = "".join(f"<li>{html.escape(c)} (1 point)</li>" for c in q.criteria)
            _text(
                el, "graderinfo",
                f"<p>Rubric, {len(q.criteria)} points:</p><ol>{criteria}</ol>"
                f"<p>Model answer: {html.escape(q.model)}</p>",
            )  # fmt: skip
            _text(el, "responsetemplate", "")
    ET.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode") + "\n"


# --- a printable paper --------------------------------------------------------------------------------------


def markdown(
    questions: list[Question],
    key: bool = True,
    student: str | None = None,
    files: tuple[str, str] | None = None,
) -> str:
    """A printable paper, with its key at the end (``key``). ``student``: whose paper (``--student``),
    printed under the title, so that a printed paper is matched to its key (lecturer review s41,
    m6: every paper was headed "# Quiz" alone); ``files``: the paper's and the key's file names,
    printed on the key."""
    import re

    def plain(text: str) -> str:
        text = re.sub(r"<sup>(.*?)</sup>", r"^(\1)", text)
        text = re.sub(r"<sub>(.*?)</sub>", r"_\1", text)
        return html.unescape(re.sub(r"<[^>]+>", "", text))

    lines = ["# Quiz", ""]
    if student:
        lines += [f"Student: `{student}`", ""]
    answers = ["", "## Key", ""]
    if files:
        whose = f" of student `{student}`" if student else ""
        answers += [f"The key `{files[1]}` of the paper `{files[0]}`{whose}.", ""]
    for i, q in enumerate(questions, 1):
        lines += [f"**{i}. {q.title}** {plain(q.text)}", ""]
        if q.kind == "multichoice":
            order = random.Random(q.seed).sample(q.choices, len(q.choices))
            for letter, c in zip("abcdefg", order):
                lines.append(f"   {letter}) {c.text}")
                if c.correct:
                    answers.append(f"{i}. {letter}) {c.text}. {plain(c.feedback)}")
            lines.append("")
        elif q.kind == "numerical":
            exact = float(q.answer).is_integer()  # a count in full (2,102,784), not 2.10278e+06
            number = f"{int(q.answer):,}" if exact else str(q.answer)
            asked = re.search(r"Give (\w+) decimals", q.text)
            if asked and asked[1] in DECIMALS:  # as many as the question asks for: -0.490, not
                number = f"{q.answer:.{DECIMALS[asked[1]]}f}"  # -0.49 (course review s27, m10)
            within = f"within {q.tolerance:g}" if q.tolerance else "exact"
            answers.append(f"{i}. {number} ({within}). {plain(q.feedback)}")
        else:
            criteria = "; ".join(q.criteria)
            answers.append(f"{i}. Rubric ({len(q.criteria)} points): {criteria}. Model: {q.model}")
    return "\n".join(lines + (answers if key else [])) + "\n"


DECIMALS = {"one": 1, "two": 2, "three": 3, "four": 4}  # "Give three decimals." in a question


def missing_chapters(chapters: list[str] | None) -> list[str]:
    """The chapters of ``chapters`` that have no question in the bank (course review s27, m10:
    --chapters 01 05 08 11 wrote 10 questions and said nothing of 01 and 05)."""
    covered = {name[1:3] for name in QUESTIONS}
    return [c for c in chapters or [] if c not in covered]


def _write_private(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by its owner alone (0600, as the course's other secrets)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # a file that was there keeps its mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def key_path(paper: Path) -> Path:
    """Where ``--markdown PAPER`` writes the paper with its key: beside it, ``<name>-key<suffix>``."""
    return paper.with_name(f"{paper.stem}-key{paper.suffix}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moodle", type=Path, help="write the bank as Moodle XML")
    parser.add_argument("--qti", type=Path, help="write the bank as a QTI 1.2 .zip for Canvas")
    parser.add_argument(
        "--markdown", type=Path, help="write a printable paper (and its key beside it, NAME-key.md)"
    )
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--seed", default="0", help="the bank's seed (any text)")
    parser.add_argument("--chapters", nargs="*", help="chapter prefixes, e.g. 02 06")
    parser.add_argument("--student", help="one student's paper (one variant per question)")
    parser.add_argument("--no-key", action="store_true", help="the printable paper without its key")
    parser.add_argument(
        "--include-exercise-repeats",
        action="store_true",
        help="keep the questions that repeat a graded exercise (left out by default)",
    )
    args = parser.parse_args(argv)
    if not args.moodle and not args.markdown and not args.qti:
        parser.error("give --moodle FILE, --qti FILE.zip and/or --markdown FILE")
    if args.qti and args.qti.suffix != ".zip":
        parser.error(f"--qti: expected a file ending in .zip, got {args.qti}")
    missing = missing_chapters(args.chapters)
    if missing:
        covered = sorted({name[1:3] for name in QUESTIONS})
        print(
            f"no questions for chapter{'s' if len(missing) > 1 else ''} {', '.join(missing)}: the "
            f"bank covers chapters {', '.join(covered)}"
        )
    repeats = args.include_exercise_repeats
    for line in repeats_said(args.chapters, repeats):
        print(line)
    questions = (
        paper(args.student, args.seed, args.chapters, repeats)
        if args.student
        else bank(args.variants, args.seed, args.chapters, repeats)
    )
    if args.moodle:
        args.moodle.write_text(moodle_xml(questions))
        print(f"{args.moodle}: {len(questions)} questions (Moodle XML)")
    if args.qti:
        import quiz_qti

        quiz_qti.qti_zip(questions, args.qti)
        print(f"{args.qti}: {len(questions)} questions (QTI 1.2 for Canvas)")
    if args.markdown:  # one paper: without --student, the bank's first variant of each question
        printed = questions if args.student else bank(1, args.seed, args.chapters, repeats)
        args.markdown.write_text(markdown(printed, key=False, student=args.student))
        print(f"{args.markdown}: {len(printed)} questions")
        if not args.no_key:  # the key in a file of its own, so the paper can be handed out as it is
            key = key_path(args.markdown)
            files = (args.markdown.name, key.name)
            _write_private(key, markdown(printed, student=args.student, files=files))
            print(f"{key}: the paper with its key (keep it from the students)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
