"""Backends: per-backend kernel tables and compilers (numpy is the default)."""
