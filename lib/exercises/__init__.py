"""Checkers for the chapters' exercises: run a reader's answer on hidden cases and say what is wrong.

One module per chapter (``lib.exercises.ch02``, ``lib.exercises.ch03``, ...); each public ``check_*``
function takes the reader's function (or predicted values) and answers in one of three ways:

- **passed**: returns a :class:`Verdict`; a notebook shows it as a green box ("passed ...").
- **not attempted**: the function is still the template's stub (its body does nothing, e.g. ``...``,
  or it raises ``NotImplementedError``), or a predicted value is still ``None``. Returns a
  :class:`Verdict` that says so, without an error, so that the student edition of a chapter runs top
  to bottom before anything has been written.
- **wrong**: raises :class:`ExerciseFailed` with specific feedback ("row 2 of your weights sums to
  1.37: did you normalise over the last dimension?"). Jupyter shows only that feedback, not a
  traceback. Raising is what makes a wrong reference solution fail the notebook tests and the build.

A checker never trusts what the reader's objects say about themselves: every argument it is given and
every value the reader's code returns goes through :func:`plain` first, which makes strings, numbers,
lists, tuples, dicts and tensors the built-in types again (a ``str`` subclass whose ``strip`` lies, an
object whose ``__eq__`` always says yes, a tensor subclass whose ``__torch_function__`` answers every
comparison with "true" are all compared as what they hold).

A checker never lets the reader's mistakes escape as a crash: an exception inside the reader's
function, a wrong return type or shape, NaN or a changed input is reported as feedback.

Writing a checker: decorate it with ``@checker("name")``, call :func:`attempted` first, run the
reader's code with :func:`call`, validate with :func:`expect_tensor`, report with :func:`fail`, and
return the success message.

In a graded course the checkers here run on **practice** cases: a chapter module's
``SEEDS`` draw them, and a reference that would give a solution away is replaced here by one that
does not (chapter 2's ``_sharpened``). The course's grader (tools/grade_course.py) puts the course's
own seeds and references in their place, from grading/ of the repository, which no package ships.
Where an answer is a value, :func:`variant` gives each student of a course with variants numbers of
their own (a module's ``VARIANTS`` {exercise: function} names the exercises that have them).
"""

from __future__ import annotations

import dis
import functools
import html
import inspect
import math
import numbers
import re
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NoReturn

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "Verdict",
    "ExerciseFailed",
    "checker",
    "fail",
    "not_attempted",
    "attempted",
    "is_stub",
    "names_used",
    "call",
    "CALL_TIME_LIMIT",
    "replaced",
    "refused",
    "expect_tensor",
    "expect_number",
    "expect_bool",
    "fail_as_percentage",
    "near",
    "fail_if_in_units",
    "plain",
    "fmt",
    "row_sum_problem",
    "largest_difference",
    "student_id",
    "variant",
    "mistakes_passing",
]


# --- verdicts --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The answer of a checker that did not fail: status "passed" or "not attempted"."""

    exercise: str
    status: str
    message: str
    names: tuple[str, ...] = ()  # the checker's arguments: a message may begin with one of them

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        mark = "✓" if self.passed else "…"
        return f"{mark} {self.exercise}: {self.status}. {_sentence(self.message, self.names)}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        # Dark text on a pale background (contrast far above WCAG AA); the status is in words, not colour alone.
        border, background = ("#1a7f37", "#eef7f0") if self.passed else ("#6e7781", "#f3f4f6")
        mark = "&#10003;" if self.passed else "&hellip;"
        return (
            f'<div class="exercise-verdict exercise-{self.status.replace(" ", "-")}" '
            'style="border-left: 4px solid '
            f"{border}; background: {background}; color: #1f2328; padding: 0.4em 0.8em; "
            'margin: 0.2em 0;">'
            f"{mark} <strong>{html.escape(self.exercise)}: "
            f"{html.escape(self.status)}.</strong> "
            f"{_code_spans(html.escape(_sentence(self.message, self.names)))}</div>"
        )


def _sentence(text: str, names: tuple[str, ...] = ()) -> str:
    """``text`` with a capital first letter, unless it begins with code: a `span`, one of ``names``
    (the checker's arguments, the reader's variables), or a name with "_" or a digit in it. A
    variable keeps its spelling: "hard_key is right", "identical is right", not "Hard_key ..."."""
    first = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text)
    if text.startswith("`") or (
        first and (first.group() in names or re.search(r"[_0-9]", first.group()))
    ):
        return text
    return text[:1].upper() + text[1:]


def _code_spans(escaped: str) -> str:
    """`name` -> <code>name</code> in already escaped HTML. The code takes the feedback box's own text
    colour: the theme's dark-mode code colour on the box's light background fails WCAG contrast (1.35:1)."""
    return re.sub(
        r"`([^`]+)`", r'<code style="color: inherit; background: transparent">\1</code>', escaped
    )


class ExerciseFailed(AssertionError):
    """A wrong answer. ``str()`` is the feedback; ``verdict`` has the exercise's name."""

    def __init__(self, exercise: str, message: str, names: tuple[str, ...] = ()):
        super().__init__(f"{exercise}: {message}")
        self.exercise, self.message, self.names = exercise, message, names

    def _render_traceback_(self) -> list[str]:
        """IPython shows these lines instead of a traceback: the feedback is the whole story."""
        return [
            f"\x1b[1;31m✗ {self.exercise}: not yet right.\x1b[0m",
            _sentence(self.message, self.names),
        ]


class CheckFailed(Exception):
    """Raised by :func:`fail` inside a checker; :func:`checker` turns it into ExerciseFailed. A
    checker that runs another checker's steps catches it to add the case it was checking."""


class _NotAttempted(Exception):
    """Raised inside a checker when there is nothing to check yet."""


def fail(message: str) -> NoReturn:
    """Stop the check: the answer is wrong, and ``message`` says how."""
    raise CheckFailed(message)


def failures(checks: dict[str, Callable[[Any], None]], values: dict[str, Any]) -> list[str]:
    """The messages of the parts of an answer that fail their checks, in the order of ``checks``: each
    part given (not None) passed to its check, its :class:`CheckFailed` caught, so that a checker
    names every wrong part at once (chapters 9 and 17: one at a time took a reader three runs)."""
    wrong = []
    for name, check in checks.items():
        if values[name] is not None:
            try:
                check(values[name])
            except CheckFailed as e:
                wrong.append(str(e))
    return wrong


def not_attempted(message: str, exercise: str | None = None) -> NoReturn:
    """Stop the check: there is nothing to check yet (not an error). ``exercise`` names the part
    still to write where it is not the one the checker is named after."""
    raise _NotAttempted(message, exercise)


# What a checker's message calls the cases it tries: in the reader's own kernel they are the practice
# cases, which ship with the package ("right on all 5 hidden cases" was not true there: course
# review r4); a course's grader sets "hidden" while it grades on its own private cases.
CASES_WORD = "practice"


def case_wording(message: str) -> str:
    """``message`` with the checkers' "hidden case(s)" and "hidden batch(es)" named by
    :data:`CASES_WORD`."""
    # "on all 2 hidden cases" reads "on both ... cases" (reader s39b, chapter 14)
    message = re.sub(r"\ball 2 hidden (cases|batches)\b", r"both hidden \1", message)
    if CASES_WORD == "hidden":
        return message
    return re.sub(r"\bhidden (cases?|batch(?:es)?)\b", rf"{CASES_WORD} \1", message)


def checker(exercise: str) -> Callable:
    """Decorator for a check function that returns its success message (or calls fail/not_attempted)."""

    def wrap(check: Callable[..., str]) -> Callable[..., Verdict]:
        names = tuple(inspect.signature(check).parameters)

        @functools.wraps(check)
        def run(*args, **kwargs) -> Verdict:
            try:
                args = tuple(plain(a) for a in args)
                kwargs = {k: plain(v) for k, v in kwargs.items()}
                message = check(*args, **kwargs)
            except _NotAttempted as e:
                message, part = (*e.args, None)[:2]
                # a part right, another still to write: its cases are named as a pass names them
                message = case_wording(message)
                crash = _cell_above_crashed()
                if crash:  # the answer is missing because the reader's cell stopped: say why
                    raise ExerciseFailed(
                        part or exercise,
                        f"{crash}, so {message[:1].lower()}{message[1:]}",
                        names,
                    ) from None
                return Verdict(part or exercise, "not attempted", message, names)
            except CheckFailed as e:
                raise ExerciseFailed(exercise, case_wording(str(e)), names) from None
            return Verdict(exercise, "passed", case_wording(message), names)

        return run

    return wrap


# --- running the reader's code safely ----------------------------------------------------------------

_CONTAINER_METHODS = ("__eq__", "__ne__", "__iter__", "__getitem__", "__len__", "__contains__")


def _overrides(value: Any, base: type) -> bool:
    return any(getattr(type(value), m) is not getattr(base, m) for m in _CONTAINER_METHODS)


def plain(value: Any, _depth: int = 0) -> Any:
    """``value`` as the built-in types it claims to be, so that its own methods cannot lie to a checker.

    A str, int or float subclass becomes the plain str, int or float it holds (``str.__str__``,
    ``int.__int__``, ``float.__float__`` read the stored value, not the subclass's ``strip``,
    ``__eq__`` or ``__float__``); a tensor subclass becomes a plain tensor on the same data (its
    ``__torch_function__`` no longer runs; an ``nn.Parameter`` becomes its data); lists, dicts and
    tuples become plain ones with plain items (a named tuple keeps its type if it overrides nothing);
    a NumPy number becomes the Python number it holds.
    Anything else (functions, modules, None, bools) is returned as it is."""
    kind = type(value)
    if kind in (str, int, float, bool, type(None), Tensor) or _depth > 20:
        return value
    if isinstance(value, np.generic) and isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()  # a NumPy number (np.int64(2), np.float32(0.5)) as the Python one
    if isinstance(value, Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return Tensor.as_subclass(value, Tensor)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, list):
        return [plain(v, _depth + 1) for v in list.copy(value)]
    if isinstance(value, dict):
        return {plain(k, _depth + 1): plain(v, _depth + 1) for k, v in dict.items(value)}
    if isinstance(value, tuple):
        items = [plain(v, _depth + 1) for v in tuple.__getitem__(value, slice(None))]
        if kind is tuple or _overrides(value, tuple):
            return tuple(items)
        if hasattr(kind, "_make"):  # a named tuple
            return kind._make(items)
        try:  # a structseq such as torch.return_types.max
            return kind(items)
        except Exception:
            return tuple(items)
    return value


_STUB_INSTRUCTIONS = ([("LOAD_CONST", None), ("RETURN_VALUE", None)], [("RETURN_CONST", None)])


def is_stub(func: Callable) -> bool:
    """True if ``func``'s body does nothing: only ``...``, ``pass``, a docstring or comments.

    That is what "not written yet" means for a function exercise: the template's
    ``def f(...): ...  # your code here`` compiles to "return None" and nothing else.
    """
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    steps = [
        (i.opname, i.argval)
        for i in dis.get_instructions(code)
        if i.opname not in ("RESUME", "NOP", "CACHE", "EXTENDED_ARG")
    ]
    return steps in _STUB_INSTRUCTIONS


def names_used(func: Any) -> set[str]:
    """The global, attribute and keyword names that ``func``'s code mentions, nested functions,
    lambdas and comprehensions included (``causal_mask``, ``tril``, ``is_causal``...): what a checker
    reads to tell that an answer calls a helper the exercise asks it not to use. Empty for an object
    without code."""
    names: set[str] = set()
    todo = [getattr(func, "__code__", None)]
    while todo:
        code = todo.pop()
        if code is None:
            continue
        names.update(code.co_names)
        for const in code.co_consts:
            if hasattr(const, "co_names"):
                todo.append(const)
            elif isinstance(const, tuple):  # the keyword names of a call
                names.update(c for c in const if isinstance(c, str))
    return names


def attempted(func: Any, name: str) -> None:
    """Call first in a checker of a function exercise: not attempted if ``func`` is still the stub."""
    if func is None:
        not_attempted(f"define `{name}` in the cell above, then run this cell again.")
    if not callable(func):
        fail(f"expected `{name}` to be a function, got {type(func).__name__} {fmt(func)}.")
    if is_stub(func):
        not_attempted(
            f"`{name}` is still the template (its body does nothing). Write its body in the cell above, run that cell, then run this one again."
        )


def _clone(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Tensor):
        return (
            isinstance(b, Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and bool(
                torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
                and torch.equal(a.isnan(), b.isnan())
            )
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return True


def _hint(error: Exception) -> str:
    text = str(error)
    if "must match the size of tensor" in text or "shape" in text and "broadcast" in text:
        return " Two tensors' shapes do not broadcast. A sum over the last dimension that is used to divide needs keepdim=True ([B, N] / [B, 1])."
    if isinstance(error, TypeError) and "numpy" in text.lower():
        return " Stay in torch: the inputs are tensors and the result must be one."
    return ""


WITHHOLD_EXCEPTION_TEXT = False
"""True while the course's grader (tools/grade_course.py) grades on its private cases: the text of an
exception the reader's function raises is left out of the feedback (its type and line stay), since a
message can hold the private inputs; the full message goes to :data:`WITHHELD`, for the teacher."""
WITHHELD: list[str] = []
WITHHELD_NOTE = "its message is withheld: it may show the grader's private inputs"
# Exception texts that are the grader's own words or Python's about the reader's code, never the inputs:
# shown on private cases too (a refusal of a forbidden call, a name the answer does not define)
_OWN_TEXTS: set[str] = set()  # refusing()'s messages, each registered when it is made
_OWN_PATTERN = re.compile(
    r"name '\w+' is not defined"
    r"|it called `[\w.]+`, the checker's own code, which an answer may not use"
    r"|it called a library function the exercise does not allow"
)


# tools/grade_course.py's note on an answer that ran out of the memory the grader gives it
_GRADER_NOTE = re.compile(r"\(the grader gives an answer [\d.]+ GB of memory\)")


def _own_text(text: str) -> bool:
    return text in _OWN_TEXTS or bool(_OWN_PATTERN.fullmatch(text))


def own_text(text: str) -> str:
    """``text``, registered as a checker's own message (a stand-in that refuses a call raises it): shown
    in the feedback also on private cases (:data:`WITHHOLD_EXCEPTION_TEXT`)."""
    _OWN_TEXTS.add(text.strip().rstrip("."))
    return text


CALL_TIME_LIMIT = 30
"""Seconds one call of the reader's function may take (the hidden cases are small: a right answer
takes far less). Below the course's two minutes per cell, so that an answer that loops forever
is reported by the checker ("did not finish in 30 s"), not by the grader's interrupt."""


class _TimeLimit(BaseException):
    """Raised inside the reader's function when its time is up (a BaseException, so that the reader's
    own ``except Exception`` does not swallow it)."""


@contextmanager
def _time_limit(seconds: float):
    """Raise :class:`_TimeLimit` in the block after ``seconds`` of wall time (a SIGALRM timer: on the
    main thread of a POSIX process, such as a Jupyter kernel; elsewhere the block runs unlimited)."""
    if (
        not seconds
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(signum, frame):
        raise _TimeLimit

    previous = signal.signal(signal.SIGALRM, expire)
    start = time.monotonic()
    outer = signal.setitimer(signal.ITIMER_REAL, seconds)[0]  # a timer already running outside
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:  # give the outer timer back what it had left (at least a moment)
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3))


_LIBRARY = Path(__file__).resolve().parents[1]  # lib/: the checkers' code, and the book's library


def _where(error: BaseException, func: Any) -> str:
    """``, at line N of your cell (`source`)``: where in the reader's own code ``error`` was raised,
    or "" when no frame of the traceback is theirs."""
    code = getattr(func, "__code__", None) or getattr(
        getattr(func, "forward", None), "__code__", None
    )
    if code is None:
        return ""
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if f.filename == code.co_filename
    ]
    if frames and Path(code.co_filename).resolve().is_relative_to(_LIBRARY):
        # the checker's own wrapper of the reader's function (chapter 18's): its lines are none of
        # the reader's (course-kit review s22, M7: "at line 237 of your cell")
        return ", in the checker"
    if frames and Path(code.co_filename).resolve().is_relative_to(_LIBRARY.parent / "tools"):
        # the course grader's stand-in for the reader's module (its forward): the error its call
        # brings back from the sandbox is raised again at the line of the reader's cell it came
        # from (its frame, "<answer ...>"): that line, as the feedback promises (course-kit
        # review s29, m2); a refusal it raises itself is in the grader, not "at line 1958 of your cell"
        # (course-kit review s24, M2)
        own = [
            f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<answer")
        ]
        return f", {_at_line(own[-1], ' of your cell')}" if own else ", in the grader"
    return f", {_at_line(frames[-1], ' of your cell')}" if frames else ""


def _at_line(frame: traceback.FrameSummary, of: str = "") -> str:
    """``at line N<of> (`source`)``: a traceback frame of the reader's code, as feedback writes it."""
    line = (frame.line or "").strip()
    return f"at line {frame.lineno}{of}" + (f" (`{line[:80]}`)" if line else "")


# torch's NotImplementedError for an operation on a dtype it has no kernel for ("log_sigmoid_cpu" not
# implemented for 'Bool'): an answer's mistake (a tensor of labels where the logits go), not a stub
_KERNEL_DTYPE = re.compile(r"not implemented for '")


def call(
    func: Callable,
    *args: Any,
    name: str,
    case: str,
    hints: dict[str, str] | None = None,
    time_limit: float | None = None,
    grad: bool = False,
) -> Any:
    """Run ``func(*args)`` on copies of the inputs; any exception, change to an input or a call that
    runs past ``time_limit`` seconds (default :data:`CALL_TIME_LIMIT`) is feedback.

    hints: advice for the mistakes a chapter expects, by what the feedback says: the first key found
    in it adds its value after it. grad: run with autograd on, as the reader's own call runs (an
    answer that writes into a parameter must do it under torch.no_grad() itself); off by default."""
    time_limit = CALL_TIME_LIMIT if time_limit is None else time_limit
    originals = [_clone(a) for a in args]
    inputs = [_clone(a) for a in args]
    try:
        with torch.set_grad_enabled(grad), _time_limit(time_limit):
            result = func(*inputs)
    except _TimeLimit:
        _fail_with_hint(
            f"on the case {case}, your function `{name}` did not finish in {time_limit:g} s (the "
            "hidden cases are small: a right answer takes far less). Look for a loop whose "
            "condition never becomes false.",
            hints,
        )
    except Exception as e:  # the reader's error becomes feedback, never a crash of the checker
        if isinstance(e, NotImplementedError) and not _KERNEL_DTYPE.search(str(e)):
            not_attempted(
                f"`{name}` still raises NotImplementedError. Write its body, then run this cell again."
            )
        text = str(e).strip()[:300].rstrip(".")
        message = (
            f"on the case {case}, `{name}` raised {type(e).__name__}: {text}{_where(e, func)}."
        )
        if not any(key in message for key in (hints or {})):
            message += _hint(e)  # the general advice only where the chapter has none of its own
        advice = next((h for key, h in (hints or {}).items() if key in message), None)
        if WITHHOLD_EXCEPTION_TEXT and text and not _own_text(text):
            # the course's private cases: the student's own exception text could carry them out
            # (a message that prints the inputs); the grader keeps it for the teacher (WITHHELD)
            WITHHELD.append(message)
            limit = _GRADER_NOTE.search(text)  # the grader's own note on its memory limit stays
            message = (
                f"on the case {case}, `{name}` raised {type(e).__name__}{_where(e, func)}; "
                f"{WITHHELD_NOTE}{' ' + limit.group(0) if limit else ''}.{_hint(e)}"
            )
        fail(f"{message} {advice}" if advice else message)
    for i, (before, after) in enumerate(zip(originals, inputs)):
        if not _same(before, after):
            _fail_with_hint(_changed_input(func, i, before, name=name, case=case), hints)
    return plain(result)


def _changed_input(func: Callable, i: int, before: Any, *, name: str, case: str) -> str:
    """The feedback for a call that changed its input number i + 1 (``before``, as it came) in place:
    a tensor's (an operation ending in ``_``), or a plain list's (``pop``, ``append``...; reader
    ch10 s41: a list emptied by ``merges.pop(0)`` was told about tensors)."""
    changed = f"on the case {case}, `{name}` changed its input number {i + 1} in place"
    if any(isinstance(x, Tensor) for x in leaves(before)):
        return f"{changed} (for example with an operation ending in `_` or an indexed assignment). Work on a new tensor: the caller still needs its own."
    try:
        param = list(inspect.signature(func).parameters.values())[i]
        positional = (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD)
        arg = param.name if param.kind in positional else None  # not the name of *args
    except (TypeError, ValueError, IndexError):  # no signature to read
        arg = None
    named = f" `{arg}`" if arg else ""
    its = f"the list{named}" if isinstance(before, list) else f"a list inside{named or ' it'}"
    read = f" (a `for` loop over `{arg}` does)" if arg else ""
    return f"{changed}: it emptied or modified {its} (for example with pop, remove, append, del or an indexed assignment). Read it without changing it{read}, or work on a copy: the caller still needs its own."


def leaves(value: Any):
    """The values inside nested lists, tuples and dicts (a call's arguments), one by one: how the
    checkers that follow a tensor through a reader's code (chapters 7 and 18) find it among them."""
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    else:
        yield value


def refusing(name: str, then: str, whose: str = "the library's") -> Callable[..., NoReturn]:
    """A stand-in for the library's function ``name`` while a reader's answer runs (``replaced``, and
    the course grader's ``REFUSALS``): a call fails with "it called the library's <name><then>"
    (``whose``: another library's copy, "transformers'"). Its ``naming(other)`` is the same refusal
    for the function ``other``."""

    own_text(f"it called {whose} {name}{then}")

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise RuntimeError(f"it called {whose} {name}{then}")

    # the same refusal of another function, named as it is (the grader's refusal of every function
    # of a module: lib.alibi._slopes is "it called the library's _slopes; ...")
    refuse.naming = lambda other: refusing(other, then, whose)
    return refuse


@contextmanager
def replaced(stand_ins: dict[Callable, Callable], module: Any, reader_function: Any):
    """While inside, each library function of ``stand_ins`` (original -> stand-in) is replaced by its
    stand-in wherever a name holds it: in ``module`` and in the reader's notebook (or module: the
    globals of ``reader_function``). Found by identity, never by the reader's objects' ``__eq__``."""
    by_id = {id(original): stand_in for original, stand_in in stand_ins.items()}
    spaces = [vars(module), getattr(reader_function, "__globals__", {})]
    saved = [
        (space, name, value)
        for space in spaces
        for name, value in list(space.items())
        if id(value) in by_id
    ]
    for space, name, value in saved:
        space[name] = by_id[id(value)]
    try:
        yield
    finally:
        for space, name, value in reversed(saved):
            space[name] = value


def _refusal_targets(target: str) -> list[tuple[Any, str, Any]]:
    """(holder, name, object) of each function a refusal's target names ("lib.rope.apply_rope",
    "torch.nn.RMSNorm.forward"), or for a pattern ("transformers.models.*.modeling_*.repeat_kv") each
    one in the modules imported so far, as the course grader's sandbox finds them; none for a name
    this version of a library lacks (torch._fused_rms_norm)."""
    import fnmatch
    import importlib

    parts = target.split(".")
    if "*" in target:
        modules = [
            (name, module)
            for name, module in list(sys.modules.items())
            if module is not None
            and fnmatch.fnmatchcase(name, ".".join(parts[: name.count(".") + 1]))
            and len(parts) > name.count(".") + 1
        ]
    else:
        modules = []
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable module name
            try:
                modules = [(".".join(parts[:cut]), importlib.import_module(".".join(parts[:cut])))]
                break
            except ImportError:
                continue
    found = []
    for module_name, module in modules:
        holders = [(module, None)]
        rest = parts[module_name.count(".") + 1 :]
        for depth, part in enumerate(rest):
            found_here = []
            for holder, _ in holders:
                for key, value in list(getattr(holder, "__dict__", {}).items()):
                    if not fnmatch.fnmatchcase(key, part):
                        continue
                    if "*" in target and holder is module:
                        if getattr(value, "__module__", None) != module_name:
                            continue  # a pattern names a module's own functions and classes only
                    found_here.append((holder, key) if depth == len(rest) - 1 else (value, None))
            holders = found_here
        found += [(holder, key, vars(holder)[key]) for holder, key in holders if key is not None]
    return [
        (holder, key, value)
        for holder, key, value in found
        if callable(value) or isinstance(value, (staticmethod, classmethod))
    ]


def _op_name(func: Any) -> str | None:
    """The name of torch's op a torch function mode sees (``torch.rms_norm``, ``torch.ops.aten.rms_norm``
    and its overloads: "rms_norm"), None for a function that is no op of torch's."""
    name = getattr(func, "_qualified_op_name", None)
    if name is None and hasattr(func, "overloadpacket"):
        name = func.overloadpacket._qualified_op_name
    if name is not None:
        namespace, _, name = name.partition("::")
        return name if namespace == "aten" else None
    return getattr(func, "__name__", None) if inspect.isbuiltin(func) else None


@contextmanager
def refused(table: list, reader_function: Any):
    """While inside, every function of a checker's ``REFUSALS`` table [(target, None, raiser)] raises
    its refusal: the course grader's own table, so the notebook refuses what the grader refuses. Each
    is replaced where its module or class holds it and under any name in the reader's notebook
    (:func:`replaced`); a built-in op of torch's (``torch.rms_norm``) is refused however it is spelled
    (``torch.ops.aten.rms_norm``), by a torch function mode. Only refusals of every call (None).

    Yields ``again()``: call it before each call of the reader's function, so that a pattern's
    modules imported since (an answer that imports transformers inside itself) refuse too."""
    from torch.overrides import TorchFunctionMode

    if any(len(row) != 3 or row[1] is not None for row in table):
        raise ValueError("table: rows (target, None, raiser) only, a refusal of every call")
    swaps, by_id, ops = [], {}, {}
    raisers = {id(raiser) for _, _, raiser in table}

    def again() -> None:
        for target, _, raiser in table:
            for holder, key, original in _refusal_targets(target):
                if id(original) in raisers:
                    continue  # refused already
                swaps.append((holder, key, original))
                by_id[id(original)] = raiser  # F.rms_norm held from before: the mode sees it
                if inspect.isbuiltin(original) and _op_name(original):
                    ops[_op_name(original)] = raiser
                setattr(holder, key, raiser)

    class Refusing(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            raiser = by_id.get(id(func)) or ops.get(_op_name(func))
            if raiser is not None:
                raiser()
            return func(*args, **(kwargs or {}))

    try:
        again()
        stand_ins = {original: by_id[id(original)] for _, _, original in swaps}
        with replaced(stand_ins, sys.modules[__name__], reader_function), Refusing():
            yield again
    finally:
        for holder, key, original in reversed(swaps):
            setattr(holder, key, original)


def _cell_above_crashed() -> str | None:
    """What stopped the notebook cell run just before this one, as the start of a sentence ("the cell
    above stopped with ZeroDivisionError at line 3 (`...`): division by zero"), or None if it ran to
    its end (outside IPython: None). An interrupt is a cell that did not finish: in grading, one that
    ran past nbgrader's time limit for a cell."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    result = getattr(shell, "last_execution_result", None)
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    if error is None or isinstance(error, (_NotAttempted, CheckFailed, ExerciseFailed)):
        return None  # a check that failed is not a crash of the answer
    frames = [  # the notebook's own cells: "/tmp/ipykernel_.../....py" in Jupyter, "<ipython-input-...>"
        f
        for f in traceback.extract_tb(error.__traceback__)
        if "ipykernel_" in f.filename or f.filename.startswith("<ipython-input")
    ]
    where = f" {_at_line(frames[-1])}" if frames else ""
    if isinstance(error, KeyboardInterrupt):
        return (
            f"the cell above was interrupted{where} before it finished (when graded: it ran past the "
            "time limit of a cell; does a loop never end?)"
        )
    text = str(error).strip()[:300].rstrip(".")
    return f"the cell above stopped with {type(error).__name__}{where}" + (
        f": {text}" if text else ""
    )


def _fail_with_hint(message: str, hints: dict[str, str] | None) -> NoReturn:
    advice = next((h for key, h in (hints or {}).items() if key in message), None)
    fail(f"{message} {advice}" if advice else message)


def expect_tensor(
    result: Any, shape: tuple[int, ...], *, name: str, case: str, allow_nan: bool = False
) -> Tensor:
    """``result`` as a float64 tensor, after checking its type, shape and (unless allowed) NaN/inf."""
    result = plain(result)
    if result is None:
        fail(f"on the case {case}, `{name}` returned None. Did you forget the `return` statement?")
    if isinstance(result, (list, tuple)) and result and all(isinstance(r, Tensor) for r in result):
        fail(
            f"on the case {case}, `{name}` returned a {type(result).__name__} of tensors ({len(result)} of them); stack them into one tensor of shape {list(shape)} with torch.stack."
        )
    if not isinstance(result, Tensor):
        kind = (
            "a NumPy array" if type(result).__name__ == "ndarray" else f"a {type(result).__name__}"
        )
        fail(
            f"on the case {case}, `{name}` returned {kind}; expected a torch.Tensor of shape {list(shape)}."
        )
    if tuple(result.shape) != tuple(shape):
        fail(
            f"on the case {case}, `{name}` returned shape {list(result.shape)}; expected {list(shape)}."
        )
    if not (result.is_floating_point()):
        fail(
            f"on the case {case}, `{name}` returned dtype {result.dtype}; expected floating-point numbers."
        )
    result = result.detach().to(torch.float64)
    if not allow_nan and not torch.isfinite(result).all():
        bad = (~torch.isfinite(result)).nonzero()[0].tolist()
        fail(
            f"on the case {case}, `{name}` returned {fmt(result[tuple(bad)].item())} at index {bad}."
        )
    return result


def expect_number(value: Any, what: str) -> float:
    """``value`` as a float, or feedback saying what came.

    Any real number is accepted: an int, a float, any other ``numbers.Real`` (a
    ``fractions.Fraction``, a NumPy scalar such as ``np.float32(16)``), a one-element tensor or a
    one-element NumPy array. A bool is not a number here, nor is a complex number."""
    value = plain(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
        value = value.item()
    if isinstance(value, Tensor) and value.numel() == 1:
        value = value.item()
    elif type(value).__module__ == "numpy" and getattr(value, "size", None) == 1:
        value = value.item()  # a NumPy scalar or one-element array: its Python number
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        fail(f"{what} should be a number, got {type(value).__name__} {fmt(value)}.")
    try:
        value = float(value)
    except (TypeError, ValueError, OverflowError):
        fail(f"{what} should be a number, got {type(value).__name__} {fmt(value)}.")
    if not math.isfinite(value):
        fail(f"{what} should be a finite number, got {value}.")
    return float(value)


def expect_bool(value: Any, what: str, words: bool = False) -> bool:
    """``value`` as True or False (a bool or a one-element bool tensor; with ``words``, also the
    strings "yes", "no", "true" and "false"), or feedback saying what came."""
    value = plain(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, Tensor) and value.numel() == 1 and value.dtype == torch.bool:
        return bool(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype == np.bool_:
        return bool(value.item())
    if words and isinstance(value, str) and value.strip().lower() in ("yes", "no", "true", "false"):
        return value.strip().lower() in ("yes", "true")
    fail(f"{what} should be True or False, got {fmt(value)}.")


def fail_as_percentage(value: float, what: str) -> NoReturn:
    """Feedback for a fraction the reader wrote as a percentage (the caller decides that it is one)."""
    fail(
        f"{what} = {fmt(value)} looks like a percentage. Write it as a fraction of 1 (0.5 = half)."
    )


def near(value: float, target: float, tolerance: float) -> bool:
    """Whether ``value`` is within ``tolerance`` of ``target``, relative to it (0.001: three figures)."""
    return abs(value - target) <= tolerance * abs(target)


_UNITS = {6: "millions", 9: "billions"}


def fail_if_in_units(value: float, what: str, target: float, tolerance: float) -> None:
    """Feedback for a count the reader wrote in millions or billions (``value`` x 1e6 or x 1e9 is near
    ``target``): write the number itself. Returns when it is not one."""
    for exponent, unit in _UNITS.items():
        if near(value * 10.0**exponent, target, tolerance):
            fail(
                f"{what} = {fmt(value)}: write the number itself, {value:.1f}e{exponent}, not in {unit}."
            )


# --- per-student variants ------------------------------------------------------------------------------

# A course with per-student variants (tools/make_course.py --variants) sets VARIANTS_ENV to its course
# id in the students' notebooks and in its grader; the student is STUDENT_ENV, else JupyterHub's user.
VARIANTS_ENV, STUDENT_ENV = "COURSE_VARIANTS", "COURSE_STUDENT"


def student_id() -> str | None:
    """The student whose variant a checker uses: None for a reader of the book (no course with
    variants); else ``$COURSE_STUDENT`` (the grader sets it to nbgrader's student id), else
    ``$JUPYTERHUB_USER`` (on a hub, nbgrader's student id is the user's name), else the login name."""
    import getpass
    import os

    if not os.environ.get(VARIANTS_ENV):
        return None
    return os.environ.get(STUDENT_ENV) or os.environ.get("JUPYTERHUB_USER") or getpass.getuser()


def variant(exercise: str, choices: dict[str, list], book: dict[str, Any]) -> dict[str, Any]:
    """The numbers of one exercise for the current student (:func:`student_id`): ``book`` for a reader
    of the book, else one value of each list in ``choices``, drawn by a hash of the course's id, the
    exercise and the student, so that the student's notebook and the course's grader, which knows
    the student from the submission, draw the same. Neighbours mostly differ: a value copied from
    one is wrong for the other."""
    import hashlib
    import os

    student = student_id()
    if student is None:
        return dict(book)
    drawn = {}
    for name, values in choices.items():
        key = f"{os.environ[VARIANTS_ENV]}/{exercise}/{name}/{student}".encode()
        drawn[name] = values[int(hashlib.sha256(key).hexdigest(), 16) % len(values)]
    return drawn


# --- describing numbers and differences ---------------------------------------------------------------


def fmt(x: Any) -> str:
    """A short, readable form of a number, tensor or other value for feedback messages."""
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, Tensor):
        if x.numel() == 1:
            return fmt(x.item())
        if x.numel() <= 8:
            return "[" + ", ".join(fmt(float(v)) for v in x.flatten()) + "]"
        return f"a tensor of shape {list(x.shape)}"
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def row_sum_problem(
    weights: Tensor, allowed_rows: Tensor | None = None, tol: float = 1e-4
) -> str | None:
    """If some row of ``weights`` [..., N] does not sum to 1, a sentence naming the first one; else None.

    ``allowed_rows`` (bool, the shape of ``weights`` without its last dim) limits the check to those rows.
    Rows are named by their index counted from 0 in the last-but-one dimension (and the batch, if any).
    """
    sums = weights.sum(dim=-1)
    bad = (sums - 1).abs() > tol
    if allowed_rows is not None:
        bad &= allowed_rows
    if not bad.any():
        return None
    index = bad.nonzero()[0].tolist()
    where = f"row {index[-1]}" + (
        f" of batch element {index[0] if len(index) == 2 else index[:-1]}" if len(index) > 1 else ""
    )
    total = sums[tuple(index)].item()
    # enough digits to tell the sum from 1: 0.99979, not "1" (course review s39, M2)
    shown = next(
        (f"{total:.{d}g}" for d in range(3, 9) if f"{total:.{d}g}" not in ("1", "1.0")),
        f"{total:.9g}",
    )
    return f"{where} (counting from 0) of your weights sums to {shown}"


def largest_difference(result: Tensor, expected: Tensor) -> str:
    """Where ``result`` and ``expected`` differ most, as a sentence."""
    diff = (result - expected).abs()
    index = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    yours, wanted = result[index].item(), expected[index].item()
    digits = 4  # more where 4 would print two equal-looking numbers ("1.679, expected 1.679")
    while f"{yours:.{digits}g}" == f"{wanted:.{digits}g}" and digits < 17:
        digits += 1
    return f"the largest difference is {diff[index].item():.3g} at index {list(index)}: yours {yours:.{digits}g}, expected {wanted:.{digits}g}"


# --- a course's private cases against the checkers' known mistakes ---------------------------------


def mistake_name(mistake: Any) -> str:
    """How :func:`mistakes_passing` names a known mistake: its label, function name or arguments."""
    if isinstance(mistake, str):  # a label, or a message: its first words
        return mistake if len(mistake) <= 60 else mistake[:57] + "..."
    if isinstance(mistake, dict):
        return ", ".join(f"{k}={v!r}" for k, v in mistake.items())
    return getattr(mistake, "__name__", repr(mistake)).lstrip("_")


def passing_everywhere(mistakes: Any, right_on_all: Callable[[Any], bool]) -> list[str]:
    """The names of ``mistakes`` (a checker's known mistakes, or (mistake, message) pairs) whose
    answers ``right_on_all`` finds right on every case; an answer that raises is a wrong one."""
    names = []
    for mistake in mistakes:
        if isinstance(mistake, tuple):
            mistake = mistake[0]
        try:
            right = right_on_all(mistake)
        except Exception:
            right = False
        if right:
            names.append(mistake_name(mistake))
    return names


def mistakes_passing(module: Any, seeds: dict[str, int] | None = None) -> dict[str, list[str]]:
    """{seed's name: the known mistakes that get full marks on every case drawn from it} of a checker
    module, with ``seeds`` in place of its ``SEEDS`` for the time of the call (its own where None).

    A module whose checkers draw cases from a seed and name their known mistakes lists them in
    ``PRIVATE_CASE_MISTAKES`` {seed's name: function returning the mistakes that pass}. A course's
    private seeds must leave every list empty (tools/make_course.py --private-cases redraws until they
    do): a known mistake that passes the course's cases would get full marks (course-kit review s33, S1:
    chapter 10's "first occurrence only" passed on 63 of 100 seeds)."""
    checks = getattr(module, "PRIVATE_CASE_MISTAKES", {})
    if seeds is not None and not isinstance(seeds, dict):
        raise TypeError(f"seeds must be a dict {{name: seed}}, got {type(seeds).__name__}")
    unknown = sorted(set(seeds or {}) - set(module.SEEDS))
    if unknown:
        raise ValueError(f"seeds: {module.__name__} has no seed {', '.join(unknown)}")
    saved = dict(module.SEEDS)
    try:
        module.SEEDS.update(seeds or {})
        return {name: list(check()) for name, check in checks.items()}
    finally:
        module.SEEDS.clear()
        module.SEEDS.update(saved)
