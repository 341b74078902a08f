"""The rules tools/make_slides.py decks follow (issue 36, item 9), on small notebooks made here; the
decks of the built site are checked in tests/site/test_slides.py."""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import make_slides  # noqa: E402

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nnot really a picture").decode()


def _chapter(*cells):
    nb = nbformat.v4.new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    return nb


def _figure_cell():
    out = nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})
    return nbformat.v4.new_code_cell("plot()", outputs=[out])


def _slides(deck):
    """[(slide_type, source)] of the deck's cells, speaker notes left out."""
    return [
        (c.metadata["slideshow"]["slide_type"], c.source)
        for c in deck.cells
        if c.metadata["slideshow"]["slide_type"] != "notes"
    ]


def test_an_equation_is_a_block_of_its_own_even_without_blank_lines_around_it():
    text = "before:\n$$x\n= y$$\nafter, on the next line.\n\n- a\n  b\n\n  more of a"
    assert make_slides.blocks(text) == [
        "before:",
        "$$x\n= y$$",
        "after, on the next line.",
        "- a\n  b\n\n  more of a",
    ]


def test_an_equation_shown_after_prose_in_the_notes_keeps_the_sentence_before_it():
    """Course review s40, m6: chapter 10's "(9 log 9 - 70 log 70) - ... = 28.02 nats" and chapter
    5's output equation were slides of a bare equation; what each is was only in the speaker notes.
    The sentence before the equation (with the one before it, where it is as short as "The gain
    is") comes with it; the paragraph stays whole in the notes."""
    before = (
        "A long paragraph for the speaker, about the toy and its counts. " * 4
        + "Before it, the toy has $N = 79$ pieces; after it, $N = 70$. The gain is"
    )
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening."),
        nbformat.v4.new_markdown_cell(
            f"## Compared\n\nThe first paragraph.\n\n{before}\n\n$$g = 28$$"
        ),
    )
    deck = make_slides.deck(nb, {}, "x.html")
    (shown,) = [src for _, src in _slides(deck) if "$$g = 28$$" in src]
    assert (
        shown
        == "Before it, the toy has $N = 79$ pieces; after it, $N = 70$. The gain is\n\n$$g = 28$$"
    )
    notes = [c.source for c in deck.cells if c.metadata["slideshow"]["slide_type"] == "notes"]
    assert before in notes
    assert (
        make_slides.lead_in("- a list item") == "" and make_slides.lead_in("x. " + "y" * 300) == ""
    )


def test_a_figure_that_starts_a_page_gets_its_sections_title():
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# Chapter\n\nAn opening paragraph."),
        nbformat.v4.new_markdown_cell("## Soft lookup\n\nThe weights sum to one."),
        _figure_cell(),
    )
    slides = _slides(make_slides.deck(nb, {}, "../notebooks/x.html"))
    i = next(k for k, (_, src) in enumerate(slides) if src == "")  # the figure's cell
    assert slides[i - 1] == ("subslide", "### Soft lookup") and slides[i][0] == "-"


def test_a_first_paragraph_never_ends_on_what_the_slide_does_not_show():
    announcing = "A query meets six keys. The weights are:"
    # what it announces follows on the slide: an equation, or a list
    assert make_slides.without_loose_end(announcing, "$$a = b$$") == announcing
    assert make_slides.without_loose_end(announcing, "- one\n- two") == announcing
    # what it announces is code or a table further down: the sentence goes to the notes
    assert make_slides.without_loose_end(announcing, "") == "A query meets six keys."
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening."),
        nbformat.v4.new_markdown_cell(f"## Weights\n\n{announcing}\n$$w = (0.2, 0.8)$$"),
    )
    slides = _slides(make_slides.deck(nb, {}, "x.html"))
    assert ("slide", f"## Weights\n\n{announcing}\n\n$$w = (0.2, 0.8)$$") in slides


def test_a_table_and_a_short_list_of_the_prose_are_shown_and_long_prose_stays_in_the_notes():
    """Reader s36, T1: chapter 10's slide "BPE and WordPiece compared" showed its title alone (the
    Markdown table was in the speaker notes only), and its "Summary" slide only the sentence after
    the bullets."""
    table = "| | BPE | WordPiece |\n|---|---|---|\n| marks | `</w>` | `##` |"
    long_prose = "A long aside for the speaker. " * 20
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening."),
        nbformat.v4.new_markdown_cell(
            f"## Compared\n\nThe table sets BPE against WordPiece:\n\n{table}\n\n{long_prose}"
            "\n\nTwo terms:\n\n- a **unit**: a word;\n- a **token**: what the model reads."
        ),
        nbformat.v4.new_markdown_cell(
            "## Summary\n\n- Words leave unknown tokens.\n- BPE merges frequent pairs.\n\n"
            "The next chapter turns these tokens into predictions."
        ),
    )
    deck = make_slides.deck(nb, {}, "x.html")
    shown = "\n".join(src for _, src in _slides(deck))
    notes = "\n".join(
        c.source for c in deck.cells if c.metadata["slideshow"]["slide_type"] == "notes"
    )
    assert f"## Compared\n\nThe table sets BPE against WordPiece:\n\n{table}" in shown
    assert "- a **unit**: a word;\n- a **token**: what the model reads." in shown
    assert "A long aside" not in shown and long_prose.strip() in notes
    summary = next(src for _, src in _slides(deck) if src.startswith("## Summary"))
    assert summary == "## Summary\n\n- Words leave unknown tokens.\n- BPE merges frequent pairs."
    assert "The next chapter" in notes and "- Words leave unknown tokens." in notes
    # an item cut short never ends on a colon that announces what was cut
    item = "- New words are split by the merges: " + "*lowest* = *low* + `est</w>`, " * 6 + "so on."
    assert make_slides.first_items(item + " More.") == item
    # a long list (a walk through code, line by line) stays in the notes
    walk = "\n".join(f"- `line_{i}()`: " + "what it does, at length. " * 6 for i in range(3))
    assert not make_slides.is_short_list(walk) and make_slides.is_short_list("- a\n- b")


def test_the_exercises_become_questions_and_a_lecturers_own_slides_are_kept(tmp_path):
    own = tmp_path / "slides"
    own.mkdir()
    (own / "02_x.md").write_text(
        "## A poll\n\nWho has used a database?\nNote: count hands.\n---\n## Break\n"
    )
    slides_of = make_slides.own_slides_of("02_x", own)
    assert slides_of == ["## A poll\n\nWho has used a database?\nNote: count hands.", "## Break"]
    assert make_slides.own_slides_of("03_y", own) == []
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening."),
        nbformat.v4.new_markdown_cell("## Exercises"),
        nbformat.v4.new_markdown_cell(
            "**Exercise 1 (predict, then check): a duplicated key.** Add a key. Which weight"
            " halves?"
        ),
    )
    deck = make_slides.deck(nb, {}, "../notebooks/02_x.html", slides_of)
    slides = _slides(deck)
    titles = [src.splitlines()[0] for kind, src in slides if kind == "slide"]
    assert titles[-4:] == ["## A poll", "## Break", "## Questions for the class", "## Licence"]
    questions = next(src for _, src in slides if src.startswith("## Questions"))
    assert "1. **Exercise 1 (predict, then check): a duplicated key.** Which weight halves?" in (
        questions
    )
    notes = [c.source for c in deck.cells if c.metadata["slideshow"]["slide_type"] == "notes"]
    assert "count hands." in notes


def markdown_lines(chapter: dict, prefix: str) -> set[str]:
    """The lines of the chapter's markdown cells that start with ``prefix``."""
    return {
        line
        for c in chapter["cells"]
        if c["cell_type"] == "markdown"
        for line in "".join(c["source"]).splitlines()
        if line.startswith(prefix)
    }


def test_the_answers_to_graded_exercises_can_be_left_out(tmp_path):
    """Lecturer review s21, M9: chapter 17's deck shows exercise 2's answer (the key/value heads) and
    exercise 4's (the KiB table, the sliding window), which the teachers' page says to skip by hand
    each term: ``--exclude-answers`` (``make slides EXCLUDE_ANSWERS=1``) leaves them out."""
    import json
    import subprocess

    secret = _figure_cell()
    secret.id = "ch99-answer"
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening."),
        nbformat.v4.new_markdown_cell("## Heads\n\nWhich head reads which."),
        secret,
        nbformat.v4.new_markdown_cell("## A window\n\nThe cache keeps the last W - 1 positions."),
        _figure_cell(),
        nbformat.v4.new_markdown_cell("## After\n\nWhat comes next."),
        _figure_cell(),
        nbformat.v4.new_markdown_cell(
            "## Summary\n\n- Heads share keys.\n- A **window** keeps W - 1 keys.\n- Done."
        ),
    )
    answers = {"ch99-answer": "exercise 2", "## A window": "exercise 4", "- A **window**": "ex 4"}
    whole = make_slides.deck(nb, {}, "x.html")
    shown = make_slides.deck(nb, {}, "x.html", answers=answers)
    pictures = [c for c in shown.cells if c.get("outputs")]
    assert len([c for c in whole.cells if c.get("outputs")]) == 3 and len(pictures) == 1
    text = "\n".join(c.source for c in shown.cells)
    assert "W - 1 positions" not in text and "What comes next." in text
    assert "W - 1 keys" not in text and "- Heads share keys.\n- Done." in text
    left = next(c.source for c in shown.cells if c.source.startswith("## A window"))
    assert make_slides.LEFT_OUT.format(exercise="exercise 4") in left
    assert shown.metadata["left_out"] == [
        "ch99-answer (exercise 2)",
        "A window (exercise 4)",
        "A **window** (ex 4)",
    ]
    assert "left_out" not in whole.metadata
    # a slide after the title says what was left out and why (lecturer review s32, m10)
    said = [c.source for c in shown.cells if c.source.startswith("## Left out of these slides")]
    assert len(said) == 1 and shown.cells[1].source == said[0]
    assert said[0].endswith(
        "leaves out:\n\n- a figure or table, which answers exercise 2\n- the section *A window*,"
        " which answers exercise 4\n- a point of a list, which answers ex 4\n\nThe chapter has them"
        " all."
    )
    assert not [c for c in whole.cells if c.source.startswith("## Left out of these slides")]
    # what the page lists for chapter 17 is in the table, and names the chapter's cells and sections
    root = Path(__file__).resolve().parents[1]
    chapter = json.loads((root / "notebooks" / "17_modern_decoder.ipynb").read_text())
    ids = {c.get("id") for c in chapter["cells"]}
    headings = markdown_lines(chapter, "## ")
    table = make_slides.ANSWERS["17_modern_decoder"]
    assert {"ch17-gqa-figure", "ch17-kv-table", "## Sliding-window attention"} <= set(table)
    bullets = markdown_lines(chapter, "- ")
    assert all(k in ids or k in headings or any(b.startswith(k) for b in bullets) for k in table)
    deck = make_slides.deck(nbformat.reads(json.dumps(chapter), 4), {}, "x.html", answers=table)
    slides = "\n".join(
        c.source for c in deck.cells if c.metadata["slideshow"]["slide_type"] != "notes"
    )
    assert "L(W - 1)" not in slides and "consecutive query heads" not in slides
    assert "L(W - 1)" in "\n".join(c.source for c in whole_17(chapter).cells)
    page = " ".join((root / "book" / "teachers.md").read_text().split())
    assert "make slides EXCLUDE_ANSWERS=1" in page
    made = subprocess.run(
        ["make", "-n", "slides", "EXCLUDE_ANSWERS=1", "PY=python"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout
    assert "python tools/make_slides.py --exclude-answers" in made
    made = subprocess.run(
        ["make", "-n", "slides", "PY=python"], cwd=root, capture_output=True, text=True
    ).stdout
    assert "--exclude-answers" not in made


def whole_17(chapter: dict):
    import json

    return make_slides.deck(nbformat.reads(json.dumps(chapter), 4), {}, "x.html")


def test_chapters_13_and_18_leave_out_the_passages_that_answer_a_written_question():
    """Lecturer review s22, S5: chapter 13's deck said "Top-p keeps a set whose size follows the
    model's confidence" (exercise 1's written answer), chapter 18's printed the slopes of 6 and 12
    heads and said how they interleave (exercise 2's rule); ``--exclude-answers`` leaves them out,
    and the deck without the flag keeps them."""
    import json

    root = Path(__file__).resolve().parents[1]
    for chapter, gone in [
        ("13_gpt", ["a set whose size follows the model's confidence"]),
        ("18_attention_at_scale", ["Six heads get the four slopes", "from sixteen: the first"]),
    ]:
        nb = nbformat.reads((root / "notebooks" / f"{chapter}.ipynb").read_text(), 4)
        table = make_slides.ANSWERS[chapter]
        whole = "\n".join(c.source for c in make_slides.deck(nb, {}, "x.html").cells)
        shown = make_slides.deck(nb, {}, "x.html", answers=table)
        text = "\n".join(c.source for c in shown.cells)
        for passage in gone:
            assert passage in " ".join(whole.split()) and passage not in " ".join(text.split())
        assert len(shown.metadata["left_out"]) == len(table)
        # every chapter's deck says what it left out, not only chapter 17's (s32, m10)
        assert "## Left out of these slides" in text and "which answers exercise" in text
        ids = {
            c.get("id")
            for c in json.loads((root / "notebooks" / f"{chapter}.ipynb").read_text())["cells"]
        }
        # a passage, a list item (a summary's bullet) or a code cell's id
        assert all(make_slides.PASSAGE in k or k.startswith("- ") or k in ids for k in table)
    assert "In a tile, the bias is computed" in " ".join(text.split())
    # the page lists them, and the cheap path without a whole make book (lecturer review s22, M10)
    page = " ".join((root / "book" / "teachers.md").read_text().split())
    assert "top-p keeps a set whose size follows the model's confidence" in page
    assert "table of the slopes of 6 and 12 heads" in page
    assert (
        "python tools/make_slides.py --exclude-answers 13 18 --cache _build/.jupyter_cache" in page
    )


def test_chapter_13s_answer_free_deck_states_no_part_of_exercise_1s_argument():
    """Lecturer review s38, M1: chapter 13's answer-free deck still said "top-p cuts the tail
    according to the model's confidence" (the decoding section's opening) and "top-k keeps a fixed
    number of tokens, top-p a number that follows the model's confidence" (the summary): exercise
    1's written argument, on two shown slides. Neither is left, in the slides or the notes."""
    root = Path(__file__).resolve().parents[1]
    nb = nbformat.reads((root / "notebooks" / "13_gpt.ipynb").read_text(), 4)
    whole = " ".join("\n".join(c.source for c in make_slides.deck(nb, {}, "x.html").cells).split())
    shown = make_slides.deck(nb, {}, "x.html", answers=make_slides.ANSWERS["13_gpt"])
    text = " ".join("\n".join(c.source for c in shown.cells).split())
    for passage in [
        "top-p cuts the tail according to the model's confidence",
        "**top-k** keeps a fixed number of tokens, **top-p** a number that follows the model's",
    ]:
        assert passage in whole and passage not in text, passage
    assert "confidence" not in text
    assert "## Decoding: greedy, temperature, top-k, top-p and beam search" in text
    assert "## Summary" in text and "**key/value cache**" in text


def _class_questions(chapter: str) -> dict[int, str]:
    """{exercise: its line on the "Questions for the class" slide}, from the chapter's statements."""
    path = next((make_slides.ROOT / "notebooks").glob(f"{chapter}_*.ipynb"))
    measured = make_slides.measured(path.stem)
    out = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("**Exercise"):
            for part in make_slides.sections(
                make_slides.blocks(make_slides.plain_markdown(cell.source, {}))
            ):
                if q := make_slides.class_question(part, measured, path.stem):
                    out[int(re.match(r"\*\*Exercise (\d+)", q).group(1))] = q
    return out


def test_an_italic_sub_heading_is_not_part_of_a_class_question():
    """Lecturer review s41, m5: deck 04's "Questions for the class" slide read "*The questions.* When
    does normalisation matter? ...": the statement's sub-heading, not the question."""
    ch04 = _class_questions("04")
    assert "When does normalisation matter?" in ch04[3]
    assert "The questions." not in ch04[3]


def test_the_class_questions_are_the_exercises_questions():
    """Lecturer review s23, M6: the slide showed chapter 7's "Then train it with ..." instead of
    "Which digit does it get right, and why ...?", chapter 15's instructions instead of "which of
    the two separates the pairs better?" and "Where does the weight ... go now?", chapter 3's NTM
    background instead of its question: the sentences that end in "?", as the rubric takes them."""
    ch03, ch07, ch15 = (_class_questions(c) for c in ("03", "07", "15"))
    assert ch07[1].endswith(
        "Which digit does it get right, and what does one softmax per query allow it to fetch?"
    )
    assert "Then train it" not in ch07[1]
    assert ch15[2].endswith("which of the two separates the pairs better?")
    assert "Check that the padding" not in ch15[2]
    assert ch15[3].endswith("Where does the weight of the 33 heads that rested on `[CLS]` go now?")
    assert "Encode the 17 sentences" not in ch15[3]
    assert "which keys keep the weight" in ch03[2] and "Neural Turing Machine" not in ch03[2]
    # a question that needs the sentence before it keeps it (lecturer review s13)
    assert (
        "BERT" in _class_questions("13")[3]
        and "Then find the smallest" in _class_questions("13")[1]
    )


def test_every_exercise_of_every_chapter_asks_the_class_a_question():
    """Lecturer review s38, m3: chapter 5's "Questions for the class" slide, item 1, stated the
    premise (Bahdanau's start and Xavier's) and asked nothing; a hand-written table gave its question.
    Each statement now ends on its question in the chapter (21 did not: chapter 5's exercise 1,
    chapters 8, 12 and 14's exercise 3, ...), and chapter 11's exercise 2 asks its question in a list:
    every exercise of every chapter yields a question that ends in "?"."""
    assert not hasattr(make_slides, "CLASS_QUESTIONS")
    chapters = sorted(p.name[:2] for p in (make_slides.ROOT / "notebooks").glob("[0-9][0-9]_*"))
    assert len(chapters) == 18
    for chapter in chapters:
        asked = _class_questions(chapter)
        assert asked and sorted(asked) == list(range(1, len(asked) + 1)), (chapter, asked)
        for number, q in asked.items():
            assert q.endswith("?"), (chapter, number, q)
    ch05 = _class_questions("05")
    assert ch05[1] == (
        "**Exercise 1 (change and explain).** How do the gradients the attention receives at the"
        " start of training explain the difference?"
    )
    assert ch05[2].endswith("?") and ch05[3].endswith("?")
    assert _class_questions("11")[2].endswith(
        'Predict `same_for_singular`: does it give the same four probabilities for "the key that'
        ' the men found ___ old ."?'
    )


def test_chapter_3s_summary_sentence_on_exercise_1_is_an_answer():
    """Lecturer review s23, M6: chapter 3's summary says "Exercise 1 shows that one such pair of
    projections ... is a general score with a low-rank W_a", half of exercise 1's written part 1:
    --exclude-answers leaves it out."""
    table = make_slides.ANSWERS["03_scoring_functions"]
    assert (
        table["Exercise 1 shows that one ... score with a low-rank $\\mathbf W_a$."] == "exercise 1"
    )
    d = make_slides.Deck.__new__(make_slides.Deck)
    d.answers, d.left_out, d.said = table, [], []
    block = (
        "The multi-head chapter runs several products. Exercise 1 shows that one such pair of"
        " projections followed by the scaled dot product is a general score with a low-rank"
        " $\\mathbf W_a$."
    )
    assert make_slides._without_answers(d, block) == "The multi-head chapter runs several products."
    assert d.left_out


def test_chapter_7s_removals_of_one_head_are_left_out():
    """Lecturer review s29, m8: with --exclude-answers, chapter 7's deck still showed "Removing one
    head at a time" (the table, heads 0 + 3 and 1 + 2 removed together) and the drop per head, most
    of exercise 3's answer (which pair costs the most, which the least). The section, and the
    summary's sentence on it, are left out; the deck without the flag keeps them."""
    root = Path(__file__).resolve().parents[1]
    nb = nbformat.reads((root / "notebooks" / "07_multi_head_attention.ipynb").read_text(), 4)
    table = make_slides.ANSWERS["07_multi_head_attention"]
    whole = " ".join("\n".join(c.source for c in make_slides.deck(nb, {}, "x.html").cells).split())
    shown = make_slides.deck(nb, {}, "x.html", answers=table)
    text = " ".join("\n".join(c.source for c in shown.cells).split())
    for passage in [
        "Removing head $h$ means here setting its output",
        "The heads matter very differently.",
        "almost fully when the weaker head of a kind is removed",
    ]:
        assert passage in whole and passage not in text, passage
    assert make_slides.LEFT_OUT.format(exercise="exercise 3") in text
    assert shown.metadata["left_out"] == [
        "Removing one head at a time (exercise 3)",
        "Removing heads shows that ... (exercise 3)",
    ]
    assert "## Head view and model view" in text and "## Summary" in text


def test_decks_written_without_the_sites_assets_are_warned_of(tmp_path, monkeypatch, capsys):
    """Lecturer review s31, M10: `make_slides.py --exclude-answers 13` in a clone that never built
    the site wrote a deck that links ../_static/slides/ and showed as one unstyled page; the tool
    warns, naming the missing file and --site, and says nothing beside a built site."""
    site = tmp_path / "html"

    def fake_decks(site_, cache, prefixes, exclude_answers=False):
        (site_ / "slides").mkdir(parents=True, exist_ok=True)
        deck = site_ / "slides" / "13_gpt.html"
        deck.write_text("<html></html>")
        return [deck]

    monkeypatch.setattr(make_slides, "write_decks", fake_decks)
    assert make_slides.main(["13", "--exclude-answers", "--site", str(site)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {site / '_static/slides/dist/reveal.css'} is missing" in err, err
    assert "pass --site a built site's folder" in err and "make book" in err
    for asset in make_slides.SITE_ASSETS:
        (site / asset).parent.mkdir(parents=True, exist_ok=True)
        (site / asset).write_text("")
    # lecturer review s39, m3: _static/slides/ alone, without the maths: a warning that names it
    assert make_slides.main(["13", "--exclude-answers", "--site", str(site)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {site / make_slides.MATHS_ASSET} is missing" in err, err
    assert "raw TeX" in err and "_static/vendor/" in err and "reveal.css" not in err
    (site / make_slides.MATHS_ASSET).parent.mkdir(parents=True)
    (site / make_slides.MATHS_ASSET).write_text("")
    assert make_slides.main(["13", "--exclude-answers", "--site", str(site)]) == 0
    assert capsys.readouterr().err == ""
    assert make_slides.missing_assets(site) is None
    page = " ".join((Path(make_slides.ROOT) / "book" / "teachers.md").read_text().split())
    assert "It needs a built site: a deck links reveal.js and its styles" in page
    assert "(one with `_static/slides/` and `_static/vendor/`" in page


def test_the_class_questions_read_as_a_slide_and_as_the_course_titles_them():
    """Lecturer review s34, m6: chapter 1's title read "... or model error?." and told the class "a
    comment in the cell below will do"; chapter 12's exercise 4 was "predict, then check" where the
    course notebook titles it "measure, then check"."""
    ch01, ch12 = _class_questions("01"), _class_questions("12")
    assert ch01[1].startswith(
        "**Exercise 1 (predict, then compute): search error or model error?** "
    )
    assert "?." not in ch01[1] and "cell below" not in ch01[1] and "comment" not in ch01[1]
    assert "First write down your prediction: under the model" in ch01[1]
    assert ch12[4].startswith("**Exercise 4 (measure, then check): phrases never seen.** ")
    assert ch12[2].startswith("**Exercise 2 (predict, then check): ")  # a prediction stays one
    for chapter in ("02", "07", "13", "16", "17"):
        for q in _class_questions(chapter).values():
            assert not re.search(r"[?!]\.\*\*", q) and "cell below" not in q, q


def test_the_teachers_page_names_every_deck_the_answer_free_flag_cuts():
    """The page's list of decks that ``--exclude-answers`` cuts is make_slides' own table, and each of
    them is described: chapter 3's was missing (lecturer review s35, m5)."""
    page = " ".join(
        (Path(__file__).resolve().parents[1] / "book" / "teachers.md").read_text().split()
    )
    found = re.search(
        r"The flag cuts the decks of chapters ([\d, and]+) \(the table `ANSWERS`", page
    )
    assert found, "the page's sentence listing the decks --exclude-answers cuts"
    listed = [int(n) for n in re.findall(r"\d+", found.group(1))]
    assert listed == sorted(int(c[:2]) for c in make_slides.ANSWERS)
    for number in listed:
        assert re.search(
            rf"Chapter {number}'s (?:and chapter \d+'s )?decks? (?:loses|also answers|state)", page
        ) or re.search(rf"chapter {number}'s (?:deck|sentence|table)", page), (
            f"the page does not say what chapter {number}'s answer-free deck leaves out"
        )


def test_a_long_caption_goes_to_the_notes_and_the_slide_keeps_its_first_sentence():
    """Course review s36, m1: at 1280x720 a figure's caption of several lines ran below the slide
    (chapter 8's *The sinusoidal table*, 835 px; chapter 13's decoder, 925 px). The slide keeps one
    short line, the caption's first sentence; the whole caption goes to the speaker notes. A short
    caption stays whole on the slide, with no notes."""
    long = (
        "The sinusoidal table of the Transformer: one row per position. Each "
        "column pair is a sine and a cosine of one frequency, and the wavelengths grow from "
        "$2\\pi$ to $10000 \\cdot 2\\pi$ along the columns, so that nearby positions get "
        "similar rows and far ones different rows."
    )
    short = "Attention weights of one head."
    cells = [nbformat.v4.new_markdown_cell("# Chapter\n\nAn opening paragraph.")]
    for caption in (long, short):
        cell = _figure_cell()
        cell.metadata["mystnb"] = {"figure": {"caption": caption}}
        cells.append(cell)
    deck = make_slides.deck(_chapter(*cells), {}, "../notebooks/x.html")
    kinds = [(c.metadata["slideshow"]["slide_type"], c.source) for c in deck.cells]
    smalls = [k for k, (_, src) in enumerate(kinds) if src.startswith("<small>")]
    assert len(smalls) == 2
    first, second = (kinds[k][1] for k in smalls)
    assert first == "<small>The sinusoidal table of the Transformer: one row per position.</small>"
    assert len(first) - len("<small></small>") <= make_slides.CAPTION_LINE
    # the whole caption, right after its line, in the figure's speaker notes
    kind, notes = kinds[smalls[0] + 1]
    assert kind == "notes" and notes.startswith("Caption: The sinusoidal table of the")
    assert "far ones different rows." in notes
    assert second == f"<small>{short}</small>"
    assert all(kind != "notes" for kind, _ in kinds[smalls[1] + 1 :])
    # a first sentence longer than the line is cut at a word, never inside an equation or a link
    cut = make_slides.caption_line("word " * 18 + "$a + b = c$ and more words. Next.")
    assert cut.endswith("...") and cut.count("$") % 2 == 0
    assert len(cut) <= make_slides.CAPTION_LINE
    cut = make_slides.caption_line("word " * 19 + "[the glossary](../book/glossary.html#x) end.")
    assert cut.endswith("...") and "[" not in cut


def test_a_figure_slide_fits_720_pixels():
    """Course review s36, m1: at 1280x720 every figure slide of chapters 5, 8, 13 and 18 measured
    776 px with a one-line caption (title, a 620 px figure, the line); the decks' template caps a
    figure at 560 px, and they measured 716 px (headless Chromium, from the build's cache)."""
    template = (make_slides.TEMPLATES / "book_reveal" / "index.html.j2").read_text()
    cap = re.search(r"\.jp-OutputArea-output img \{ max-height: (\d+)px; \}", template)
    assert cap and int(cap[1]) <= 560


def test_display_equations_fill_their_lines_and_a_full_slide_goes_on_to_the_next():
    """Lecturer review s38, m2: chapter 13's slide "A Transformer decoder as a language model" held
    a paragraph and five display equations, each counted as one line of the budget: 925 px of
    content on an 800 px slide (headless Chromium at 1280x720). An equation fills EQUATION_LINES
    lines, and 2 more a row; the section's equations go on over two pages."""
    assert make_slides.lines_of("$$a = b$$") == make_slides.EQUATION_LINES
    aligned = "$$\\begin{aligned}\n&a \\\\\n&= b\n\\end{aligned}$$"
    assert make_slides.lines_of(aligned) == make_slides.EQUATION_LINES + 2
    assert make_slides.lines_of("## T\n\nOne line.\n\n$$x$$") == 2 + make_slides.EQUATION_LINES
    root = Path(__file__).resolve().parents[1]
    nb = nbformat.reads((root / "notebooks" / "13_gpt.ipynb").read_text(), 4)
    pages = _pages(make_slides.deck(nb, {}, "x.html"))
    title = "A Transformer decoder as a language model"
    section = [p for p in pages if title in p[0].source.splitlines()[0]]
    shown = [c.source for p in section for c in p if make_slides.is_math(c.source)]
    assert len(section) >= 2 and len(shown) >= 5
    for page in section:
        assert sum(make_slides.lines_of(c.source) for c in page) <= make_slides.SLIDE_BUDGET


def _pages(deck) -> list[list]:
    """The deck's pages (a slide or a sub-slide), each its cells, speaker notes left out."""
    pages = []
    for c in deck.cells:
        kind = c.metadata["slideshow"]["slide_type"]
        if kind in ("slide", "subslide"):
            pages.append([])
        if kind != "notes":
            pages[-1].append(c)
    return pages


def test_no_page_of_any_chapters_prose_holds_more_than_a_slides_budget():
    """Lecturer review s38, m2, checked without a browser: in every chapter's deck (its prose, which
    needs no execution: headings, paragraphs, equations, tables and lists), a page of more than one
    item holds at most SLIDE_BUDGET lines as lines_of counts them, the budget that measured within
    720 px at 1280x720 for chapters 13 and 18 (the tallest page 733 px of Reveal's 800)."""
    for path in sorted((make_slides.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        deck = make_slides.deck(nbformat.read(path, 4), {}, f"../notebooks/{path.stem}.html")
        for page in _pages(deck):
            # a page's title alone ("### Section"), added to a page that starts with no heading
            items = [c for c in page if not re.fullmatch(r"### [^\n]*", c.source)]
            lines = sum(make_slides.lines_of(c.source) for c in items if c.cell_type == "markdown")
            assert len(items) <= 1 or lines <= make_slides.SLIDE_BUDGET, (path.stem, page[0].source)


def test_a_picture_shown_as_markdown_gets_a_page_with_one_caption_line():
    """Lecturer review s38, m2: chapter 18's interactive *Attention in tiles* reached the deck as its
    static Markdown (lib.viz.interactive: the picture, the numbers under it, the line saying where it
    is live), shown whole: its caption ran below the slide at 1280x720 (849 px of 800). The picture
    gets a page of its own, capped in height as a figure is, with its last line cut to one short
    caption; the rest goes to the speaker notes."""
    static = (
        '<img src="data:image/svg+xml;base64,PHN2Zz4=" alt="Step 1 of 10: a tile.">\n\n'
        "row 0: m = 0.660  \nrow 1: m = -0.615\n\n*Interactive figure, shown at its first setting"
        " (step = 1). On the book's website a slider sets step (1, 2, 3, 4, 5, 6, 7, 8, 9, 10: 10"
        " pictures).*"
    )
    out = nbformat.v4.new_output("display_data", data={"text/markdown": static, "text/plain": "x"})
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening.\n\n## Tiles\n\nThe loop, tile by tile."),
        nbformat.v4.new_code_cell("show()", outputs=[out]),
    )
    deck = make_slides.deck(nb, {}, "x.html")
    kinds = [(c.metadata["slideshow"]["slide_type"], c.source) for c in deck.cells]
    i = next(k for k, (_, src) in enumerate(kinds) if src.startswith("<img"))
    assert kinds[i - 1] == ("subslide", "### Tiles") and kinds[i][0] == "-"
    assert (
        kinds[i][1] == '<img src="data:image/svg+xml;base64,PHN2Zz4=" alt="Step 1 of 10: a tile.">'
    )
    assert kinds[i + 1] == (
        "-",
        "<small>Interactive figure, shown at its first setting (step = 1).</small>",
    )
    kind, notes = kinds[i + 2]
    assert kind == "notes" and "row 0: m = 0.660" in notes and "10 pictures)." in notes
    template = (make_slides.TEMPLATES / "book_reveal" / "index.html.j2").read_text()
    cap = re.search(r"\.jp-RenderedMarkdown img \{[^}]*max-height: (\d+)px;", template)
    assert cap and int(cap[1]) <= 560


def test_a_list_that_opens_a_section_shows_only_the_items_that_fit_a_slide():
    """Lecturer review s39, m1: chapter 17's *Summary* showed the first sentence of each of its five
    items, 1,500 characters (a first sentence can be far longer than first_items' limit), and its
    last item ran below the slide at 1280x720 (774 px of 688). The items shown fill at most the
    slide's budget, counted as wrapped lines; the whole list stays in the speaker notes."""
    long = "- **Bold words** and a first sentence that runs on " + "and on, " * 60 + "to its end."
    items = "\n".join([long, "- A second item, short.", long, "- A fourth item."])
    shown = make_slides.first_items(items, budget=13)
    assert make_slides.lines_of(shown) <= 13 and shown.startswith(long[:60])
    assert shown.count("\n") == 1 and shown.endswith("- A second item, short.")
    # one item longer than the budget: cut at a word, not inside bold text
    cut = make_slides.first_items("- **Bold** " + "word " * 300 + "end.", budget=5)
    assert make_slides.lines_of(cut) <= 5 and cut.endswith("...") and cut.count("**") % 2 == 0
    nb = _chapter(
        nbformat.v4.new_markdown_cell("# C\n\nAn opening."),
        nbformat.v4.new_markdown_cell(
            "## Summary\n\n" + "\n".join([long, long, long, "- A fourth item."])
        ),
    )
    deck = make_slides.deck(nb, {}, "x.html")
    summary = next(src for _, src in _slides(deck) if src.startswith("## Summary"))
    assert make_slides.lines_of(summary) <= make_slides.LIST_BUDGET
    assert "- A fourth item." not in summary
    notes = "\n".join(
        c.source for c in deck.cells if c.metadata["slideshow"]["slide_type"] == "notes"
    )
    assert "- A fourth item." in notes


def test_no_sections_opening_list_of_any_chapter_holds_more_than_a_slides_budget():
    """Lecturer review s39, m1, without a browser: the page test above lets a page of one cell pass
    (chapter 17's *Summary*, one cell of 25 lines); a section's opening slide that shows a list is
    held to LIST_BUDGET (not the closing slide of the class's questions, which has its own
    limit, QUESTIONS_SHOWN, nor the slide that says what a deck left out)."""
    for path in sorted((make_slides.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        deck = make_slides.deck(nbformat.read(path, 4), {}, f"../notebooks/{path.stem}.html")
        for kind, src in _slides(deck):
            parts = make_slides.blocks(src)
            closing = src.startswith(("## Questions for the class", "## Left out of"))
            if (
                src.startswith("#")
                and len(parts) > 1
                and make_slides.is_list(parts[1])
                and not closing
            ):
                lines = make_slides.lines_of(src)
                assert lines <= make_slides.LIST_BUDGET, (path.stem, src[:60], lines)


def test_a_row_with_a_big_operator_or_a_fraction_counts_one_more_line():
    """Lecturer review s39, m1: chapter 12's "The bidirectional language model" (two products and an
    aligned block of two sums, 14 lines without it) measured 833 px of Reveal's 800 at 1280x720."""
    three = make_slides.EQUATION_LINES
    assert make_slides.lines_of("$$a = b + c$$") == three
    assert make_slides.lines_of(r"$$p = \prod_{k=1}^{N} p_k$$") == three + 1
    assert make_slides.lines_of(r"$$y = \frac{a}{b}$$") == three + 1
    assert make_slides.lines_of(r"$$\max(a, b) = \operatorname{Swish}(x)$$") == three
    aligned = r"$$\begin{aligned} L &= -\sum_k a_k \\ &= -\sum_k b_k \end{aligned}$$"
    assert make_slides.lines_of(aligned) == three + 2 + 2
    ch12 = (
        "## The bidirectional language model\n\nA **forward** language model gives a sentence"
        r" the probability" + "\n\n" + r"$$p = \prod_{k=1}^{N} p(t_k \mid t_{<k}),$$" + "\n\n"
        r"$$p = \prod_{k=1}^{N} p(t_k \mid t_{>k}).$$" + "\n\n" + aligned
    )
    assert make_slides.lines_of(ch12) > make_slides.SLIDE_BUDGET


def _figure_output(panels: int, width: float = 5.0, tall: float = 4.0, size: float = 13.0):
    """A figure's output as the chapters' inline backend writes it (lib.viz.heatmap._inline_svg): a
    PNG at 110 dpi and an SVG (text as glyph paths), both cut tight; ``panels`` axes stacked."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        panels, 1, figsize=(width, tall * panels), dpi=110, layout="constrained", squeeze=False
    )
    for number, ax in enumerate(axes[:, 0]):
        ax.plot([0, 1, 2], [number, 2, 1])
        ax.set_title(f"panel {number}\nof {panels}", fontsize=size + 1)
        ax.set_xlabel("position", fontsize=size)
        ax.tick_params(labelsize=size)
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=110, bbox_inches="tight")
    fig.savefig(svg, format="svg", bbox_inches="tight")
    plt.close(fig)
    data = {
        "image/png": base64.b64encode(png.getvalue()).decode(),
        "image/svg+xml": svg.getvalue().decode(),
        "text/plain": "<Figure>",
    }
    return nbformat.v4.new_output("display_data", data=data)


def test_a_figure_stacked_for_a_phone_shows_its_panels_side_by_side():
    """Lecturer review s40: on the decks at 1280x720, figures whose panels the chapters stack (so
    that they read on a 360 px phone) showed their text at 9-10 px (chapter 10's slide 9, chapter
    12's slide 8, chapter 16's slide 8): the slide's 560 px cap shrank them to a narrow column. Such
    a figure is cut across its white bands, never through what it draws, and its parts are shown
    side by side, at 11 px or more; a figure that reads as it is stays as it is."""
    stacked = nbformat.v4.new_code_cell("plot()", outputs=[_figure_output(3)])
    wide = nbformat.v4.new_code_cell("plot()", outputs=[_figure_output(1, width=8, tall=3)])
    nb = _chapter(nbformat.v4.new_markdown_cell("# C\n\nAn opening."), stacked, wide)
    shown = [c for c in make_slides.deck(nb, {}, "x.html").cells if c.get("outputs")]
    assert len(shown) == 2
    (panels,), (kept,) = (c.outputs for c in shown)
    # the stacked figure: as a single picture its text would show under the floor
    svg, png = stacked.outputs[0].data["image/svg+xml"], stacked.outputs[0].data["image/png"]
    (whole,) = make_slides.slide_text_px(stacked)
    assert whole < make_slides.SLIDE_TEXT_PX
    html = panels.data["text/html"]
    assert list(panels.data) == ["text/html"] and html.startswith('<div class="book-panels">')
    pictures = re.findall(r'style="width:([\d.]+)px;height:([\d.]+)px"', html)
    assert len(pictures) == 3  # one panel a column
    assert all(px >= make_slides.SLIDE_TEXT_PX for px in make_slides.slide_text_px(shown[0]))
    # nothing runs off the slide: the row fits the figure's width and height
    widths, heights = [float(w) for w, _ in pictures], [float(h) for _, h in pictures]
    gaps = make_slides.PANEL_GAP * (len(pictures) - 1)
    assert sum(widths) + gaps <= make_slides.FIGURE_WIDTH + 0.5
    assert max(heights) <= make_slides.FIGURE_HEIGHT + 0.5
    # each cut lies in a band of white rows of the PNG: no text or line is cut through
    bands = make_slides.panels(svg, base64.b64decode(png))
    height = make_slides.svg_text(svg)[2]
    gaps = make_slides.white_gaps(base64.b64decode(png))
    for _, bottom in bands[:-1]:
        assert any(a * height < bottom < b * height for a, b in gaps), (bottom, gaps)
    # a figure that reads as one picture keeps its PNG and SVG
    assert {"image/png", "image/svg+xml"} <= set(kept.data)
    assert make_slides.slide_text_px(shown[1])[0] >= make_slides.SLIDE_TEXT_PX


def test_the_measures_of_a_slide_are_the_decks():
    """The geometry slide_text_px measures with is the decks': Reveal's slide size and margin
    (web/src/slides.js), the template's cap and gap between panels, and the phone test's glyph
    measure (tests/site/test_chapters_executed.py), one function of the library's."""
    root = make_slides.ROOT
    script = (root / "web" / "src" / "slides.js").read_text()
    width, height, margin = (
        float(re.search(rf"\b{key}: ([\d.]+)", script).group(1))
        for key in ("width", "height", "margin")
    )
    assert (width, height) == make_slides.SLIDE_SIZE and margin == make_slides.SLIDE_MARGIN
    assert make_slides.SCREEN_SCALE == 0.86  # Reveal.getScale() at 1280x720
    template = (make_slides.TEMPLATES / "book_reveal" / "index.html.j2").read_text()
    assert f"max-height: {make_slides.FIGURE_HEIGHT}px" in template
    assert re.search(rf"\.book-panels \{{[^}}]*gap: {make_slides.PANEL_GAP}px;", template)
    # one glyph measure for both: the library's, which the phone test imports too
    from lib.viz.interactive import svg_text

    assert make_slides.svg_text is svg_text
    phone_test = (root / "tests" / "site" / "test_chapters_executed.py").read_text()
    assert "from lib.viz.interactive import phone_shown_px, svg_text" in phone_test


@pytest.mark.site
def test_every_figure_of_every_deck_reads_at_1280x720(site):
    """Lecturer review s40, over every chapter's deck made from the build's executed chapters: each
    picture a slide shows (a figure, its panels side by side, an interactive figure's first
    setting) has its smallest text at SLIDE_TEXT_PX (11 px) or more at 1280x720, the phone's floor,
    and a row of panels fits the figure's place on its slide. Before, 16 of the 18 decks had a
    figure under 11 px, the smallest 5.3 px (chapter 13's decoding settings, eight panels stacked);
    tests/site/test_slides.py checks this measure against Chromium's."""
    chapters = make_slides.executed_chapters(make_slides.ROOT / "_build" / ".jupyter_cache")
    assert len(chapters) == 18
    small, measured = [], 0
    for chapter, nb in chapters:
        page = 0
        for cell in make_slides.deck(nb, {}, f"../notebooks/{chapter}.html").cells:
            page += cell.metadata["slideshow"]["slide_type"] in ("slide", "subslide")
            for px in make_slides.slide_text_px(cell):
                measured += 1
                if px < make_slides.SLIDE_TEXT_PX:
                    small.append(f"{chapter} page {page}: {px:.1f} px")
            shown = cell.source + "".join(
                o.get("data", {}).get("text/html", "") for o in cell.get("outputs", [])
            )
            for row in re.findall(r'<div class="book-panels">(.*?)</div>', shown, re.S):
                sizes = re.findall(r'style="width:([\d.]+)px;height:([\d.]+)px"', row)
                across = sum(float(w) for w, _ in sizes) + make_slides.PANEL_GAP * (len(sizes) - 1)
                assert across <= make_slides.FIGURE_WIDTH + 0.5, (chapter, page, across)
                # taller than FIGURE_HEIGHT only a panel that reads no other way (FIGURE_ROOM)
                assert max(float(h) for _, h in sizes) <= make_slides.FIGURE_ROOM + 0.5
    assert measured >= 100, measured
    assert not small, f"figure text under {make_slides.SLIDE_TEXT_PX} px at 1280x720: {small}"
