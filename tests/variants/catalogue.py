"""Every transformation, in the order the runner tries them."""

from __future__ import annotations

from tests.variants.calls import (
    LaunchesInTwoHelpers,
    LaunchingFunctionAsStaticMethod,
    LaunchThroughHelper,
    MethodAsModuleFunction,
    MethodThroughLocalAlias,
)
from tests.variants.dispatch import (
    ArgumentAsModuleConstant,
    AttributeReadIntoLocal,
    IfChainAsMatch,
    KindThroughConstructor,
    RegistryAsFunction,
    RegistryAsModuleGetattr,
)
from tests.variants.formatting import Compact, NoDocstrings
from tests.variants.imports import (
    FromWarpImport,
    InitImportsSubmodules,
    ProjectImportedBeforeWarp,
    WarpImportedInSetup,
    WarpWithoutAlias,
)
from tests.variants.layout import InRepoVirtualenv, PrivateSubPackage, SrcLayout, VendoredCopy
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
    InitImportsSubmodules(),
    RegistryAsFunction(),
    IfChainAsMatch(),
    RegistryAsModuleGetattr(),
    ArgumentAsModuleConstant(),
    AttributeReadIntoLocal(),
    KindThroughConstructor(),
    LaunchThroughHelper(),
    LaunchesInTwoHelpers(),
    LaunchingFunctionAsStaticMethod(),
    MethodAsModuleFunction(),
    MethodThroughLocalAlias(),
    PositionalLaunchArguments(),
    KeywordLaunchArguments(),
    RenamedKernels(),
    UniqueModuleThroughConstant(),
    FileModuleNamed(),
    InRepoVirtualenv(),
    SrcLayout(),
    PrivateSubPackage(),
    VendoredCopy(),
    NoDocstrings(),
    Compact(),
)
BY_NAME = {t.NAME: t for t in TRANSFORMATIONS}
