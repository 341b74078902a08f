"""The quiz bank's QTI 1.2 package for Canvas (tools/quiz_qti.py, lecturer review item M3): the zip
holds a manifest that names the assessment file; each question is a section that draws one variant
(a Canvas question group); each item has Canvas's question type and points; a response graded by
the item's own conditions gets the key's credit and a wrong answer none."""

from __future__ import annotations

import html
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import quiz_bank as qb  # noqa: E402
import quiz_qti  # noqa: E402

Q = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
CP = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"
CHAPTERS = ["03", "10", "12", "14", "18"]  # numerical, multiple choice and essays, old and new


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    questions = qb.bank(variants=3, seed="qti", chapters=CHAPTERS)
    path = quiz_qti.qti_zip(questions, tmp_path_factory.mktemp("qti") / "quiz.zip")
    with zipfile.ZipFile(path) as z:
        files = {name: z.read(name) for name in z.namelist()}
    return questions, path, files


def _fields(el) -> dict:
    return {
        f.find(f"{Q}fieldlabel").text: f.find(f"{Q}fieldentry").text
        for f in el.iter(f"{Q}qtimetadatafield")
    }


def _score(item, response: str) -> int:
    """Canvas's reading of the item's conditions: the SCORE set by the first condition that holds."""
    for cond in item.iter(f"{Q}respcondition"):
        setvar = cond.find(f"{Q}setvar")
        if setvar is not None and _holds(next(iter(cond.find(f"{Q}conditionvar"))), response):
            return int(setvar.text)
    return 0


def _holds(el, response: str) -> bool:
    tag = el.tag.removeprefix(Q)
    if tag == "or":
        return any(_holds(c, response) for c in el)
    if tag == "and":
        return all(_holds(c, response) for c in el)
    if tag == "varequal":
        try:
            return float(response) == float(el.text)
        except ValueError:
            return response == el.text
    if tag in ("vargte", "varlte"):
        x, bound = float(response), float(el.text)
        return x >= bound if tag == "vargte" else x <= bound
    return tag == "other"


def test_the_manifest_names_the_assessment_file_in_the_zip(package):
    _, _, files = package
    manifest = ET.fromstring(files["imsmanifest.xml"])
    (resource,) = manifest.iter(f"{CP}resource")
    assert resource.get("type") == "imsqti_xmlv1p2"
    href = resource.find(f"{CP}file").get("href")
    assert href in files and set(files) == {"imsmanifest.xml", href}
    assert ET.fromstring(files[href]).tag == f"{Q}questestinterop"


def test_each_question_is_a_group_that_draws_one_variant(package):
    questions, _, files = package
    root = ET.fromstring(next(v for k, v in files.items() if k != "imsmanifest.xml"))
    (top,) = root.find(f"{Q}assessment").findall(f"{Q}section")
    groups = top.findall(f"{Q}section")
    ids = list(dict.fromkeys(q.id for q in questions))
    assert [g.get("ident") for g in groups] == [f"group_{i}" for i in ids]
    for g in groups:
        assert g.find(f".//{Q}selection_number").text == "1"
        items = g.findall(f"{Q}item")
        variants = [q for q in questions if f"group_{q.id}" == g.get("ident")]
        assert len(items) == len(variants) and len({i.get("ident") for i in items}) == len(items)
        points = {_fields(i)["points_possible"] for i in items}
        assert points == {g.find(f".//{Q}points_per_item").text}


def test_each_item_has_canvas_type_points_and_key(package):
    questions, _, files = package
    root = ET.fromstring(next(v for k, v in files.items() if k != "imsmanifest.xml"))
    items = {i.get("ident"): i for i in root.iter(f"{Q}item")}
    assert len(items) == len(questions)
    kinds = set()
    for q in questions:
        item = items[f"{q.id}_{q.seed}"]
        fields = _fields(item.find(f"{Q}itemmetadata"))
        kinds.add(fields["question_type"])
        text = item.find(f"{Q}presentation/{Q}material/{Q}mattext").text
        assert text == q.text
        if q.kind == "numerical":
            assert fields["question_type"] == "numerical_question"
            assert float(fields["points_possible"]) == 1
            low, high = (
                float(item.find(f".//{Q}vargte").text),
                float(item.find(f".//{Q}varlte").text),
            )
            assert (
                abs(low - (q.answer - q.tolerance)) < 1e-9
                and abs(high - (q.answer + q.tolerance)) < 1e-9
            )
            assert float(item.find(f".//{Q}varequal").text) == q.answer
            assert _score(item, str(q.answer)) == 100
            assert _score(item, str(q.answer + 0.9 * q.tolerance)) == 100
            assert _score(item, str(q.answer + q.tolerance + 0.001 + 1e-6 * abs(q.answer))) == 0
        elif q.kind == "multichoice":
            assert fields["question_type"] == "multiple_choice_question"
            labels = item.findall(f".//{Q}response_label")
            texts = {lab.get("ident"): lab.find(f".//{Q}mattext").text for lab in labels}
            assert sorted(texts.values()) == sorted(c.text for c in q.choices)
            right = next(c.text for c in q.choices if c.correct)
            for ident, choice in texts.items():
                assert _score(item, ident) == (100 if choice == right else 0), (q.id, choice)
            feedback = {
                f.get("ident"): f.find(f".//{Q}mattext").text for f in item.iter(f"{Q}itemfeedback")
            }
            for (
                ident,
                choice,
            ) in texts.items():  # each wrong choice's feedback: the checker's advice
                c = next(c for c in q.choices if c.text == choice)
                if not c.correct:
                    assert c.mistake[2] in html.unescape(feedback[f"{ident}_fb"])
        else:
            assert fields["question_type"] == "essay_question"
            assert float(fields["points_possible"]) == len(q.criteria) == 3
            general = item.find(f"{Q}itemfeedback[@ident='general_fb']//{Q}mattext").text
            assert "Rubric, 3 points" in general and general.count("<li>") == 3
    assert kinds == {"numerical_question", "multiple_choice_question", "essay_question"}


def test_the_key_is_not_always_the_first_choice(package):
    questions, _, files = package
    root = ET.fromstring(next(v for k, v in files.items() if k != "imsmanifest.xml"))
    firsts = [
        _score(i, i.find(f".//{Q}response_label").get("ident"))
        for i in root.iter(f"{Q}item")
        if _fields(i.find(f"{Q}itemmetadata"))["question_type"] == "multiple_choice_question"
    ]
    assert 0 < firsts.count(100) < len(firsts)


def test_the_same_bank_writes_the_same_bytes(package, tmp_path):
    questions, path, _ = package
    again = quiz_qti.qti_zip(qb.bank(variants=3, seed="qti", chapters=CHAPTERS), tmp_path / "a.zip")
    assert again.read_bytes() == path.read_bytes()


def test_bad_arguments_are_refused(tmp_path):
    questions = qb.bank(variants=1, chapters=["06"])
    with pytest.raises(ValueError, match="qti"):
        quiz_qti.qti_zip(questions, tmp_path / "quiz.xml")
    with pytest.raises(ValueError, match="title"):
        quiz_qti.qti_zip(questions, tmp_path / "quiz.zip", title=" ")
    with pytest.raises(ValueError, match="questions"):
        quiz_qti.qti_zip([], tmp_path / "quiz.zip")
    with pytest.raises(SystemExit):
        qb.main(["--qti", str(tmp_path / "quiz.xml")])


def test_the_command_writes_the_package(tmp_path):
    path = tmp_path / "quiz.zip"
    argv = ["--qti", str(path), "--variants", "2", "--chapters", "17"]
    assert qb.main([*argv, "--include-exercise-repeats"]) == 0
    with zipfile.ZipFile(path) as z:
        xml = z.read("attention_book_quiz/attention_book_quiz.xml")
    items = list(ET.fromstring(xml).iter(f"{Q}item"))
    assert len(items) == 2 * 2 + 1  # two questions of chapter 17, 2 variants each, and an essay
    # by default the two that repeat chapter 17's graded exercise 4 are left out (lecturer s31, M2)
    assert {q for q in qb.EXERCISE_REPEATS if q[1:3] == "17"} and qb.main(argv) == 0
    with zipfile.ZipFile(path) as z:
        xml = z.read("attention_book_quiz/attention_book_quiz.xml")
    assert len(list(ET.fromstring(xml).iter(f"{Q}item"))) == 2 * 1  # one question, 2 variants
