"""Tables in the chapters: a Markdown table shown in the notebook and on the site (one helper for every
chapter's tables)."""

from __future__ import annotations

from typing import Iterable, Sequence


def _cell(x) -> str:
    """A cell's text: ``<`` escaped (BPE's ``</w>``, ``<pad>`` are not HTML tags) unless the cell is
    code, and no line break (it would end the row); a line break inside a cell is written ``<br>``."""
    text = str(x).replace("\n", " ")
    if text.startswith("`"):
        return text
    return text.replace("<", "&lt;").replace("&lt;br>", "<br>")


def markdown_table(header: Sequence, rows: Iterable[Sequence]) -> str:
    """The Markdown of a table: header [cell, ...], rows [[cell, ...], ...], every row as long as
    the header. Cells are written with ``str``."""
    header = list(header)
    if not header:
        raise ValueError("header: expected at least one column, got none")
    lines = ["| " + " | ".join(map(_cell, header)) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(rows):
        row = list(row)
        if len(row) != len(header):
            raise ValueError(
                f"rows: expected {len(header)} cells in every row (the header's), got {len(row)} in row {i}"
            )
        lines.append("| " + " | ".join(map(_cell, row)) + " |")
    return "\n".join(lines)


def table(header: Sequence, rows: Iterable[Sequence]) -> None:
    """Show a table in the notebook (and on the site): see :func:`markdown_table`."""
    from IPython.display import Markdown, display

    display(Markdown(markdown_table(header, rows)))
