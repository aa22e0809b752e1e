"""``python -m middleware``: the old spelling of ``memory-cortex`` (``python -m memory_cortex``)."""

import sys

from memory_cortex.__main__ import main

print(
    "note: `python -m middleware` is deprecated and goes away in 0.4.0; "
    "run `memory-cortex` or `python -m memory_cortex`",
    file=sys.stderr,
)
sys.exit(main())
