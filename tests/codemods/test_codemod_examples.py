"""Every codemod's own EXAMPLES and REFUSALS, collected: the docs are the tests."""

from __future__ import annotations

import pytest
from libcst.codemod import CodemodTest

from codemods import REGISTRY, CodemodRefused, transform_source, transform_source_with_notes
from codemods.specs import places_from_json

EXAMPLES = [
    pytest.param(name, example, id=f"{name}:{example.title or i}")
    for name, cls in REGISTRY.items()
    for i, example in enumerate(cls.EXAMPLES)
]
REFUSALS = [
    pytest.param(name, refusal, id=f"{name}:{refusal.reason}")
    for name, cls in REGISTRY.items()
    for refusal in cls.REFUSALS
]


class _Case(CodemodTest):
    def runTest(self) -> None:  # pragma: no cover - only used for its assertions
        pass


def test_every_codemod_is_documented() -> None:
    for name, cls in REGISTRY.items():
        assert name == cls.NAME
        assert cls.DESCRIPTION and cls.__doc__ and "args:" in cls.__doc__, name
        assert cls.EXAMPLES and cls.REFUSALS, f"{name} needs examples and refusals"


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_example(name, example) -> None:
    case = _Case()
    case.TRANSFORM = REGISTRY[name]
    (place,) = places_from_json(name, example.args)
    (kwargs,) = place.by_file().values()  # the command's own arguments, as `python -m libcst.tool codemod` passes
    case.assertCodemod(example.before, example.after, **kwargs)


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_example_is_exact_and_idempotent(name, example) -> None:
    after = transform_source(name, example.before, example.args)
    assert after == example.after
    compile(after, "<after>", "exec")
    assert transform_source(name, after, example.args) == after


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_example_reports_exactly_its_notes(name, example) -> None:
    _, notes = transform_source_with_notes(name, example.before, example.args)
    assert tuple(note.message for note in notes) == example.notes


@pytest.mark.parametrize(("name", "refusal"), REFUSALS)
def test_refusal(name, refusal) -> None:
    with pytest.raises(CodemodRefused, match=None) as info:
        transform_source(name, refusal.before, refusal.args)
    message = str(info.value)
    assert refusal.reason in message
    assert message.startswith(f"{name}: ") and "\n" not in message
