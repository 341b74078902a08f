"""The quiz bank as an IMS QTI 1.2 package that Canvas imports (tools/quiz_bank.py --qti quiz.zip).

Canvas: *Settings*, *Import course content*, content type *QTI .zip file*. The package is
``imsmanifest.xml`` and one assessment, ``<ident>/<ident>.xml``, the resource of type
``imsqti_xmlv1p2`` that the manifest names. Decided here (lecturer review, item M3):

- one quiz, one **section per question** holding its variants, with ``selection_number`` 1 and
  ``points_per_item``: Canvas makes each section a *question group* ("pick 1 question"), so each
  student draws one variant of each question, as Moodle's *random question* from a category does;
- each item says its Canvas type in ``qtimetadata`` ``question_type`` (``numerical_question``,
  ``multiple_choice_question``, ``essay_question``) and its ``points_possible``: 1, an essay its
  rubric's points (one a criterion, as in the Moodle file);
- a numerical answer is right if it equals the key or lies in [key - tolerance, key + tolerance]
  (``varequal`` or ``vargte`` and ``varlte``, as Canvas's own export writes an absolute margin);
- a multiple-choice item sets SCORE 100 for the right choice's ident; each choice's feedback is an
  ``itemfeedback`` shown when it is chosen (the checker's advice for a wrong one);
- Canvas has no "information for graders": an essay's rubric and model answer are its general
  feedback (``general_fb``), which students see after submitting if the quiz shows feedback.
"""

from __future__ import annotations

import html
import io
import random
import xml.etree.ElementTree as ET
import zipfile
from itertools import groupby
from pathlib import Path

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
TYPES = {
    "numerical": "numerical_question",
    "multichoice": "multiple_choice_question",
    "essay": "essay_question",
}


def points(q) -> int:
    """1 for a numerical or multiple-choice question, an essay its rubric's criteria."""
    return len(q.criteria) if q.kind == "essay" else 1


def _number(x: float) -> str:
    return format(float(x), ".12g")


def _field(parent: ET.Element, label: str, entry: str) -> None:
    f = ET.SubElement(parent, "qtimetadatafield")
    ET.SubElement(f, "fieldlabel").text = label
    ET.SubElement(f, "fieldentry").text = entry


def _material(parent: ET.Element, text: str, texttype: str = "text/html") -> None:
    ET.SubElement(ET.SubElement(parent, "material"), "mattext", {"texttype": texttype}).text = text


def _feedback(item: ET.Element, ident: str, text: str) -> None:
    fb = ET.SubElement(item, "itemfeedback", {"ident": ident})
    _material(ET.SubElement(fb, "flow_mat"), text)


def _show(res: ET.Element, ident: str, when: ET.Element | None = None) -> None:
    """A condition that shows feedback ``ident`` (always, or when ``when`` holds) and goes on."""
    cond = ET.SubElement(res, "respcondition", {"continue": "Yes"})
    cv = ET.SubElement(cond, "conditionvar")
    cv.append(when if when is not None else ET.Element("other"))
    ET.SubElement(cond, "displayfeedback", {"feedbacktype": "Response", "linkrefid": ident})


def _score(res: ET.Element, when: ET.Element) -> None:
    cond = ET.SubElement(res, "respcondition", {"continue": "No"})
    ET.SubElement(cond, "conditionvar").append(when)
    ET.SubElement(cond, "setvar", {"action": "Set", "varname": "SCORE"}).text = "100"


def _var(tag: str, value: str) -> ET.Element:
    el = ET.Element(tag, {"respident": "response1"})
    el.text = value
    return el


def item(q) -> ET.Element:
    """One variant as a QTI item of Canvas's type."""
    ident = f"{q.id}_{q.seed}"
    el = ET.Element("item", {"ident": ident, "title": q.title})
    meta = ET.SubElement(ET.SubElement(el, "itemmetadata"), "qtimetadata")
    _field(meta, "question_type", TYPES[q.kind])
    _field(meta, "points_possible", f"{points(q):.1f}")
    presentation = ET.SubElement(el, "presentation")
    _material(presentation, q.text)
    res = ET.SubElement(el, "resprocessing")
    ET.SubElement(
        ET.SubElement(res, "outcomes"),
        "decvar",
        {"maxvalue": "100", "minvalue": "0", "varname": "SCORE", "vartype": "Decimal"},
    )
    general = q.feedback
    if q.kind == "essay":
        criteria = "".join(f"<li>{html.escape(c)} (1 point)</li>" for c in q.criteria)
        general = (
            f"<p>Rubric, {len(q.criteria)} points:</p><ol>{criteria}</ol>"
            f"<p>Model answer: {html.escape(q.model)}</p>"
        )
    if general:
        _show(res, "general_fb")
    if q.kind == "numerical":
        fib = ET.SubElement(
            ET.SubElement(
                presentation, "response_str", {"ident": "response1", "rcardinality": "Single"}
            ),
            "render_fib",
            {"fibtype": "Decimal"},
        )
        ET.SubElement(fib, "response_label", {"ident": "answer1"})
        either = ET.Element("or")
        either.append(_var("varequal", _number(q.answer)))
        both = ET.SubElement(either, "and")
        both.append(_var("vargte", _number(q.answer - q.tolerance)))
        both.append(_var("varlte", _number(q.answer + q.tolerance)))
        _score(res, either)
    elif q.kind == "multichoice":
        lid = ET.SubElement(
            presentation, "response_lid", {"ident": "response1", "rcardinality": "Single"}
        )
        render = ET.SubElement(lid, "render_choice")
        choices = random.Random(q.seed).sample(
            q.choices, len(q.choices)
        )  # the key not always first
        for k, c in enumerate(choices):
            label = ET.SubElement(render, "response_label", {"ident": f"{ident}_{k}"})
            _material(label, c.text, "text/plain")
        for k, c in enumerate(choices):
            if c.feedback:
                _show(res, f"{ident}_{k}_fb", _var("varequal", f"{ident}_{k}"))
        right = next(k for k, c in enumerate(choices) if c.correct)
        _score(res, _var("varequal", f"{ident}_{right}"))
    else:
        fib = ET.SubElement(
            ET.SubElement(
                presentation, "response_str", {"ident": "response1", "rcardinality": "Single"}
            ),
            "render_fib",
        )
        ET.SubElement(fib, "response_label", {"ident": "answer1", "rshuffle": "No"})
        cond = ET.SubElement(res, "respcondition", {"continue": "No"})
        ET.SubElement(ET.SubElement(cond, "conditionvar"), "other")
    if general:
        _feedback(el, "general_fb", general)
    for k, c in enumerate(choices if q.kind == "multichoice" else []):
        if c.feedback:
            text = c.feedback if c.correct else f"<p>{html.escape(c.feedback)}</p>"
            _feedback(el, f"{ident}_{k}_fb", text)
    return el


def assessment(questions: list, ident: str, title: str) -> str:
    """The QTI assessment: one section (a Canvas question group, pick 1) per question."""
    root = ET.Element("questestinterop", {"xmlns": QTI_NS})
    test = ET.SubElement(root, "assessment", {"ident": ident, "title": title})
    _field(ET.SubElement(test, "qtimetadata"), "cc_maxattempts", "1")
    top = ET.SubElement(test, "section", {"ident": "root_section"})
    for name, group in groupby(questions, key=lambda q: q.id):
        group = list(group)
        section = ET.SubElement(
            top,
            "section",
            {"ident": f"group_{name}", "title": f"ch{group[0].chapter} {group[0].title}"},
        )
        selection = ET.SubElement(ET.SubElement(section, "selection_ordering"), "selection")
        ET.SubElement(selection, "selection_number").text = "1"
        extension = ET.SubElement(selection, "selection_extension")
        ET.SubElement(extension, "points_per_item").text = f"{points(group[0]):.1f}"
        for q in group:
            section.append(item(q))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def manifest(ident: str) -> str:
    """imsmanifest.xml: one resource, the assessment file, of QTI 1.2's type."""
    root = ET.Element("manifest", {"identifier": f"{ident}_manifest", "xmlns": CP_NS})
    meta = ET.SubElement(root, "metadata")
    ET.SubElement(meta, "schema").text = "IMS Content"
    ET.SubElement(meta, "schemaversion").text = "1.1.3"
    ET.SubElement(root, "organizations")
    resource = ET.SubElement(
        ET.SubElement(root, "resources"),
        "resource",
        {"identifier": ident, "type": "imsqti_xmlv1p2"},
    )
    ET.SubElement(resource, "file", {"href": f"{ident}/{ident}.xml"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def qti_zip(questions: list, path: Path | str, title: str = "Attention book question bank") -> Path:
    """Write the package to ``path`` (a .zip); the same questions give the same bytes."""
    path = Path(path)
    if path.suffix != ".zip":
        raise ValueError(f"qti: expected a path ending in .zip, got {str(path)!r}")
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"title: expected a non-empty string, got {title!r}")
    if not questions:
        raise ValueError("questions: expected at least one question, got none")
    ident = "attention_book_quiz"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in [
            ("imsmanifest.xml", manifest(ident)),
            (f"{ident}/{ident}.xml", assessment(questions, ident, title)),
        ]:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text)
    path.write_bytes(buffer.getvalue())
    return path
