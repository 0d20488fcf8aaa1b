"""The static source index of warp-fix: kernels, option calls, cache operations, launches, entry points.

`scan_repository(Path("repo"))` returns a `SourceIndex`; query it with `kernel_named("integrate")`,
`option_calls_for("app.physics")`, `entry_points`, ...
"""

from __future__ import annotations

from .index import (
    INDEX_SCHEMA_VERSION,
    CacheOperation,
    ConfigAssignment,
    EntryPoint,
    FactoryFunction,
    FuncDef,
    ImportSite,
    KernelDef,
    KernelSelector,
    LaunchSite,
    Located,
    LoopFactoryCall,
    OptionCall,
    OptionParameter,
    OverloadCall,
    Parameter,
    PreloadCall,
    SourceFile,
    SourceIndex,
    TapeUse,
    Value,
)
from .kept import KeptIndex
from .scanner import scan_repository

__all__ = [
    "INDEX_SCHEMA_VERSION",
    "CacheOperation",
    "ConfigAssignment",
    "EntryPoint",
    "FactoryFunction",
    "FuncDef",
    "ImportSite",
    "KernelDef",
    "KernelSelector",
    "KeptIndex",
    "LaunchSite",
    "Located",
    "LoopFactoryCall",
    "OptionCall",
    "OptionParameter",
    "OverloadCall",
    "Parameter",
    "PreloadCall",
    "SourceFile",
    "SourceIndex",
    "TapeUse",
    "Value",
    "scan_repository",
]
