"""Converter passes: one AST transformation per module."""
