"""Numbers the text states about a trained model, checked against what this run computed.

A chapter's text quotes the numbers its cells compute. Where the number is arithmetic on fixed data,
the chapter asserts it. Where it comes out of training, its last digits depend on the processor: the
same seed gives the same model only on the same floating-point kernels (AVX-512, AVX2, ARM or plain C
sum in different orders, round differently, and training amplifies the difference). The text is
written from the book's build, so a reader on another machine may compute 0.51 where it says 0.49.

``stated`` and ``holds`` check such a number or claim as the text writes it: when it holds they say
nothing; when it does not, they print a note saying what the text says and what this run computed,
instead of stopping the reader's run with an ``AssertionError`` (in a notebook cell, the notes after
the first of a kind end on "(the same reason)." rather than repeat it). A claim about a time measured in
the chapter says so (``measured="timing"``), and so does one about a rounding error
(``measured="rounding"``): the note then gives the reason that fits (times depend on the processor
and on what else the machine is running; rounding on the floating-point kernels), not training. The
text's numbers were computed on an Intel Xeon with the Makefile's kernel pins (PyTorch's AVX2 kernels,
MKL's COMPATIBLE branch, oneDNN capped at AVX2); every Intel build since has computed them again, and
there the build must show no such note (tests/site/test_chapters_executed.py fails on one), so the text
and the computation agree at the precision written. An AMD EPYC (Zen 4, 2026-12-06) with the same pins
trains to other numbers: notes in ten chapters (31 in chapter 5, whose captioning model trains longest),
and two of the chapters' looser asserts failed until they were widened. No setting tried there gave the
Intel numbers back (every MKL_CBWR branch, STRICT, one MKL thread, OpenBLAS's core types), so the pins
make Intel processors agree with one another, not AMD with Intel. ``on_text_processor`` says which kind
of processor this is; on another, the notes are what the book promises its reader, and the build
test checks that they are well-formed notes rather than that there are none. `make test-kernels` runs
the chapters on other kernel paths, where the notes may appear and the chapters still run.
"""

from __future__ import annotations

from lib._checks.prose import check_claim, check_where, check_written

NOTE = "The text says"

# the vendor of the processors whose builds computed the text's numbers about trained models (see above)
TEXT_CPU_VENDOR = "GenuineIntel"

# why a number of this kind can differ from the text's, for the note: what follows "this run disagrees: "
REASONS = {
    "training": "numbers that come out of training vary from one processor to another (the book's "
    "text was computed on an Intel processor).",
    "rounding": "rounding errors depend on the processor's floating-point kernels, which sum in "
    "different orders (the book's text was computed on an Intel processor).",
    "timing": "times depend on the processor and on what else the machine is running at the moment, "
    "so they vary from one machine, and from one run, to another.",
}


def cpu_vendor() -> str:
    """This processor's vendor as Linux reports it ("GenuineIntel", "AuthenticAMD"), or "" where
    /proc/cpuinfo has none (another system, an ARM processor)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def on_text_processor() -> bool:
    """Whether this processor is of the kind that computed the text's numbers about trained models
    (TEXT_CPU_VENDOR): there, with the Makefile's pins, a chapter's run agrees with its text and
    prints no note."""
    return cpu_vendor() == TEXT_CPU_VENDOR


def holds(claim: bool, text: str, computed: str = "", *, measured: str = "training") -> bool:
    """Check a claim the text makes; print a note when this run disagrees.

    ``text`` is what the text says, as it would follow "The text says": a number ("0.49"), a range
    ("between 30% and 50%") or a clause ("that the tiled loop is slower"). ``measured`` is what kind
    of number the claim is about, which sets the reason the note gives: "training" (a trained
    model's numbers, the default), "rounding" (a floating-point rounding error) or "timing" (times
    measured by the chapter).

    >>> holds(0.3 < 0.42 < 0.5, "between 30% and 50%", "42%")
    True
    """
    check_claim(claim, measured, REASONS)
    claim = bool(claim)  # NumPy's bool, from a comparison of NumPy numbers, as Python's
    if not claim:
        got = f" where this run computed {computed}" if computed else ", and this run disagrees"
        cell = _cell()
        if cell is not None and _last_reason.get(measured) == cell:  # said in this cell already
            print(f"{NOTE} {text}{got}{SAME_REASON}")
        else:
            print(f"{NOTE} {text}{got}: {REASONS[measured]}")
        _last_reason[measured] = cell
    return claim


# after the first note of a cell, the next ones of the same kind end here, not on the reason again
# (readers s35: nine notes in a row, each with the same long reason, were hard to match to the text)
SAME_REASON = " (the same reason)."
_last_reason: dict[str, int | None] = {}


def _cell() -> int | None:
    """The number of the notebook cell running now, or None outside IPython."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821 (IPython's builtin)
    except NameError:
        return None
    return getattr(shell, "execution_count", None)


def stated(value, written: str, spec: str, *, measured: str = "training", where: str = "") -> bool:
    """Check a number the text writes as ``written``, formatted with ``spec`` (".2f", ".0%"...);
    ``measured`` as in :func:`holds`. ``where`` says what the number counts and where the text
    writes it, when the check prints above that sentence ("points lost, in the paragraph below"):
    the note gives it in brackets after the number (readers s35: notes printed before the
    sentence they corrected, with a bare number).

    >>> stated(0.4912, "0.49", ".2f")
    True
    """
    check_written(written)
    check_where(where)
    got = format(value, spec)
    text = f"{written} ({where})" if where else written
    return holds(got == written, text, got, measured=measured)
