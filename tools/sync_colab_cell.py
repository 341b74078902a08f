"""Write the Colab setup cell of every chapter from the repository URL in _config.yml.

The repository URL lives in one place, ``_config.yml`` (``repository.url``). The first cell of every
notebook installs the library from that URL when the notebook runs in Colab; this script writes that
cell, and ``--check`` (run by ``make book`` and the tests) fails when a notebook's cell differs.

    python tools/sync_colab_cell.py          # rewrite the cells
    python tools/sync_colab_cell.py --check  # exit 1 if any notebook is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
TAG = "remove-cell"  # Colab users see the cell; the site does not show it.


def repository_url() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"]


def colab_cell_source(url: str | None = None) -> str:
    """The setup cell, as ruff formats it (make test checks the notebooks' format)."""
    url = url or repository_url()
    return f"""\
# Colab setup: installs the book's library in Colab; does nothing elsewhere.
import subprocess
import sys

if "google.colab" in sys.modules:
    package = "git+{url}"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)"""


def chapters() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and cell.source.startswith("# Colab setup:")


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
            cell = nbformat.v4.new_code_cell(source, metadata={"tags": [TAG]})
            if first is not None and is_setup_cell(first):
                cell.id = first.get("id", cell.id)
                nb.cells[0] = cell
            else:
                nb.cells.insert(0, cell)
            nbformat.write(nb, path)
    if args.check and stale:
        print(f"Colab setup cell out of date in {stale}: run `make sync`", file=sys.stderr)
        return 1
    if stale:
        print(f"updated {stale}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
