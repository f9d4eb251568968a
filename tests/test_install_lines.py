"""Every install line we show installs Kestrel, never a registry package of the same name.

Kestrel is installed from its clone; the ``kestrel-*`` names on PyPI belong to other
projects, so ``pip install kestrel-sdk`` or ``uvx kestrel-mcp`` would install someone
else's code. This reads every Markdown file and every string of the packages, examples
and benchmarks, finds the install commands in them (pip, uv pip, uv tool, uv add, pipx,
uvx) and fails on an argument that is a bare requirement of ours (a name, an extra or a
version, but no path or ``name @ path`` reference).
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = re.compile(r"^kestrel[-_][a-z]+(\[[^\]]*\])?([<>=!~].*)?$", re.IGNORECASE)
COMMAND = re.compile(
    r"(?:\bpip3?\s+install|\buv\s+pip\s+install|\buv\s+tool\s+(?:install|run)|\buv\s+add"
    r"|\bpipx\s+(?:install|run)|\buvx)\b([^\n`|;&]*)"
)
HOST_RECIPE = re.compile(  # an MCP host's JSON: {"command": "uvx", "args": ["kestrel-mcp"]}
    r'"command"\s*:\s*"(?:uvx|pipx)"\s*,\s*"args"\s*:\s*\[\s*"kestrel[-_][a-z]+[^"]*"'
)
VALUED = {"--from", "--with", "-e", "--editable", "-r", "--requirement", "-c", "--python"}


def _arguments(rest: str) -> list[str]:
    try:
        return shlex.split(rest.replace("\\\n", " "), comments=True)
    except ValueError:  # an unbalanced quote in prose: fall back to words
        return rest.split()


def bare_installs(text: str) -> list[str]:
    """The install commands in ``text`` that name one of our packages bare."""
    found = []
    for match in COMMAND.finditer(text):
        words = _arguments(match.group(1))
        from_path = False
        skip = False
        for word in words:
            if skip:
                skip = False
                from_path = from_path or "/" in word or word.startswith((".", "$", "~"))
                continue
            if word in VALUED:
                skip = True
                continue
            if word.startswith("-"):
                continue
            if OURS.match(word) and "@" not in word and not from_path:
                found.append(match.group(0).strip())
                break
    found.extend(match.group(0) for match in HOST_RECIPE.finditer(text))
    return found


def _documents() -> list[Path]:
    skip = {".venv", ".git", "node_modules", ".mutation"}
    return sorted(
        path
        for pattern in ("*.md", "*.py", "*.toml", "*.sh")
        for path in REPO.rglob(pattern)
        if not skip & set(path.relative_to(REPO).parts)
        and "catalog_data" not in path.parts
        and path.name != Path(__file__).name
    )


def _texts(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [text]
    strings = [
        node.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    return [*strings, *re.findall(r"#.*", text)]


@pytest.mark.parametrize(
    "line",
    [
        "pip install kestrel-sdk",
        "pip install 'kestrel-sdk[gym]'",
        "uv pip install kestrel-door[postgres]==0.1.0",
        "uvx kestrel-mcp",
        "uv tool install kestrel_mcp",
        "uv add kestrel-protocol",
        "pipx install kestrel-secrets",
        '{"command": "uvx", "args": ["kestrel-mcp"]}',
        "python -m pip install --upgrade kestrel-sdk",
        '{ "mcpServers": { "kestrel": { "command": "uvx", "args": ["kestrel-mcp"] } } }',
    ],
)
def test_a_bare_package_of_ours_is_found(line: str) -> None:
    assert bare_installs(f"Install it:\n\n    {line}\n") != []


@pytest.mark.parametrize(
    "line",
    [
        'uv pip install "$KESTREL/packages/kestrel-sdk[gym]"',
        "uv tool install ./packages/kestrel-mcp",
        'uv add "kestrel-sdk @ /opt/kestrel/packages/kestrel-sdk"',
        "uvx --from ./packages/kestrel-mcp kestrel-mcp",
        "pip install gymnasium",
        "pip install uv",
        "pip install 'psycopg[binary]' psycopg-pool",
        '{"command": "uv", "args": ["run", "--directory", "/opt/kestrel", "kestrel-mcp"]}',
    ],
)
def test_an_install_from_the_clone_or_of_another_package_passes(line: str) -> None:
    assert bare_installs(line) == []


def test_no_document_or_message_installs_a_bare_package_of_ours() -> None:
    documents = _documents()
    assert any(path.name == "README.md" for path in documents)
    offenders = [
        f"{path.relative_to(REPO)}: {line}"
        for path in documents
        for text in _texts(path)
        for line in bare_installs(text)
    ]
    assert offenders == [], "\n".join(offenders)
