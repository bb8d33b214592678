"""Converter passes: one AST transformation per module, each ``transform(node, ctx)``.

The order they run in is declared once, in ``autograph/pipeline.py``.
``lowering`` is not a pass: it is the machinery the three jump converters
(``break_statements``, ``continue_statements``, ``return_statements``) share.
"""
