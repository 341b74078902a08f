"""Write the setup cell of every chapter: the book's CPU kernels, and in Colab the book's library.

The first cell of every notebook (hidden on the site, shown in Colab and Jupyter):
- on an x86 processor, sets the kernel path the book's numbers were computed on (``KERNEL_PATH``, the
  Makefile's and tests/conftest.py's: tests/test_tolerance.py holds the three equal) before torch is
  imported, so a student's run of a chapter gives the text's trained numbers on any x86 machine;
- in Colab, installs the library from the repository URL and ref, which live in one place,
  ``_config.yml`` (``repository.url`` and ``repository.branch``): ``git+<url>@<branch>``. The launch
  buttons open the notebook at the same ``branch`` (``published``, which the deploy workflow moves to
  the commit the site was built from), so the notebook a reader runs in Colab and the library it
  installs are one commit's, the one the page was built from. The ref is a name, not a commit hash:
  a commit cannot hold its own hash, and this cell must equal what ``--check`` computes from
  ``_config.yml`` alone (README, "Publishing the book").
This script writes that cell, and ``--check`` (run by ``make book`` and the tests) fails when a
notebook's cell differs.

    python tools/sync_colab_cell.py          # rewrite the cells
    python tools/sync_colab_cell.py --check  # exit 1 if any notebook is out of date
"""

from __future__ import annotations

import argparse
import inspect
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
TAG = "remove-cell"  # Colab users see the cell; the site does not show it.


def _repository() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]


def repository_url() -> str:
    return _repository()["url"]


def repository_ref() -> str:
    """The branch (or tag) the launch buttons open and the setup cell installs from."""
    ref = str(_repository().get("branch") or "").strip()
    if not ref or any(c.isspace() or c in "@#\"'\\" for c in ref):
        raise ValueError(f"repository.branch in _config.yml must be a git ref name, got {ref!r}")
    return ref


# PyTorch's AVX2 kernels, MKL's COMPATIBLE branch of conditional numerical reproducibility, oneDNN
# capped at AVX2 (README, "Numbers on any CPU"): Intel processors then train to the text's numbers (an
# AMD EPYC still trains to others, and its run prints lib.prose's notes where they differ). Most x86 processors of the last decade run AVX2, not all (some Pentium, Celeron and Atom
# chips sold until about 2020 do not), and
# PyTorch takes ATEN_CPU_CAPABILITY=avx2 without asking the processor: the cell sets the path only where
# the processor says it has AVX2.
KERNEL_PATH = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}


# The setup cell carries this function's text (colab_cell_source), and the grader's sandbox calls it
# (tools/sandbox.py): one detection for both.
def has_avx2():  # whether the processor says it runs AVX2 (Linux, macOS, Windows)
    try:
        if sys.platform.startswith("linux"):
            with open("/proc/cpuinfo") as f:
                return "avx2" in f.read().split()
        if sys.platform == "darwin":
            leaf7 = ["sysctl", "-n", "machdep.cpu.leaf7_features"]
            out = subprocess.run(leaf7, capture_output=True, text=True).stdout
            return "AVX2" in out.split()
        if sys.platform == "win32":
            import ctypes

            # 40: PF_AVX2_INSTRUCTIONS_AVAILABLE
            return bool(ctypes.windll.kernel32.IsProcessorFeaturePresent(40))
    except OSError:
        pass
    return False


PREFIXES = ("# Setup:", "# Colab setup:")  # the cell's first line, now and before


def colab_cell_source(url: str | None = None, ref: str | None = None) -> str:
    """The setup cell, as ruff formats it (make test checks the notebooks' format)."""
    url, ref = url or repository_url(), ref or repository_ref()
    pairs = "".join(f'        "{name}": "{value}",\n' for name, value in KERNEL_PATH.items())
    avx2_source = inspect.getsource(has_avx2)
    return f"""\
# Setup: the same CPU kernels as the book's build, and in Colab the book's library.
# On an x86 processor that runs AVX2 code (most of the last ten years do; some
# low-end Pentium, Celeron and Atom chips do not), PyTorch and its math libraries
# are told to use it: the code the book's numbers were computed with, so training
# here gives what the text says, or close to it (a note names a number another
# processor changes). It works only before torch is first imported.
import os
import platform
import subprocess
import sys


{avx2_source}

x86 = platform.machine().lower() in ("x86_64", "amd64")
if x86 and "torch" not in sys.modules and has_avx2():
    for name, value in {{
{pairs}    }}.items():
        os.environ.setdefault(name, value)
if "google.colab" in sys.modules:
    # the library from the commit this notebook was opened at (the launch button's ref)
    package = "git+{url}@{ref}"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)"""


def chapters() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.source.startswith(PREFIXES)


def replace_first_cell(path: Path, source: str) -> None:
    """Rewrite only the setup cell, keeping the file's layout (nbformat.write would sort every cell's
    metadata keys: a diff in every chapter, and merge conflicts with whoever edits the chapter)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = nb["cells"][0]
    cell["source"] = source.splitlines(keepends=True)
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if TAG not in tags:
        tags.append(TAG)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only check; exit 1 if a notebook is out of date"
    )
    args = parser.parse_args()
    source, stale = colab_cell_source(), []
    for path in chapters():
        nb = nbformat.read(path, as_version=4)
        first = nb.cells[0] if nb.cells else None
        if (
            first is not None
            and is_setup_cell(first)
            and first.source == source
            and TAG in first.metadata.get("tags", [])
        ):
            continue
        stale.append(path.name)
        if not args.check:
            if first is not None and is_setup_cell(first):
                replace_first_cell(path, source)
            else:
                nb.cells.insert(0, nbformat.v4.new_code_cell(source, metadata={"tags": [TAG]}))
                nbformat.write(nb, path)
    if args.check and stale:
        print(f"setup cell out of date in {stale}: run `make sync`", file=sys.stderr)
        return 1
    if stale:
        print(f"updated {stale}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
