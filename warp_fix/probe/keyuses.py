"""How often a run's generated source spells each kernel key: what a rename changes and nothing else.

Warp spells a kernel's key into every name it generates for it (`<key>_<8 hex>_cpu_kernel_forward`,
`wp_args_<key>_<8 hex>`, ...), about thirty times per kernel on CPU. Moving a closure to module scope
renames `make_x__locals__x` to `x` and shrinks the source by the key difference times that count, while
the same code is compiled. Counting the uses lets a comparison set renames apart from real shrinks.
"""

from __future__ import annotations

import re
from pathlib import Path

from warp_fix.probe.inventory import SOURCE_SUFFIXES
from warp_fix.report import Trace


def kernel_key_uses(trace: Trace) -> dict[str, int]:
    """How many times each live kernel key is spelled as a generated name in the run's module sources."""
    uses: dict[str, int] = {}
    seen: set[Path] = set()
    for build in trace.builds:
        if build.status == "error" or not build.cache_dir or not build.kernels:
            continue
        module_dir = Path(build.cache_dir) / f"wp_{build.module}_{build.hash[:7]}"
        if module_dir in seen or not module_dir.is_dir():
            continue
        seen.add(module_dir)
        texts = [f.read_text(errors="replace") for f in module_dir.iterdir() if f.name.endswith(SOURCE_SUFFIXES)]
        for key in set(build.kernels):
            # The key as a whole generated identifier (start of a name, or after `wp_args_`), then its hash.
            pattern = re.compile(r"(?:(?<![A-Za-z0-9_])|(?<=wp_args_))" + re.escape(key) + r"_[0-9a-f]{8}(?![0-9a-f])")
            uses[key] = uses.get(key, 0) + sum(len(pattern.findall(text)) for text in texts)
    return uses
