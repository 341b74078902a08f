"""Settings shared by the library's tests."""

import os

# The book's one CPU kernel path (the Makefile's exports, issue 34), also for a pytest run started by hand;
# set before torch is imported, which reads them once. Chapters run by the tests inherit them.
KERNEL_PATH = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}
for _name, _value in KERNEL_PATH.items():
    os.environ.setdefault(_name, _value)
# The tests run torch on one thread (the session fixture ``one_thread`` below), and so does every kernel,
# nbgrader or exporter process a test starts: they inherit OMP_NUM_THREADS. `make test` runs two xdist
# workers on the build's two cores; two processes of two OpenMP threads each put four busy threads on two
# cores, and OpenMP's threads wait for each other spinning: measured on a 2-core AMD EPYC, 100 training
# steps of the Playground's model took 80 s in each of two such processes against 1.2 s in each of two
# one-thread processes (1.1 s alone with either count: these models are too small to gain from a second
# thread).
os.environ["OMP_NUM_THREADS"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

# The built site's fixtures, for the tests outside tests/site that read the site (accessibility).
from tests.site.conftest import browser, server, site  # noqa: E402, F401 (pytest finds them here)

# `make test` runs two xdist workers, each test file whole on one worker (--dist loadfile: a file's fixtures,
# e.g. the phone screenshots of every page, are built once). xdist's default hands out the files with the most
# tests first; the slowest ones have few tests and started last, leaving one worker alone at the end. The
# Makefile turns that order off (--no-loadscope-reorder) and the files below go first, slowest first (their
# times in the last fresh clone: the phone emulation ~520 s, the course cycle ~400 s, the student edition
# executed ~400 s, the PDF ~250 s, axe ~220 s; each run's times are in _build/test-report.xml). The rest keep
# pytest's order. Only the order changes: every test still runs.
SLOWEST_FIRST = [
    "tests/site/test_phone.py",
    "tests/test_course.py",
    "tests/test_exercises.py",
    "tests/site/test_print_pdf.py",
    "tests/site/test_axe.py",
    "tests/site/test_browser.py",
    "tests/test_course_sandbox.py",
    "tests/test_course_sandbox_models.py",
    "tests/test_benchmarks_smoke.py",
    "tests/test_exercises_student_pass.py",
]


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The library's tests use small models: one torch thread is as fast as two for their small matrix
    products, and far faster when other processes compete for the cores (threads then wait for each
    other at every operation). Restored at the end of the session. (Notebooks run in their own kernels.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def checkers_kept():
    """A course's locked test cell drops ``lib.exercises`` and its chapter modules from ``sys.modules``
    and imports them afresh (tools/make_course.py: a student's rebound names cannot reach the
    checker). A test that runs such a cell in this process would leave new module objects behind, and
    a later test on the same worker would then see a second ``ExerciseFailed`` class that its
    ``pytest.raises(ExerciseFailed)`` does not catch. The modules are put back after each test."""
    import sys

    import lib

    kept = {n: m for n, m in sys.modules.items() if n.startswith("lib.exercises")}
    package = getattr(lib, "exercises", None)
    yield
    for name in [n for n in sys.modules if n.startswith("lib.exercises")]:
        if name not in kept:
            del sys.modules[name]
    sys.modules.update(kept)
    if package is not None:
        lib.exercises = package
