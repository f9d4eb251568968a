"""docs/spec.md names every code a caller can be given: each diagnostic code the
language emits has a row in §3's diagnostics table, and each refusal code of
``RefusalCode`` is in §6's list of refusal codes (the closed list faces keep to), so a
new code cannot ship without the spec saying what it means."""

from __future__ import annotations

import re
from pathlib import Path

from kestrel_protocol import RefusalCode

ROOT = Path(__file__).parents[1]
SPEC = (ROOT / "docs" / "spec.md").read_text("utf-8")
LANG = ROOT / "packages/kestrel-sdk/src/kestrel_sdk/runtime/lang"


def _section(number: int) -> str:
    start = SPEC.index(f"\n## {number}. ")
    return SPEC[start : SPEC.index("\n## ", start + 1)]


def _emitted() -> set[str]:
    """Every diagnostic code the language's sources emit."""
    return {
        code
        for path in LANG.glob("*.py")
        for code in re.findall(r'"(K[0-9]{3})"', path.read_text("utf-8"))
    }


def test_every_diagnostic_code_of_the_language_has_a_row_in_the_spec_table() -> None:
    emitted = _emitted()
    assert {"K101", "K108", "K109", "K202"} <= emitted  # the search finds what it seeks
    rows = set(re.findall(r"^\| (K[0-9]{3}) \| [^|]+\|", _section(3), re.MULTILINE))
    assert sorted(emitted - rows) == []
    assert sorted(rows - emitted) == []  # and the table names no code that is gone


def test_every_refusal_code_is_in_the_spec_list_of_refusal_codes() -> None:
    section = _section(6)
    start = section.index("Refusal codes:")
    paragraph = (section[start:] + "\n\n").split("\n\n")[0]
    listed = set(re.findall(r"`([A-Z_]+)`", paragraph))
    assert sorted(code.value for code in RefusalCode if code.value not in listed) == []
    assert sorted(listed - {code.value for code in RefusalCode}) == []
