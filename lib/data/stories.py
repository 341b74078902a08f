"""A small English-like story corpus, generated from a grammar written for the book, and real English
text that ships with Python.

The grammar is small (``WORDS``: about 250 words) so that a tiny model learns it in a minute on a CPU,
and it is written so that the phenomena the chapters study occur often:

* **Coreference decided by a later word** (the Winograd-schema pattern of Google's Transformer
  blog post's "the animal didn't cross the street because it was too tired"):
  ``the A <did/could/would> n't VERB the B because it was too ADJ .`` where ``it`` could be either
  noun and only the adjective decides: "too tired" fits
  the animal, "too wide" the street. Four frames (``COREF_FRAMES``: cross / fit in / eat / carry), each
  with its own nouns and its own adjectives for each side, so no single template or word pair can be
  memorised. ``coreference_pairs`` labels them.
* **Polysemy**: "bank" of a river or the bank that lends money, "play" on a stage or in a game. The same
  frames take either sense; the words that decide it (``SENSE_CUES``: water, ducks, ... / money, loan,
  ...) come after the ambiguous word in some frames and before it in others, so a left-to-right
  model cannot always tell the sense when it reads the word, but a bidirectional one can.
  ``sense_examples`` labels them. The words "bank" and "play" occur nowhere else in the corpus.
* **Agreement across a clause**: ``the keys that the man found are old .`` / ``the key near the boxes
  is red .``: the verb agrees with the head noun, never with the nearer noun of the relative clause or
  prepositional phrase (the "attractor"), whose number is drawn independently. ``classification_examples``
  turns it into a sentence-classification task (grammatical or not).
* Plain **narrative** sentences about a cast (a person, a pet) for the rest.

Conventions: lower-case words separated by single spaces; punctuation (``.`` and ``,``) is a separate
token; negative contractions are split as in the Penn Treebank, "didn't" -> ``did n't``. So
``sentence.split()`` gives the tokens, and ``" ".join(tokens)`` gives the sentence back.

``generate_sentences`` draws independent sentences whose kinds occur at the rates ``KIND_RATES``
(coreference 20%, bank 10%, play 10%, agreement 20%, narrative 40%). ``generate_stories`` draws short
stories: the first sentence introduces a person and a pet ("mia had a cat ."), every later sentence
names the person or the pet again (the consecutive sentences share a character, what BERT's
next-sentence prediction needs to be learnable) and draws its kind at the same rates.

Every function is deterministic: one ``random.Random(seed)`` per call, no global random state.

Examples: sentences 2, 8, 11, 13, 15, 17 and 22 of ``generate_sentences(30, seed=0)``:

    [2]   yesterday , the horse did n't eat the fish because it was too full .
    [8]   after a walk by the water , leo went back to the bank .
    [11]  in the morning , the dog did n't cross the river because it was too busy .
    [13]  the players play with the ball every day .
    [15]  the letter that the child bought is red .
    [17]  the cat would n't cross the road because it was too tired .
    [22]  emma was tired , so she went to bed early .
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import Iterable, Sequence

from lib._validate import check_choice, check_int, is_int
from lib.data.translation import Vocab

__all__ = [
    "KIND_RATES",
    "NAMES",
    "ANIMALS",
    "COREF_FRAMES",
    "SENSES",
    "SENSE_CUES",
    "AGREEMENT_NOUNS",
    "WORDS",
    "CorefExample",
    "SenseExample",
    "generate_sentences",
    "grammar_sentences",
    "generate_stories",
    "coreference_pairs",
    "sense_examples",
    "classification_examples",
    "word_vocab",
    "python_docs_text",
]

KIND_RATES = {"coreference": 0.2, "bank": 0.1, "play": 0.1, "agreement": 0.2, "narrative": 0.4}

NAMES = {
    "anna": "she",
    "mia": "she",
    "lucy": "she",
    "emma": "she",
    "tom": "he",
    "ben": "he",
    "sam": "he",
    "leo": "he",
}
ANIMALS = ("dog", "cat", "horse", "cow", "fox", "goat", "sheep", "rabbit")
_THINGS = ("ball", "book", "cake", "hat", "lamp", "toy")

# --- coreference -----------------------------------------------------------------------------------
# frame: (verb phrase, negations, A nouns, adjectives that fit A, B nouns, adjectives that fit B).
# "the A NEG VERB the B because it was too ADJ ." -- ADJ fits one side only, which makes it the referent.


@dataclass(frozen=True)
class _CorefFrame:
    verb: str
    negations: tuple[str, ...]
    a_nouns: tuple[str, ...]
    a_adjectives: tuple[str, ...]
    b_nouns: tuple[str, ...]
    b_adjectives: tuple[str, ...]


COREF_FRAMES = {
    "cross": _CorefFrame(
        "cross",
        ("did", "could", "would"),
        ANIMALS,
        ("tired", "scared", "lazy", "sleepy"),
        ("street", "road", "river"),
        ("wide", "busy", "long"),
    ),
    "fit": _CorefFrame(
        "fit in",
        ("did", "would"),
        _THINGS,
        ("big", "large", "tall"),
        ("box", "bag", "basket", "drawer", "suitcase"),
        ("small", "full", "narrow"),
    ),
    "eat": _CorefFrame(
        "eat",
        ("could", "did", "would"),
        ANIMALS,
        ("full", "sick", "sleepy"),
        ("bread", "apple", "fish", "carrot", "cheese"),
        ("hard", "dry", "salty"),
    ),
    "carry": _CorefFrame(
        "carry",
        ("could", "did"),
        ANIMALS,
        ("weak", "tired", "old"),
        ("box", "bag", "basket", "suitcase", "table"),
        ("heavy", "large"),
    ),
}
_OPENERS = ("", "", "yesterday ,", "in the morning ,", "that day ,")

# --- polysemy --------------------------------------------------------------------------------------
# Each frame has a slot X that one of the sense's phrases fills; P is a person. Every phrase holds at
# least one cue word of its sense (SENSE_CUES) and none of the other sense's.

SENSES = {"bank": ("river", "money"), "play": ("theatre", "game")}
SENSE_CUES = {
    "bank": {
        "river": (
            "river",
            "water",
            "ducks",
            "fish",
            "boat",
            "boats",
            "reeds",
            "muddy",
            "swim",
            "grass",
        ),
        "money": (
            "money",
            "loan",
            "account",
            "coins",
            "cash",
            "bill",
            "borrow",
            "clerk",
            "savings",
        ),
    },
    "play": {
        "theatre": ("stage", "theatre", "actors", "audience", "show", "curtain", "script", "acts"),
        "game": ("team", "match", "ball", "football", "players", "goal", "score", "coach", "game"),
    },
}
_SENSE_FRAMES = {
    "bank": (
        "P walked to the bank to X .",
        "the bank X .",
        "P waited at the bank and X .",
        "P took the X to the bank .",
        "after X , P went back to the bank .",
    ),
    "play": (
        "P loved the play X .",
        "the X play Y every day .",
        "P will play X on saturday .",
        "after the X , the Y talked about the play .",
    ),
}
_SENSE_PHRASES = {  # frame index -> sense -> phrases (X) or (X, Y) pairs
    "bank": {
        0: {
            "river": (
                "watch the ducks",
                "look at the water",
                "catch some fish",
                "swim in the river",
            ),
            "money": ("get some money", "pay a bill", "borrow money", "open an account"),
        },
        1: {
            "river": (
                "was muddy after the rain",
                "was covered in reeds and grass",
                "was full of ducks",
            ),
            "money": ("lent P some money", "gave P a loan", "was closed , so P had no cash"),
        },
        2: {
            "river": ("watched the boats", "fed the ducks", "looked at the water"),
            "money": ("counted the coins", "talked to the clerk", "paid the bill"),
        },
        3: {"river": ("boat",), "money": ("coins", "cash", "savings")},
        4: {
            "river": ("a swim in the river", "a walk by the water"),
            "money": ("a meeting about the loan", "a talk with the clerk"),
        },
    },
    "play": {
        0: {
            "theatre": (
                "at the theatre",
                "on the stage",
                "with the funny actors",
                "about a king and his script",
            ),
            "game": ("that won the match", "by the team", "that led to a goal", "with the ball"),
        },
        1: {
            "theatre": (
                ("actors", "on the stage"),
                ("actors", "for the audience"),
                ("children", "in the school show"),
            ),
            "game": (("players", "with the ball"), ("children", "football in the team")),
        },
        2: {
            "theatre": ("the king in the show", "a queen on the stage"),
            "game": ("in the match", "football with the team", "for the coach"),
        },
        3: {
            "theatre": (("show", "audience"), ("curtain", "actors")),
            "game": (("match", "players"), ("game", "coach")),
        },
    },
}

# --- agreement -------------------------------------------------------------------------------------

AGREEMENT_NOUNS = {
    "key": "keys",
    "box": "boxes",
    "book": "books",
    "cup": "cups",
    "coin": "coins",
    "letter": "letters",
    "toy": "toys",
    "picture": "pictures",
}
_PEOPLE = {
    "man": "men",
    "woman": "women",
    "child": "children",
    "farmer": "farmers",
    "teacher": "teachers",
}
_PLACES = {
    "table": "tables",
    "window": "windows",
    "door": "doors",
    "chair": "chairs",
    "bed": "beds",
}
_PAST_VERBS = ("found", "lost", "bought", "saw", "wanted")
_BE = {
    ("present", False): "is",
    ("present", True): "are",
    ("past", False): "was",
    ("past", True): "were",
}
_PREDICATES = ("old", "new", "red", "broken", "very small", "on the floor", "in the kitchen")

# --- narrative ------------------------------------------------------------------------------------
# P person, R his/her pronoun, A the pet (an animal), T a thing.

_NARRATIVE = (
    "P lived in a small house near the forest .",
    "one morning P and the A went for a walk .",
    "the A was hungry , so P gave it some food .",
    "P opened the door and the A ran outside .",
    "P found a T under the tree .",
    "the A slept in the garden all afternoon .",
    "P read a book while the A slept .",
    "in the evening P cooked soup for dinner .",
    "P called the A , but it did not come .",
    "the A chased a bird across the garden .",
    "P was tired , so R went to bed early .",
    "P smiled at the A .",
    "P met a friend at the market .",
    "the weather was cold , so P wore a warm hat .",
    "the A followed P to the market .",
    "P gave the A a T .",
)
_STORY_OPENER = "P had a A ."


def _fill(template: str, **slots: str) -> tuple[list[str], dict[str, int]]:
    """The tokens of `template` with each upper-case slot replaced by its (possibly multi-word) value,
    and the index of each slot's first token."""
    tokens, where = [], {}
    for piece in template.split():
        if piece in slots:
            where.setdefault(piece, len(tokens))
            tokens += slots[piece].split()
        else:
            tokens.append(piece)
    return tokens, where


@dataclass(frozen=True)
class _Cast:
    person: str  # a name, or "the man" ...
    pronoun: str  # he / she
    pet: str  # an animal


def _random_cast(rng: random.Random) -> _Cast:
    name = rng.choice(sorted(NAMES))
    return _Cast(name, NAMES[name], rng.choice(ANIMALS))


# --- the sentence makers: each returns tokens (and what the probes need) ------------------------


@dataclass(frozen=True)
class CorefExample:
    """A sentence whose pronoun ``it`` refers to one of two nouns, decided by a later adjective.

    tokens[pronoun] == "it"; tokens[antecedent] is the noun it refers to, tokens[distractor] the other
    noun; tokens[decider] is the adjective that fits the antecedent only ("tired" for an animal,
    "wide" for a street). ``frame`` names the frame in ``COREF_FRAMES``; ``antecedent_is_first`` says
    whether the antecedent is the first noun (the subject) or the second (the object).
    """

    sentence: str
    tokens: tuple[str, ...]
    pronoun: int
    antecedent: int
    distractor: int
    decider: int
    frame: str
    antecedent_is_first: bool


def _coref(rng: random.Random, cast: _Cast | None = None) -> CorefExample:
    frame_name = rng.choice(sorted(COREF_FRAMES))
    f = COREF_FRAMES[frame_name]
    a = cast.pet if cast is not None and f.a_nouns is ANIMALS else rng.choice(f.a_nouns)
    b = rng.choice(f.b_nouns)
    first = rng.random() < 0.5
    adjective = rng.choice(f.a_adjectives if first else f.b_adjectives)
    opener = rng.choice(_OPENERS)
    template = "O the A N n't V the B because it was too J ."
    if cast is not None and a != cast.pet:  # in a story every sentence names the cast
        opener = f"{cast.person} saw that"
    tokens, where = _fill(
        template, O=opener, A=a, N=rng.choice(f.negations), V=f.verb, B=b, J=adjective
    )
    i_a, i_b = where["A"], where["B"]
    i_it = tokens.index("it", i_b)
    return CorefExample(
        " ".join(tokens),
        tuple(tokens),
        i_it,
        i_a if first else i_b,
        i_b if first else i_a,
        where["J"],
        frame_name,
        first,
    )


@dataclass(frozen=True)
class SenseExample:
    """A sentence holding an ambiguous word whose sense its context decides.

    tokens[index] == word ("bank" or "play"); sense is one of ``SENSES[word]`` ("river" / "money",
    "theatre" / "game"); cues are the indices of the context words that decide it (words of
    ``SENSE_CUES[word][sense]``; the sentence holds no cue of the other sense).
    """

    sentence: str
    tokens: tuple[str, ...]
    word: str
    index: int
    sense: str
    cues: tuple[int, ...]


def _sense(
    rng: random.Random, word: str, cast: _Cast | None = None, sense: str | None = None
) -> SenseExample:
    if sense is None:
        sense = rng.choice(SENSES[word])
    k = rng.randrange(len(_SENSE_FRAMES[word]))
    frame, phrase = _SENSE_FRAMES[word][k], rng.choice(_SENSE_PHRASES[word][k][sense])
    x, y = (phrase, "") if isinstance(phrase, str) else phrase
    person = cast.person if cast is not None else rng.choice(sorted(NAMES))
    x = " ".join(person if w == "P" else w for w in x.split())
    if cast is not None and "P" not in frame.split() and person not in x.split():
        frame = f"{cast.person} said that {frame}"  # in a story every sentence names the cast
    tokens, _ = _fill(frame, P=person, X=x, Y=y)
    index = tokens.index(word)
    cues = tuple(i for i, t in enumerate(tokens) if t in SENSE_CUES[word][sense])
    return SenseExample(" ".join(tokens), tuple(tokens), word, index, sense, cues)


def _agreement(
    rng: random.Random, cast: _Cast | None = None, grammatical: bool = True
) -> tuple[list[str], bool]:
    """An agreement sentence and whether its head noun is plural. With grammatical=False the verb
    takes the other number."""
    singular = rng.choice(sorted(AGREEMENT_NOUNS))
    plural = rng.random() < 0.5
    noun = AGREEMENT_NOUNS[singular] if plural else singular
    if rng.random() < 0.5:  # attractor in a relative clause
        if cast is not None:
            attractor = cast.person
        elif rng.random() < 0.25:
            attractor = rng.choice(sorted(NAMES))
        else:
            person = rng.choice(sorted(_PEOPLE))
            attractor = "the " + (_PEOPLE[person] if rng.random() < 0.5 else person)
        middle = f"that {attractor} {rng.choice(_PAST_VERBS)}"
    else:  # attractor in a prepositional phrase
        if cast is not None:
            attractor = cast.pet
        else:
            place = rng.choice(sorted(_PLACES))
            attractor = _PLACES[place] if rng.random() < 0.5 else place
        middle = f"{rng.choice(('near', 'under', 'behind'))} the {attractor}"
    verb = _BE[(rng.choice(("present", "past")), plural == grammatical)]
    tokens, _ = _fill(f"the N M V {rng.choice(_PREDICATES)} .", N=noun, M=middle, V=verb)
    return tokens, plural


def _narrative(rng: random.Random, cast: _Cast) -> list[str]:
    tokens, _ = _fill(
        rng.choice(_NARRATIVE), P=cast.person, R=cast.pronoun, A=cast.pet, T=rng.choice(_THINGS)
    )
    return tokens


def _sentence(rng: random.Random, cast: _Cast | None) -> tuple[str, list[str]]:
    """(kind, tokens) of one sentence whose kind is drawn at KIND_RATES."""
    kinds = list(KIND_RATES)
    kind = rng.choices(kinds, weights=[KIND_RATES[k] for k in kinds])[0]
    if kind == "coreference":
        return kind, list(_coref(rng, cast).tokens)
    if kind in SENSES:
        return kind, list(_sense(rng, kind, cast).tokens)
    if kind == "agreement":
        return kind, _agreement(rng, cast)[0]
    return kind, _narrative(rng, cast if cast is not None else _random_cast(rng))


def _sentences_with_kinds(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(kind, " ".join(tokens)) for kind, tokens in (_sentence(rng, None) for _ in range(n))]


def generate_sentences(n: int, seed: int = 0) -> list[str]:
    """``n`` independent sentences (str, tokens separated by single spaces), each of a kind drawn at
    the rates ``KIND_RATES``; see the module docstring for the grammar and the conventions."""
    check_int(n, "n", 0)
    return [s for _, s in _sentences_with_kinds(n, seed)]


@lru_cache(maxsize=1)
def grammar_sentences() -> frozenset[str]:
    """Every sentence that ``generate_sentences`` can write, enumerated from the same frames and word
    lists as the sentence makers above (no story cast: every choice they draw, taken in turn). A
    sentence is in the grammar exactly when it is in this set (36,068 sentences)."""
    out: set[str] = set()

    def add(template: str, **slots: str) -> None:
        out.add(" ".join(_fill(template, **slots)[0]))

    for f in COREF_FRAMES.values():  # _coref
        for a, b, neg, adj, opener in product(
            f.a_nouns, f.b_nouns, f.negations, f.a_adjectives + f.b_adjectives, _OPENERS
        ):
            slots = dict(O=opener, A=a, N=neg, V=f.verb, B=b, J=adj)
            add("O the A N n't V the B because it was too J .", **slots)
    for word, frames in _SENSE_FRAMES.items():  # _sense
        for k, frame in enumerate(frames):
            for phrases in _SENSE_PHRASES[word][k].values():
                for phrase, person in product(phrases, NAMES):
                    x, y = (phrase, "") if isinstance(phrase, str) else phrase
                    x = " ".join(person if w == "P" else w for w in x.split())
                    add(frame, P=person, X=x, Y=y)
    people = [*NAMES, *(f"the {p}" for pair in _PEOPLE.items() for p in pair)]
    places = [p for pair in _PLACES.items() for p in pair]
    middles = [f"that {who} {verb}" for who in people for verb in _PAST_VERBS]
    middles += [f"{prep} the {place}" for prep in ("near", "under", "behind") for place in places]
    for (singular, plural), middle, tense, predicate in product(
        AGREEMENT_NOUNS.items(), middles, ("present", "past"), _PREDICATES
    ):  # _agreement, grammatical: the verb agrees with the head noun
        for noun, is_plural in ((singular, False), (plural, True)):
            add(f"the N M V {predicate} .", N=noun, M=middle, V=_BE[(tense, is_plural)])
    for template, (name, pronoun), pet, thing in product(
        _NARRATIVE, NAMES.items(), ANIMALS, _THINGS
    ):  # _narrative, with a random cast
        add(template, P=name, R=pronoun, A=pet, T=thing)
    return frozenset(out)


def _check_range(sentences_per_story) -> tuple[int, int]:
    ok = (
        isinstance(sentences_per_story, (tuple, list))
        and len(sentences_per_story) == 2
        and all(is_int(k) for k in sentences_per_story)
        and 2 <= sentences_per_story[0] <= sentences_per_story[1]
    )
    if not ok:
        raise ValueError(
            f"sentences_per_story: expected a pair of ints (low, high) with 2 <= low <= high, got {sentences_per_story!r}"
        )
    return tuple(sentences_per_story)


def generate_stories(
    n: int, seed: int = 0, sentences_per_story: tuple[int, int] = (3, 6)
) -> list[list[str]]:
    """``n`` short stories, each a list of between ``sentences_per_story[0]`` and ``[1]`` sentences
    (drawn uniformly). The first sentence introduces a person and a pet ("mia had a cat ."); every
    later sentence names the person or the pet and is of a kind drawn at ``KIND_RATES``."""
    check_int(n, "n", 0)
    low, high = _check_range(sentences_per_story)
    rng = random.Random(seed)
    stories = []
    for _ in range(n):
        cast = _random_cast(rng)
        story = [" ".join(_fill(_STORY_OPENER, P=cast.person, A=cast.pet)[0])]
        story += [" ".join(_sentence(rng, cast)[1]) for _ in range(rng.randint(low, high) - 1)]
        stories.append(story)
    return stories


def coreference_pairs(n: int, seed: int = 0) -> list[CorefExample]:
    """``n`` labelled coreference sentences (see ``CorefExample``). The antecedent is the first noun
    or the second with probability 1/2 each, so always guessing one side scores about 50%."""
    check_int(n, "n", 0)
    rng = random.Random(seed)
    return [_coref(rng) for _ in range(n)]


def sense_examples(word: str, n: int, seed: int = 0) -> list[SenseExample]:
    """``n`` labelled sentences holding ``word`` ("bank" or "play"), each sense with probability 1/2."""
    check_choice(word, "word", tuple(sorted(SENSES)))
    check_int(n, "n", 0)
    rng = random.Random(seed)
    return [_sense(rng, word) for _ in range(n)]


def classification_examples(n: int, seed: int = 0) -> list[tuple[str, int]]:
    """``n`` (sentence, label) pairs for sentence classification: **is the subject-verb agreement
    respected?** Label 1: grammatical ("the keys that the man found are old ."); label 0: the verb
    takes the wrong number ("the keys that the man found is old ."). Each label with probability 1/2.

    No single word tells the label: the head noun and the verb are each singular or plural with
    probability 1/2 in both classes, and the nearer noun (the attractor) has its own number; the
    label is whether the head noun's number and the verb's agree, which takes reading both, across
    the clause between them."""
    check_int(n, "n", 0)
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = int(rng.random() < 0.5)
        out.append((" ".join(_agreement(rng, grammatical=bool(label))[0]), label))
    return out


def _all_words() -> tuple[str, ...]:
    words: set[str] = set()
    templates = list(_NARRATIVE) + [
        _STORY_OPENER,
        "O the A N n't V the B because it was too J .",
        "P saw that P said that",
        "the N that M near under behind V .",
    ]
    for frames in _SENSE_FRAMES.values():
        templates += frames
    for phrases in _SENSE_PHRASES.values():
        for by_sense in phrases.values():
            for options in by_sense.values():
                templates += [p if isinstance(p, str) else " ".join(p) for p in options]
    templates += list(_OPENERS) + list(_PREDICATES) + list(_BE.values()) + list(_PAST_VERBS)
    for f in COREF_FRAMES.values():
        templates += [
            f.verb,
            *f.negations,
            *f.a_nouns,
            *f.a_adjectives,
            *f.b_nouns,
            *f.b_adjectives,
        ]
    for table in (NAMES, AGREEMENT_NOUNS, _PEOPLE, _PLACES):
        templates += list(table) + list(table.values())
    templates += list(ANIMALS) + list(_THINGS)
    for t in templates:
        words.update(w for w in t.split() if not w.isupper())
    return tuple(sorted(words))


WORDS: tuple[str, ...] = _all_words()  # every word the generator can write


def word_vocab(
    sentences: Iterable[str | Sequence[str]],
    min_count: int = 1,
    specials: Sequence[str] = ("<pad>", "<bos>", "<eos>", "<unk>"),
) -> Vocab:
    """A ``lib.data.Vocab`` of the words of `sentences` (strings, split on spaces, or token lists)
    occurring at least ``min_count`` times, most frequent first (ties alphabetical).

    specials: as in ``Vocab``, the first four are padding, begin, end and unknown, in that order
    (so pad_id=0, bos_id=1, eos_id=2, unk_id=3 with the defaults)."""
    if isinstance(sentences, str):
        raise TypeError(
            f"sentences: expected an iterable of sentences, got the str {sentences[:40]!r}"
        )
    check_int(min_count, "min_count", 1)
    token_lists = [s.split() if isinstance(s, str) else list(s) for s in sentences]
    if not token_lists:
        raise ValueError("sentences: expected at least one sentence, got none")
    return Vocab.build(token_lists, min_count=min_count, specials=specials)


def python_docs_text(max_chars: int | None = None, rules: bool = False) -> str:
    """Real English text that every Python installation carries: the help topics of the standard
    library's ``pydoc_data.topics`` (the text ``help("if")`` shows), concatenated in sorted key order
    with a blank line between topics; the first ``max_chars`` characters if given. Deterministic
    for a given Python version (the topics change a little between versions).

    Lines that only draw, a heading's underline or a table's border (4 or more of ``- = * ~ ^ + |``
    and nothing else), are left out: as text they are runs of punctuation marks, hundreds of lone
    ``-`` tokens that no reader reads. ``rules=True`` keeps them."""
    if max_chars is not None:
        check_int(max_chars, "max_chars", 1)
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[k].strip() for k in sorted(topics))
    if not rules:
        text = "\n".join(line for line in text.split("\n") if not _is_rule(line))
    return text if max_chars is None else text[:max_chars]


def _is_rule(line: str) -> bool:
    """Whether `line` only draws: 4 or more of - = * ~ ^ + | (spaces aside) and nothing else."""
    drawn = line.replace(" ", "").replace("\t", "")
    return len(drawn) >= 4 and set(drawn) <= set("-=*~^+|")
