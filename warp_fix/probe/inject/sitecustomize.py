"""Injected by warp-fix on PYTHONPATH: starts the tracer, then chains to any other sitecustomize."""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _start_tracer() -> None:
    try:
        import _warp_fix_tracer

        _warp_fix_tracer.install()
    except Exception as exc:  # the tracer must never stop the application
        sys.stderr.write(f"warp-fix tracer disabled: {type(exc).__name__}: {exc}\n")


def _chain_to_next_sitecustomize() -> None:
    this = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    try:
        import sitecustomize  # noqa: F401  (the next one on the path, if any)
    except ImportError:
        if this is not None:
            sys.modules["sitecustomize"] = this
    finally:
        sys.path[:] = saved


_start_tracer()
_chain_to_next_sitecustomize()
