"""A small parallel corpus, English -> "French-like", generated from a grammar written for the book.

Real French is the model, but not the law: the grammar keeps the rules that make a trained model's
attention leave the diagonal, and drops what would only add noise (elision, contractions, verb
persons, plurals but "them" -> "les"). Every target word is the translation of exactly one source
word, and the generator records which one: ``Pair.alignment[j]`` is the index of the source word
that target word j translates. That gold alignment is what an attention heatmap can be compared
with.

The rules (words and genders are in the tables below):

1. Articles agree with the noun's gender: the -> le / la, a -> un / une.
2. Adjectives follow the noun, in mirror order, and agree with it: "the heavy red car" ->
   "la voiture rouge lourde" (the adjective nearest the noun stays nearest). Real French puts a
   few adjectives (grand, petit...) before the noun; none of ours are of that kind.
3. Object pronouns move before the verb: "she sees him" -> "elle le voit" (him, her, them ->
   le, la, les).
4. Negation wraps the verb: "does not see" -> "ne voit pas"; "does" has no translation, "not"
   becomes two words, both aligned to it.
5. Adverbs move after the verb: "the cat often sees the dog" -> "le chat voit souvent le chien".
6. "that" is "qui" when it is the subject of its clause and "que" when it is the object.
7. "near" is two words, "près de". (French would contract "de le" to "du"; we do not.)

Sentences are clauses joined by "and" / "but"; noun phrases take adjectives, prepositional phrases
and relative clauses; subjects are animate (dog, girl, ...). The sentences are grammatical, not
always sensible (a cow may sleep in a cake). ``generate_pairs`` draws a length uniformly between
``min_words`` and ``max_words``, then grows a sentence to exactly that length, so short and long
sentences are about equally common (with the defaults 3..40, about 43% have 25 words or more).

Three pairs from ``generate_pairs(60, seed=0)``: the source words with their indices, then each
target word with the index of the source word it translates (``Pair.alignment``):

    [40]  a(0) green(1) fast(2) girl(3) often(4) carries(5) her(6) with(7) the(8) red(9)
          green(10) cake(11)
          une(0) fille(3) rapide(2) verte(1) la(6) porte(5) souvent(4) avec(7) le(8) gâteau(11)
          vert(10) rouge(9)
    [57]  a(0) woman(1) that(2) sleeps(3) on(4) the(5) car(6) does(7) not(8) push(9) him(10)
          une(0) femme(1) qui(2) dort(3) sur(4) la(5) voiture(6) ne(8) le(10) pousse(9) pas(8)
    [51]  she(0) does(1) not(2) follow(3) the(4) woman(5) on(6) the(7) black(8) hot(9) letter(10)
          that(11) she(12) pushes(13)
          elle(0) ne(2) suit(3) pas(2) la(4) femme(5) sur(6) la(7) lettre(10) chaude(9) noire(8)
          que(11) elle(12) pousse(13)

Vocabulary: ``SOURCE_WORDS`` (81 English words) and ``TARGET_WORDS`` (77 French words).
Batches: ``make_batch`` pads with ``pad_id`` and adds no <bos>/<eos> to the source, so source
position i in a batch is source word i of the pair (and of its alignment).

Shape legend: B batch, S source length (words, no specials), T target length + 1 (for <bos>/<eos>).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import torch
from torch import Tensor

from lib._validate import check_int, is_int
from lib.data._batching import endless, index_batches

__all__ = [
    "NOUNS",
    "ANIMATE",
    "ADJECTIVES",
    "TRANSITIVE_VERBS",
    "INTRANSITIVE_VERBS",
    "ADVERBS",
    "PREPOSITIONS",
    "ARTICLES",
    "SUBJECT_PRONOUNS",
    "OBJECT_PRONOUNS",
    "CONJUNCTIONS",
    "LEXICON",
    "SOURCE_WORDS",
    "TARGET_WORDS",
    "Pair",
    "generate_pairs",
    "split_pairs",
    "alignment_matrix",
    "Vocab",
    "build_vocabs",
    "corpus_fingerprint",
    "Batch",
    "make_batch",
    "batches",
    "epochs",
]

# --- the grammar's words ----------------------------------------------------------------------
# No French word here starts with a vowel, so that no elision (l', n', qu') is needed.

NOUNS = {  # English: (French, gender)
    "dog": ("chien", "m"),
    "cat": ("chat", "m"),
    "boy": ("garçon", "m"),
    "horse": ("cheval", "m"),
    "girl": ("fille", "f"),
    "woman": ("femme", "f"),
    "cow": ("vache", "f"),
    "mouse": ("souris", "f"),
    "book": ("livre", "m"),
    "garden": ("jardin", "m"),
    "hat": ("chapeau", "m"),
    "boat": ("bateau", "m"),
    "bed": ("lit", "m"),
    "cake": ("gâteau", "m"),
    "car": ("voiture", "f"),
    "ball": ("balle", "f"),
    "house": ("maison", "f"),
    "table": ("table", "f"),
    "river": ("rivière", "f"),
    "street": ("rue", "f"),
    "key": ("clé", "f"),
    "letter": ("lettre", "f"),
}
ANIMATE = ("dog", "cat", "boy", "horse", "girl", "woman", "cow", "mouse")  # the only subjects
ADJECTIVES = {  # English: (French masculine, French feminine)
    "red": ("rouge", "rouge"),
    "blue": ("bleu", "bleue"),
    "green": ("vert", "verte"),
    "black": ("noir", "noire"),
    "white": ("blanc", "blanche"),
    "heavy": ("lourd", "lourde"),
    "tired": ("fatigué", "fatiguée"),
    "round": ("rond", "ronde"),
    "fast": ("rapide", "rapide"),
    "hot": ("chaud", "chaude"),
}
TRANSITIVE_VERBS = {  # English third person: (English base form, French third person)
    "sees": ("see", "voit"),
    "follows": ("follow", "suit"),
    "finds": ("find", "trouve"),
    "watches": ("watch", "regarde"),
    "pushes": ("push", "pousse"),
    "carries": ("carry", "porte"),
    "takes": ("take", "prend"),
    "draws": ("draw", "dessine"),
}
INTRANSITIVE_VERBS = {
    "sleeps": ("sleep", "dort"),
    "runs": ("run", "court"),
    "sings": ("sing", "chante"),
    "falls": ("fall", "tombe"),
    "plays": ("play", "joue"),
    "swims": ("swim", "nage"),
}
ADVERBS = {"often": "souvent", "always": "toujours", "rarely": "rarement"}
PREPOSITIONS = {  # English: French words (all aligned to the English preposition)
    "on": ("sur",),
    "under": ("sous",),
    "in": ("dans",),
    "with": ("avec",),
    "behind": ("derrière",),
    "near": ("près", "de"),
}
ARTICLES = {"the": {"m": "le", "f": "la"}, "a": {"m": "un", "f": "une"}}
SUBJECT_PRONOUNS = {"he": "il", "she": "elle"}
OBJECT_PRONOUNS = {"him": "le", "her": "la", "them": "les"}
CONJUNCTIONS = {"and": "et", "but": "mais"}
# Function words with fixed rules: "that" -> qui (subject) / que (object); "does" -> nothing;
# "not" -> ne ... pas.


def _lexicon() -> dict[str, tuple[str, ...]]:
    """Every source word -> the target words it can become (empty for "does")."""
    lex: dict[str, tuple[str, ...]] = {}
    lex.update({en: (fr,) for en, (fr, _) in NOUNS.items()})
    lex.update({en: tuple(dict.fromkeys(forms)) for en, forms in ADJECTIVES.items()})
    for verbs in (TRANSITIVE_VERBS, INTRANSITIVE_VERBS):
        lex.update({en: (fr,) for en, (_, fr) in verbs.items()})
        lex.update({base: (fr,) for base, fr in verbs.values()})
    lex.update({en: (fr,) for en, fr in ADVERBS.items()})
    lex.update(PREPOSITIONS)
    lex.update({en: (forms["m"], forms["f"]) for en, forms in ARTICLES.items()})
    for table in (SUBJECT_PRONOUNS, OBJECT_PRONOUNS, CONJUNCTIONS):
        lex.update({en: (fr,) for en, fr in table.items()})
    lex.update({"that": ("qui", "que"), "does": (), "not": ("ne", "pas")})
    return lex


LEXICON: dict[str, tuple[str, ...]] = _lexicon()
SOURCE_WORDS: tuple[str, ...] = tuple(sorted(LEXICON))
TARGET_WORDS: tuple[str, ...] = tuple(sorted({fr for frs in LEXICON.values() for fr in frs}))


# --- sentence trees: built by the generator, rendered into a Pair ------------------------------


@dataclass
class _NP:  # [article] [adjectives] noun [pp] [relative clause]
    article: str
    noun: str
    adjectives: list[str] = field(default_factory=list)
    pp: _PP | None = None
    rel: _Clause | None = None
    depth: int = 0


@dataclass
class _PP:
    prep: str
    np: _NP


@dataclass
class _Clause:  # subject [adverb | does not] verb [object] [pp]
    subject: _NP | str | None  # a pronoun, or None: the gap of a subject relative clause
    verb: str  # third-person English form
    obj: _NP | str | None = None  # a pronoun; None for an intransitive verb or an object gap
    transitive: bool = False
    negated: bool = False
    adverb: str | None = None
    pp: _PP | None = None
    depth: int = 0


class _Sentence:
    """Renders a tree. Each method appends its source words in English order (``add`` returns a
    word's index) and returns its target words, in French order, each with its source index."""

    def __init__(self):
        self.src: list[str] = []

    def add(self, word: str) -> int:
        self.src.append(word)
        return len(self.src) - 1

    def np(self, np: _NP) -> list[tuple[str, int]]:
        fr_noun, gender = NOUNS[np.noun]
        i_art = self.add(np.article)
        i_adjs = [self.add(a) for a in np.adjectives]
        i_noun = self.add(np.noun)
        out = [(ARTICLES[np.article][gender], i_art), (fr_noun, i_noun)]
        g = 0 if gender == "m" else 1
        # rule 2
        out += [(ADJECTIVES[a][g], i) for a, i in reversed(list(zip(np.adjectives, i_adjs)))]
        out += self.pp(np.pp) if np.pp else []
        out += self.clause(np.rel, relative=True) if np.rel else []
        return out

    def pp(self, pp: _PP) -> list[tuple[str, int]]:
        i = self.add(pp.prep)
        return [(fr, i) for fr in PREPOSITIONS[pp.prep]] + self.np(pp.np)

    def clause(self, c: _Clause, relative: bool = False) -> list[tuple[str, int]]:
        out: list[tuple[str, int]] = []
        if relative:  # rule 6
            out.append(("qui" if c.subject is None else "que", self.add("that")))
        if isinstance(c.subject, _NP):
            out += self.np(c.subject)
        elif c.subject is not None:
            out.append((SUBJECT_PRONOUNS[c.subject], self.add(c.subject)))
        i_adv = self.add(c.adverb) if c.adverb else None
        if c.negated:
            self.add("does")
            i_not = self.add("not")
        verbs = TRANSITIVE_VERBS if c.transitive else INTRANSITIVE_VERBS
        base, fr_verb = verbs[c.verb]
        i_verb = self.add(base if c.negated else c.verb)
        clitic, obj = [], []
        if isinstance(c.obj, _NP):
            obj = self.np(c.obj)
        elif c.obj is not None:  # rule 3
            clitic = [(OBJECT_PRONOUNS[c.obj], self.add(c.obj))]
        if c.negated:  # rule 4
            out += [("ne", i_not)] + clitic + [(fr_verb, i_verb), ("pas", i_not)]
        else:
            out += clitic + [(fr_verb, i_verb)]
        if i_adv is not None:  # rule 5
            out.append((ADVERBS[c.adverb], i_adv))
        out += obj
        out += self.pp(c.pp) if c.pp else []
        return out


def _render(clauses: list[_Clause], conjunctions: list[str]) -> Pair:
    s = _Sentence()
    out = s.clause(clauses[0])
    for conj, c in zip(conjunctions, clauses[1:]):
        out.append((CONJUNCTIONS[conj], s.add(conj)))
        out += s.clause(c)
    return Pair(tuple(s.src), tuple(w for w, _ in out), tuple(i for _, i in out))


# --- the generator ----------------------------------------------------------------------------

# noun phrases nest at most this deep (inside prepositional phrases / relative clauses)
_MAX_DEPTH = 2


class _Generator:
    """Grows one sentence tree at a time to a requested number of source words."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.nouns, self.animate, self.adjectives = (
            sorted(NOUNS),
            sorted(ANIMATE),
            sorted(ADJECTIVES),
        )
        self.trans, self.intrans = sorted(TRANSITIVE_VERBS), sorted(INTRANSITIVE_VERBS)
        self.nodes: list = []  # every clause and noun phrase of the sentence, in creation order
        self.words = 0  # source words so far

    def np(self, depth: int, animate: bool = False) -> _NP:
        nouns = self.animate if animate else self.nouns
        np = _NP(self.rng.choice(("the", "the", "a")), self.rng.choice(nouns), depth=depth)
        self.nodes.append(np)
        self.words += 2
        return np

    def clause(self, budget: int, depth: int = 0, gap: str | None = None) -> _Clause | None:
        """A bare clause of at most `budget` words (None if none fits). gap="subject" or "object"
        makes a relative clause (its "that" counts in the budget) whose subject / object is "that"."""
        words = {"gap": 0, "pronoun": 1, "np": 2, None: 0}
        forms = []  # (subject, transitive, object) kinds that fit in the budget
        for subj in ("gap",) if gap == "subject" else ("pronoun", "np"):
            for trans in (True,) if gap == "object" else (False, True):
                for obj in ("gap",) if gap == "object" else ("pronoun", "np") if trans else (None,):
                    if (gap is not None) + words[subj] + 1 + words[obj] <= budget:
                        forms.append((subj, trans, obj))
        if not forms:
            return None
        subj, trans, obj = self.rng.choice(forms)
        subject = self.filler(subj, SUBJECT_PRONOUNS, depth, animate=True)
        verb = self.rng.choice(self.trans if trans else self.intrans)
        c = _Clause(subject, verb, self.filler(obj, OBJECT_PRONOUNS, depth), trans, depth=depth)
        self.nodes.append(c)
        self.words += (gap is not None) + 1  # "that" and the verb (noun phrases count themselves)
        return c

    def filler(
        self, kind: str | None, pronouns: dict, depth: int, animate: bool = False
    ) -> _NP | str | None:
        """A subject or object of the given kind: a noun phrase, a pronoun, or None (gap / none)."""
        if kind == "np":
            return self.np(depth, animate)
        if kind == "pronoun":
            self.words += 1
            return self.rng.choice(sorted(pronouns))
        return None

    def expansions(self, left: int) -> list[tuple[float, str, object]]:
        """Every way to grow the sentence by at most `left` words: (weight, kind, node)."""
        out = [(1.0, "and", None)] if left >= 3 else []
        for x in self.nodes:
            if isinstance(x, _Clause):
                if x.adverb is None and not x.negated:
                    out.append((1.0, "adverb", x))  # 1 word
                    if left >= 2:
                        out.append((1.0, "negate", x))  # 2 words: does not
            elif len(x.adjectives) < 2:
                out.append((3.0, "adjective", x))  # 1 word
            if x.depth < _MAX_DEPTH:
                if x.pp is None and left >= 3:
                    out.append((1.5, "pp", x))  # 3 words at least
                if isinstance(x, _NP) and x.rel is None and left >= (2 if x.noun in ANIMATE else 3):
                    out.append((1.5, "rel", x))  # "that sleeps", "that she sees": 2 or 3 words
        return out

    def apply(self, kind: str, x, left: int) -> None:
        """Grow the sentence at node x, using at most `left` more words."""
        r = self.rng
        if kind == "adverb":
            x.adverb = r.choice(sorted(ADVERBS))
            self.words += 1
        elif kind == "negate":
            x.negated = True
            self.words += 2
        elif kind == "adjective":
            x.adjectives.insert(0, r.choice([a for a in self.adjectives if a not in x.adjectives]))
            self.words += 1
        elif kind == "pp":
            x.pp = _PP(r.choice(sorted(PREPOSITIONS)), self.np(x.depth + 1))
            self.words += 1
        elif kind == "rel":
            gap = r.choice(("subject", "object")) if x.noun in ANIMATE else "object"
            x.rel = self.clause(left, x.depth + 1, gap)
        elif kind == "and":
            self.conjunctions.append(r.choice(("and", "and", "but")))
            self.words += 1
            self.clauses.append(self.clause(left - 1))

    def sentence(self, length: int) -> Pair:
        """A sentence of `length` source words, or a little shorter when no rule fits exactly."""
        self.words = 0
        while self.words < 3:  # start with a clause of 3 words or more
            self.nodes, self.words, self.conjunctions = [], 0, []
            self.clauses = [self.clause(max(length, 3))]
        while True:
            left = length - self.words
            options = self.expansions(left) if left > 0 else []
            if not options:
                return _render(self.clauses, self.conjunctions)
            _, kind, x = self.rng.choices(options, weights=[o[0] for o in options])[0]
            self.apply(kind, x, left)


@dataclass(frozen=True)
class Pair:
    """One sentence pair. src, tgt: words; alignment[j] = index in src of the word tgt[j] translates."""

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    alignment: tuple[int, ...]

    def __post_init__(self):
        if not hasattr(self.alignment, "__len__") or isinstance(self.alignment, str):
            raise TypeError(
                f"alignment: expected a sequence of ints, one source index per target word (an output with no gold alignment can use all 0), got {type(self.alignment).__name__}"
            )
        if len(self.alignment) != len(self.tgt):
            raise ValueError(
                f"alignment: expected one source index per target word ({len(self.tgt)}), got {len(self.alignment)}"
            )
        bad = [i for i in self.alignment if not 0 <= i < len(self.src)]
        if bad:
            raise ValueError(f"alignment: expected indices in [0, {len(self.src)}), got {bad[0]}")


def generate_pairs(n: int, seed: int = 0, min_words: int = 3, max_words: int = 40) -> list[Pair]:
    """n distinct sentence pairs whose source lengths are spread evenly over [min_words, max_words].

    Deterministic: the same arguments give the same list on every machine (one
    ``random.Random(seed)``, no global random state). Each pair draws a length uniformly, then
    grows a sentence to that length (see the module docstring for the grammar). Pairs are
    distinct, so that ``split_pairs`` cannot put one sentence in both the training and the test
    set; short lengths have few distinct sentences, so for very large n the shortest lengths
    become a little rarer than the others.
    """
    check_int(n, "n", 0)
    check_int(min_words, "min_words", 3)
    check_int(max_words, "max_words", min_words)
    rng = random.Random(seed)
    gen = _Generator(rng)
    pairs: list[Pair] = []
    seen: set[tuple[str, ...]] = set()
    misses = 0  # duplicates in a row
    while len(pairs) < n:
        pair = gen.sentence(rng.randint(min_words, max_words))
        if len(pair.src) >= min_words and pair.src not in seen:
            seen.add(pair.src)
            pairs.append(pair)
            misses = 0
        else:
            misses += 1
            if misses > 2000:
                raise ValueError(
                    f"n: the grammar has fewer than n={n} distinct sentences of {min_words}..{max_words} words (found {len(pairs)})"
                )
    return pairs


def split_pairs(
    pairs: Sequence[Pair], fractions: Sequence[float] = (0.8, 0.1, 0.1), seed: int = 0
) -> tuple[list[Pair], ...]:
    """Shuffle (with ``random.Random(seed)``) and cut into len(fractions) parts of those sizes.

    fractions: positive numbers summing to 1. Returns a tuple of lists (train, validation, test
    with the default); together they hold every pair exactly once.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs: expected at least one pair, got an empty sequence")
    fractions = tuple(fractions)
    if not fractions or any(f <= 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ValueError(f"fractions: expected positive numbers summing to 1, got {fractions}")
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    cuts, acc = [0], 0.0
    for f in fractions:
        acc += f
        cuts.append(round(acc * len(pairs)))
    cuts[-1] = len(pairs)
    return tuple([pairs[i] for i in order[a:b]] for a, b in zip(cuts, cuts[1:]))


def corpus_fingerprint(pairs: Sequence[Pair]) -> str:
    """SHA-256 of every pair (source, target and alignment), in order: a saved model records the
    fingerprint of the corpus it was trained on, and a changed generator is caught when it is loaded."""
    pairs = _check_pairs(pairs)
    text = "\n".join(f"{' '.join(p.src)}\t{' '.join(p.tgt)}\t{p.alignment}" for p in pairs)
    return hashlib.sha256(text.encode()).hexdigest()


def alignment_matrix(pair: Pair) -> Tensor:
    """The gold alignment as a 0/1 matrix [len(tgt), len(src)]: row j has a 1 at alignment[j].
    Same layout as the attention weights [T, S] a decoder returns, so the two can be drawn side by side."""
    a = torch.zeros(len(pair.tgt), len(pair.src))
    a[torch.arange(len(pair.tgt)), torch.tensor(pair.alignment, dtype=torch.long)] = 1.0
    return a  # [T, S]


# --- vocabularies -----------------------------------------------------------------------------


class Vocab:
    """Token <-> id. The specials come first: with the defaults pad_id=0, bos_id=1, eos_id=2, unk_id=3.

    specials: the first four are padding, begin-of-sequence, end-of-sequence and unknown, in that
    order (more may follow); then come the tokens, in the given order, without duplicates.
    Unknown tokens encode to ``unk_id``.
    """

    def __init__(
        self, tokens: Iterable[str], specials: Sequence[str] = ("<pad>", "<bos>", "<eos>", "<unk>")
    ):
        if isinstance(tokens, str):
            raise TypeError(f"tokens: expected an iterable of str tokens, got the str {tokens!r}")
        specials = tuple(specials)
        if len(specials) < 4 or len(set(specials)) != len(specials):
            raise ValueError(
                f"specials: expected at least 4 distinct tokens (pad, bos, eos, unk), got {specials}"
            )
        self.itos: list[str] = list(specials)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(specials)}
        for t in tokens:
            if not isinstance(t, str):
                raise TypeError(f"tokens: expected str tokens, got {type(t).__name__} {t!r}")
            if t not in self.stoi:
                self.stoi[t] = len(self.itos)
                self.itos.append(t)
        self.specials = specials
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = 0, 1, 2, 3

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], min_count: int = 1, **kwargs) -> "Vocab":
        """The vocabulary of the tokens occurring at least min_count times, most frequent first
        (ties in alphabetical order, so the ids do not depend on the order of the sentences)."""
        check_int(min_count, "min_count", 1)
        counts = Counter()
        for s in sentences:
            if isinstance(s, str):
                raise TypeError(f"sentences: expected lists of str tokens, got the str {s!r}")
            counts.update(s)
        tokens = sorted(
            (t for t, c in counts.items() if c >= min_count), key=lambda t: (-counts[t], t)
        )
        return cls(tokens, **kwargs)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {self.itos[:8]}{' ...' if len(self) > 8 else ''})"

    def encode(
        self, tokens: Sequence[str], add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        """Token ids of `tokens` (a list of str, not a str: split it first)."""
        if isinstance(tokens, str):
            raise TypeError(
                f"tokens: expected a list of str tokens, got the str {tokens!r} (split it first)"
            )
        get, unk = self.stoi.get, self.unk_id
        ids = [get(t, unk) for t in tokens]
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Iterable[int] | Tensor, strip_specials: bool = True) -> list[str]:
        """Tokens of `ids` (a list or a 1-D tensor). With strip_specials, stop at the first <eos>
        and drop <pad> and <bos> (and any other special but <unk>), as needed for decoder outputs."""
        if isinstance(ids, Tensor):
            if ids.dim() != 1:
                raise ValueError(f"ids: expected a 1-D tensor [T], got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        out = []
        for i in ids:
            if not is_int(i) or not 0 <= i < len(self):
                raise ValueError(f"ids: expected token ids in [0, {len(self)}), got {i!r}")
            if strip_specials:
                if i == self.eos_id:
                    break
                if i < len(self.specials) and i != self.unk_id:
                    continue
            out.append(self.itos[i])
        return out


def build_vocabs(pairs: Sequence[Pair], min_count: int = 1) -> tuple[Vocab, Vocab]:
    """(source vocabulary, target vocabulary) of the pairs' words."""
    if not pairs:
        raise ValueError("pairs: expected at least one pair, got an empty sequence")
    return Vocab.build((p.src for p in pairs), min_count), Vocab.build(
        (p.tgt for p in pairs), min_count
    )


# --- batches ----------------------------------------------------------------------------------


@dataclass
class Batch:
    """Padded tensors for a batch of pairs (all long but the masks).

    src [B, S] source ids padded with pad_id (no <bos>/<eos>: position i is source word i),
    src_lengths [B], src_mask bool [B, S] (True at real tokens),
    tgt_in [B, T] = <bos> + target (the decoder's input under teacher forcing),
    tgt_out [B, T] = target + <eos> (what it must predict), both padded with pad_id,
    tgt_mask bool [B, T] (True where tgt_out is a real token or <eos>).
    """

    src: Tensor
    src_lengths: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    src_mask: Tensor
    tgt_mask: Tensor

    def __len__(self) -> int:
        return self.src.shape[0]

    def to(self, device) -> "Batch":
        return Batch(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))


def _check_pairs(pairs, name: str = "pairs") -> list[Pair]:
    pairs = list(pairs)
    if not pairs:
        raise ValueError(f"{name}: expected at least one pair, got an empty sequence")
    for i, p in enumerate(pairs):
        if not (hasattr(p, "src") and hasattr(p, "tgt")):
            raise TypeError(
                f"{name}[{i}]: expected a Pair (with .src and .tgt), got {type(p).__name__}"
            )
        if len(p.src) == 0 or len(p.tgt) == 0:
            raise ValueError(
                f"{name}[{i}]: expected non-empty src and tgt, got {len(p.src)} and {len(p.tgt)} words"
            )
    return pairs


def make_batch(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """Encode and pad the pairs into one Batch (see its docstring for the tensors)."""
    pairs = _check_pairs(pairs)
    S = max(len(p.src) for p in pairs)
    T = max(len(p.tgt) for p in pairs) + 1
    src, tgt_in, tgt_out = [], [], []
    for p in pairs:  # flat Python lists, one tensor each at the end (much faster than per row)
        src += src_vocab.encode(p.src) + [src_vocab.pad_id] * (S - len(p.src))
        ids, pad = tgt_vocab.encode(p.tgt), [tgt_vocab.pad_id] * (T - 1 - len(p.tgt))
        tgt_in += [tgt_vocab.bos_id] + ids + pad
        tgt_out += ids + [tgt_vocab.eos_id] + pad
    B = len(pairs)
    src_lengths = torch.tensor([len(p.src) for p in pairs])  # [B]
    tgt_lengths = torch.tensor([len(p.tgt) + 1 for p in pairs])  # [B] (with <eos>)
    return Batch(
        src=torch.tensor(src).view(B, S),  # [B, S]
        src_lengths=src_lengths,
        tgt_in=torch.tensor(tgt_in).view(B, T),  # [B, T]
        tgt_out=torch.tensor(tgt_out).view(B, T),  # [B, T]
        src_mask=torch.arange(S) < src_lengths[:, None],  # [B, S]
        tgt_mask=torch.arange(T) < tgt_lengths[:, None],
    )  # [B, T]


def _epoch(
    pairs, src_vocab, tgt_vocab, batch_size, shuffle, rng, sort_by_length
) -> Iterator[Batch]:
    # sort_by_length: batches of similar lengths (less padding); the batch order is shuffled
    sort_key = (lambda i: len(pairs[i].src)) if sort_by_length else None
    for chunk in index_batches(len(pairs), batch_size, shuffle, rng, sort_key):
        yield make_batch([pairs[i] for i in chunk], src_vocab, tgt_vocab)


def _check_loader_args(pairs, batch_size):
    check_int(batch_size, "batch_size", 1)
    return _check_pairs(pairs)


def batches(
    pairs: Sequence[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
    sort_by_length: bool = False,
) -> Iterator[Batch]:
    """One epoch: every pair exactly once, in batches of batch_size (the last one may be smaller).

    shuffle: random order from ``random.Random(seed)``; sort_by_length: batch pairs of similar
    source length together (less padding), then shuffle the order of the batches if shuffle.
    For several epochs with a new order each, use ``epochs`` (its first epoch is this one).
    """
    pairs = _check_loader_args(pairs, batch_size)
    return _epoch(
        pairs, src_vocab, tgt_vocab, batch_size, shuffle, random.Random(seed), sort_by_length
    )


def epochs(
    pairs: Sequence[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    shuffle: bool = True,
    seed: int = 0,
    sort_by_length: bool = False,
) -> Iterator[Batch]:
    """Endless batches: epoch after epoch, each one as ``batches`` makes it, reshuffled every time
    by the same ``random.Random(seed)``. For ``lib.train.fit``, which stops after `steps` batches."""
    pairs = _check_loader_args(pairs, batch_size)
    rng = random.Random(seed)
    return endless(
        lambda: _epoch(pairs, src_vocab, tgt_vocab, batch_size, shuffle, rng, sort_by_length)
    )
