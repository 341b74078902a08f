"""Settings shared by the library's tests."""

import os

# The book's one CPU kernel path (the Makefile's exports, issue 34), also for a pytest run started by hand;
# set before torch is imported, which reads them once. Chapters run by the tests inherit them.
KERNEL_PATH = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
for _name, _value in KERNEL_PATH.items():
    os.environ.setdefault(_name, _value)

import pytest  # noqa: E402
import torch  # noqa: E402

# The built site's fixtures, for the tests outside tests/site that read the site (accessibility).
from tests.site.conftest import browser, server, site  # noqa: E402, F401 (pytest finds them here)


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The library's tests use small models: one torch thread is as fast as two for their small matrix
    products, and far faster when other processes compete for the cores (threads then wait for each
    other at every operation). Restored at the end of the session. (Notebooks run in their own kernels.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
