"""tools/chapter_cache.py's ``fill``: make book executes the chapters the cache lacks, two at a time,
and stores them where the build (myst-nb's cache mode) finds them; a chapter that fails is left out."""

import os
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_cache import get_cache

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import chapter_cache  # noqa: E402


def notebook(path: Path, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


def test_fill_caches_what_ran_and_leaves_out_what_failed(tmp_path, monkeypatch):
    # unset: each kernel gets the cores shared among the jobs (read back below)
    monkeypatch.delenv("OMP_NUM_THREADS")
    cache_dir = tmp_path / "cache"
    good = notebook(
        tmp_path / "a.ipynb",
        "import os, torch\nx = 6 * 7",
        "print(x, torch.get_num_threads(), os.getcwd())",
    )
    bad = notebook(tmp_path / "b.ipynb", "x = 1", "raise ValueError('chapter b is broken')")
    assert chapter_cache.missing([good, bad], cache_dir) == [good, bad]

    assert chapter_cache.fill(2, [good, bad], cache_dir) == 1

    assert chapter_cache.missing([good, bad], cache_dir) == [bad]
    cache = get_cache(str(cache_dir))
    record = cache.match_cache_notebook(nbformat.read(good, as_version=4))
    assert record.data["execution_seconds"] > 0
    executed = cache.get_cache_bundle(record.pk).nb
    printed = executed.cells[1].outputs[0].text.split()
    # the cell ran in the notebook's folder (as the build runs a chapter) on the threads it was given
    assert printed == ["42", str(max(1, os.cpu_count() // 2)), str(tmp_path)]
    # nothing left to run: a second fill executes nothing
    assert chapter_cache.fill(1, [good], cache_dir) == 0


@pytest.mark.parametrize("jobs", [0, -1])
def test_fill_refuses_fewer_than_one_job(jobs, tmp_path):
    with pytest.raises(ValueError, match=rf"jobs must be 1 or more, got {jobs}"):
        chapter_cache.fill(jobs, [], tmp_path)


@pytest.mark.parametrize("jobs", [1.5, True, "2"])
def test_fill_refuses_a_number_of_jobs_that_is_not_an_int(jobs, tmp_path):
    with pytest.raises(TypeError, match=r"jobs must be an int, got \w+ "):
        chapter_cache.fill(jobs, [], tmp_path)


def test_the_command_executes_only_the_named_chapters(monkeypatch):
    """Lecturer review s23, M7: `chapter_cache.py --jobs 2` executed every chapter the cache lacks
    (all 18 in a fresh clone); `--jobs 2 03 07 15` executes only those three."""
    filled = []
    monkeypatch.setattr(chapter_cache, "prepare", lambda: 0)
    monkeypatch.setattr(chapter_cache, "fill", lambda jobs, chapters=None: filled.append(chapters))
    assert chapter_cache.main(["--jobs", "2", "03", "07", "15"]) == 0
    assert [p.stem[:2] for p in filled[0]] == ["03", "07", "15"]
    assert chapter_cache.main(["--jobs", "2"]) == 0 and filled[1] is None  # every chapter
    with pytest.raises(SystemExit):
        chapter_cache.main(["--jobs", "2", "99"])


def test_the_teachers_pages_cheap_slides_path_names_its_chapters():
    """Lecturer review s23, M7: the page's cheap path executes only the chapters of the decks."""
    page = " ".join((ROOT / "book" / "teachers.md").read_text(encoding="utf-8").split())
    assert "`python tools/make_slides.py --exclude-answers 13 18 --cache" in page
    assert (
        "`python tools/chapter_cache.py --jobs 2 13 18`, which executes only the chapters" in page
    )
