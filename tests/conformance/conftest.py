"""The conformance tables, printed at the end of every run that ran the suite."""

from __future__ import annotations

import pytest

from tests.conformance.expectations import TABLES


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(TABLES, [])
    if lines:
        terminalreporter.section("MCP conformance")
        for line in lines:
            terminalreporter.line(line)
