"""lib.prose: the text's numbers about trained models, checked without stopping a reader's run."""

import numpy as np
import pytest

from lib import prose
from lib.prose import NOTE, holds, stated


def test_a_number_as_written_holds_silently(capsys):
    assert stated(0.4912, "0.49", ".2f") is True
    assert stated(0.8149, "81%", ".0%") is True
    assert holds(3 <= 7 <= 12, "between 3 and 12 points", "7") is True
    assert capsys.readouterr().out == ""


def test_a_number_this_run_computes_otherwise_prints_a_note(capsys):
    assert stated(0.5061, "0.49", ".2f") is False
    out = capsys.readouterr().out
    assert out.startswith(f"{NOTE} 0.49 where this run computed 0.51") and "processor" in out
    assert holds(False, "between 3 and 12 points") is False
    assert "this run disagrees" in capsys.readouterr().out


def test_a_cells_later_notes_of_the_same_kind_do_not_repeat_the_reason(monkeypatch, capsys):
    """In a notebook cell the first note gives the reason and the next ones of its kind say "(the same
    reason)."; a new cell, or another kind of number, gives its reason again (readers s35: nine notes
    in a row, each with the whole reason, were hard to match to the text)."""
    import builtins

    class Shell:
        execution_count = 7

    shell = Shell()
    monkeypatch.setattr(builtins, "get_ipython", lambda: shell, raising=False)
    monkeypatch.setattr(prose, "_last_reason", {})
    stated(0.5061, "0.49", ".2f")
    stated(0.71, "0.70", ".2f")
    holds(False, "that the tiled loop is slower", measured="timing")
    shell.execution_count = 8
    stated(0.5061, "0.49", ".2f")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(prose.REASONS["training"])
    assert lines[1] == f"{NOTE} 0.70 where this run computed 0.71{prose.SAME_REASON}"
    assert lines[2].endswith(prose.REASONS["timing"]) and lines[3].endswith(
        prose.REASONS["training"]
    )
    monkeypatch.delattr(builtins, "get_ipython")  # a script: every note whole
    stated(0.5061, "0.49", ".2f")
    stated(0.5061, "0.49", ".2f")
    assert all(
        line.endswith(prose.REASONS["training"]) for line in capsys.readouterr().out.splitlines()
    )


def test_a_timing_or_rounding_claim_gives_its_own_reason(capsys):
    """A time depends on the machine and its load, a rounding error on the kernels: not on training."""
    claim = "that the tiled loop is slower than the plain attention at T = 256 and 512"
    assert holds(True, claim, measured="timing") is True
    assert capsys.readouterr().out == ""
    assert holds(False, claim, measured="timing") is False
    out = capsys.readouterr().out
    assert out == (
        f"{NOTE} {claim}, and this run disagrees: times depend on the processor and on what else "
        "the machine is running at the moment, so they vary from one machine, and from one run, "
        "to another.\n"
    )
    assert "training" not in out
    assert stated(2.49, "2.0", ".1f", measured="timing") is False
    out = capsys.readouterr().out
    assert out.startswith(f"{NOTE} 2.0 where this run computed 2.5: times depend on the processor")
    assert holds(False, "under 1e-6", "2.4e-06", measured="rounding") is False
    out = capsys.readouterr().out
    assert out == (
        f"{NOTE} under 1e-6 where this run computed 2.4e-06: rounding errors depend on the "
        "processor's floating-point kernels, which sum in different orders (the book's text was "
        "computed on an Intel processor).\n"
    )


def test_the_text_processor_is_read_from_the_cpu_vendor(monkeypatch, tmp_path):
    """tests/site/test_chapters_executed.py demands no note on the kind of processor that computed the
    text (Intel, with the Makefile's pins) and well-formed notes elsewhere (an AMD EPYC trains to other
    numbers): the kind is /proc/cpuinfo's vendor_id, and "" where there is none."""
    import builtins

    real_open = builtins.open

    def cpuinfo(vendor):
        path = tmp_path / vendor
        path.write_text(f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: 25\n")
        return lambda name, *a, **k: real_open(path if name == "/proc/cpuinfo" else name, *a, **k)

    for vendor, same in [("GenuineIntel", True), ("AuthenticAMD", False)]:
        monkeypatch.setattr(builtins, "open", cpuinfo(vendor))
        assert prose.cpu_vendor() == vendor and prose.on_text_processor() is same

    def no_cpuinfo(name, *a, **k):
        raise FileNotFoundError(name)

    monkeypatch.setattr(builtins, "open", no_cpuinfo)
    assert prose.cpu_vendor() == "" and prose.on_text_processor() is False


def test_a_numpy_bool_is_a_claim(capsys):
    """A comparison of NumPy numbers gives np.bool_, not bool (chapter 5's story cell in the course's
    sandbox); holds takes it as the bool it is and returns a plain bool."""
    value = np.float64(0.42)
    assert type(0.3 < value) is np.bool_
    assert holds(0.3 < value < 0.5, "between 30% and 50%") is True
    result = holds(value > 0.5, "above 50%", "42%")
    assert result is False and type(result) is bool
    assert "above 50% where this run computed 42%" in capsys.readouterr().out


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="written"):
        stated(0.49, 0.49, ".2f")
    with pytest.raises(TypeError, match="claim"):
        holds(1, "one")
    with pytest.raises(ValueError, match="measured.*'timing'.*'speed'"):
        holds(True, "fast", measured="speed")
    with pytest.raises(ValueError, match="measured"):
        stated(0.49, "0.49", ".2f", measured="time")
    with pytest.raises(TypeError, match="where"):
        stated(0.49, "0.49", ".2f", where=3)


def test_a_note_says_where_its_number_is_written(capsys):
    """Readers s35: a note printed above its sentence, with a bare number ("The text says 4"),
    was hard to match to the text; ``where`` names what the number counts and where it is."""
    assert stated(12.2, "4", ".0f", where="points lost, in the paragraph below") is False
    out = capsys.readouterr().out
    assert out.startswith(
        f"{NOTE} 4 (points lost, in the paragraph below) where this run computed 12:"
    )
    assert stated(4.2, "4", ".0f", where="points lost, in the paragraph below") is True
    assert capsys.readouterr().out == ""


def test_no_chapter_cell_ends_on_a_bare_check_that_would_print_true():
    """stated/holds return a bool: a cell that ends on one shows "True" under its hidden input on the page."""
    import ast
    import json
    from pathlib import Path

    from IPython.core.displayhook import DisplayHook

    shown = []
    for path in sorted(
        (Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb")
    ):
        for index, cell in enumerate(json.loads(path.read_text())["cells"]):
            source = "".join(cell["source"])
            if cell["cell_type"] != "code":
                continue
            # IPython's own rule: a ';' as the last token, comments and blank lines after it ignored
            if DisplayHook.semicolon_at_end_of_expression(source):
                continue
            try:
                body = ast.parse(source).body
            except SyntaxError:  # IPython syntax (magics): not a check cell
                continue
            last = body[-1] if body else None
            if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
                name = getattr(last.value.func, "id", None) or getattr(
                    last.value.func, "attr", None
                )
                if name in ("holds", "stated"):
                    shown.append(f"{path.name} cell {index}")
    assert not shown, f"end these cells with ';' or a statement: {shown}"
