"""AST infrastructure for the converters (TensorFlow AutoGraph calls its own ``pyct``).

What every pass builds on, with no knowledge of any one construct:
``anno`` (node annotations and their documented keys), ``templates``
(code from source templates with named placeholders), ``ast_util``,
``naming`` (fresh names), ``qual_names`` (``self.total``, ``x['a']`` as
symbols), ``gast_conversion`` (``ast`` <-> ``gast``) and ``context`` (the
conversion context a pass receives).  ``static_analysis`` holds the
analyses that annotate nodes before the converters run.

This package imports neither ``autograph.converters`` nor the runtime nor
numpy (``pyproject.toml`` ``[tool.importlinter]``): only ``context`` reaches
the runtime's ``ConversionError``, when a conversion fails.
"""
