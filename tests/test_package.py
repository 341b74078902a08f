"""The package's table of contents (lib/__init__.py) names every module, once."""

import pkgutil
import re

import lib


def test_the_package_docstring_lists_every_module_once():
    modules = sorted(
        f"lib.{m.name}" for m in pkgutil.iter_modules(lib.__path__) if not m.name.startswith("_")
    )
    listed = re.findall(r"^- :mod:`(lib\.\w+)` -- ", lib.__doc__, flags=re.M)
    assert sorted(listed) == modules
    assert len(listed) == len(set(listed))
