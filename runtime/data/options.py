"""``rt.data.Options``: which static rewrites run on a pipeline before it is iterated.

    ds = ds.with_options(rt.data.Options(map_fusion=False))
    rt.data.Options(optimize=False)       # the pipeline runs exactly as written

Every rewrite is on by default; ``optimize=False`` turns them all off.
``rewrites.py`` says what each one does.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Options:
    optimize: bool = True
    noop_elimination: bool = True
    map_fusion: bool = True
    filter_fusion: bool = True
    map_filter_fusion: bool = True
    shuffle_and_repeat_fusion: bool = True
    map_batch_vectorization: bool = True
    inject_prefetch: bool = True

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if type(value) is not bool:  # Options(map_fusion="no") would have left it on
                raise TypeError(f"rt.data.Options({field.name}=...) must be True or False, got "
                                f"{type(value).__name__} {value!r:.40}")

    def enabled(self, rewrite: str) -> bool:
        return self.optimize and getattr(self, rewrite)


DEFAULT = Options()
