"""The book's files agree with each other: table of contents, notebooks, Colab setup cells, pins."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import sync_colab_cell  # noqa: E402

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def test_every_chapter_is_in_the_toc_and_every_toc_entry_exists():
    files = toc_files()
    assert CHAPTERS, "no chapter notebooks found"
    for path in CHAPTERS:
        assert f"notebooks/{path.stem}" in files, f"{path.name} is not in _toc.yml"
    for entry in files:
        assert any((ROOT / f"{entry}{ext}").exists() for ext in (".md", ".ipynb")), (
            f"_toc.yml: {entry} missing"
        )


def test_chapters_are_stored_without_outputs():
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        executed = [
            i
            for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and (c.outputs or c.execution_count)
        ]
        assert not executed, (
            f"{path.name}: cells {executed} carry outputs; the book executes chapters when it builds"
        )


def test_colab_cell_comes_from_the_repository_url_in_config():
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert re.match(r"https://github\.com/[\w.-]+/[\w.-]+$", url)
    expected = sync_colab_cell.colab_cell_source()
    assert f"git+{url}" in expected
    for path in CHAPTERS:
        first = nbformat.read(path, as_version=4).cells[0]
        assert first.cell_type == "code" and first.source == expected, (
            f"{path.name}: run `make sync`"
        )
        assert "remove-cell" in first.metadata.get("tags", [])


def test_chapters_are_valid_notebooks_with_cell_ids():
    # nbformat 4.5 requires an id on every cell (a missing one is a warning today, an error tomorrow)
    for path in CHAPTERS:
        raw = json.loads(path.read_text(encoding="utf-8"))
        missing = [i for i, c in enumerate(raw["cells"]) if "id" not in c]
        assert not missing, f"{path.name}: cells without an id: {missing}"
        ids = [c["id"] for c in raw["cells"]]
        assert len(set(ids)) == len(ids), f"{path.name}: duplicate cell ids"
        nbformat.validate(nbformat.reads(json.dumps(raw), as_version=4))


def test_no_cell_is_skipped_or_allowed_to_fail():
    # every cell runs when the book is built and when nbval tests it: optional online cells guard
    # themselves (BOOK_ONLINE, which the Makefile empties) instead of being skipped
    hiding = {"skip-execution", "nbval-skip", "raises-exception", "nbval-ignore-output"}
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            tags = hiding & set(cell.metadata.get("tags", []))
            assert not tags, f"{path.name}, cell {i}: tagged {sorted(tags)}"
            assert (
                "NBVAL_SKIP" not in cell.source and "NBVAL_RAISES_EXCEPTION" not in cell.source
            ), f"{path.name}, cell {i}"


def test_the_chapters_check_cells_are_hidden_on_the_site():
    # "# @title Check the numbers above": the book's self-test, folded in Colab by its form and
    # hidden on the site by its tag (one left untagged showed ~25 lines of asserts in chapter 18's
    # reading flow, reader s27)
    shown = []
    for path in CHAPTERS:
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "code" and cell.source.startswith("# @title Check"):
                if not {"remove-input", "remove-cell"} & set(cell.metadata.get("tags", [])):
                    shown.append(f"{path.name}, cell {i}")
    assert not shown, f"tag these check cells remove-input: {shown}"


def test_each_chapter_has_one_title_and_exercises():
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        titles = re.findall(r"^# \S.*$", markdown, flags=re.MULTILINE)
        assert len(titles) == 1, f"{path.name}: expected one H1 title, found {titles}"
        assert re.search(r"^## Exercises", markdown, flags=re.MULTILINE), (
            f"{path.name}: no Exercises section"
        )


def test_figures_have_captions_names_and_alt_text():
    names = set()
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            meta = cell.metadata.get("mystnb", {})
            if "figure" in meta:
                assert len(meta["figure"].get("caption", "")) > 20, (
                    f"{path.name}: short caption {meta}"
                )
                assert len(meta.get("image", {}).get("alt", "")) > 20, (
                    f"{path.name}: figure without alt text {meta}"
                )
                name = meta["figure"].get("name")
                assert name and name not in names, (
                    f"{path.name}: missing or duplicate figure name {name}"
                )
                names.add(name)


def test_torch_is_pinned_to_the_cpu_wheel():
    pins = (ROOT / "requirements.txt").read_text().splitlines()
    assert "torch==2.13.0" in pins
    assert any(line.startswith("jupyter-book==1.") for line in pins)


def test_browser_assets_are_pinned_exactly():
    deps = json.loads((ROOT / "package.json").read_text())["dependencies"]
    for name in ("mathjax", "requirejs", "d3", "jquery", "@jupyter-widgets/html-manager"):
        assert re.fullmatch(r"\d+\.\d+\.\d+", deps[name]), (
            f"package.json: {name} must be an exact version"
        )


def test_no_tracked_file_holds_a_merge_conflict_marker():
    """Session s34: two merges left git's markers in book/teachers.md's hand-written part, where
    tools/teachers_page.py --check does not look. A line opening with seven '<' or '>' and a space is
    a marker in any text file of the repository."""
    import subprocess

    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    marker = re.compile(r"^(<{7}|>{7}) ", re.M)
    found = []
    for name in filter(None, files):
        path = ROOT / name
        if path.suffix in {".png", ".xz", ".onnx", ".safetensors", ".pt", ".gz", ".woff2"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        found += [f"{name}: {m.group(0)!r}" for m in marker.finditer(text)]
    assert not found, found


def test_a_folded_boxs_title_is_plain_text():
    """A click on emphasis or code inside a dropdown's title does not open it (the toggle listens
    on the title, and the click lands on the <em>: reader s36b, ch17): titles are plain text."""
    marked = re.compile(r":::\{admonition\} ([^\n]*(`|\*[^*\s][^*\n]*\*)[^\n]*)")
    found = _in_chapters_prose(marked, group=1)
    assert not found, found


def _in_chapters_prose(pattern: re.Pattern, group: int = 0) -> list[str]:
    """Every match of ``pattern`` in the chapters' Markdown cells, as "chapter: match"."""
    return [
        f"{path.name}: {m.group(group)}"
        for path in CHAPTERS
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "markdown"
        for m in pattern.finditer(cell.source)
    ]


def test_the_prose_does_not_name_the_sites_fold_buttons():
    """The printed book and the ePub have no "Show code cell source" button (their folded code is left
    out): prose that names it reads wrong there (chapter 4's exercise 3, caught only by the PDF's text,
    tests/site/test_print_pdf.py). A check on the source, without a build."""
    found = _in_chapters_prose(re.compile(r"(Show|Hide) code cell", re.I))
    assert not found, found
