"""What MCP hosts show a person (tool, argument and result descriptions, resources,
prompts) is Markdown or plain text: no reStructuredText from the models' docstrings."""

from __future__ import annotations

import json
import re

import pytest
from kestrel_protocol.surface import SURFACE
from kestrel_protocol.surface.schemas import markdown

RST = re.compile(r"``[^`]+``|:[a-z]+(:[a-z]+)?:`[^`]+`")


def _shown() -> list[tuple[str, str]]:
    shown = [(tool.name, json.dumps(tool.listing)) for tool in SURFACE.tools]
    shown += [(prompt.name, json.dumps(prompt.listing())) for prompt in SURFACE.prompts]
    for resource in SURFACE.resources:
        listing = resource.template() if resource.is_template else {}
        shown.append((resource.name, json.dumps([resource.title, resource.description, listing])))
    return shown


@pytest.mark.parametrize(("name", "text"), _shown(), ids=[name for name, _ in _shown()])
def test_hosts_are_shown_no_restructuredtext(name: str, text: str) -> None:
    assert RST.search(text) is None, (name, RST.findall(text))


def test_a_docstrings_roles_and_literals_become_markdown_code() -> None:
    text = "A :class:`~kestrel_protocol.Scenario` (``root``, :meth:`Delivery.of`; ``a b``)."
    assert markdown(text) == "A `Scenario` (`root`, `of`; `a b`)."
    assert markdown("plain `code` and *words*") == "plain `code` and *words*"
