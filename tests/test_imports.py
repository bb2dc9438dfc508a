"""Every module of the package imports on its own, first, in a fresh interpreter: no import cycle hides behind
the order in which ``mnemonite/__init__`` happens to load things (the CLI imports some modules lazily)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import importlib, pkgutil, sys
import mnemonite
names = sorted(m.name for m in pkgutil.walk_packages(mnemonite.__path__, "mnemonite."))
failed = []
for name in names:
    for loaded in [m for m in sys.modules if m == "mnemonite" or m.startswith("mnemonite.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {type(error).__name__}: {error}")
print(len(names))
print("\\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=True)
    count, *failed = done.stdout.strip().splitlines()
    assert int(count) > 100
    assert failed == []
