"""The kestrel-mcp README counts the tools a host sees; the count is the server's."""

from __future__ import annotations

import re
from pathlib import Path

from kestrel_mcp.secrets import SecretTools, secret_tools
from kestrel_protocol.surface import SURFACE

README = Path(__file__).resolve().parents[2] / "packages" / "kestrel-mcp" / "README.md"
WORDS = (
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)  # fmt: skip
NUMBERS = {word: n for n, word in enumerate(WORDS, start=1)}


def test_the_readme_counts_the_tools_tools_list_serves() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    found = re.search(r"(\w+) tools \((\w+) of the shared surface, the (\w+) local-only", text)
    assert found is not None
    total, shared, local = (NUMBERS[w.lower()] for w in found.groups())
    secrets = secret_tools(SecretTools())
    assert shared == len(SURFACE.listed)
    assert local == len(secrets)
    assert total == len(SURFACE.plus(secrets).listed)
