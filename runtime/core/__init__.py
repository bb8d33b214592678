"""The core layer: dtypes, shapes, ``Tensor``, the graph IR and the op-definition record.

Everything above it (ops, tracing, operators, execution, backends, the
optimizer) speaks these types; this package imports none of them.
"""
