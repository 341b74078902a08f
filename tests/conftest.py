"""Settings shared by the library's tests."""

import pytest
import torch

# The built site's fixtures, for the tests outside tests/site that read the site (accessibility).
from tests.site.conftest import browser, server, site  # noqa: F401 (pytest finds them here)


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The library's tests use small models: one torch thread is as fast as two for their small matrix
    products, and far faster when other processes compete for the cores (threads then wait for each
    other at every operation). Restored at the end of the session. (Notebooks run in their own kernels.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
