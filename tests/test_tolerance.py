"""Tests of tests/tolerance.py, the helper that applies the project's rule for comparing floats: the bound
terms * eps * scale (float32 and float64 eps; scale by default the largest |expected|), terms < 1
refused, a difference one ulp under the bound passes and one twice the bound fails, and a float32
result against a float64 reference is judged with float32's eps (the coarser)."""

import pytest
import torch

from tests.tolerance import assert_float_close, float_bound

EPS32, EPS64 = torch.finfo(torch.float32).eps, torch.finfo(torch.float64).eps


def test_bound_is_terms_times_eps_times_the_largest_expected_value():
    x32 = torch.tensor([0.5, -4.0, 2.0])
    assert float_bound(x32, terms=10) == 10 * EPS32 * 4.0
    assert float_bound(x32.double(), terms=10) == 10 * EPS64 * 4.0
    assert float_bound(x32, terms=3, scale=1.0) == 3 * EPS32  # scale given: the terms' size
    assert float_bound(x32, terms=3, dtype=torch.float64) == 3 * EPS64 * 4.0
    assert float_bound(torch.zeros(0), terms=5) == 0.0  # nothing to compare


@pytest.mark.parametrize("terms", [0, -1])
def test_fewer_than_one_term_is_refused(terms):
    with pytest.raises(ValueError, match="terms must be at least 1"):
        float_bound(torch.ones(3), terms=terms)
    with pytest.raises(ValueError, match="terms must be at least 1"):
        assert_float_close(torch.ones(3), torch.ones(3), terms=terms)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_one_ulp_under_the_bound_passes_and_twice_the_bound_fails(dtype):
    eps = torch.finfo(dtype).eps
    expected = torch.tensor([3.5, -1.0, 0.25], dtype=dtype)  # keys of size 3.5, as in issue 34
    bound = float_bound(expected, terms=4)  # 4 * eps * 3.5 = 14 eps
    ulp = 2 * eps  # the spacing of the dtype's numbers in [2, 4)
    assert bound == 7 * ulp
    under = expected + torch.tensor([bound - ulp, 0.0, 0.0], dtype=dtype)  # 3.5 + 6 ulps, exactly
    assert float(under[0] - expected[0]) == bound - ulp
    assert_float_close(under, expected, terms=4)
    over = expected + torch.tensor([2 * bound, 0.0, 0.0], dtype=dtype)  # 3.5 + 14 ulps, exactly
    assert float(over[0] - expected[0]) == 2 * bound
    with pytest.raises(AssertionError):
        assert_float_close(over, expected, terms=4)


def test_exactly_at_the_bound_passes_and_a_little_over_fails():
    expected = torch.tensor([2.0, 1.0], dtype=torch.float64)
    bound = float_bound(expected, terms=8)  # 8 * eps64 * 2 = 2^-48: a power of two, exact
    at = expected + torch.tensor([bound, 0.0], dtype=torch.float64)
    assert_float_close(at, expected, terms=8)
    beyond = expected + torch.tensor([2 * bound, 0.0], dtype=torch.float64)
    with pytest.raises(AssertionError):
        assert_float_close(beyond, expected, terms=8)


def test_a_float32_result_against_a_float64_reference_uses_float32_eps():
    expected = torch.tensor([1.0, 3.0], dtype=torch.float64)
    # 3 + 10 ulps of float32 at 3 (20 eps32 * 1): far above float64's bound, under float32's 8 * eps32 * 3
    actual = torch.tensor([1.0, 3.0 + 10 * 2 * EPS32], dtype=torch.float32)
    assert float(actual[1]) - 3.0 > float_bound(expected, terms=8)  # float64's eps would refuse it
    assert_float_close(
        actual, expected, terms=8
    )  # float32's eps: 8 * eps32 * 3 = 24 eps32 > 20 eps32
    assert_float_close(expected, actual, terms=8)  # whichever side is the float32 one
    with pytest.raises(AssertionError):
        assert_float_close(actual.double(), expected, terms=8)  # both float64: float64's eps


def test_the_relative_tolerance_is_zero_and_the_scale_can_be_given():
    # a value of size 1e-3 next to one of size 1: the bound is of the largest, not per element
    expected = torch.tensor([1.0, 1e-3])
    actual = expected + torch.tensor([0.0, 4 * EPS32])  # 4 eps32 * 1, far above eps32 * 1e-3
    assert_float_close(actual, expected, terms=4)
    # scale given: probabilities summing to 1 judged against 1, not against their own sizes
    small = torch.tensor([1e-3, 2e-3])
    with pytest.raises(AssertionError):
        assert_float_close(small + 2 * EPS32, small, terms=2)
    assert_float_close(small + 2 * EPS32, small, terms=2, scale=1.0)


def test_the_makefile_and_the_tests_pin_the_same_kernel_path():
    """make book/test export one CPU kernel path (issue 34); tests/conftest.py sets the same for pytest run by hand."""
    import re
    from pathlib import Path

    from tests.conftest import KERNEL_PATH

    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    exported = dict(
        re.findall(
            r"^export (ATEN_CPU_CAPABILITY|MKL_CBWR|ONEDNN_MAX_CPU_ISA) \?= (\S+)$", makefile, re.M
        )
    )
    assert exported == KERNEL_PATH


def test_the_setup_cell_sets_the_avx2_path_only_where_the_processor_has_it():
    """Some x86 processors sold until about 2020 have no AVX2 (low-end Pentium, Celeron, Atom), and
    PyTorch takes ATEN_CPU_CAPABILITY=avx2 without asking the processor (reader review s17, chapter
    13): the cell asks it first. Its check, run on a /proc/cpuinfo with and without the flag."""
    import io
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import sync_colab_cell

    source = sync_colab_cell.colab_cell_source()
    start = source.index("def has_avx2():")
    definition = source[start : source.index("\n\n\n", start)]
    flags = "flags\t\t: fpu vme de pse tsc msr pae mce cx8 sse sse2 ssse3 sse4_1 sse4_2 %s popcnt\n"
    seen = {}
    for cpu, expected in (
        ("avx avx2 fma", True),
        ("avx", False),
        ("avx512f avx2", True),
        ("", False),
    ):
        fake = {
            "sys": types_sys("linux"),
            "subprocess": None,
            "open": lambda *_a, text=flags % cpu, **_k: io.StringIO(text),
        }
        exec(definition, fake)
        seen[cpu] = fake["has_avx2"]()
        assert seen[cpu] is expected, (cpu, seen[cpu])

    # a processor that cannot be asked (no /proc/cpuinfo) is not told to run AVX2
    def refused(*_a, **_k):
        raise PermissionError("no /proc here")

    fake = {"sys": types_sys("linux"), "subprocess": None, "open": refused}
    exec(definition, fake)
    assert fake["has_avx2"]() is False
    assert "has_avx2()" in source[source.index("x86 = ") :]


def types_sys(platform: str):
    import types

    return types.SimpleNamespace(platform=platform)


def test_every_chapter_s_first_cell_sets_the_same_kernel_path_before_torch():
    """A student's run (Jupyter, Colab) gets the build's kernels from the chapter's setup cell: run as a
    fresh kernel runs it, on x86 it sets the three variables, and torch then reports AVX2."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import KERNEL_PATH

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tools"))
    import sync_colab_cell

    assert sync_colab_cell.KERNEL_PATH == KERNEL_PATH
    source = sync_colab_cell.colab_cell_source()
    probe = (
        source
        + "\nimport json, torch\n"
        + "print(json.dumps([{n: os.environ.get(n) for n in %r}, " % sorted(KERNEL_PATH)
        + "torch.backends.cpu.get_cpu_capability()]))"
    )
    env = {k: v for k, v in os.environ.items() if k not in KERNEL_PATH}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    seen, capability = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == KERNEL_PATH
    assert capability == "AVX2"
    # a value the reader set (make test-kernels, a developer) is kept
    env["ATEN_CPU_CAPABILITY"] = "default"
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert json.loads(done.stdout.strip().splitlines()[-1])[1] == "DEFAULT", done.stderr[-2000:]


def test_this_run_uses_the_pinned_kernel_path():
    """torch reads ATEN_CPU_CAPABILITY once; conftest sets it before torch is imported."""
    import os

    from tests.conftest import KERNEL_PATH

    if os.environ.get("ATEN_CPU_CAPABILITY") != KERNEL_PATH["ATEN_CPU_CAPABILITY"]:
        pytest.skip("make test-kernels runs the suite on another kernel path on purpose")
    assert torch.backends.cpu.get_cpu_capability() == "AVX2"


def test_the_library_keeps_lstms_off_onednn():
    """nn.LSTM runs on oneDNN by default on a CPU, whose products block by the processor's cache sizes;
    importing the library turns it off, so an LSTM's numbers come from ATen and MKL's COMPATIBLE branch
    on the book's kernel path, the same on Intel and AMD processors."""
    import lib  # noqa: F401
    from tests.conftest import KERNEL_PATH

    assert torch.backends.mkldnn.enabled is False
    assert KERNEL_PATH["MKL_CBWR"] == "COMPATIBLE"
