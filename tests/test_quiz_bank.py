"""The quiz and exam bank (tools/quiz_bank.py): each variant's answer is the formula's, recomputed
here without the library; the wrong choices differ from the answer and are mistakes the chapters'
checkers name; the same seed gives the same quiz; the Moodle XML parses and has what Moodle's
importer reads."""

from __future__ import annotations

import functools
import importlib
import math
import random
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import instructor_notes  # noqa: E402
import quiz_bank as qb  # noqa: E402

SEEDS = range(6)


def _softmax(xs):
    top = max(xs)
    e = [math.exp(x - top) for x in xs]
    return [v / sum(e) for v in e]


# the answer of each numeric question from its drawn numbers, by the formula (no library)
FORMULAS = {
    # v . tanh(a + b), Bahdanau's additive score from W s and U h
    "q04_additive_score": lambda p: sum(
        v * math.tanh(a + b) for v, a, b in zip(p["v"], p["a"], p["b"])
    ),
    "q04_beam_candidates": lambda p: p["k"] * p["V"],  # k hypotheses x V words
    # (x_j - mean) / sqrt(population variance + 1e-5)
    "q09_layer_norm": lambda p: (p["x"][p["j"]] - sum(p["x"]) / 4)
    / math.sqrt(sum((x - sum(p["x"]) / 4) ** 2 for x in p["x"]) / 4 + 1e-5),
    # Vaswani et al.'s schedule, in units of 1e-4
    "q09_warmup_lr": lambda p: 1e4
    * p["d"] ** -0.5
    * min(p["step"] ** -0.5, p["step"] * p["warmup"] ** -1.5),
    "q01_vanishing": lambda p: p["gain"] ** p["k"],  # one factor per step
    # 6ND: D = steps x sequences x tokens, in units of 10^18
    "q16_pretraining_flops": lambda p: 6 * p["N"] * p["steps"] * p["B"] * p["T"] / 1e18,
    "q02_soft_weight": lambda p: _softmax([p["lam"] * s for s in p["scores"]])[p["j"]],
    "q03_scaled_score": lambda p: sum(a * b for a, b in zip(p["q"], p["k"])) / math.sqrt(len(p["q"])),
    "q06_causal_pairs": lambda p: p["T"] * (p["T"] + 1) // 2,
    "q07_attention_weights": lambda p: p["B"] * p["h"] * p["T"] ** 2,
    "q08_pe_value": lambda p: (math.sin if p["col"] % 2 == 0 else math.cos)(
        p["pos"] / 10000 ** (2 * (p["col"] // 2) / p["d"])
    ),
    "q09_encoder_layer": lambda p: 4 * (p["d"] ** 2 + p["d"])
    + 2 * p["d"] * p["d_ff"] + p["d_ff"] + p["d"] + 4 * p["d"],
    # multiple choice: the right choice's value
    "q02_sharpen": lambda p: p["w"][0] ** p["gamma"] / sum(v ** p["gamma"] for v in p["w"]),
    "q03_masked_weight": lambda p: _softmax([s for s, m in zip(p["scores"], p["mask"]) if m])[
        [i for i, m in enumerate(p["mask"]) if m].index(p["j"])
    ],
    "q06_score_variance": lambda p: p["sigma"] ** 4,
    "q07_mha_parameters": lambda p: 4 * p["d"] ** 2 + 4 * p["d"],
    "q08_last_wavelength": lambda p: 2 * math.pi * p["base"] ** ((p["d"] - 2) / p["d"]),
    # lib/transformer.py's count_parameters docstring: base 63,082,496; an encoder layer 3,152,384,
    # a decoder layer 4,204,032
    "q09_total_layers": lambda p: 63_082_496 + (p["N"] - 6) * (3_152_384 + 4_204_032),
    # chapters 10-18, each from the paper's formula or a hand count, not lib's code path
    "q10_bpe_tokens": lambda p: _bpe_tokens(p["words"], p["k"]),
    "q10_pair_score": lambda p: _pair_score(p["words"], tuple(p["pair"])),
    "q11_bigram_perplexity": lambda p: _bigram_perplexity(p["train"], p["test"]),
    "q12_scalar_mix": lambda p: p["gamma"] * sum(s * h for s, h in zip(_softmax(p["w"]), p["h"])),
    "q12_softmax_params": lambda p: p["V"] * (512 + 1),  # V x (H + 1): a weight per input, a bias
    # GPT-3 (V = 50257, context 2048): embeddings (V + T) D, N blocks of 12 D^2 + 13 D, ln_f 2 D
    "q13_gpt3_parameters": lambda p: (50257 + 2048) * p["D"]
    + p["N"] * (12 * p["D"] ** 2 + 13 * p["D"]) + 2 * p["D"],
    "q14_mlm_labels": lambda p: p["B"] * (p["T"] - 3) * 0.15,  # every chosen ordinary token
    # words + positions + segments, LayerNorm, L layers of 12 D^2 + 13 D, pooler D^2 + D
    "q14_bert_parameters": lambda p: (30522 + 512 + 2) * p["D"] + 2 * p["D"]
    + p["L"] * (12 * p["D"] ** 2 + 13 * p["D"]) + p["D"] ** 2 + p["D"],
    "q15_mean_pooling": lambda p: _mean_pooled(p["h"]),
    "q15_cosine": lambda p: sum(x * y for x, y in zip(p["a"], p["b"]))
    / (math.hypot(*p["a"]) * math.hypot(*p["b"])),
    # embeddings at width E with their LayerNorm, projection E x D + D, ONE layer, pooler
    "q16_albert_parameters": lambda p: (30000 + 512 + 2) * p["E"] + 2 * p["E"] + p["E"] * p["D"] + p["D"]
    + 12 * p["D"] ** 2 + 13 * p["D"] + p["D"] ** 2 + p["D"],
    "q17_rope_angle": lambda p: p["m"] * p["theta"] ** (-2 * p["i"] / p["Dh"]),
    "q17_kv_cache": lambda p: 2 * p["L"] * p["Hkv"] * p["Dh"] * 2 * p["T"] / 2**20,
    "q18_alibi_slope": lambda p: _alibi_exponent(p["H"], p["h"]),
    "q18_online_sum": lambda p: sum(math.exp(x - max(p["x"])) for x in p["x"]),
    # course review s36, M1: chapters 5, 13 and 18's questions that repeat no exercise
    "q05_soft_context": lambda p: sum(w * a for w, a in zip(_softmax(p["scores"]), p["a"])),
    "q13_temperature": lambda p: _softmax([z / p["tau"] for z in p["z"]])[p["j"]],
    # greedy's document A then A's likeliest, against B then B's likeliest: the larger product
    "q13_greedy_document": lambda p: max(p["first"] * max(p["after_a"]), (1 - p["first"]) * p["after_b"]),
    "q18_plain_memory": lambda p: 2 * p["heads"] * p["T"] ** 2 * 4 / 2**20,  # scores and weights
    # 4 T^2 d FLOPs over (4 T^2 + 4 T d) numbers of b bytes
    "q18_intensity": lambda p: 4 * p["T"] ** 2 * p["d"] / ((4 * p["T"] ** 2 + 4 * p["T"] * p["d"]) * p["b"]),
}  # fmt: skip


def _bpe_tokens(words: dict, k: int) -> int:
    """Sennrich et al.'s Algorithm 1 by hand: k merges of the most frequent pair (ties: smallest)."""
    split = {w: list(w) for w in words}
    for _ in range(k):
        counts = {}
        for w, s in split.items():
            for pair in zip(s, s[1:]):
                counts[pair] = counts.get(pair, 0) + words[w]
        best = sorted(counts, key=lambda pair: (-counts[pair], pair))[0]
        for w, s in split.items():
            out, i = [], 0
            while i < len(s):
                if tuple(s[i : i + 2]) == best:
                    out.append(s[i] + s[i + 1])
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            split[w] = out
    return sum(words[w] * len(s) for w, s in split.items())


def _pair_score(words: dict, pair: tuple) -> float:
    pieces = {w: [w[0]] + ["##" + c for c in w[1:]] for w in words}
    c_ab = sum(n * list(zip(pieces[w], pieces[w][1:])).count(pair) for w, n in words.items())
    c = lambda x: sum(n * pieces[w].count(x) for w, n in words.items())  # noqa: E731
    return c_ab / (c(pair[0]) * c(pair[1]))


def _bigram_perplexity(train: list, test: str) -> float:
    pad = lambda s: ["<s>"] + s.split() + ["</s>"]  # noqa: E731
    bigrams = [b for s in train for b in zip(pad(s), pad(s)[1:])]
    tokens = pad(test)
    logs = [
        math.log(bigrams.count((v, w)) / sum(1 for b in bigrams if b[0] == v))
        for v, w in zip(tokens, tokens[1:])
    ]
    return math.exp(-sum(logs) / len(logs))


def _mean_pooled(h: list) -> float:
    real = h[0][:3]  # sentence 0's three real tokens
    mean = [sum(v[d] for v in real) / 3 for d in range(2)]
    return mean[0] / math.hypot(*mean)


def _alibi_exponent(H: int, h: int) -> float:
    """Press et al.: 2^(-8(h+1)/H) for H a power of two; else 2^k's slopes, then every other one
    of 2^(k+1) heads."""
    below = 2 ** int(math.log2(H))
    exponents = [-8 * (j + 1) / below for j in range(below)]
    exponents += [-8 * (j + 1) / (2 * below) for j in range(0, 2 * below, 2)][: H - below]
    return exponents[h]


NUMERIC = [n for n, f in qb.QUESTIONS.items() if f not in qb.WRITTEN]
MULTICHOICE = [n for n in NUMERIC if qb.make(n, 0).kind == "multichoice"]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_every_numeric_question_has_its_formula_here():
    assert set(NUMERIC) == set(FORMULAS)
    chapters = {name[1:3] for name in qb.QUESTIONS}
    assert {"02", "03", "06", "07", "08", "09"} <= chapters and len(MULTICHOICE) == 13
    # chapters 10-18 (the transfer-learning half): a computed question each, written ones too
    assert {f"{c}" for c in range(10, 19)} <= {n[1:3] for n in NUMERIC}
    written = {f.__name__[1:3] for f in qb.WRITTEN}
    assert {"10", "12", "13", "14", "17", "18"} <= written


@pytest.mark.parametrize("name", [n for n in NUMERIC if n[1:3] >= "10"])
def test_the_variants_of_a_question_differ(name):
    variants = [qb.make(name, seed) for seed in SEEDS]
    drawn = {repr(q.params) for q in variants}
    answers = {
        q.answer if q.kind == "numerical" else next(c.text for c in q.choices if c.correct)
        for q in variants
    }
    assert len(drawn) >= 3 and len(answers) >= 3, (drawn, answers)


@pytest.mark.parametrize("name", NUMERIC)
def test_each_variants_answer_is_the_formulas(name):
    for seed in SEEDS:
        q = qb.make(name, seed)
        expected = FORMULAS[name](q.params)
        if q.kind == "numerical":  # the formula's value rounded to the decimals the question asks
            digits = next(
                (d for w, d in (("three", 3), ("two", 2)) if f"{w} decimals" in q.text), 0
            )
            assert abs(q.answer - expected) <= 0.5 * 10**-digits + 1e-9, (seed, q.params)
        else:
            right = [c for c in q.choices if c.correct]
            assert len(right) == 1
            digits = len(right[0].text.split(".")[1]) if "." in right[0].text else 0
            assert abs(_number(right[0].text) - expected) <= 0.5 * 10**-digits + 1e-9, seed


@functools.lru_cache(maxsize=None)
def _named(module: str, checker: str) -> tuple[str, ...]:
    """The messages of the mistakes a checker names, read by tools/instructor_notes.py."""
    return tuple(
        m.message for m in instructor_notes.mistakes(importlib.import_module(module), checker)
    )


@pytest.mark.parametrize("name", MULTICHOICE)
def test_wrong_choices_differ_from_the_answer_and_are_mistakes_the_checkers_name(name):
    for seed in SEEDS:
        q = qb.make(name, seed)
        right = next(c for c in q.choices if c.correct)
        wrong = [c for c in q.choices if not c.correct]
        assert len(wrong) >= 3 and all(c.text != right.text for c in wrong)
        assert len({c.text for c in q.choices}) == len(q.choices)
        if re.fullmatch(r"-?\d+\.\d+", right.text):  # a number: no wrong one a rounding away
            unit = 10 ** -len(right.text.partition(".")[2])
            assert all(abs(float(c.text) - float(right.text)) >= 1.5 * unit for c in wrong), (
                q.choices
            )
        for c in wrong:
            module, checker, phrase = c.mistake
            assert any(phrase in m for m in _named(module, checker)), (checker, phrase)
            assert phrase in c.feedback, "the feedback is the checker's own advice"


def test_the_same_seed_gives_the_same_quiz_and_another_seed_other_numbers():
    first = qb.moodle_xml(qb.bank(variants=2, seed="2027", chapters=["02", "06"]))
    assert first == qb.moodle_xml(qb.bank(variants=2, seed="2027", chapters=["02", "06"]))
    other = qb.moodle_xml(qb.bank(variants=2, seed="2028", chapters=["02", "06"]))
    assert other != first
    assert qb.make("q06_causal_pairs", 5).params == qb.make("q06_causal_pairs", 5).params


def test_a_students_paper_is_reproducible_and_differs_from_a_neighbours():
    ann = qb.paper("ann", seed="exam", chapters=["06", "08"])
    assert [q.params for q in ann] == [q.params for q in qb.paper("ann", "exam", ["06", "08"])]
    bob = qb.paper("bob", seed="exam", chapters=["06", "08"])
    assert [q.id for q in ann] == [q.id for q in bob]
    assert sum(a.params != b.params for a, b in zip(ann, bob)) >= 2


def test_moodle_xml_parses_and_has_what_moodles_importer_reads():
    questions = qb.bank(variants=3, seed=1)
    root = ET.fromstring(qb.moodle_xml(questions))
    assert root.tag == "quiz"
    kinds = [q.get("type") for q in root]
    real = [q for q in root if q.get("type") != "category"]
    assert len(real) == len(questions)
    # one category per question, holding its variants, before them
    categories = [q.find("category/text").text for q in root if q.get("type") == "category"]
    assert len(categories) == len(qb.QUESTIONS) == len(set(categories))
    assert all(
        re.match(r"\$course\$/top/attention-book/ch(0[1-9]|1[0-8])/q", c) for c in categories
    )
    assert kinds[0] == "category"
    for q in real:
        assert q.find("name/text").text and q.find("questiontext").get("format") == "html"
        assert q.find("questiontext/text").text.startswith("<p>")
        if q.get("type") == "numerical":
            (answer,) = q.findall("answer")
            assert answer.get("fraction") == "100" and float(answer.find("text").text) == float(
                answer.find("text").text
            )
            assert float(answer.find("tolerance").text) >= 0
        elif q.get("type") == "multichoice":
            assert q.find("single").text == "true" and q.find("answernumbering").text == "abc"
            fractions = sorted(a.get("fraction") for a in q.findall("answer"))
            assert fractions.count("100") == 1 and len(fractions) >= 4
            assert all(a.find("feedback/text").text for a in q.findall("answer"))
        else:
            assert q.get("type") == "essay" and q.find("responseformat").text == "editor"
            info = q.find("graderinfo/text").text
            assert "Rubric, 3 points" in info and info.count("<li>") == 3
            # the model answer is the graders' only: Moodle shows general feedback to the student
            # after the attempt (lecturer review s11, M8)
            model = next(
                f for f in qb.WRITTEN if q.find("idnumber").text.startswith(f.__name__ + "-")
            )
            shown = q.find("generalfeedback/text").text or ""
            assert model(random.Random(0)).model[:40] not in shown, shown
    assert sum(q.get("type") == "essay" for q in real) == len(qb.WRITTEN)


def test_the_printable_paper_has_its_key_or_none():
    questions = qb.paper("ann", chapters=["03"])
    with_key = qb.markdown(questions)
    assert "## Key" in with_key and "Rubric (3 points)" in with_key
    assert "d_k" in with_key and "<sub>" not in with_key
    assert "## Key" not in qb.markdown(questions, key=False)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="variants"):
        qb.bank(variants=0)
    with pytest.raises(ValueError, match="question"):
        qb.make("q99_nothing", 0)


def test_the_commands_write_the_files(tmp_path):
    xml, paper = tmp_path / "quiz.xml", tmp_path / "exam.md"
    assert qb.main(["--moodle", str(xml), "--variants", "2", "--chapters", "06"]) == 0
    assert len([q for q in ET.parse(xml).getroot() if q.get("type") == "essay"]) == 1
    assert qb.main(["--markdown", str(paper), "--student", "jsmith", "--chapters", "08"]) == 0
    # the paper alone, to hand out; its key in a file of its own (lecturer review s13)
    # without chapter 8's exercise repeat (q08_last_wavelength), as the command leaves it out
    sheet = qb.paper("jsmith", "0", ["08"], repeats=False)
    assert paper.read_text() == qb.markdown(sheet, key=False, student="jsmith")
    key = tmp_path / "exam-key.md"
    assert key.read_text() == qb.markdown(sheet, student="jsmith", files=("exam.md", "exam-key.md"))
    # the student's id on the paper and the key, the key's file name on the key, so that printed
    # papers are matched to their keys (lecturer review s41, m6: each was headed "# Quiz" alone)
    assert paper.read_text().startswith("# Quiz\n\nStudent: `jsmith`\n")
    assert "Student: `jsmith`" in key.read_text()
    assert "The key `exam-key.md` of the paper `exam.md` of student `jsmith`." in key.read_text()
    key.unlink()
    # without --student: one paper, one variant of each question (not every variant)
    assert qb.main(["--markdown", str(paper), "--no-key", "--chapters", "08"]) == 0
    assert paper.read_text() == qb.markdown(qb.bank(1, "0", ["08"], repeats=False), key=False)
    assert "Student:" not in paper.read_text()  # no one's paper: no id
    assert not key.exists()


def test_the_key_writes_counts_in_full_and_no_answer_rounds_to_zero():
    """A count is printed in full (not 2.10278e+06); a "give three decimals" answer is never 0.000."""
    questions = qb.bank(20)
    key = qb.markdown(questions)
    assert "e+" not in key
    big = next(q for q in questions if q.kind == "numerical" and q.answer >= 10**6)
    assert f"{int(big.answer):,} (within" in key or f"{int(big.answer):,} (exact)" in key
    assert "(within 0)" not in key
    assert not [q.id for q in questions if q.kind == "numerical" and q.tolerance and q.answer == 0]


@pytest.mark.parametrize(
    "name, seeds", [("q02_sharpen", (31, 174)), ("q03_masked_weight", (20, 36))]
)
def test_no_wrong_number_is_a_rounding_away_from_the_key(name, seeds):
    """Seeds that drew a wrong choice one unit of the last decimal from the key (0.000 beside 0.001:
    lecturer review s9) draw again."""
    for seed in seeds:
        q = qb.make(name, seed)
        right = float(next(c.text for c in q.choices if c.correct))
        assert all(abs(float(c.text) - right) >= 0.0015 for c in q.choices if not c.correct)


def test_the_albert_question_draws_no_shape_or_size_the_book_prints():
    """Lecturer review s16, M5: ALBERT-large's 17,683,968 was the key of alice's exam question and
    chapter 16's exercise 2, in the public book and every student's feedback; ALBERT-xlarge's is in
    the model answer. The RoPE and cache questions draw their own shapes; so does this one."""
    from lib.albert import AlbertConfig, count_parameters

    presets = [AlbertConfig.base, AlbertConfig.large, AlbertConfig.xlarge, AlbertConfig.xxlarge]
    named = {(c().num_hidden_layers, c().hidden_size, c().embedding_size) for c in presets}
    printed = {count_parameters(c()) for c in presets}
    printed.add(count_parameters(AlbertConfig.base(share_layers=False)))
    assert {17_683_968, 58_724_864} <= printed and named == qb.ALBERT_NAMED
    drawn = [qb.make("q16_albert_parameters", seed) for seed in range(60)]
    for q in drawn:
        assert (q.params["L"], q.params["D"], q.params["E"]) not in named
        assert q.params["D"] not in {768, 1024, 2048, 4096} and q.answer not in printed
        assert f"{int(q.answer):,}" not in q.text and "ALBERT-" not in q.text
    assert len({q.params["E"] for q in drawn}) > 1 and len({q.answer for q in drawn}) > 10


def test_no_feedback_has_an_unfilled_placeholder():
    """Lecturer review s23, M4: "4,096: leaves out the ...; the rest of your count is right." and
    "... has length .... Normalize ...": a wrong choice's feedback quotes the checker's advice with
    its computed parts filled from the question's own numbers, for every question and variant (the
    QTI export writes the same feedback)."""
    unfilled = []
    for q in qb.bank(variants=10, seed="2027"):
        texts = [q.feedback or ""] + [c.feedback for c in q.choices or []]
        for t in texts:
            if "..." in t.replace("1 + 2 + ... +", "") or re.search(r"‹|\{[a-z_\[\]0-9]+\}", t):
                unfilled.append((q.id, t))
    assert not unfilled, unfilled[:3]
    q = next(q for q in qb.bank(variants=10, seed="2027", chapters=["07"]) if "mha_param" in q.id)
    d = q.params["d"]
    assert any(
        f"leaves out the attention's four biases (4D = {4 * d})" in c.feedback for c in q.choices
    )


def test_questions_that_repeat_a_graded_exercise_are_left_out_unless_asked(tmp_path, capsys):
    """Lecturer review s29, m9: a quiz for chapters 02 07 12 16 asked chapter 2's exercise 1 ("What
    a hard lookup hides") and chapter 12's exercise 2 (ELMo's softmax, 407,050,623 at V = 793,471)."""
    paper = tmp_path / "exam.md"
    chapters = ["--chapters", "02", "07", "12", "16"]
    assert qb.main(["--markdown", str(paper), "--student", "jsmith", *chapters]) == 0
    out = capsys.readouterr().out
    text = paper.read_text()
    assert "What a hard lookup hides" not in text and "The size of ELMo's softmax" not in text
    assert "left out: q02_tie, which repeats chapter 2's exercise 1" in out
    assert "left out: q12_softmax_params, which repeats chapter 12's exercise 2" in out
    assert "--include-exercise-repeats keeps it" in out
    assert "ELMo" in text  # the chapter's other questions stay
    args = ["--markdown", str(paper), "--student", "jsmith", "--include-exercise-repeats"]
    assert qb.main([*args, *chapters]) == 0
    out = capsys.readouterr().out
    text = paper.read_text()
    assert "What a hard lookup hides" in text and "The size of ELMo's softmax" in text
    assert "warning: q12_softmax_params repeats chapter 12's exercise 2" in out
    # the exercises' own numbers: the repeat is exact at the exercise's vocabulary
    assert qb._elmo_softmax(793_471) == 407_050_623
    assert {q for q in qb.EXERCISE_REPEATS} <= set(qb.QUESTIONS)


def _stems(text: str) -> set[str]:
    import make_course

    return {w[:6] for w in make_course._words(re.sub(r"<[^>]+>", " ", text))}


def _graded_exercises() -> dict[tuple[str, int], set[str]]:
    """{(chapter, exercise): the stems of its statement and model answer}, for every graded
    exercise: a quiz question can give away a prediction's or a written answer's answer, and an
    implementation's method (lecturer review s32, M3: chapter 18's ALiBi slope and online sum)."""
    import make_course
    import nbformat

    out = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells, n = nbformat.read(path, as_version=4).cells, 0
        for i, cell in enumerate(cells):
            if cell.cell_type != "markdown" or not make_course.EXERCISE.match(cell.source):
                continue
            n += 1
            model = next((c.source for c in cells[i + 1 : i + 8] if "Model answer" in c.source), "")
            out[(path.stem[:2], n)] = _stems(cell.source + "\n" + model)
    return out


def test_every_question_that_shares_a_graded_exercises_words_is_marked_or_read():
    """Lecturer review s31, M2: the bank repeated four graded exercises that EXERCISE_REPEATS did not
    name (chapter 13's "The size of a GPT-3 model", chapter 17's cache with grouped-query attention,
    chapter 9's "A deeper Transformer (base)" and its pre-LN essay). The rule: a question that shares
    REPEAT_OVERLAP of its words with a prediction or written exercise of its chapter is marked with
    that exercise, or read and named in NOT_REPEATS."""
    exercises = _graded_exercises()
    found = set()
    for name in qb.QUESTIONS:
        q = qb.make(name, 1)
        words = _stems(" ".join([q.title, q.text, q.feedback, q.model, *q.criteria]))
        if any(
            len(words & e) / len(words) >= qb.REPEAT_OVERLAP
            for (chapter, _), e in exercises.items()
            if chapter == q.chapter
        ):
            found.add(name)
    unread = found - set(qb.EXERCISE_REPEATS) - set(qb.NOT_REPEATS)
    assert not unread, unread
    assert set(qb.NOT_REPEATS) <= found  # no stale entry
    assert not set(qb.NOT_REPEATS) & set(qb.EXERCISE_REPEATS)
    lecturer = {"q13_gpt3_parameters", "q17_kv_cache", "q09_total_layers", "q09_pre_ln"}
    lecturer |= {"q18_alibi_slope", "q18_online_sum"}  # s32, M3: two implementations' methods
    assert lecturer <= found & set(qb.EXERCISE_REPEATS)  # the rule finds them, and they are marked


def test_the_lecturers_quiz_leaves_out_every_repeat_and_the_page_lists_them(tmp_path, capsys):
    """Lecturer review s31, M2: `--markdown ... --student jsmith --chapters 09 13 17` left out none of
    the four repeats it held; now it leaves them out and says so, and the teachers' page lists every
    question EXERCISE_REPEATS marks."""
    paper = tmp_path / "exam.md"
    assert (
        qb.main(["--markdown", str(paper), "--student", "jsmith", "--chapters", "09", "13", "17"])
        == 0
    )
    out, text = capsys.readouterr().out, paper.read_text()
    for title in (
        "The size of a GPT-3 model",
        "The key/value cache with grouped-query attention",
        "A deeper Transformer (base)",
        "Pre-LN and post-LN",
    ):
        assert title not in text, title
    for name in ("q13_gpt3_parameters", "q17_kv_cache", "q09_total_layers", "q09_pre_ln"):
        assert f"left out: {name}, which repeats" in out, name
    assert "A RoPE rotation angle" in text  # the chapters' other questions stay
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    for name in qb.EXERCISE_REPEATS:
        assert f"*{qb.make(name, 0).title}*" in page, name


def test_the_lecturers_s32_quiz_leaves_out_chapter_18s_exercises(tmp_path, capsys):
    """Lecturer review s32, M3: `--markdown exam_jsmith.md --student jsmith --chapters 03 06 14 18`
    left out only q14_bert_parameters; question 5 stated the whole rule of exercise 2's `slopes_for`
    and question 6 was exercise 1's `running_max_and_sum` on two tiles."""
    paper = tmp_path / "exam.md"
    argv = ["--markdown", str(paper), "--student", "jsmith", "--chapters", "03", "06", "14", "18"]
    assert qb.main(argv) == 0
    out, text = capsys.readouterr().out, paper.read_text()
    for name in ("q18_alibi_slope", "q18_online_sum", "q18_flash", "q03_masked_weight"):
        assert f"left out: {name}, which repeats chapter" in out, name
        assert qb.make(name, 0).title not in text, name
    assert "largest power of two" not in text and "running sum" not in text
    assert "Why a decoder is masked" in text  # the chapters' other questions stay


def test_the_page_says_how_few_questions_a_chapter_keeps_without_the_repeats():
    """Lecturer review s33, m11: a quiz on chapters 7, 10, 11 and 15 held 5 questions."""
    from collections import Counter

    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    kept = Counter(n[1:3] for n in qb.QUESTIONS if n not in qb.EXERCISE_REPEATS)
    counted = {f"{c:02d}" for c in range(1, 19)}
    none = sorted(int(c) for c in counted if not kept[c])
    assert set(kept) <= counted and {kept[c] for c in kept} == {1, 2}
    # course review s36, M1: chapters 5, 13 and 18 had none; every chapter has one or two since
    assert not none and "a chapter has one or two questions, so a quiz" in page


def _chapter_text(chapter: str) -> str:
    import nbformat

    path = next((ROOT / "notebooks").glob(f"{chapter}_*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    return " ".join(" ".join(c.source for c in cells if c.cell_type == "markdown").split())


def test_chapters_1_and_16_have_questions_whose_answers_the_chapters_state():
    """Lecturer review s34, m5: a quiz on chapters 16, 12, 1 and 17 had 3 questions, none on 1 or
    16. Each new question's rule is the chapter's own, in its words and numbers: the product of
    Jacobians (0.8^20 = 0.012), 6ND (2 FLOPs forward, 4 backward), the NLL as a sum of -log q(y_t)
    with teacher forcing and log V, sentence-order prediction's swapped consecutive segments. None
    repeats a graded exercise (the rule above finds none)."""
    ch01, ch16 = _chapter_text("01"), _chapter_text("16")
    assert (
        "0.8^{20} \\approx 0.012" in ch01
        and round(FORMULAS["q01_vanishing"]({"gain": 0.8, "k": 20}), 3) == 0.012
    )
    assert "a product of one **Jacobian** per step" in ch01
    for said in (
        "**teacher forcing**",
        # on two lines of an aligned block (a phone's width)
        "H(\\mathbf p^*, \\mathbf q) &= -\\sum_{w} p^*(w) \\log q(w)",
        "&= -\\log q(y_t)",
        "its loss per word starts at $\\log V$",
    ):
        assert said in ch01, said
    assert (
        "about $6ND$ floating-point operations for a model of $N$ parameters trained on $D$ tokens"
        in ch16
    )
    assert "$2 + 4 = 6$" in ch16 and "steps × sequences × tokens" in ch16
    # BERT's setup as the chapter counts it (a million steps of 256 at 128 tokens, 90% of them)
    assert "BERT ran a million steps of 256 sequences" in ch16
    assert "two consecutive segments in swapped order" in ch16 and "change of topic" in ch16
    for name in ("q01_vanishing", "q01_likelihood", "q16_pretraining_flops", "q16_sentence_order"):
        assert name not in qb.EXERCISE_REPEATS and name not in qb.NOT_REPEATS, name
    assert not qb.missing_chapters(["01", "16"])
    kept = [n for n in qb.QUESTIONS if n[1:3] in ("01", "16") and n not in qb.EXERCISE_REPEATS]
    assert len(kept) == 4, kept


def test_the_s36_quiz_on_chapters_5_8_13_18_has_questions_that_repeat_no_exercise(tmp_path, capsys):
    """Course review s36, M1: `--markdown quiz.md --chapters 05 08 13 18` wrote 1 question: chapter
    5 had none, and chapters 13 and 18's questions all repeat a graded exercise. Chapter 5 now has
    soft attention's context and an essay on soft and hard attention, chapter 13 a temperature and
    greedy decoding's document, chapter 18 plain attention's memory and arithmetic intensity, each
    as the chapter states it; those the overlap rule above finds were read (NOT_REPEATS says why)."""
    paper = tmp_path / "quiz.md"
    assert qb.main(["--markdown", str(paper), "--chapters", "05", "08", "13", "18"]) == 0
    out = capsys.readouterr().out
    assert "no questions for chapter" not in out
    m = re.search(r"quiz\.md: (\d+) questions", out)
    assert m and int(m[1]) >= 7, out
    questions = qb.bank(1, "0", ["05", "08", "13", "18"], repeats=False)
    assert len(questions) == int(m[1])
    text = paper.read_text()
    for q in questions:
        assert q.id not in qb.EXERCISE_REPEATS, q.id
        assert f"{q.title}**" in text, q.title
    for title in (
        "The size of a GPT-3 model",
        "An ALiBi slope",
        "The online softmax's running sum",
    ):
        assert title not in text, title
    new = {"q05_soft_context", "q05_soft_hard", "q13_temperature", "q13_greedy_document"}
    new |= {"q18_plain_memory", "q18_intensity"}
    assert new <= {q.id for q in questions}
    for chapter in ("05", "13", "18"):
        assert sum(q.chapter == chapter for q in questions) == 2, chapter
    page = " ".join((ROOT / "book" / "teachers.md").read_text().split())
    assert f"(chapters 5, 8, 13 and 18: {len(questions)} questions)" in page
    # the chapters state what the questions ask
    ch05, ch13, ch18 = _chapter_text("05"), _chapter_text("13"), _chapter_text("18")
    assert "\\mathbf z_t = \\sum_i \\alpha_{t,i}\\mathbf a_i$ is the expectation" in ch05
    assert "A sampled region has no gradient" in ch05 and "REINFORCE" in ch05
    assert "\\operatorname{softmax}(z / \\tau)$ with a **temperature**" in ch13
    assert (
        "Taking the most probable token at each step does not make the most probable document"
        in ch13
    )
    assert (
        "two float32 matrices of $4096^2$ numbers, the scores and the weights, 64 MiB each" in ch18
    )
    assert FORMULAS["q18_plain_memory"]({"heads": 1, "T": 4096}) == 128
    assert "$4T^2 + 4Td$ numbers moved" in ch18 and "$4T^2d$ in all" in ch18
    # the chapter's "about d / b": 32 FLOPs per byte at d = 64 in 16-bit numbers, for long T
    assert abs(FORMULAS["q18_intensity"]({"T": 4096, "d": 64, "b": 2}) - 32) < 0.5
    # the greedy question's document is never greedy's: the key is B's, above A's by 0.01
    for seed in SEEDS:
        p = qb.make("q13_greedy_document", seed).params
        assert (1 - p["first"]) * p["after_b"] > p["first"] * max(p["after_a"]) + 0.01
        assert abs(sum(p["after_a"]) - 1) < 1e-9 and min(p["after_a"]) > 0
