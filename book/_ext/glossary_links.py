"""Sphinx extension: a chapter links a term to the glossary with a plain Markdown link,
``[BLEU](../book/glossary.md#term-BLEU)``, which reads right in Jupyter and Colab (where a MyST
``{term}`` role shows as raw text) and resolves on the site, in the PDF and in the ePub.

MyST resolves ``doc.md#id`` only against the heading anchors it recorded for ``doc`` (its
``myst_slugs``) and warns about any other id, which ``--warningiserror`` turns into a failed build.
A glossary term's id (``term-`` and the term, spaces as hyphens: ``term-teacher-forcing``) is not a
heading, so this extension records every glossary term's id there as well, once the page is read.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx


def _record_terms(app: Sphinx, doctree: nodes.document) -> None:
    slugs = None
    for glossary in doctree.findall(addnodes.glossary):
        for term in glossary.findall(nodes.term):
            if slugs is None:
                metadata = app.env.metadata[app.env.docname]
                slugs = metadata.setdefault("myst_slugs", {})
            for node_id in term["ids"]:
                slugs.setdefault(node_id, (term.line or 0, node_id, term.astext()))


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", _record_terms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
