"""autograph: ordinary Python control flow, turned into functional graph control flow."""

from autograph.runtime.errors import (
    AutoGraphError,
    AutoGraphWarning,
    ConversionError,
    TracingError,
)
