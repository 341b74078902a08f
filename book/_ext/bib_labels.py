"""Sphinx extension: the references page's labels keep the year's a and b.

Two papers whose author-year citations would read alike get a and b after the year in
``book/references.bib`` ("Mikolov et al., 2013a" and "2013b"). Pybtex's alpha labels take the
last two characters of the year, which made [MCCD3a] and [MSC+3b] of them; this label style takes
the year's last two digits and then its letter: [MCCD13a], [MSC+13b]. Set by
``bibtex_default_style: alpha_year`` in ``_config.yml``.
"""

from __future__ import annotations

import re

from pybtex.plugin import register_plugin
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.labels.alpha import LabelStyle as AlphaLabelStyle
from sphinx.application import Sphinx


class LabelStyle(AlphaLabelStyle):
    def format_label(self, entry):
        year = entry.fields.get("year", "")
        match = re.fullmatch(r"\d\d(\d\d)([a-z]?)", year)
        if not match:
            return super().format_label(entry)
        without_year = super().format_label(entry)[: -len(year[-2:])]
        return without_year + match.group(1) + match.group(2)


class Style(AlphaStyle):
    default_label_style = "alpha_year"


register_plugin("pybtex.style.labels", "alpha_year", LabelStyle)
register_plugin("pybtex.style.formatting", "alpha_year", Style)


def setup(app: Sphinx) -> dict:
    return {"parallel_read_safe": True, "parallel_write_safe": True}
