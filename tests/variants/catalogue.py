"""Every transformation, in the order the runner tries them."""

from __future__ import annotations

from tests.variants.calls import LaunchThroughHelper
from tests.variants.dispatch import (
    ArgumentAsModuleConstant,
    AttributeReadIntoLocal,
    IfChainAsMatch,
    RegistryAsFunction,
    RegistryAsModuleGetattr,
)
from tests.variants.formatting import Compact, NoDocstrings
from tests.variants.imports import FromWarpImport, ProjectImportedBeforeWarp, WarpImportedInSetup, WarpWithoutAlias
from tests.variants.layout import InRepoVirtualenv, SrcLayout
from tests.variants.naming import (
    FileModuleNamed,
    KeywordLaunchArguments,
    PositionalLaunchArguments,
    RenamedKernels,
    UniqueModuleThroughConstant,
)
from tests.variants.transform import Transformation

TRANSFORMATIONS: tuple[Transformation, ...] = (
    WarpWithoutAlias(),
    FromWarpImport(),
    WarpImportedInSetup(),
    ProjectImportedBeforeWarp(),
    RegistryAsFunction(),
    IfChainAsMatch(),
    RegistryAsModuleGetattr(),
    ArgumentAsModuleConstant(),
    AttributeReadIntoLocal(),
    LaunchThroughHelper(),
    PositionalLaunchArguments(),
    KeywordLaunchArguments(),
    RenamedKernels(),
    UniqueModuleThroughConstant(),
    FileModuleNamed(),
    InRepoVirtualenv(),
    SrcLayout(),
    NoDocstrings(),
    Compact(),
)
BY_NAME = {t.NAME: t for t in TRANSFORMATIONS}
