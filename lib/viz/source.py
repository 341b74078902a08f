"""The library's own source, shown in a chapter: what the reader reads is what runs.

``show_source("lib.gpt.Block")`` displays the class as it is in the installed library, read by
:func:`inspect.getsource` when the cell runs, as a highlighted Python block (Markdown, so that the
site's theme, Jupyter and Colab highlight it alike) under a line naming the file and line numbers.
A chapter names the object by its dotted path, so tests/test_source_view.py can find every piece a
chapter shows and check that it still exists and fits a screen (``MAX_LINES``).
"""

from __future__ import annotations

import importlib
import inspect
import textwrap
from pathlib import Path

from lib._validate import check_bool

__all__ = ["MAX_LINES", "SourceView", "resolve", "show_source"]

MAX_LINES = 40  # a screen: a piece longer than this is not read, it is scrolled


def resolve(path: str):
    """The object at a dotted path such as ``"lib.gpt.Block.forward"``: the longest importable
    module prefix, then attributes."""
    if not isinstance(path, str) or not path.startswith("lib."):
        raise ValueError(
            f"path: expected a dotted name in the library such as 'lib.gpt.Block', got {path!r}"
        )
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                raise ValueError(
                    f"path: {'.'.join(parts[:cut])} has no attribute {name!r} (in {path!r})"
                )
            obj = getattr(obj, name)
        return obj
    raise ValueError(f"path: no module of the library in {path!r}")


def _strip_docstring(src: str) -> str:
    """The source without the object's own docstring (the chapter's prose says it instead)."""
    import ast

    tree = ast.parse(src)
    node = tree.body[0]
    body = getattr(node, "body", [])
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        lines = src.splitlines(keepends=True)
        doc = body[0]
        del lines[doc.lineno - 1 : doc.end_lineno]
        return "".join(lines)
    return src


class SourceView:
    """A piece of the library's source: ``text`` (dedented), ``file``, and the ``first_line`` and
    ``last_line`` it spans in the file (docstring included), shown as a highlighted block
    (``_repr_markdown_``) or plain text (``repr``); ``docstring_left_out`` when the text is the
    source without the docstring the object has, ``lines_elided`` how many lines of one block it
    shows as ``...`` (the caption says both)."""

    def __init__(
        self,
        path: str,
        text: str,
        file: str,
        first_line: int,
        last_line: int,
        docstring_left_out: bool = False,
        lines_elided: int = 0,
    ):
        self.path, self.text, self.file = path, text, file
        self.first_line, self.last_line = first_line, last_line
        self.docstring_left_out = docstring_left_out
        self.lines_elided = lines_elided

    @property
    def n_lines(self) -> int:
        return len(self.text.rstrip("\n").splitlines())

    def _caption(self) -> str:
        span = f"lines {self.first_line}-{self.last_line}"
        if self.docstring_left_out:
            span += ", docstring left out"
        if self.lines_elided:
            span += f", {self.lines_elided} lines shown as ..."
        return f"`{self.path}`, from `{self.file}` ({span})"

    def _repr_markdown_(self) -> str:
        return f"{self._caption()}\n\n```python\n{self.text.rstrip()}\n```\n"

    def __repr__(self) -> str:
        return f"# {self.path} ({self.file}, line {self.first_line})\n{self.text.rstrip()}"


def _elide(text: str, elide) -> tuple[str, int]:
    """``text`` with the body of the block that the line ``elide[0]`` opens (stripped of its
    indentation, it must occur once) replaced by one line ``...  # elide[1]``; and how many lines
    that body had."""
    if (
        not isinstance(elide, tuple)
        or len(elide) != 2
        or not all(isinstance(part, str) and part.strip() for part in elide)
    ):
        raise TypeError(
            "elide: expected None or a pair of non-empty strings (the line that opens the block, "
            f"the note that replaces its body), got {elide!r}"
        )
    opener, note = elide
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.strip() == opener.strip()]
    if len(hits) != 1:
        raise ValueError(
            f"elide: expected a line {opener.strip()!r} that occurs once in the source, found it "
            f"{len(hits)} times"
        )
    start = hits[0]
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():  # blank lines after the block stay
        end -= 1
    if end == start + 1:
        raise ValueError(f"elide: the line {opener.strip()!r} opens no indented block")
    body_indent = len(lines[start + 1]) - len(lines[start + 1].lstrip())
    shown = lines[: start + 1] + [" " * body_indent + f"...  # {note.strip()}\n"] + lines[end:]
    return "".join(shown), end - start - 1


def show_source(path: str, *, docstring: bool = False, elide=None) -> SourceView:
    """The current source of the library object at ``path`` (a dotted name, ``"lib.gpt.Block"``),
    dedented, without its docstring unless ``docstring=True``. Display it as a cell's last value.

    ``elide=(line, note)`` shows the block that ``line`` opens (``"if self.norm_first:"``) as one
    line ``...  # note``, for a branch that the chapter leaves to an exercise; the caption says how
    many lines are left out."""
    check_bool(docstring, "docstring")
    obj = resolve(path)
    try:
        lines, first = inspect.getsourcelines(obj)
    except TypeError as e:
        raise TypeError(
            f"path: {path!r} names a {type(obj).__name__}, which has no source of its own"
        ) from e
    full = textwrap.dedent("".join(lines))
    text = full if docstring else _strip_docstring(full)
    elided = 0
    if elide is not None:
        text, elided = _elide(text, elide)
    file = Path(inspect.getsourcefile(obj)).resolve()
    root = Path(__file__).resolve().parents[2]
    try:
        shown = file.relative_to(root).as_posix()
    except ValueError:
        shown = file.name
    return SourceView(
        path,
        text,
        shown,
        first,
        first + len(lines) - 1,
        _strip_docstring(full) != full and not docstring,
        elided,
    )
