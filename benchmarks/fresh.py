"""A function from a module of its own: a new code object, so nothing is cached from an earlier one.

The first-call benchmarks need one per measurement (conversion is cached per
code object).  No autograph import here: ``first_call.py --tf-only`` runs
under an interpreter that may have TensorFlow and numpy only.
"""

from __future__ import annotations

import importlib.util
import os


def fresh_function(folder, name, source):
    """The function ``name`` defined by ``source`` (a template with ``{name}``), imported from
    a module file written to ``folder``."""
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(source.format(name=name))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
