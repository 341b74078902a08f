"""Tests of lib/data/stories.py: the story corpus (determinism, conventions, the rates of its phenomena),
the labelled probes (coreference, word senses, agreement classification), vocabularies, the Python
docs text, and bad input."""

import random
import re
from collections import Counter, defaultdict

import pytest

import lib.data.stories as S
from lib.data.stories import (
    AGREEMENT_NOUNS,
    ANIMALS,
    KIND_RATES,
    NAMES,
    SENSE_CUES,
    SENSES,
    WORDS,
    classification_examples,
    coreference_pairs,
    generate_sentences,
    generate_stories,
    grammar_sentences,
    python_docs_text,
    sense_examples,
    word_vocab,
)

BE = {"is": False, "was": False, "are": True, "were": True}  # verb -> plural?
PLURALS = set(AGREEMENT_NOUNS.values())


@pytest.fixture(scope="module")
def kinds_and_sentences():
    return S._sentences_with_kinds(10000, seed=0)


# --- the corpus -----------------------------------------------------------------------------------


def test_same_seed_same_sentences_other_seed_other_sentences():
    assert generate_sentences(200, seed=1) == generate_sentences(200, seed=1)
    a, b = generate_sentences(200, seed=1), generate_sentences(200, seed=2)
    assert sum(x != y for x, y in zip(a, b)) > 150
    assert generate_sentences(50, seed=1) == generate_sentences(200, seed=1)[:50]  # a prefix


def test_global_random_state_is_not_used():
    random.seed(0)
    a = (
        generate_sentences(50, seed=3),
        generate_stories(20, seed=3),
        coreference_pairs(20, seed=3),
        sense_examples("bank", 20, seed=3),
        classification_examples(20, seed=3),
    )
    random.seed(99)
    b = (
        generate_sentences(50, seed=3),
        generate_stories(20, seed=3),
        coreference_pairs(20, seed=3),
        sense_examples("bank", 20, seed=3),
        classification_examples(20, seed=3),
    )
    assert a == b


def test_docstring_examples_are_what_the_generator_makes():
    sentences = generate_sentences(30, seed=0)
    found = re.findall(r"^    \[(\d+)\]\s+(.+)$", S.__doc__, flags=re.M)
    assert len(found) == 7
    for k, text in found:
        assert sentences[int(k)] == text.strip()


def test_conventions_lower_case_single_spaces_punctuation_tokens(kinds_and_sentences):
    for _, s in kinds_and_sentences[:3000]:
        assert s == s.lower() and s == s.strip() and "  " not in s
        tokens = s.split()
        assert tokens[-1] == "."
        for t in tokens:
            assert t in (".", ",", "n't") or t.isalpha(), t  # punctuation is its own token
        assert "didn't" not in s and (
            "n't" not in tokens or tokens[tokens.index("n't") - 1] in ("did", "could", "would")
        )


def test_grammar_sentences_holds_every_generated_sentence_and_no_other(kinds_and_sentences):
    grammar = grammar_sentences()
    assert len(grammar) == 36_068 and grammar is grammar_sentences()  # enumerated once
    assert all(s in grammar for _, s in kinds_and_sentences)
    assert {w for s in grammar for w in s.split()} <= set(WORDS)
    # ungrammatical agreement, a frame's slot filled from another frame: not in it
    assert all((s in grammar) == bool(y) for s, y in classification_examples(400, seed=5))
    assert "the cow did n't carry the apple because it was too large ." not in grammar
    assert "emma took the woman to the market ." not in grammar
    assert "emma took the cash to the bank ." in grammar


def test_every_word_is_in_WORDS_and_the_vocabulary_is_small(kinds_and_sentences):
    used = Counter(w for _, s in kinds_and_sentences for w in s.split())
    used.update(w for story in generate_stories(500) for s in story for w in s.split())
    assert set(used) <= set(WORDS)
    assert len(set(WORDS) - set(used)) <= 2  # nearly every listed word does occur
    assert 150 <= len(WORDS) <= 400


def test_kinds_occur_at_the_documented_rates(kinds_and_sentences):
    """10,000 draws: the standard error of a rate p is at most sqrt(0.25/10000) = 0.005; 0.02 is 4 sigma."""
    counts = Counter(k for k, _ in kinds_and_sentences)
    assert set(counts) == set(KIND_RATES) and abs(sum(KIND_RATES.values()) - 1) < 1e-12
    for kind, rate in KIND_RATES.items():
        assert abs(counts[kind] / len(kinds_and_sentences) - rate) < 0.02, kind


def test_each_phenomenon_has_its_own_marker(kinds_and_sentences):
    """'because it was too' only in coreference sentences, 'bank' / 'play' only in their sense sentences."""
    for kind, s in kinds_and_sentences:
        tokens = s.split()
        assert ("because it was too" in s) == (kind == "coreference"), s
        assert (tokens.count("bank") == 1) == (kind == "bank") and tokens.count("bank") <= 1, s
        assert (tokens.count("play") == 1) == (kind == "play") and tokens.count("play") <= 1, s


def test_agreement_sentences_agree_and_often_have_an_attractor_of_the_other_number(
    kinds_and_sentences,
):
    mismatched = total = 0
    for kind, s in kinds_and_sentences:
        if kind != "agreement":
            continue
        tokens = s.split()
        head = tokens[1]
        verb = next(t for t in tokens if t in BE)
        assert BE[verb] == (head in PLURALS), s
        attractor = tokens[tokens.index(verb) - 1]  # the noun just before the verb
        if attractor in WORDS and attractor not in ("found", "lost", "bought", "saw", "wanted"):
            attractor_plural = attractor.endswith("s") or attractor in ("men", "women", "children")
            mismatched += attractor_plural != (head in PLURALS)
            total += 1
    assert total > 500 and 0.3 < mismatched / total < 0.7


# --- stories ---------------------------------------------------------------------------------------


def test_stories_have_the_requested_lengths_and_share_their_characters():
    stories = generate_stories(400, seed=4, sentences_per_story=(3, 6))
    assert Counter(len(s) for s in stories).keys() == {3, 4, 5, 6}
    for story in stories:
        m = re.fullmatch(r"(\w+) had a (\w+) \.", story[0])
        assert m and m.group(1) in NAMES and m.group(2) in ANIMALS
        person, pet = m.groups()
        for s in story[1:]:
            tokens = s.split()
            assert person in tokens or pet in tokens, (story[0], s)
            assert not (set(tokens) & (set(NAMES) - {person})), s  # no other named person
    assert generate_stories(10, seed=4) == generate_stories(10, seed=4)
    assert generate_stories(2, seed=0, sentences_per_story=(2, 2))[0][0].endswith(" .")


def test_story_sentences_carry_the_phenomena_at_about_the_same_rates():
    body = [s for story in generate_stories(2000, seed=1) for s in story[1:]]
    coref = sum("because it was too" in s for s in body) / len(body)
    bank = sum(" bank " in s for s in body) / len(body)
    assert abs(coref - KIND_RATES["coreference"]) < 0.03 and abs(bank - KIND_RATES["bank"]) < 0.03


# --- coreference probes ----------------------------------------------------------------------------

# What each adjective says, written here independently of the generator's tables: a state of a
# creature (so "it" is the animal), or, per frame, which of the two objects it makes the obstacle.
CREATURE_STATES = {"tired", "scared", "lazy", "sleepy", "full", "sick", "weak", "old"}
OBSTACLE = {  # frame -> adjective -> "first" (the subject noun) or "second" (the object noun)
    "cross": {"wide": "second", "busy": "second", "long": "second"},
    "fit": {
        "big": "first",
        "large": "first",
        "tall": "first",
        "small": "second",
        "full": "second",
        "narrow": "second",
    },
    "eat": {"hard": "second", "dry": "second", "salty": "second"},
    "carry": {"heavy": "second", "large": "second"},
}


@pytest.fixture(scope="module")
def corefs():
    return coreference_pairs(4000, seed=0)


def test_coreference_indices_point_at_the_right_words(corefs):
    for e in corefs:
        assert e.sentence == " ".join(e.tokens) and e.tokens[e.pronoun] == "it"
        first, second = sorted((e.antecedent, e.distractor))
        assert first < second < e.pronoun < e.decider == len(e.tokens) - 2
        assert e.tokens[e.decider - 1] == "too" and e.tokens[e.pronoun + 1 : e.decider] == (
            "was",
            "too",
        )
        assert e.antecedent_is_first == (e.antecedent == first)


def test_the_antecedent_is_the_noun_the_deciding_adjective_fits(corefs):
    for e in corefs:
        adjective, first_noun = e.tokens[e.decider], e.tokens[min(e.antecedent, e.distractor)]
        if e.frame in ("cross", "eat", "carry") and adjective in CREATURE_STATES:
            assert e.tokens[e.antecedent] in ANIMALS and e.tokens[e.distractor] not in ANIMALS, (
                e.sentence
            )
        else:
            side = OBSTACLE[e.frame][adjective]
            assert e.antecedent_is_first == (side == "first"), e.sentence
        if e.frame != "fit":
            assert first_noun in ANIMALS


def test_coreference_is_not_decidable_without_the_deciding_word(corefs):
    """Both answers are about equally likely in every frame and for every subject noun, and the
    frames, nouns and adjectives are many (no single template to memorise). 4000 examples: 1000 per
    frame, standard error 0.016, tolerance 0.08 = 5 sigma; per noun (>= 150 each) 0.15 = 3.7 sigma."""
    by_frame, by_noun = defaultdict(list), defaultdict(list)
    for e in corefs:
        by_frame[e.frame].append(e.antecedent_is_first)
        by_noun[e.tokens[min(e.antecedent, e.distractor)]].append(e.antecedent_is_first)
    assert set(by_frame) == {"cross", "fit", "eat", "carry"}
    for frame, xs in by_frame.items():
        assert abs(sum(xs) / len(xs) - 0.5) < 0.08, frame
    for noun, xs in by_noun.items():
        if len(xs) >= 150:
            assert abs(sum(xs) / len(xs) - 0.5) < 0.15, noun
    assert len({e.tokens[e.decider] for e in corefs}) >= 18
    assert len({e.tokens[e.antecedent] for e in corefs}) >= 25
    assert len({e.sentence for e in corefs}) > 2000


def test_the_lectures_sentence_is_in_the_grammar():
    target = {
        "the dog did n't cross the street because it was too tired .",
        "the dog did n't cross the street because it was too wide .",
    }
    found = {e.sentence for e in coreference_pairs(20000, seed=0)} & target
    assert found == target


# --- sense probes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["bank", "play"])
def test_sense_examples_are_decided_by_their_cue_words(word):
    examples = sense_examples(word, 3000, seed=1)
    before = after = 0
    for e in examples:
        assert e.word == word and e.tokens[e.index] == word and e.tokens.count(word) == 1
        assert e.sentence == " ".join(e.tokens) and e.sense in SENSES[word]
        other = next(s for s in SENSES[word] if s != e.sense)
        assert e.cues and all(e.tokens[i] in SENSE_CUES[word][e.sense] for i in e.cues)
        assert not set(e.tokens) & set(SENSE_CUES[word][other]), e.sentence
        # the rule "which sense's cue words occur" recovers the label
        assert {s for s in SENSES[word] if set(e.tokens) & set(SENSE_CUES[word][s])} == {e.sense}
        before += max(e.cues) < e.index
        after += min(e.cues) > e.index
    senses = Counter(e.sense for e in examples)
    assert abs(senses[SENSES[word][0]] / len(examples) - 0.5) < 0.05  # 5.5 sigma
    # the cue comes after the word in some sentences and before it in others
    assert before / len(examples) > 0.15 and after / len(examples) > 0.15


def test_sense_frames_are_shared_by_both_senses():
    """The words just before the ambiguous word give the sense away only when they are cue words:
    every other two-word left context occurs with both senses."""
    for word in SENSES:
        cues = set(SENSE_CUES[word]["river" if word == "bank" else "theatre"])
        cues |= set(SENSE_CUES[word]["money" if word == "bank" else "game"])
        contexts = defaultdict(set)
        for e in sense_examples(word, 3000, seed=2):
            contexts[e.tokens[max(0, e.index - 2) : e.index]].add(
                e.sense
            )  # the two words before it
        plain = {c: v for c, v in contexts.items() if not set(c) & cues}
        assert len(plain) >= 3 and all(len(v) == 2 for v in plain.values()), (word, plain)


# --- classification --------------------------------------------------------------------------------


def test_classification_labels_are_agreement_and_need_context():
    examples = classification_examples(4000, seed=0)
    labels = [y for _, y in examples]
    assert abs(sum(labels) / len(labels) - 0.5) < 0.04  # 5 sigma
    tokens_by_label = Counter()
    counts = Counter()
    for s, y in examples:
        tokens = s.split()
        verb = next(t for t in tokens if t in BE)
        assert y == int(BE[verb] == (tokens[1] in PLURALS)), s
        for t in set(tokens):
            counts[t] += 1
            tokens_by_label[t] += y
    # no single word tells the label: its rate among sentences holding any frequent word is ~1/2
    # (>= 400 sentences: standard error <= 0.025; tolerance 0.1 = 4 sigma)
    for t, c in counts.items():
        if c >= 400:
            assert abs(tokens_by_label[t] / c - 0.5) < 0.1, (t, tokens_by_label[t] / c)
    assert len(set(s for s, _ in examples)) > 2000


# --- vocabularies and real text --------------------------------------------------------------------


def test_word_vocab_specials_first_then_most_frequent():
    v = word_vocab(["the cat sat .", "the dog sat ."])
    assert v.itos[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"] and (
        v.pad_id,
        v.bos_id,
        v.eos_id,
        v.unk_id,
    ) == (0, 1, 2, 3)
    # counts 2, 2, 2, 1, 1; ties alphabetical
    assert v.itos[4:] == [".", "sat", "the", "cat", "dog"]
    assert word_vocab([["the", "cat"], ["the"]], min_count=2).itos[4:] == ["the"]
    assert v.encode("the fox".split()) == [v.stoi["the"], v.unk_id]
    full = word_vocab(generate_sentences(3000))
    assert len(full) - 4 <= len(WORDS)


def test_python_docs_text_is_real_deterministic_english():
    from pydoc_data.topics import topics

    text = python_docs_text()
    assert text == python_docs_text() and len(text) > 200_000
    assert python_docs_text(rules=True).startswith(topics[sorted(topics)[0]].strip()[:50])
    assert python_docs_text(1000) == text[:1000]
    # the lines that only draw (a heading's underline, a table's border) are left out by default
    lines = text.split("\n")
    assert not any(
        len(line.strip()) >= 4 and set(line.strip()) <= set("-=*~^+| ") for line in lines
    )
    assert 'The "assert" statement\n\nAssert' in text
    assert "\n**********************\n" in python_docs_text(rules=True)
    words = re.findall(r"[a-z]+", text.lower())
    common = Counter(words).most_common(5)
    assert common[0][0] == "the"


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: generate_sentences(-1), "n"),
        (lambda: generate_stories(-2), "n"),
        (lambda: generate_stories(3, sentences_per_story=(1, 4)), "sentences_per_story"),
        (lambda: generate_stories(3, sentences_per_story=(5, 4)), "sentences_per_story"),
        (lambda: generate_stories(3, sentences_per_story=(3,)), "sentences_per_story"),
        (lambda: coreference_pairs(-1), "n"),
        (lambda: sense_examples("banks", 3), "word"),
        (lambda: sense_examples("play", -3), "n"),
        (lambda: classification_examples(-1), "n"),
        (lambda: word_vocab(["a b"], min_count=0), "min_count"),
        (lambda: word_vocab([]), "sentences"),
        (lambda: python_docs_text(0), "max_chars"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        call()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: generate_sentences("3"), "n"),
        (lambda: generate_sentences(2.0), "n"),
        (lambda: coreference_pairs(True), "n"),
        (lambda: word_vocab("a b c"), "sentences"),
        (lambda: python_docs_text("10"), "max_chars"),
    ],
)
def test_wrong_types_raise_type_error_naming_the_argument(call, name):
    with pytest.raises(TypeError, match=rf"^{name}:"):
        call()
