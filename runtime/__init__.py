"""The tracing runtime: operators called by generated code, symbolic tensors,
the graph IR, the op library, the executor, the optimizer and tracing.

Imported as ``autograph.runtime`` (conventionally ``rt``).  It knows nothing
of ASTs or conversion.
"""

from autograph.runtime.errors import (
    AutoGraphError,
    AutoGraphWarning,
    ConversionError,
    TracingError,
)
