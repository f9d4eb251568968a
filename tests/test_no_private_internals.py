"""No code of the project leans on a platform's or a library's internals.

Every file under ``packages/`` is read: none names ``fcntl`` (POSIX only: the default
store must run on Windows too), imports ``mmap`` (the journal is SQLite's, not a mapped
file of our own) or touches pydantic's private attributes (``__pydantic_*__``: a minor
pydantic release may change them; the public API is ``model_construct``, ``model_dump``,
``model_extra``, ``model_fields_set``, serializers) or reads an object's ``__dict__``
(a model's member order there is pydantic's business, not ours: read fields by name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

PACKAGES = Path(__file__).resolve().parents[1] / "packages"
FORBIDDEN = re.compile(r"fcntl|import mmap|__pydantic_|\.__dict__")


def offending_lines(root: Path) -> Iterator[str]:
    """``path:line: text`` of every line under ``root`` the pattern finds (text files)."""
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # a binary file (a gzipped tape)
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if FORBIDDEN.search(line):
                yield f"{path.relative_to(root)}:{number}: {line.strip()}"


def test_no_package_file_names_fcntl_mmap_pydantic_private_attributes_or_dict() -> None:
    assert list(offending_lines(PACKAGES)) == []


def test_the_scan_finds_each_forbidden_use(tmp_path: Path) -> None:
    planted = {
        "a.py": "import fcntl\n",
        "b.py": "x = 1\nimport mmap\n",
        "c.py": "model.__pydantic_fields_set__.add('x')\n",
        "d/e.c": "/* __pydantic_extra__ */\n",
        "f.py": "x = model.model_fields_set  # public\n",
        "g.py": "values = tuple(self.__dict__.values())\n",
    }
    for name, text in planted.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert list(offending_lines(tmp_path)) == [
        "a.py:1: import fcntl",
        "b.py:2: import mmap",
        "c.py:1: model.__pydantic_fields_set__.add('x')",
        "d/e.c:1: /* __pydantic_extra__ */",
        "g.py:1: values = tuple(self.__dict__.values())",
    ]
