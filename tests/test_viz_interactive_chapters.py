"""The helper behind the interactive figures of chapters 1 and 14 (lib.viz.word_rows), and its use in
lib.viz.interactive: one precomputed state per option, with the words drawn and coloured."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from lib import viz  # noqa: E402
from lib.viz.figures import WORD_RIGHT, WORD_WRONG  # noqa: E402


def _boxes(fig):
    # (text, box face colour, bold) of every word box of the figure
    ax = fig.axes[0]
    out = []
    for t in ax.texts:
        patch = t.get_bbox_patch()
        if patch is not None:
            out.append(
                (t.get_text(), matplotlib.colors.to_hex(patch.get_facecolor()), t.get_fontweight())
            )
    return out


def test_word_rows_colours_words_against_the_reference_by_position():
    rows = [
        ("source", "the black cat".split()),
        ("reference", "le chat noir".split()),
        ("plain", "le chien noir noir".split()),
    ]
    fig = viz.word_rows(rows, reference="reference", title="three words")
    boxes = _boxes(fig)
    assert [b[0] for b in boxes] == "the black cat le chat noir le chien noir noir".split()
    # source and reference rows: white; the row below the reference: by position
    assert all(color == "#ffffff" for _, color, _ in boxes[:6])
    plain = boxes[6:]
    assert [c for _, c, _ in plain] == [WORD_RIGHT, WORD_WRONG, WORD_RIGHT, WORD_WRONG]
    assert [w == "bold" for _, _, w in plain] == [False, True, False, True]
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_bbox_patch() is None]
    assert labels == ["source", "reference", "plain"]
    assert fig.axes[0].get_title(loc="left") == "three words"
    plt.close(fig)


def test_word_rows_takes_colours_and_wraps_long_rows():
    words = [f"w{i}" for i in range(60)]
    fig = viz.word_rows(
        [("long", words)], colors=[["#c7e9c0"] * 60], legend=[("#c7e9c0", "kept")], width=30
    )
    boxes = _boxes(fig)
    assert len(boxes) == 60 and {c for _, c, _ in boxes} == {"#c7e9c0"}
    ys = sorted({t.get_position()[1] for t in fig.axes[0].texts if t.get_bbox_patch()})
    assert len(ys) > 3  # wrapped onto several lines
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["kept"]
    plt.close(fig)


def test_word_rows_fontsize_enlarges_words_and_their_boxes():
    """Chapter 10's merges slider draws its pieces at 18 points: the boxes spread twice as far."""
    rows = [("tokenization", list("tokenization") + ["</w>"])]
    small, large = viz.word_rows(rows), viz.word_rows(rows, fontsize=18)
    sizes = {t.get_fontsize() for t in large.axes[0].texts if t.get_bbox_patch()}
    assert sizes == {18}
    last = [max(t.get_position()[0] for t in f.axes[0].texts) for f in (small, large)]
    assert last[1] == pytest.approx(2 * last[0], rel=0.02)  # x of the last box, from 0.8 on
    assert large.get_figheight() > small.get_figheight()
    with pytest.raises(ValueError, match="fontsize"):
        viz.word_rows(rows, fontsize=0)
    plt.close(small)
    plt.close(large)


def test_word_rows_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        viz.word_rows([])
    with pytest.raises(ValueError, match="reference"):
        viz.word_rows([("a", ["x"])], reference="b")
    with pytest.raises(ValueError, match="one per word"):
        viz.word_rows([("a", ["x", "y"])], colors=[["white"]])
    with pytest.raises(ValueError, match="one entry per row"):
        viz.word_rows([("a", ["x"])], colors=[])


def test_word_rows_states_in_an_interactive_figure():
    sentences = {4: "le chat noir dort".split(), 2: "le chat".split()}

    def draw(n):
        ref = sentences[n]
        return viz.word_rows(
            [("reference", ref), ("output", ref[:-1] + ["x"])],
            reference="reference",
            figsize=(11, 2),
        )

    open_before = plt.get_fignums()
    box = viz.interactive(draw, [2, 4], description="words", alt=lambda n: f"{n} words")
    assert plt.get_fignums() == open_before
    slider, stack = box.children
    assert list(slider.options) == ["2", "4"] and len(stack.children) == 2
    assert 'alt="2 words"' in stack.children[0].value and 'alt="4 words"' in stack.children[1].value
    assert stack.children[0].value != stack.children[1].value
