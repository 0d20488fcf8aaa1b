"""`warp-fix skill`: the agent skill that teaches a coding agent to drive warp-fix instead of editing by hand.

The file ships inside the package (`warp_fix/skill/SKILL.md`, the same text as the repository's
`skills/warp-fix/SKILL.md`; tests/test_skill.py keeps them identical), so a plain `pip install` can
print or install it.
"""

from __future__ import annotations

from pathlib import Path

SKILL_FILE = Path(__file__).resolve().with_name("skill") / "SKILL.md"
SKILL_NAME = "warp-fix"


class SkillError(Exception):
    """The skill cannot be installed where asked (one line)."""


def skill_text() -> str:
    return SKILL_FILE.read_text(encoding="utf-8")


def install_skill(skills_dir: Path, force: bool = False) -> tuple[Path, str]:
    """Write SKILL.md to `skills_dir/warp-fix/`; returns the path and what happened.

    A different file already there is the user's (or an older version they may have edited): it is
    replaced only with `force`.
    """
    target = skills_dir / SKILL_NAME / "SKILL.md"
    text = skill_text()
    if target.is_file():
        if target.read_text(encoding="utf-8") == text:
            return target, "already installed, unchanged"
        if not force:
            raise SkillError(f"{target} exists and differs from this warp-fix's skill: pass --force to replace it")
    elif target.exists():
        raise SkillError(f"{target} exists and is not a file")
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SkillError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target, "replaced" if existed else "installed"
