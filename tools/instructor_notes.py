"""Instructor notes on the exercises (issue 36, item 7): per chapter and exercise, what it asks, the
right answer, each mistake its checker recognises with the message the student sees, and its time.

    python tools/instructor_notes.py                        # every chapter -> _build/instructor/
    python tools/instructor_notes.py 02 03 06 --out DIR     # chapters whose file name starts so
    python tools/instructor_notes.py --course course        # + how often each mistake came, counted
    python tools/instructor_notes.py --no-answers           # without worked solutions and model answers
    python tools/instructor_notes.py --no-timing            # without running the checkers (seconds)

It writes ``notes.md`` and ``notes.html`` (one page to print, its own CSS; outside the book's site,
which never links to it, and outside every build with or without solutions).

**The mistakes are read from the checkers' own code**, not copied: each ``fail(...)`` of a checker
(``lib.exercises.chNN``), of the chapter module's functions it calls and of its ``REFUSALS``, each
hint it passes to ``call``, and each entry of a table of known wrong values the checker loops over
(chapter 6's ``known``) is one recognised mistake, in the order the checker tries them, with the
condition under which it fires (``ast.unparse`` of the enclosing ``if`` tests) and the message, its
computed parts shown as ``‹...›``. So the notes change when a checker changes, and a test checks
that what a checker really says to a wrong answer is in them (:func:`matching`).

**How often**: nothing in the repository knows how often a class makes a mistake, so the notes do
not guess: with ``--course``, each mistake's count is measured in that course's graded submissions
(the messages ``tools/grade_course.py`` wrote into ``autograded/``), matched to the mistakes by
:func:`matching`. Without a graded course the column says "not measured".

**Time per exercise** (:func:`estimate_minutes`): what is *measured* here is the checker's run time
on the chapter's worked solution (its practice cases, this machine; an exercise whose answer is a
value needs the chapter's state and is not timed) and the *size* of the exercise, counted: the
statement's words, the worked solution's lines of code, the values to predict, the questions a
written answer must answer (``make_course.parts``). A student's minutes are an *estimate* from that
size with the constants :data:`MINUTES` (stated, not measured on students). A chapter's home time
(:func:`home_minutes`, what the term plan and the teachers' page state) is the same kind of estimate:
reading and running the chapter (its prose's words, its code cells) plus its exercises.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import html
import importlib
import inspect
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import make_course  # noqa: E402

EXERCISE = re.compile(r"^\*\*Exercise (\d+)(?: \(([^)]*)\))?[:.]?\s*(.*?)\*\*", re.S)
CHECK = re.compile(r"^(check_\w+)\((.*)\)$", re.S)
PLACEHOLDER = "‹{}›"
# The estimate of a student's minutes (stated constants, not measured on students): reading the
# statement, writing each line of the worked solution's code, each value to predict, each question of
# a written answer, and running and checking (once per exercise).
MINUTES = {
    "words_per_minute": 60,
    "per_code_line": 2.0,
    "per_prediction": 5.0,
    "per_written_part": 8.0,
    "run_and_check": 5.0,
    # the chapter itself, before its exercises: reading its prose and reading and running each of its
    # code cells. A lecturer's review of the course kit timed chapter 3 at 5 to 5.5 h and chapter 13 at
    # 6 to 6.5 h at home, where 100 words a minute and 1 min a cell gave 4 h 15 and 4 h 45: the gap grew
    # with the prose. 50 words a minute is technical prose with equations, tables and figures to read;
    # 1.5 min a cell is reading it, running it and looking at its output (5 h 15 and 6 h 15).
    "chapter_words_per_minute": 50,
    "per_chapter_code_cell": 1.5,
}
# A teacher's minutes to grade one part (one question) of one student's written answer against its
# rubric: an estimate (lecturer review r3: a three-part answer of chapter 2 took 2 to 3 minutes).
GRADING_MINUTES_PER_PART = (1, 2)


# --- the exercises of a chapter, from its notebook -------------------------------------------------


@dataclass
class Mistake:
    """One wrong answer a checker recognises: the message the student reads (computed parts as
    ‹expr›), the condition it fires under, and where in the checker's module it is."""

    checker: str
    message: str
    condition: str
    where: str
    line: int
    kind: str = "fail"  # "fail", "hint" (advice added to an error) or "refusal" (a forbidden call)
    # a refusal's function, which the grader's refusal of a whole module (tools/grade_course.py's
    # _module_refusals) names as the function called: lib.alibi._slopes is "it called the
    # library's _slopes; ..." in alibi_slopes' row (lecturer review course46, M3)
    called: str = ""

    @property
    def pattern(self) -> re.Pattern:
        """The message as a regular expression: each computed part matches anything; a refusal's
        function (``called``) any function's name."""
        pieces = re.split(r"‹[^›]*›", self.message)
        body = ".*?".join(re.escape(p) for p in pieces)
        if self.called:
            said = re.escape(f" {self.called}")
            body = body.replace(said, rf" (?:{re.escape(self.called)}|[A-Za-z_][\w.]*)", 1)
        return re.compile(body, re.S | re.I)

    @property
    def literal(self) -> int:
        """How much of the message is fixed text (not computed): how specific the mistake is."""
        fixed = re.sub(r"‹[^›]*›", "", self.message)
        # a message held in a name ("on the case ‹case›, ‹what›.") around the "on the case" frame
        # names no mistake: it fits any message (lecturer review s23, M5: ch07's rows-vs-columns
        # message was counted under it); a computed description (‹largest_difference(...)›) is
        # the checker's catch-all row, and stays
        frame = re.sub(r"\W+", " ", re.sub(r"^\s*on the case\b", "", fixed)).strip()
        if not frame and all(
            re.fullmatch(r"[A-Za-z_]\w*", p) for p in re.findall(r"‹([^›]*)›", self.message)
        ):
            return 0
        return len(fixed.strip())


@dataclass
class Exercise:
    chapter: str
    number: int
    kind: str
    title: str
    statement: str
    answer: str = ""  # the answer cell the student gets (a template)
    checker: str | None = None
    args: list[str] = field(default_factory=list)
    solution: str = ""  # the worked solution's code
    model: str = ""  # the model answer (markdown)
    mistakes: list[Mistake] = field(default_factory=list)
    check_seconds: float | None = None

    @property
    def is_function(self) -> bool:
        return bool(self.args) and all(f"def {a}(" in self.answer for a in self.args)

    @property
    def predicted(self) -> list[str]:
        """The arguments the student predicts: none in an implement exercise, even where its answers
        are values (chapter 6's exercise 1 asks for two weight matrices); of the others, those the
        worked solution writes as a value (no call: ``suffers_most = 3``, ``793471 * 512``) or that
        a sentence of the statement with "predict" in it names (``soft_limit``, which the worked
        solution computes), not a model it trains or the chapter's own (course review s40, m4:
        chapter 5's exercise 2 counted ``blind_model`` and ``model`` as values to predict)."""
        if self.checker is None or self.is_function or self.kind == "implement":
            return []
        written = _assigned(self.solution)
        if not written:  # no worked solution to read: each argument, as before
            return list(self.args)
        statement = re.sub(r"<details\b.*?</details>", "", self.statement, flags=re.S)
        named = {
            name
            for sentence in re.split(r"(?<=[.?!])\s+", statement)
            if "predict" in sentence.lower()
            for name in re.findall(r"`(\w+)`", sentence)
        }
        return [a for a in self.args if a in named or (a in written and not written[a])]

    @property
    def predictions(self) -> int:
        """How many values the student predicts (:attr:`predicted`)."""
        return len(self.predicted)

    @property
    def written_parts(self) -> list[str]:
        """The questions the course's rubric grades: tools/rubric_claims.py's ``PARTS`` where it
        names them, as make_course does (course review s27, m9: chapter 1's exercise 1 had 5
        questions here, its prediction comment among them, against the rubric's 4), else the
        statement's."""
        if not self.model:
            return []
        import rubric_claims

        named = rubric_claims.PARTS.get(self.chapter[:2], {}).get(self.number)
        return list(named) if named else make_course.parts(self.statement)

    @property
    def asked_parts(self) -> list[str]:
        """The questions the statement asks in writing, graded or not (a prediction written in a
        comment too): what the student's time goes to (:func:`estimate_minutes`). Not the hint's
        questions (they help with the others), nor a question that asks for a value counted among
        the :attr:`predicted` (course review s40, m4: chapter 5's exercise 2 counted 6 written
        questions: its 2 predictions and its hint's 2 among them, against the rubric's 2)."""
        if not self.model:
            return []
        statement = re.sub(r"<details\b.*?</details>", "", self.statement, flags=re.S)
        predicted = self.predicted
        return [
            part
            for part in make_course.parts(statement)
            if not any(f"`{name}`" in part for name in predicted)
        ]

    @property
    def code_lines(self) -> int:
        """Statements of the worked solution's code that a student writes (a statement formatted over
        several lines counts once): no docstring, import, print, assert or plotting statement (those
        report or draw; the statement of the exercise does not ask for them). In a checked exercise
        that is not an implementation (a prediction checked against the student's own run), only the
        statements the check's arguments need (:func:`_needed_by`: course review s40, m4: chapter
        5's exercise 2 counted the 41 statements of the worked solution's analysis of its blind
        model, which the book writes to support its model answer and the student does not). An
        implementation's code after its function (running it, as its statement asks) counts."""
        try:
            tree = ast.parse(self.solution)
        except SyntaxError:
            return 0
        if self.checker and self.args and not (self.is_function or self.kind == "implement"):
            tree = ast.Module(body=_needed_by(tree.body, set(self.args)), type_ignores=[])
        count = 0
        for node in ast.walk(tree):
            if not isinstance(node, ast.stmt) or isinstance(
                node, (ast.Import, ast.ImportFrom, ast.Assert, ast.Pass)
            ):
                continue
            if isinstance(node, ast.Expr):
                value = node.value
                if isinstance(value, ast.Constant):
                    continue  # a docstring
                head = ast.unparse(getattr(value, "func", value)).split(".")[0].split("[")[0]
                if head in REPORTING or head.startswith(("ax", "fig", "plt")):
                    continue
            count += 1
        return count


REPORTING = {"print", "display", "plt", "show_table", "show"}


def _bound_and_read(node: ast.stmt) -> tuple[set[str], set[str]]:
    """(the names a top-level statement binds, the names it reads anywhere in it)."""
    bound, read = set(), set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound.add(node.name)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (read if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        targets = getattr(sub, "targets", None) or [getattr(sub, "target", None)]
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in targets:  # W[i] = 4.0, unseen[name] = ...: a change of W, of unseen
                while isinstance(target, (ast.Subscript, ast.Attribute)):
                    target = target.value
                if isinstance(target, ast.Name):
                    bound.add(target.id)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound = {node.name}  # its own locals are not the cell's
    return bound, read


def _needed_by(body: list[ast.stmt], wanted: set[str]) -> list[ast.stmt]:
    """The top-level statements of ``body`` that the names ``wanted`` (a check's arguments) need: a
    statement binding one, the statements the names it reads need in turn, and a call of a method
    of a needed object (``blind_model.eval()``), latest first as the code runs."""
    wanted, kept = set(wanted), []
    for node in reversed(body):
        bound, read = _bound_and_read(node)
        mutates = False
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            root = node.value.func
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.value if not isinstance(root, ast.Call) else root.func
            mutates = isinstance(root, ast.Name) and root.id in wanted and root.id != "print"
        if bound & wanted or mutates:
            kept.append(node)
            wanted |= read
    return list(reversed(kept))


def _assigned(source: str) -> dict[str, bool]:
    """{name: whether its value calls anything} of the top-level assignments of ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:  # a name, or names unpacked (not W[i] = ...: a change of W)
            names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            calls = any(isinstance(n, ast.Call) for n in ast.walk(node.value))
            for name in names:
                if isinstance(name, ast.Name):
                    found[name.id] = found.get(name.id, False) or calls
    return found


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def notebook(chapter: str) -> Path:
    found = sorted((ROOT / "notebooks").glob(f"{chapter}*.ipynb"))
    if not found:
        raise ValueError(f"chapter: no notebook notebooks/{chapter}*.ipynb")
    return found[0]


def exercises(chapter: str) -> list[Exercise]:
    """The exercises of a chapter (its file name or a prefix such as "02"), in order, with their
    checker's mistakes."""
    path = notebook(chapter)
    found: list[Exercise] = []
    current = None
    for cell in nbformat.read(path, as_version=4).cells:
        src = cell.source.strip()
        head = EXERCISE.match(src) if cell.cell_type == "markdown" else None
        if head:
            current = Exercise(
                path.stem,
                int(head.group(1)),
                (head.group(2) or "").strip(),
                " ".join(head.group(3).split()).rstrip("."),
                src,
            )
            found.append(current)
            continue
        if current is None:
            continue
        solution = "solution" in _tags(cell)
        if cell.cell_type == "markdown" and not solution:
            current = None  # the exercises section goes on with prose, or ended
            continue
        check = CHECK.match(src) if cell.cell_type == "code" else None
        if check and not solution:
            current.checker = check.group(1)
            current.args = [a.strip() for a in check.group(2).split(",") if a.strip()]
        elif check:
            continue  # the check of the worked solution
        elif cell.cell_type == "code" and solution:
            current.solution += ("\n\n" if current.solution else "") + cell.source
        elif cell.cell_type == "code" and current.checker is None:
            current.answer += ("\n\n" if current.answer else "") + cell.source
        elif cell.cell_type == "markdown":
            model = re.sub(r"</?details[^>]*>|<summary>.*?</summary>", "", cell.source, flags=re.S)
            current.model += ("\n\n" if current.model else "") + model.strip()
    source = ROOT / "lib" / "exercises" / f"ch{path.stem[:2]}.py"  # read, not imported
    for ex in found:
        if ex.checker and source.is_file():
            ex.mistakes = mistakes(source, ex.checker)
    return found


def _module(chapter: str):
    try:
        return importlib.import_module(f"lib.exercises.ch{chapter[:2]}")
    except ModuleNotFoundError:
        return None


# --- the mistakes, read from the checker's code ------------------------------------------------------


def _render(node: ast.AST, bindings: dict[str, str] | None = None) -> str:
    """A message expression as text: literal parts as they are, computed parts as ‹expr›."""
    bindings = bindings or {}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_render(v, bindings) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        inner = node.value
        if isinstance(inner, ast.Name) and inner.id in bindings:
            return bindings[inner.id]
        if (  # a table's message filled in: f"{why.format(**numbers)}" (chapter 8's _MISTAKES)
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "format"
            and getattr(inner.func.value, "id", None) in bindings
        ):
            # each {field} a computed part (course review s27, M5: chapter 8's two commonest
            # mistakes were one row "on the case ‹case›, ‹…›" and counted as "any other")
            return re.sub(
                r"\{(\w*)[^{}]*\}",
                lambda m: PLACEHOLDER.format(m[1] or "…"),
                bindings[inner.func.value.id],
            )
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            return inner.value
        text = ast.unparse(inner)
        return PLACEHOLDER.format(text if len(text) <= 30 else text[:27] + "...")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _render(node.left, bindings) + _render(node.right, bindings)
    if isinstance(node, ast.Name) and node.id in bindings:
        return bindings[node.id]
    text = ast.unparse(node)
    return PLACEHOLDER.format(text if len(text) <= 30 else text[:27] + "...")


def _literal(node: ast.AST | None):
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class _Reader:
    """Walks a checker and the chapter module's functions it reaches, collecting its mistakes."""

    def __init__(self, module, checker: str):
        is_path = isinstance(module, (str, Path))
        self.source = Path(module).read_text() if is_path else inspect.getsource(module)
        self.tree = ast.parse(self.source)
        self.functions = {
            n.name: n
            for n in self.tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.constants = {}
        for n in self.tree.body:
            if isinstance(n, (ast.Assign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.constants[t.id] = n.value
        self.checker = checker
        self.found: list[Mistake] = []
        self.seen: set[str] = set()

    def run(self) -> list[Mistake]:
        if self.checker not in self.functions:
            raise ValueError(f"checker: {self.checker} is not defined in its chapter's module")
        todo = [self.checker]
        refusals = _literal_refusals(self.constants.get("REFUSALS"), self.checker)
        while todo:
            name = todo.pop(0)
            if name in self.seen or name not in self.functions:
                continue
            self.seen.add(name)
            function = self.functions[name]
            self.local = {
                t.id: n.value
                for n in ast.walk(function)
                if isinstance(n, ast.Assign)
                for t in n.targets
                if isinstance(t, ast.Name)
            }
            self.where = name
            self.refusal = name in refusals
            self.calls: list[str] = []
            for statement in function.body:
                self._visit(statement, [], {})
            todo += [c for c in self.calls if c not in self.seen]
            todo += [r for r in refusals if r not in self.seen]
        for name in refusals:  # a stand-in made by lib.exercises.refusing(name, then)
            made = self.constants.get(name)
            if isinstance(made, ast.Call) and getattr(made.func, "id", None) == "refusing":
                library, then = (_literal(a) for a in made.args)
                whose = next(
                    (_literal(k.value) for k in made.keywords if k.arg == "whose"), "the library's"
                )
                self.where = name
                message = f"it called {whose} {library}{then}"
                self._add(
                    message,
                    ["the answer calls what the exercise forbids"],
                    made.lineno,
                    "refusal",
                    called=library,
                )
        return self.found

    def _add(
        self, message: str, conditions: list[str], line: int, kind: str = "fail", called: str = ""
    ) -> None:
        condition = " and ".join(
            f"({c})" if " or " in c and len(conditions) > 1 else c for c in conditions
        )
        if not message.strip("‹›. ") or any(
            m.message == message and m.condition == condition for m in self.found
        ):
            return
        self.found.append(Mistake(self.checker, message, condition, self.where, line, kind, called))

    def _expansions(self, loop: ast.For) -> list[dict[str, str]] | None:
        """A loop over a literal table (``for value, reason in known.items()``): one binding each."""
        it = loop.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "items"
            and isinstance(it.func.value, ast.Name)
            and isinstance(loop.target, ast.Tuple)
            and len(loop.target.elts) == 2
        ):
            table = _literal(
                self.local.get(it.func.value.id) or self.constants.get(it.func.value.id)
            )
            names = [getattr(e, "id", None) for e in loop.target.elts]
            if isinstance(table, dict) and all(names):
                return [{names[0]: str(k), names[1]: str(v)} for k, v in table.items()]
        if isinstance(it, ast.Name):
            return self._rows(it.id, loop.target)
        if isinstance(it, (ast.List, ast.Tuple)):  # a table written in the loop (ch07's scales)
            return self._rows("", loop.target, it)
        return None

    def _rows(
        self, name: str, target: ast.AST, table: ast.AST | None = None
    ) -> list[dict[str, str]] | None:
        """A loop over a list of tuples written in the module or the function (``for mistake,
        message in _ROPE_MISTAKES``, ``for wrong, message in mistakes`` with the rows a later
        ``mistakes.insert``/``append`` adds): one binding per row, each element as the student
        reads it (lecturer review s17, M3: such a table was one row "‹message›" in the notes, and
        the class's named mistakes were counted under "any other wrong answer")."""
        if not isinstance(target, ast.Tuple) or not all(
            isinstance(e, ast.Name) for e in target.elts
        ):
            return None
        if table is None:
            table = self.local.get(name) or self.constants.get(name)
        parts = [table]
        while parts and isinstance(parts[0], ast.BinOp) and isinstance(parts[0].op, ast.Add):
            parts[:1] = [parts[0].left, parts[0].right]  # [...] + [...]
        parts = [ast.List([t.elt]) if isinstance(t, ast.ListComp) else t for t in parts]
        if not parts or not all(isinstance(t, (ast.List, ast.Tuple)) for t in parts):
            return None  # (a comprehension's rows are one row, its variable as ‹layer›)
        rows = [row for t in parts for row in t.elts]
        if name in self.local:  # rows added to a local table later in the function
            for call in ast.walk(self.functions[self.where]):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and getattr(call.func.value, "id", None) == name
                    and call.func.attr in ("append", "insert")
                    and call.args
                ):
                    row = call.args[-1]
                    rows.insert(0, row) if call.func.attr == "insert" else rows.append(row)
        names = [e.id for e in target.elts]
        bindings = []
        for row in rows:
            if not isinstance(row, ast.Tuple) or len(row.elts) != len(names):
                return None
            binding = {}
            for n, e in zip(names, row.elts):
                value = _literal(e)
                binding[n] = (
                    value
                    if isinstance(value, str)
                    else _render(e)
                    if isinstance(e, (ast.JoinedStr, ast.BinOp))
                    else str(value)
                    if value is not None
                    else PLACEHOLDER.format(ast.unparse(e)[:27])
                )
            if not any(  # a row with a message (not a table of cases: chapter 6's PAIRS)
                len(re.sub(r"‹[^›]*›", "", v).strip()) > 30 for v in binding.values()
            ):
                return None
            bindings.append(binding)
        return bindings or None

    def _returned(self, name: str) -> list[tuple[str, dict[str, str]]]:
        """The bindings a helper's answer can take for the fail message's ``name`` (``message =
        _closest_mistake(...)``): the rows of a table the helper reads that bind a name of that
        name, and the messages of the module's functions it calls (``_eps_message(eps)``)."""
        value = self.local.get(name)
        helper = getattr(getattr(value, "func", None), "id", None)
        if not isinstance(value, ast.Call) or helper not in self.functions:
            return []
        found = []
        # the messages the helper returns itself (ch07's _owner_problem: "none of your layers
        # holds the query weight of head 0 ... a head owns rows, not columns"), each a mistake of
        # its own (lecturer review s23, M5)
        for r in ast.walk(self.functions[helper]):
            if isinstance(r, ast.Return) and isinstance(r.value, (ast.JoinedStr, ast.BinOp)):
                text = _render(r.value)
                if len(re.sub(r"‹[^›]*›", "", text).strip()) > 30:
                    found.append((f"{helper} finds it", {name: text}))
        for node in ast.walk(self.functions[helper]):
            loops = (
                node.generators
                if isinstance(node, (ast.ListComp, ast.GeneratorExp))
                else [node]
                if isinstance(node, ast.For)
                else []
            )
            for loop in loops:
                if not isinstance(loop.iter, ast.Name) or name not in {
                    getattr(e, "id", None) for e in getattr(loop.target, "elts", [])
                }:
                    continue
                for row in self._rows(loop.iter.id, loop.target) or []:
                    shown = next((v for k, v in row.items() if k != name and len(v) < 20), "")
                    found.append((f"{helper} finds it" + (f": {shown}" if shown else ""), row))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in self.functions:
                inner = self.functions[node.func.id]
                for r in ast.walk(inner):
                    if isinstance(r, ast.Return) and isinstance(
                        r.value, (ast.JoinedStr, ast.Constant)
                    ):
                        found.append(
                            (f"{helper} finds it ({node.func.id})", {name: _render(r.value)})
                        )
        return found

    def _visit(self, node: ast.AST, conditions: list[str], bindings: dict[str, str]) -> None:
        if isinstance(node, ast.If):
            self._visit(node.test, conditions, bindings)
            test = ast.unparse(node.test)
            for child in node.body:
                self._visit(child, conditions + [test], bindings)
            for child in node.orelse:
                self._visit(child, conditions + [f"not ({test})"], bindings)
            return
        if isinstance(node, ast.For):
            expansions = self._expansions(node)
            if expansions:
                before = len(self.found)
                for binding in expansions:
                    shown = ", ".join(f"{k} = {v}" for k, v in binding.items() if len(v) < 40)
                    for child in node.body:
                        self._visit(
                            child, conditions + ([shown] if shown else []), {**bindings, **binding}
                        )
                self._collapse(before, conditions)
                return
        if isinstance(node, ast.Call):
            self._call(node, conditions, bindings)
        if isinstance(node, ast.Raise) and self.refusal and isinstance(node.exc, ast.Call):
            if node.exc.args:
                message = _render(node.exc.args[0], bindings)
                self._add(
                    message, ["the answer calls what the exercise forbids"], node.lineno, "refusal"
                )
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            # problems.append("...") of a list that a fail() joins
            call = node.value
            if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and call.args:
                if isinstance(call.args[0], (ast.Constant, ast.JoinedStr)):
                    text = _render(call.args[0], bindings)
                    if len(text) > 30:
                        self._add(text, conditions, node.lineno)
        for child in ast.iter_child_nodes(node):
            if not isinstance(node, ast.Call) or child is not node.func:
                self._visit(child, conditions, bindings)

    def _collapse(self, before: int, conditions: list[str]) -> None:
        """A message a table's loop adds once per row without using the row (the same message, the
        same line): one row, under the loop's outer conditions."""
        added, kept = self.found[before:], []
        for m in added:
            same = [k for k in kept if k.message == m.message and k.line == m.line]
            if same:
                outer = " and ".join(conditions)
                same[0].condition = outer
                continue
            kept.append(m)
        self.found[before:] = kept

    def _call(self, node: ast.Call, conditions: list[str], bindings: dict[str, str]) -> None:
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name == "fail" and node.args:
            names = {
                v.value.id
                for v in ast.walk(node.args[0])
                if isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
            } - set(bindings)
            rows = [(n, row) for n in sorted(names) for row in self._returned(n)]
            for n, (why, row) in rows:  # one row per message a helper can return
                self._add(
                    _render(node.args[0], {**bindings, **row}), conditions + [why], node.lineno
                )
            if not rows:
                self._add(_render(node.args[0], bindings), conditions, node.lineno)
            for inner in ast.walk(node.args[0]):  # a message fragment a helper returns
                helper = getattr(getattr(inner, "func", None), "id", None)
                if isinstance(inner, ast.Call) and helper in self.functions:
                    for r in ast.walk(self.functions[helper]):
                        if isinstance(r, ast.Return) and isinstance(
                            r.value, (ast.JoinedStr, ast.Constant)
                        ):
                            text = _render(r.value, bindings)
                            if isinstance(r.value, ast.JoinedStr) or len(text) > 30:
                                self._add(text, conditions + [f"{helper} says why"], r.lineno)
        for keyword in node.keywords:
            if keyword.arg == "hints":
                for key, advice in self._hints(keyword.value):
                    self._add(advice, conditions + [f"the error says {key!r}"], node.lineno, "hint")
        if name in self.functions and name != self.checker:
            self.calls.append(name)
        for arg in node.args:  # a function of the module passed along (a wrapper, a context)
            if isinstance(arg, ast.Name) and arg.id in self.functions:
                self.calls.append(arg.id)

    def _hints(self, value: ast.AST) -> list[tuple[str, str]]:
        if isinstance(value, ast.Name):
            value = self.local.get(value.id, value)
        if isinstance(value, ast.Dict):
            return [
                (str(_literal(k)), _render(self._resolve(v)))
                for k, v in zip(value.keys, value.values)
                if k is not None
            ]
        if isinstance(value, ast.Call) and ast.unparse(value.func) == "dict.fromkeys":
            keys = _literal(value.args[0]) or ()
            advice = _render(self._resolve(value.args[1])) if len(value.args) > 1 else ""
            return [(str(k), advice) for k in keys]
        return []

    def _resolve(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id]
        # a hint kept in a local name (``labels_hint = "..."``): its text, not ‹labels_hint›
        # (lecturer review s21, M6)
        local = self.local.get(node.id) if isinstance(node, ast.Name) else None
        if isinstance(local, (ast.Constant, ast.JoinedStr)):
            return local
        return node


def _literal_refusals(node: ast.AST | None, checker: str) -> list[str]:
    """The raisers a module's REFUSALS names for ``checker``."""
    if not isinstance(node, ast.Dict):
        return []
    names = []
    for key, value in zip(node.keys, node.values):
        if _literal(key) == checker:
            for item in ast.walk(value):
                if isinstance(item, ast.Name):
                    names.append(item.id)
    return names


def mistakes(module, checker: str) -> list[Mistake]:
    """Every mistake ``checker`` of ``module`` (a module, or the path of its source) recognises, in
    the order it tries them."""
    return _Reader(module, checker).run()


def matching(message: str, known: list[Mistake]) -> Mistake | None:
    """The mistake whose message ``message`` is: a refusal (a forbidden call) first, since a refused
    call's message can also fit a generic row ("on the case ..., ..."); then, of those that match,
    the most specific, the one with the most fixed text (lecturer review r4, problem 2: a catch-all
    like "on the case '‹case›', ‹largest_difference(...)›." fits every message that starts the same
    way, and took the chapter's classic mistakes); among equals, the first the checker tries."""
    # a template that is placeholders only (‹labels_hint›) fits any message: it names no mistake
    # (lecturer review s21, M6: carol's os._exit was counted in three such rows)
    fits = [(i, m) for i, m in enumerate(known) if m.literal and m.pattern.search(message)]
    if not fits:
        return None
    return min(fits, key=lambda f: (f[1].kind != "refusal", -f[1].literal, f[0]))[1]


# --- time per exercise ----------------------------------------------------------------------------


def _namespace() -> dict:
    import torch
    from torch import nn

    from lib import attention

    space = {"torch": torch, "math": math, "nn": nn, "F": torch.nn.functional}
    space.update({k: v for k, v in vars(attention).items() if not k.startswith("_")})
    return space


def _chapter_imports(chapter: str) -> dict:
    """The names the chapter's own code cells import (chapter 14's ``IGNORE_INDEX``, lecturer review
    s15, M1: a worked solution reads them), each import run alone, one that fails left out."""
    space = _namespace()
    for cell in nbformat.read(notebook(chapter), as_version=4).cells:
        if cell.cell_type != "code" or "solution" in _tags(cell):
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                with contextlib.suppress(Exception):
                    exec(
                        compile(ast.Module(body=[node], type_ignores=[]), "<chapter>", "exec"),
                        space,
                    )
    return space


def _definitions(source: str, chapter: str | None = None) -> dict:
    """The imports, functions and classes of a worked solution, defined (nothing else runs), over the
    chapter's imports where ``chapter`` is given."""
    kept = [
        n
        for n in ast.parse(source).body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
    ]
    space = _chapter_imports(chapter) if chapter else _namespace()
    exec(compile(ast.Module(body=kept, type_ignores=[]), "<solution>", "exec"), space)
    return space


def time_checker(ex: Exercise) -> float | None:
    """Seconds the checker takes on the worked solution (practice cases, this machine), or None
    where the answer is a value (it needs the chapter's state) or the solution does not pass."""
    if not ex.is_function or ex.checker is None:
        return None
    module = _module(ex.chapter)
    try:
        space = _definitions(ex.solution, ex.chapter)
        answers = [space[a] for a in ex.args]
    except Exception:
        return None
    start = time.perf_counter()
    try:
        verdict = getattr(module, ex.checker)(*answers)
    except Exception:  # the solution needs more of the chapter than its imports: not timed
        return None
    seconds = time.perf_counter() - start
    return seconds if verdict.passed else None


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 written question", "2 values"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def estimate_minutes(ex: Exercise) -> tuple[float, str]:
    """A student's minutes for the exercise, estimated from its counted size (:data:`MINUTES`), and
    the sum that gives them, in words."""
    words = len(re.findall(r"\w+", ex.statement))
    parts = {
        "reading": words / MINUTES["words_per_minute"],
        "code": ex.code_lines * MINUTES["per_code_line"],
        "predictions": ex.predictions * MINUTES["per_prediction"],
        "written": len(ex.asked_parts) * MINUTES["per_written_part"],
        "run and check": MINUTES["run_and_check"],
    }
    total = 5 * math.ceil(sum(parts.values()) / 5)
    how = (
        f"{_count(words, 'word')} to read, {_count(ex.code_lines, 'statement')} of code, "
        f"{_count(ex.predictions, 'value')} to predict, "
        f"{_count(len(ex.asked_parts), 'written question')}"
    )
    return total, how


def chapter_size(chapter: str) -> tuple[int, int]:
    """What a student reads and runs before the exercises: (the words of the chapter's prose, its code
    cells), counted in the notebook's cells before the first exercise's statement (none tagged
    "solution" or "remove-cell": the book shows them to no student)."""
    words = cells = 0
    for cell in nbformat.read(notebook(chapter), as_version=4).cells:
        if cell.cell_type == "markdown" and EXERCISE.match(cell.source.strip()):
            break
        if {"solution", "remove-cell"} & set(_tags(cell)):
            continue
        if cell.cell_type == "markdown":
            words += len(re.findall(r"\w+", cell.source))
        elif cell.cell_type == "code" and cell.source.strip():
            cells += 1
    return words, cells


def reading_minutes(chapter: str) -> tuple[float, str]:
    """A student's minutes to read and run the chapter (before its exercises), estimated from its size
    (:data:`MINUTES`), and the sum in words."""
    words, cells = chapter_size(chapter)
    raw = words / MINUTES["chapter_words_per_minute"] + cells * MINUTES["per_chapter_code_cell"]
    return 5 * math.ceil(
        raw / 5
    ), f"{_count(words, 'word')} to read, {_count(cells, 'code cell')} to run"


@functools.cache
def home_minutes(chapter: str) -> dict[str, int]:
    """A chapter's home time, estimated: {"reading": reading and running the chapter, "exercises": its
    exercises (the sum of :func:`estimate_minutes`), "total": both, rounded up to a quarter of an
    hour}. The term plan (tools/term_plan.py) and the teachers' page state it."""
    reading = int(reading_minutes(chapter)[0])
    work = int(sum(estimate_minutes(ex)[0] for ex in exercises(chapter)))
    return {"reading": reading, "exercises": work, "total": 15 * math.ceil((reading + work) / 15)}


def rubric_parts(chapter: str) -> list[int]:
    """The parts (questions) of each written answer's rubric in the course made from the chapter
    (``make_course.course_notebook``, in memory): what a teacher grades, one part at a time."""
    nb = nbformat.read(notebook(chapter), as_version=4)
    course, _ = make_course.course_notebook(nb, notebook(chapter).stem)
    found = []
    for cell in course.cells:
        if not cell.metadata.get("nbgrader", {}).get("task"):
            continue
        split = re.findall(r"^\*\*Part \d+ \(", cell.source, re.M)
        listed = re.findall(r'^\d+\. "', cell.source.split("**Parts**", 1)[-1], re.M)
        found.append(len(split) if split else len(listed))
    return found


# --- how often, in a graded course ------------------------------------------------------------------


# class_counts' key for the answers the grader gave 0 for what they did, not for a wrong result: sent
# for manual review (the answer read the checkers or files, or used a name from a cell the student
# added) or stopped by the sandbox (lecturer review s16, M4: they were counted as wrong without a
# named mistake, a gap in the checker's list that was not there)
HELD = "held"


def held(message: str) -> bool:
    """Whether a verdict is the grader's 0 for manual review or for what its sandbox stopped."""
    from grade_course import STOPPED

    # "reviewed by your teacher": the same cell once graded (grade_course.settle_reviewed)
    return message.startswith(("needs manual review", "reviewed by your teacher")) or bool(
        STOPPED.search(message)
    )


def class_counts(course: Path, chapter: str, known: dict[str, list[Mistake]]) -> dict:
    """How often each mistake came in a graded course: {checker: {"graded": n, "passed": n,
    message: n, HELD: n (needs manual review or stopped by the sandbox), None: n (wrong, no named
    mistake)}}, from the test cells' outputs that tools/grade_course.py wrote into
    ``autograded/<student>/<chapter>/``."""
    from grade_course import ALSO_WRONG

    counts: dict[str, dict] = {c: {"graded": 0, "passed": 0, HELD: 0, None: 0} for c in known}
    tests = _real_tests(Path(course), chapter)
    for path in sorted(Path(course).glob(f"autograded/*/{chapter}/{chapter}.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            test = tests.get(grade_id, "") + "\n" + cell.source
            checker = next((c for c in known if re.search(rf"\b{c}\(", test)), None)
            if checker is None or not cell.get("outputs"):
                continue
            out = cell.outputs[0]
            counts[checker]["graded"] += 1
            if out.get("output_type") == "stream" and "passed" in out.get("text", ""):
                counts[checker]["passed"] += 1
            elif out.get("output_type") == "error" and held(out.get("evalue", "")):
                counts[checker][HELD] += 1
            elif out.get("output_type") == "error":
                # the first mistake only: what a prediction's verdict adds at collection, its other
                # parts checked one by one (lecturer review s21, M4), is not counted again
                first = out.get("evalue", "").split(ALSO_WRONG)[0]
                mistake = matching(first, known[checker])
                key = mistake.message if mistake else None
                counts[checker][key] = counts[checker].get(key, 0) + 1
    return counts


def _real_tests(course: Path, chapter: str) -> dict[str, str]:
    """{grade_id: the check a test cell runs}, from the instructor's ``source/``: a prediction checked at
    collection (``--predictions-at-collection``) shows the student only a "recorded" cell, and its real
    check, which tools/grade_course.py runs and whose verdict it writes into ``autograded/``, is in the
    cell's metadata ``course.test``."""
    path = course / "source" / chapter / f"{chapter}.ipynb"
    if not path.is_file():
        return {}
    tests = {}
    for cell in nbformat.read(path, as_version=4).cells:
        meta = cell.get("metadata", {})
        test = meta.get("course", {}).get("test")
        if test and meta.get("nbgrader", {}).get("grade_id"):
            tests[meta["nbgrader"]["grade_id"]] = test
    return tests


# --- the document --------------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in text.strip().splitlines())


def notes_markdown(
    chapters: list[str],
    answers: bool = True,
    course: Path | None = None,
    timing: bool = True,
) -> str:
    summary = [
        "## Time per chapter",
        "",
        "| Chapter | Exercises | Reading and running (min) | Exercises (min) | At home (min) |",
        "|---|---|---|---|---|",
    ]
    body = []
    for chapter in chapters:
        found = exercises(chapter)
        stem = notebook(chapter).stem
        known = {e.checker: e.mistakes for e in found if e.checker}
        counts = class_counts(course, stem, known) if course else {}
        body += [f"## {stem}", ""]
        total = 0
        for ex in found:
            minutes, section = _exercise_notes(
                ex, answers, counts.get(ex.checker, {}), timing, course is not None
            )
            total += minutes
            body += section
        home = home_minutes(stem)
        summary.append(
            f"| {stem} | {len(found)} | {home['reading']} | {total:g} | {home['total']} |"
        )
    text = "\n".join(_preamble(answers, course) + summary + [""] + body) + "\n"
    # the book's citation roles as author-year text, as the course's notebooks and the slides give
    # them (lecturer review s39, m6: a statement printed {cite:p}`vaswani2017attention`)
    from make_slides import citations_as_text

    return citations_as_text(text, make_course._citations())


def _preamble(answers: bool, course: Path | None) -> list[str]:
    """The notes' title and what they are made of: with answers or not, counted in a course or not."""
    return [
        "# Instructor notes: the exercises and their common mistakes",
        "",
        "Made by `tools/instructor_notes.py` from the chapters and their checkers (`lib/exercises`): "
        "each mistake below is one the checker recognises, in the order it tries them, with the "
        "message the student reads (a part the checker computes as ‹…›, or by its name in the "
        "checker: ‹v› or ‹value› is the student's value, ‹case› the case that failed) and, last, "
        "the checker's test that picks the message, as code. "
        + (
            "With worked solutions and model answers: keep this copy away from students. "
            if answers
            else "Without worked solutions and model answers. "
        )
        + (
            f"How often: counted in the graded submissions of `{course}`."
            if course
            else "How often: not measured (run with `--course` once a chapter is graded)."
        ),
        "",
        "Minutes are an estimate from the exercise's size (reading at "
        f"{MINUTES['words_per_minute']} words a minute, {MINUTES['per_code_line']:g} min per statement of the "
        f"worked solution's code, {MINUTES['per_prediction']:g} per value to predict, "
        f"{MINUTES['per_written_part']:g} per written question, {MINUTES['run_and_check']:g} to run and "
        "check); the chapter's own reading and running too (its prose at "
        f"{MINUTES['chapter_words_per_minute']} words a minute, "
        f"{MINUTES['per_chapter_code_cell']:g} min per code cell); the checker's seconds are measured (practice cases, the machine that made the notes).",
        "",
    ]


def heading_title(ex, limit: int = 70) -> str:
    """The exercise's title for its heading; where the statement has none (chapter 3's and 5's are
    "**Exercise 1 (implement).** In a Transformer, ..."), its first sentence, cut at a word to
    ``limit`` characters (lecturer review r4: the heading ended at its colon)."""
    if ex.title:
        return ex.title
    text = " ".join(EXERCISE.sub("", ex.statement, count=1).split())
    first = re.split(r"(?<=[.?!])\s", text, maxsplit=1)[0].rstrip(".")
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0].rstrip(",;:")
        if first.count("$") % 2:  # not inside a formula
            first = first[: first.rindex("$")].rstrip(",;: ")
        first += " …"
    return first or "(untitled)"


def _seconds(seconds: float) -> str:
    """A checker's time as measured: "< 0.01 s" where it rounds to 0.00 (lecturer review s33, m12)."""
    return "< 0.01 s" if seconds < 0.005 else f"{seconds:.2f} s"


def course_kind(ex) -> str:
    """The exercise's kind as the course titles it: a "predict, then check" exercise whose checked
    answer is a measurement is "measure, then check" there (lecturer review s33, m12)."""
    if ex.kind.lower() == make_course.PREDICT.strip("()") and ex.number in make_course._measured(
        ex.chapter
    ):
        return make_course.MEASURE.strip("()")
    return ex.kind


def _exercise_notes(
    ex, answers: bool, c: dict, timing: bool, in_course: bool = False
) -> tuple[float, list[str]]:
    """An exercise's section of the notes: (its estimated minutes, its lines); ``c``, how often
    the class made each of its checker's mistakes (empty where not measured)."""
    minutes, how = estimate_minutes(ex)
    if timing and ex.check_seconds is None:
        ex.check_seconds = time_checker(ex)
    seconds = (
        f"; checker {_seconds(ex.check_seconds)} on the worked solution"
        if ex.check_seconds is not None
        else ""
    )
    body = [
        f"### Exercise {ex.number} ({course_kind(ex) if in_course else ex.kind}): {heading_title(ex)}",
        "",
        f"**Time:** about {minutes:g} minutes (estimated: {how}){seconds}.",
        "",
        "**What it asks.**",
        "",
        _quote(EXERCISE.sub("", ex.statement, count=1)),
        "",
    ]
    if ex.checker:
        body += [f"**Checked by** `{ex.checker}({', '.join(ex.args)})`.", ""]
    if ex.written_parts:
        body += ["**Written questions** (graded by the rubric):", ""]
        body += [f"{i}. {q}" for i, q in enumerate(ex.written_parts, 1)] + [""]
    if answers:
        if ex.solution.strip():
            body += ["**Worked solution.**", "", "```python", ex.solution.strip(), "```", ""]
        if ex.model.strip():
            body += ["**Model answer.**", "", _quote(ex.model), ""]
    if ex.mistakes:
        body += _mistakes_table(ex.mistakes, c)
    return minutes, body


def _mistakes_table(mistakes: list, c: dict) -> list[str]:
    """The mistakes a checker names, in the order it tries them, with how often the class made each."""
    if c:
        body = [
            f"**Mistakes the checker names** ({c['graded']} graded, {c['passed']} passed, "
            f"{c.get(HELD, 0)} needing manual review or stopped by the sandbox, "
            f"{c.get(None, 0)} wrong without a named mistake):",
            "",
        ]
    else:
        body = ["**Mistakes the checker names:**", ""]
    # the message first, in words; the checker's test after it, as code, for whoever reads the checker
    # (lecturer review s11, M7: the conditions came first, raw, as if they were the explanation)
    body += [
        "| # | The student reads | How often | The checker's test (its code) |",
        "|---|---|---|---|",
    ]
    first_row: dict[str, int] = {}
    for i, m in enumerate(mistakes, 1):
        often = str(c.get(m.message, 0)) if c else "not measured"
        # rows with the same text (one hint for several errors) cannot be told apart in a verdict:
        # its count is in the first of them, not in each (lecturer review s21, M6)
        if c and first_row.setdefault(m.message, i) != i:
            often = f"in row {first_row[m.message]}"
        when = m.condition or "any other wrong answer"
        said = _cell(readable(m.message))
        if m.kind == "hint":
            said = f"(advice added to the error) {said}"
        body.append(f"| {i} | {said} | {often} | <small>`{_cell(when, 160)}`</small> |")
    if c:  # a row of their own: no mistake of the exercise, an answer the grader held back
        body.append(
            f"| – | needs manual review, or stopped by the sandbox (0 until you grade it) | "
            f"{c.get(HELD, 0)} | <small>tools/grade_course.py: the answer read the checkers or "
            "files, used a name from a cell the student added, computed a prediction with the "
            "library or the chapter's code, or tried what the sandbox does not allow</small> |"
        )
    body.append("")
    return body


def readable(message: str) -> str:
    """A message as the notes show it: a computed part that is a name (‹v›, ‹case›) kept, one that is
    an expression (‹'double' if N == 12 else ...›) shown as ‹…›."""
    return re.sub(
        r"‹([^›]*)›",
        lambda m: m.group(0) if re.fullmatch(r"[A-Za-z_][\w.]*", m.group(1)) else "‹…›",
        message,
    )


def _cell(text: str, limit: int | None = None) -> str:
    text = " ".join(text.split())
    if limit and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text.replace("|", "\\|")


CSS = """
body { font: 11pt/1.45 Georgia, serif; max-width: 48em; margin: 2em auto; color: #1f2328; }
h1, h2, h3 { font-family: Helvetica, Arial, sans-serif; } h2 { page-break-before: always; }
table { border-collapse: collapse; font-size: 9.5pt; width: 100%; }
td, th { border: 1px solid #999; padding: 0.25em 0.4em; vertical-align: top; }
code, pre { font-size: 9pt; white-space: pre-wrap; overflow-wrap: anywhere; }
blockquote { margin-left: 1em; padding-left: 0.8em; border-left: 3px solid #ccc; }
@media print { a { color: inherit; text-decoration: none; } }
"""


def to_html(markdown: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(markdown)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape('Instructor notes')}</title><style>{CSS}</style></head>"
        f"<body>\n{body}</body></html>\n"
    )


def _write_private(path: Path, text: str) -> None:
    """Write ``path`` readable by its owner only (0600, as the grade exports): the notes hold every
    worked solution and the class's mistakes, and the repository may sit in a course folder students
    pass through (lecturer review s22, M9). An existing file is truncated and set to 0600 too."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # os.open's mode applies only to a new file, and is masked by the umask
    with open(fd, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter prefixes (default: every chapter)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "instructor")
    parser.add_argument("--course", type=Path, help="a graded course: count how often each came")
    parser.add_argument("--no-answers", action="store_true", help="leave out solutions and answers")
    parser.add_argument("--no-timing", action="store_true", help="do not run the checkers")
    args = parser.parse_args(argv)
    chapters = [
        p.stem
        for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        if not args.chapters or any(p.name.startswith(c) for c in args.chapters)
    ]
    if not chapters:
        parser.error(f"chapters: no notebook starts with {args.chapters}")
    text = notes_markdown(chapters, not args.no_answers, args.course, not args.no_timing)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, content in (("notes.md", text), ("notes.html", to_html(text))):
        _write_private(args.out / name, content)
    print(f"{args.out / 'notes.md'} and notes.html: {len(chapters)} chapters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
