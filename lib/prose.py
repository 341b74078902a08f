"""Numbers the text states about a trained model, checked against what this run computed.

A chapter's text quotes the numbers its cells compute. Where the number is arithmetic on fixed data,
the chapter asserts it. Where it comes out of training, its last digits depend on the processor: the
same seed gives the same model only on the same floating-point kernels (AVX-512, AVX2, ARM or plain C
sum in different orders, round differently, and training amplifies the difference). The text is
written from the book's build, so a reader on another machine may compute 0.51 where it says 0.49.

``stated`` and ``holds`` check such a number or claim as the text writes it: when it holds they say
nothing; when it does not, they print a note saying what the text says and what this run computed,
instead of stopping the reader's run with an ``AssertionError``. A claim about a time measured in
the chapter says so (``measured="timing"``), and so does one about a rounding error
(``measured="rounding"``): the note then gives the reason that fits (times depend on the processor
and on what else the machine is running; rounding on the floating-point kernels), not training. The
book's build must show no such note (tests/site/test_chapters_executed.py fails on one), so on the
build machine the text and the computation agree at the precision written; `make test-kernels` runs
the chapters on other kernel paths, where the notes may appear and the chapters still run.
"""

from __future__ import annotations

from lib._checks.prose import check_claim, check_written

NOTE = "The text says"

# why a number of this kind can differ from the text's, for the note: what follows "this run disagrees: "
REASONS = {
    "training": "numbers that come out of training vary a little from one processor to another (the "
    "book's text was computed on its build machine).",
    "rounding": "rounding errors depend on the processor's floating-point kernels, which sum in "
    "different orders (the book's text was computed on its build machine).",
    "timing": "times depend on the processor and on what else the machine is running at the moment, "
    "so they vary from one machine, and from one run, to another.",
}


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
        print(f"{NOTE} {text}{got}: {REASONS[measured]}")
    return claim


def stated(value, written: str, spec: str, *, measured: str = "training") -> bool:
    """Check a number the text writes as ``written``, formatted with ``spec`` (".2f", ".0%"...);
    ``measured`` as in :func:`holds`.

    >>> stated(0.4912, "0.49", ".2f")
    True
    """
    check_written(written)
    got = format(value, spec)
    return holds(got == written, written, got, measured=measured)
