"""The numpy backend: kernels and the Python/numpy code generator of ``jit_compile``."""
