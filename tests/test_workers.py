"""The tests and every process they start run torch on one thread (tests/conftest.py says why: under
`make test`'s two workers, processes of two threads each ran 30 to 65 times slower)."""

import subprocess
import sys

import torch


def test_the_tests_and_the_processes_they_start_run_one_thread():
    child = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert (torch.get_num_threads(), int(child.stdout)) == (1, 1)
