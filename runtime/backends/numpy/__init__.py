"""The numpy backend: its kernel table (``kernels.py``) and the code generator of ``jit_compile`` (``codegen.py``).

``BACKEND`` is its ``core.backend.Backend`` record; ``runtime/__init__.py``
registers it as the default backend.
"""

import numpy as np

from autograph.runtime.backends.numpy import codegen, kernels
from autograph.runtime.core.backend import Backend

BACKEND = Backend(
    name="numpy", kernels=kernels.KERNELS, asarray=np.asarray, compile=codegen.compile_graph,
    compile_loop=codegen.compile_loop, out_kernels=kernels.OUT_KERNELS, operator_kernels=kernels.OPERATOR_KERNELS,
)
