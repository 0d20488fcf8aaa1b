"""One collector per kind of item; the scanner walks each file's tree once and feeds them all."""

from __future__ import annotations

from .autodiff import CallCollector, OverloadCollector, TapeCollector
from .base import Collector
from .cache import CacheOperationCollector
from .classes import AttributeStoreCollector, ClassCollector
from .config import ConfigAssignmentCollector
from .entry_points import MainGuardCollector
from .imports import ImportCollector
from .kernels import KernelCollector
from .launches import LaunchCollector, PreloadCollector
from .loops import LoopFactoryCallCollector
from .options import OptionCallCollector
from .values import ValueReadCollector

# Order matters only for `finish`: imports must be complete before config writes are placed.
ALL_COLLECTORS: tuple[type[Collector], ...] = (
    ImportCollector,
    KernelCollector,
    OptionCallCollector,
    ConfigAssignmentCollector,
    CacheOperationCollector,
    PreloadCollector,
    LaunchCollector,
    LoopFactoryCallCollector,
    OverloadCollector,
    TapeCollector,
    CallCollector,
    ClassCollector,
    AttributeStoreCollector,
    ValueReadCollector,
    MainGuardCollector,
)

__all__ = ["ALL_COLLECTORS", "Collector"]
