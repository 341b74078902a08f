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
    # the legend follows the size too (chapter 16's detection slider draws at 10.5 points)
    legend = viz.word_rows(rows, legend=[("white", "a box")], fontsize=10.5)
    assert {t.get_fontsize() for t in legend.axes[0].get_legend().get_texts()} == {10.5}
    plt.close(small)
    plt.close(large)
    plt.close(legend)


def test_word_rows_fits_the_height_at_a_given_width():
    """(w, None) fits the height to the wrapped rows, (w, h) keeps h: chapters 14 and 16 fit each
    state of a slider, then draw them all at the tallest state's height."""
    short = [("row", ["word"] * 5)]
    long = [("row", ["word"] * 40)]
    one, two = (viz.word_rows(r, width=30, figsize=(9, None)) for r in (short, long))
    assert one.get_figwidth() == two.get_figwidth() == 9
    assert one.get_figheight() < two.get_figheight()
    assert one.get_figheight() == viz.word_rows(short, width=30).get_figheight()
    fixed = viz.word_rows(short, width=30, figsize=(9, 4.8))
    assert fixed.get_figheight() == 4.8
    for f in (one, two, fixed):
        plt.close(f)
    plt.close("all")


def test_word_rows_narrow_puts_the_names_above_and_gives_the_words_the_whole_width():
    """Chapter 1's slider, drawn for a phone: each row's name on a line of its own above its words,
    which then start at the left edge; the default keeps the names to the left."""
    rows = [("reference", "le chat noir".split()), ("plain", "le chien noir".split())]
    left, above = viz.word_rows(rows), viz.word_rows(rows, narrow=True)

    def names(fig):
        return {
            t.get_text(): t.get_position() for t in fig.axes[0].texts if t.get_bbox_patch() is None
        }

    def words(fig):
        return [t.get_position() for t in fig.axes[0].texts if t.get_bbox_patch()]

    for name, (x, y) in names(left).items():
        assert x < 0  # to the left of the words, on their line
        assert y in {wy for _, wy in words(left)}
    first_word_y = max(wy for _, wy in words(above))
    for name, (x, y) in names(above).items():
        assert x >= 0 and y not in {wy for _, wy in words(above)}
    assert names(above)["reference"][1] > first_word_y  # above the first line of words
    assert [b[0] for b in _boxes(above)] == [b[0] for b in _boxes(left)]
    assert above.get_figheight() > left.get_figheight()  # one more line per row
    plt.close(left)
    plt.close(above)


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


# --- the interactive figures of chapters 5, 12 and 16 ----------------------------------------------------
# Each chapter defines its figure in one function of the figure's cell (caption_explorer,
# layer_explorer, detection_explorer). The tests run that function, as the chapter wrote it, on values
# the library computes here (small untrained models, the chapter's data generators), and check that the
# figure shows those values: the numbers of each state's alt text, and the words and colours it draws.
# The chapters' own hidden checks do the same with their trained models.

import ast  # noqa: E402
import re  # noqa: E402
from pathlib import Path  # noqa: E402

import nbformat  # noqa: E402
import torch  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def chapter_figure_code(chapter: str, figure: str, namespace: dict) -> dict:
    """Exec the functions and UPPER_CASE constants of the cell of `figure` (its mystnb name) in
    `namespace` (the chapter's names that the function reads); return the namespace."""
    (path,) = NOTEBOOKS.glob(f"{chapter}_*.ipynb")
    cells = [
        c
        for c in nbformat.read(path, as_version=4).cells
        if c.metadata.get("mystnb", {}).get("figure", {}).get("name") == figure
    ]
    assert len(cells) == 1, f"{path.name}: no single cell draws {figure}"
    kept = [
        node
        for node in ast.parse(cells[0].source).body
        if isinstance(node, ast.FunctionDef)
        or (
            isinstance(node, ast.Assign)
            and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets)
        )
    ]
    exec(compile(ast.Module(body=kept, type_ignores=[]), str(path), "exec"), namespace)
    return namespace


def alt_texts(box) -> list[str]:
    import html

    slider, stack = box.children
    return [html.unescape(re.search(r'alt="([^"]*)"', p.value).group(1)) for p in stack.children]


class RecordingViz:
    """lib.viz, with the arguments of every word_rows call kept (the figure's words and colours)."""

    def __init__(self):
        self.word_rows_calls = []

    def __getattr__(self, name):
        return getattr(viz, name)

    def word_rows(self, rows, **kwargs):
        self.word_rows_calls.append((rows, kwargs))
        return viz.word_rows(rows, **kwargs)


def test_chapter_5_caption_slider_shows_the_decoders_weights_word_by_word():
    from lib.captioning import Captioner
    from lib.data import shapes

    torch.manual_seed(0)
    model = Captioner(len(shapes.VOCAB), d_feature=64, d_emb=32, d_hidden=64, d_attn=32).eval()
    example = next(e for e in shapes.generate_images(20, seed=1) if len(e.items) == 3)
    batch = shapes.make_batch([example])
    with torch.no_grad():
        _, (alpha,) = model(batch.images, batch.tgt_in, return_attention=True)
    words = list(example.caption) + ["<eos>"]
    weights = alpha[0, 0, : len(words)]  # [T, 9]: the weights for each word, teacher-forced
    named = shapes.word_regions(example) + [None]
    ns = chapter_figure_code("05", "fig-05-explore-caption", {"plt": plt, "viz": viz})
    box = ns["caption_explorer"](example.image, words, weights, named)
    slider, stack = box.children
    assert list(slider.options) == [f"{t + 1} {w}" for t, w in enumerate(words)]
    alts = alt_texts(box)
    assert len(alts) == len(stack.children) == len(words) == 9
    for t, alt in enumerate(alts):
        shown = re.search(r"row by row: ([^;]*);", alt).group(1)
        assert shown == ", ".join(f"{v:.2f}" for v in weights[t].tolist())
        top = int(weights[t].argmax())
        assert f"on row {top // 3}, column {top % 3}" in alt and f"'{words[t]}'" in alt
        assert ("the cell of the shape it names" in alt) == (top == named[t])
    assert stack.children[0].value != stack.children[1].value


def test_chapter_12_layer_slider_shows_each_layers_vectors_and_probe():
    from lib.data.stories import generate_sentences, sense_examples, word_vocab
    from lib.elmo import BiLM, ELMoConfig, ScalarMix, pad_sentences

    vocab = word_vocab(generate_sentences(300, seed=0))
    config = ELMoConfig(vocab_size=len(vocab), word_dim=16, hidden_dim=16, n_layers=2,
                        pad_id=vocab.pad_id)  # fmt: skip
    torch.manual_seed(0)
    bilm = BiLM(config).eval()
    examples = sense_examples("bank", 12, seed=20) + sense_examples("play", 12, seed=21)
    classes = ["river", "money", "theatre", "game"]
    labels = torch.tensor([classes.index(e.sense) for e in examples])
    ids, mask = pad_sentences(
        [vocab.encode(list(e.tokens), add_bos=True, add_eos=True) for e in examples],
        vocab.pad_id,
    )
    with torch.no_grad():
        states = torch.stack(bilm(ids, mask).hidden_states)  # [3, n, T, 2H]
        states = states[
            :, torch.arange(len(examples)), torch.tensor([e.index + 1 for e in examples])
        ]
        vectors = {f"layer {j}": states[j] for j in range(3)}
        vectors["ScalarMix"] = ScalarMix(3)(states)
        probe = torch.nn.Linear(states.shape[-1], 4)
        logits = {name: probe(v) for name, v in vectors.items()}
    # PHONE: the chapter's settings for figures drawn for a phone (11-point text)
    phone = {"font.size": 11, "legend.fontsize": 11}
    ns = chapter_figure_code(
        "12", "fig-12-explore-layers", {"plt": plt, "viz": viz, "torch": torch, "PHONE": phone}
    )
    box = ns["layer_explorer"](vectors, logits, labels, classes)
    slider, _ = box.children
    assert list(slider.options) == ["layer 0", "layer 1", "layer 2", "ScalarMix"]
    for name, alt in zip(vectors, alt_texts(box)):
        accuracy = (logits[name].argmax(-1) == labels).float().mean()
        assert f"probe accuracy {accuracy:.1%}" in alt and alt.startswith(f"{name}: the 24 test")
        distinct = len({tuple(v) for v in vectors[name].tolist()})
        assert f"({distinct} different vectors)" in alt
        p_own = logits[name].softmax(-1)[torch.arange(len(labels)), labels]  # P(own sense)
        assert f"own sense: {p_own.mean():.2f} on average" in alt
    # the token layer is the static vector: one per word, bank and play
    assert "(2 different vectors)" in alt_texts(box)[0]
    # student review s33, error 6: the picture and the slider above it fit a 1280 x 900 screen together
    # (the picture was 836 px high); the page shows it at its own size there
    import base64
    import struct

    for page in box.children[1].children:
        png = base64.b64decode(re.search(r"base64,([^\"]+)\"", page.value).group(1))
        width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR
        assert width <= 600 and height <= 760, (width, height)


def test_chapter_16_detection_slider_shows_the_corruption_and_the_discriminator():
    import base64
    import struct

    from lib.bert import IGNORE_INDEX, BertConfig
    from lib.data.stories import generate_sentences
    from lib.electra import Electra, ElectraConfig
    from lib.wordpiece import WordPieceTokenizer

    sentences = generate_sentences(200, seed=0)
    tokenizer = WordPieceTokenizer.from_texts(sentences)
    specials = [tokenizer.convert_tokens_to_ids(t) for t in tokenizer.special_tokens]
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)  # fmt: skip
    torch.manual_seed(0)
    electra = Electra(ElectraConfig(config)).eval()
    batch = tokenizer.encode_batch(sentences[:6])
    with torch.no_grad():
        out = electra(batch.input_ids, tokenizer.mask_token_id, specials, batch.token_type_ids,
                      batch.attention_mask, generator=torch.Generator().manual_seed(1))  # fmt: skip
    p = torch.sigmoid(out.disc_logits)
    real = batch.attention_mask.bool()
    c = out.corruption
    recorder = RecordingViz()
    ns = chapter_figure_code(
        "16", "fig-16-explore-detection",
        {"viz": recorder, "plt": plt, "tokenizer": tokenizer, "IGNORE_INDEX": IGNORE_INDEX},
    )  # fmt: skip
    box = ns["detection_explorer"](batch.input_ids, c, p, real, range(6))
    alts = alt_texts(box)
    assert list(box.children[0].options) == [str(b) for b in range(6)]
    # each sentence drawn once to fit its height, then once at the tallest of those heights: one
    # size for every state, so nothing jumps as the slider moves (review s31 of chapter 16, 4)
    assert len(recorder.word_rows_calls) == 12 and c.replaced.any()
    fitting, drawn = recorder.word_rows_calls[:6], recorder.word_rows_calls[6:]
    fitted = [viz.word_rows(rows, **kwargs).get_figheight() for rows, kwargs in fitting]
    plt.close("all")
    assert all(kwargs["figsize"][1] is None for _, kwargs in fitting)
    assert {kwargs["figsize"] for _, kwargs in drawn} == {(ns["FIGURE_INCHES"], max(fitted))}
    assert min(fitted) < max(fitted)  # the sentences differ: the fixed height does something
    colours = ns["RTD_COLOURS"]
    for b, ((rows, kwargs), alt) in enumerate(zip(drawn, alts)):
        keep = real[b]
        tokens = [[w.strip() for w in words] for _, words in rows]
        for drawn, ids in zip(tokens, (batch.input_ids, c.masked, c.corrupted)):
            assert drawn == tokenizer.convert_ids_to_tokens(ids[b][keep].tolist())
        assert tokens[3] == [f"{v:.2f}" for v in p[b][keep].tolist()]
        masked_row, read_row, answer_row = kwargs["colors"][1:]
        chosen = (c.mlm_labels[b][keep] != IGNORE_INDEX).tolist()
        assert [x == colours["masked"] for x in masked_row] == chosen
        assert [x == colours["replaced"] for x in read_row] == c.replaced[b][keep].tolist()
        assert [x == colours["replaced"] for x in answer_row] == (
            out.disc_logits[b][keep] > 0
        ).tolist()
        # every column as wide as its widest entry: the rows line up
        assert len({tuple(len(w) for w in words) for _, words in rows}) == 1
        assert f"; {int(c.replaced[b].sum())} replaced," in alt
        assert alt.endswith("P(replaced): " + ", ".join(tokens[3]))
        title = kwargs["title"].replace("\n", " ")
        assert f"learns from {sum(chosen)} of its {int(keep.sum())} tokens" in title
    # the slider and the whole figure on a laptop's screen together: at most 700 px tall in the
    # page's 708 px column at 1280 px (it was 1,071 px, five to seven boxes a line), with text of
    # 11 CSS px or more on a phone, in the box that scrolls sideways
    for page in box.children[1].children:
        png = base64.b64decode(re.search(r"base64,([^\"]+)\"", page.value).group(1))
        width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR
        assert height * min(1, 708 / width) <= 700, (width, height)
        assert float(re.search(r'data-phone-px="([^"]+)"', page.value).group(1)) >= 11


def test_word_rows_narrow_puts_each_name_above_its_row_and_the_key_a_line_each():
    rows = [("first", ["a", "b"]), ("second", ["c", "d"])]
    legend = [("white", "one"), ("#cfe3f3", "two")]
    wide = viz.word_rows(rows, legend=legend, fontsize=11)
    narrow = viz.word_rows(rows, legend=legend, fontsize=11, narrow=True, figsize=(5.2, None))
    assert wide.get_figwidth() == 11 and narrow.get_figwidth() == 5.2
    for fig, ha in ((wide, "right"), (narrow, "left")):
        names = {t.get_text(): t for t in fig.axes[0].texts if t.get_text() in ("first", "second")}
        assert {t.get_horizontalalignment() for t in names.values()} == {ha}
    words = {t.get_text(): t.get_position() for t in narrow.axes[0].texts}
    assert words["first"][1] > words["a"][1] > words["second"][1] > words["c"][1]
    assert narrow.axes[0].get_legend()._ncols == 1 and wide.axes[0].get_legend()._ncols == 2
    with pytest.raises(TypeError, match="narrow"):
        viz.word_rows(rows, narrow="yes")


def test_word_rows_narrow_under_constrained_layout_draws_without_a_warning():
    # set_style turns constrained layout on (chapters 10 and 16): it fits the narrow figure
    # itself, and word_rows no longer asks for margins the layout would refuse with a warning
    import warnings

    rows = [("first", ["a", "b"])]
    with plt.rc_context({"figure.constrained_layout.use": True}), warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = viz.word_rows(rows, fontsize=11, narrow=True, figsize=(5.2, 2))
    assert fig.get_layout_engine() is not None
    plain = viz.word_rows(rows, fontsize=11, narrow=True, figsize=(5.2, 2))
    if plain.get_layout_engine() is None:
        assert plain.subplotpars.left == 0.02 and plain.subplotpars.right == 0.98


def _gap_above_the_key(n_keys, fontsize):
    # inches between the lowest word box and the top of the key of a narrow word_rows figure
    rows = [("sentence", "the letters under the chair were in the kitchen .".split())] * 2
    legend = [("white", f"key {k}") for k in range(n_keys)]
    fig = viz.word_rows(
        rows, legend=legend, figsize=(5.2, None), width=46, fontsize=fontsize, narrow=True
    )
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    lowest = min(
        t.get_bbox_patch().get_window_extent(renderer).y0
        for t in ax.texts
        if t.get_bbox_patch() is not None
    )
    key = ax.get_legend().get_window_extent(renderer)
    assert key.y0 >= 0  # the key inside the figure
    plt.close(fig)
    return (lowest - key.y1) / fig.dpi


@pytest.mark.parametrize("n_keys", [1, 2, 4, 6])
@pytest.mark.parametrize("fontsize", [9, 11, 14])
def test_word_rows_narrow_puts_the_key_just_below_the_words(n_keys, fontsize):
    """Chapter 14's masking slider (reader's report s3): the key, one entry a line, follows the last
    row of words after a small gap, not a band of blank space about an inch high; and never
    overlaps it, in the book's style (constrained layout, as the notebooks draw)."""
    with plt.rc_context():
        viz.set_style()
        assert 0.1 < _gap_above_the_key(n_keys, fontsize) < 0.4


def test_chapter_10_merges_slider_fits_a_phone_and_its_title_clears_the_words():
    """Chapter 10's slider (reader's reports s15 and s23): 15-point pieces on a 5-inch figure, about
    13 CSS px on a 360 px phone; its longest row, tokenization at 0 merges (12 letters and </w>), on
    one line; and its four-line title, set with pad=22, clear of the first word's name and inside the
    figure, its longest line (the symbols new at 5,000 merges) included."""
    words = ["algorithms", "booleans", "ascending", "tokenization", "unaffable"]
    rows = [(w, [*w, "</w>"]) for w in words]
    with plt.rc_context():
        viz.set_style()
        with plt.rc_context(viz.PHONE_RC):
            fig = viz.word_rows(rows, figsize=(5.0, 5.0), width=60, fontsize=15, narrow=True)
            title = (
                "5,000 merges: vocabulary 5,076,\nheld-out text 1.05 tokens per unit\n"
                "most used of the 3,000 new:\nview</w>, represent</w>, dictionaries</w>"
            )
            fig.axes[0].set_title(title, fontsize=15, loc="left", pad=22)
            fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [t for t in ax.texts if t.get_bbox_patch() is not None]
    lines = {t.get_position()[1] for t in boxes}
    assert len(lines) == len(words)  # no row wraps
    right = max(t.get_bbox_patch().get_window_extent(renderer).x1 for t in boxes)
    assert right < fig.bbox.width
    title = ax._left_title  # set with loc="left": ax.title is the empty centre title
    assert title.get_text().startswith("5,000 merges")
    assert title.get_window_extent(renderer).x1 < fig.bbox.width
    first_name = next(t for t in ax.texts if t.get_text() == "algorithms")
    gap = title.get_window_extent(renderer).y0 - first_name.get_window_extent(renderer).y1
    assert gap / fig.dpi > 0.1  # inches between the title and the first name
    plt.close(fig)


def _overlapping_boxes(fig):
    """The pairs of word boxes of a drawn word_rows figure that overlap, and the boxes that reach
    past the figure's left or right edge."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [
        (t.get_text(), t.get_bbox_patch().get_window_extent(renderer))
        for t in fig.axes[0].texts
        if t.get_bbox_patch() is not None
    ]
    pairs = [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if box_a.overlaps(box_b)
    ]
    outside = [w for w, box in boxes if box.x0 < 0 or box.x1 > fig.bbox.width]
    return pairs, outside


def test_word_rows_boxes_fit_their_words_in_a_narrow_figure():
    """Reader's report s24: in a 5-inch figure at 15 points, 9 letters took more room than the
    estimate of an 11-inch one gave them, and the next box covered the last letter."""
    rows = [("long", ["algorithm", "s</w>", "representation", "x"]), ("short", list("abc"))]
    with plt.rc_context():
        viz.set_style()
        for narrow in (True, False):
            fig = viz.word_rows(rows, figsize=(5.0, 5.0), width=56, fontsize=15, narrow=narrow)
            assert _overlapping_boxes(fig) == ([], [])
            plt.close(fig)


def test_chapter_10_merges_slider_boxes_never_overlap():
    """Chapter 10's slider as the chapter draws it (draw_merges), at every setting, with the
    chapter's 5,000 merges: no box covers another (reader's report s24: at 5,000 merges the box
    of s</w> covered the m of algorithm), and every box lies inside the picture."""
    from collections import Counter

    from lib.bpe import apply_bpe, learn_bpe_fast, pre_tokenize, word_counts
    from lib.data.stories import python_docs_text

    text = python_docs_text().lower()
    cut = text.index("\n\n", int(0.8 * len(text)))  # the chapter's split
    merges = learn_bpe_fast(word_counts(text[:cut]), 5000)
    (path,) = NOTEBOOKS.glob("10_*.ipynb")
    (examples,) = [  # the words the chapter's figure shows, as the chapter lists them
        ast.literal_eval(node.value)
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
        for node in ast.parse(cell.source).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "examples"
    ]
    ns = chapter_figure_code("10", "fig-10-explore-merges", {"plt": plt, "viz": viz})
    settings = ns["SETTINGS"]
    ns.update(
        merges=merges,
        examples=examples,
        apply_bpe=apply_bpe,
        alphabet=sorted(set("".join(pre_tokenize(text[:cut])))),
        # the title's numbers do not move the boxes: placeholders
        ms=settings,
        curve={"docs": [1.0] * len(settings)},
        held_out_counts={m: Counter() for m in settings},
        PHONE=viz.PHONE_RC,
    )
    assert apply_bpe("algorithms", merges) == ["algorithm", "s</w>"]
    with plt.rc_context():
        viz.set_style()  # the chapter's style, constrained layout included
        for m in settings:
            fig = ns["draw_merges"](m)
            assert _overlapping_boxes(fig) == ([], []), f"{m} merges"
            plt.close(fig)
