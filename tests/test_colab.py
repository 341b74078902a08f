"""The chapters run as they do in Colab (issues 31 and 32): opened from the repository, with the book's
library installed by the chapter's own setup cell, not found in a checkout.

Colab is simulated here, offline, as closely as its differences from the build matter:

- **its Python** is a virtual environment of its own that sees the packages Colab brings (torch,
  matplotlib, transformers...: the book's environment's site-packages, added as a plain path, so the
  book's editable install of ``lib``, which a ``.pth`` file's import hook provides, is not seen) and
  has no ``lib`` until the setup cell installs it;
- **its kernel** has ``google.colab`` imported before the first cell (Colab's kernel imports it when it
  starts; an IPython startup file does it here), so the setup cell takes its Colab branch and runs
  ``pip install git+<repository>@<ref>``;
- **the repository** that pip clones is a git repository made from this working tree's package files
  (``lib``, ``pyproject.toml``, ``README.md``, ``LICENSE``) with the ref the cell names: git's
  ``url.<base>.insteadOf`` sends the cell's GitHub address there, so the cell runs as written;
- **the working folder** is an empty one, like Colab's ``/content``: the notebook alone, no
  repository files around it.

The chapter then runs top to bottom, every cell (worked solutions included), and must raise nothing;
the ``lib`` it used must be the one pip installed into the simulated Colab environment.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import sync_colab_cell  # noqa: E402

# the two chapters of "Attention today" (issues 31 and 32); the other chapters share their setup cell
CHAPTERS = ["17_modern_decoder", "18_attention_at_scale"]
PACKAGE_FILES = ["lib", "pyproject.toml", "README.md", "LICENSE"]
STARTUP = """\
import sys
import types

# Colab's kernel has imported google.colab by the time the first cell runs
sys.modules["google.colab"] = types.ModuleType("google.colab")
"""


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _remote(root: Path) -> Path:
    """A git repository holding the working tree's package files on the ref the setup cell installs."""
    remote = root / "remote"
    remote.mkdir()
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source, remote / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            shutil.copy2(source, remote / name)
    _git("init", "-q", "-b", sync_colab_cell.repository_ref(), cwd=remote)
    _git("add", "-A", cwd=remote)
    _git(
        "-c", "user.name=test", "-c", "user.email=test@example.invalid",
        "commit", "-q", "-m", "the package as the repository serves it",
        cwd=remote,
    )  # fmt: skip
    return remote


def _python(root: Path) -> Path:
    """Colab's Python: a fresh environment with pip that sees the book's packages but not its lib."""
    env = root / "colab-python"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    # a plain path: its own .pth files (the editable install of lib among them) are not processed
    (Path(site) / "colab-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    root = tmp_path_factory.mktemp("colab")
    remote, python = _remote(root), _python(root)
    kernels = root / "jupyter" / "kernels" / "colab"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Colab (simulated)",
                "language": "python",
            }
        )
    )
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text(STARTUP)
    return {
        "root": root,
        "python": python,
        "env": {
            "JUPYTER_PATH": str(root / "jupyter"),
            "IPYTHONDIR": str(root / "ipython"),
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": f"url.file://{remote}.insteadOf",
            "GIT_CONFIG_VALUE_0": sync_colab_cell.repository_url(),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        },
    }


def test_the_simulation_has_no_lib_before_the_setup_cell(colab):
    """Without the setup cell's install, the simulated Colab Python cannot import the book's lib (else
    the test below would prove nothing)."""
    found = subprocess.run(
        [str(colab["python"]), "-c", "import importlib.util as u; print(u.find_spec('lib'))"],
        cwd=colab["root"], capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert found == "None"


@pytest.mark.parametrize("name", CHAPTERS)
def test_the_chapter_runs_in_colab(colab, name, monkeypatch):
    for key, value in colab["env"].items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    content = colab["root"] / f"content-{name}"  # Colab's /content: the notebook alone
    content.mkdir()
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    assert sync_colab_cell.repository_url() in nb.cells[0].source, (
        "the setup cell installs the book"
    )
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "import google.colab, lib, torch\nprint('LIB', lib.__file__)\nprint('TORCH', torch.__file__)"
        )
    )
    client = NotebookClient(
        nb, timeout=600, kernel_name="colab", resources={"metadata": {"path": str(content)}}
    )
    client.execute()  # raises CellExecutionError on the first cell that raises
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    lib_file = Path(printed.split("LIB ")[1].split()[0])
    assert colab["root"] / "colab-python" in lib_file.parents, (
        f"the chapter used a lib that the setup cell did not install: {lib_file}"
    )
    assert ROOT not in lib_file.parents
