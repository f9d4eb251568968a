"""Bring your own bars: a bar file or DataFrame as a catalog scenario (docs/spec.md §4).

``scenario_from_file`` (CSV; Parquet where pyarrow or polars is installed, e.g. by the
extra ``kestrel-sdk[parquet]``) and ``scenario_from_frame`` (a pandas DataFrame) recognise
the common layouts, check every row, and return an ``ImportedScenario`` whose
``write(directory)`` stores a ``scenario.toml`` and canonical ``tape.csv`` that the catalog
accepts. Bad input raises ``ScenarioImportError`` with one line per problem (the first
100 by row; every problem counted by kind), and nothing is written.
"""

from __future__ import annotations

from .disguised import DisguisedScenario, disguise_scenario
from .file import scenario_from_file
from .frame import scenario_from_frame
from .imported import ImportedScenario, ScenarioImportError, ScenarioTermsInput
from .problems import ImportProblem
from .staged import ScenarioTargetError, check_target, write_staged

__all__ = [
    "DisguisedScenario",
    "ImportProblem",
    "ImportedScenario",
    "ScenarioImportError",
    "ScenarioTargetError",
    "ScenarioTermsInput",
    "check_target",
    "disguise_scenario",
    "scenario_from_file",
    "scenario_from_frame",
    "write_staged",
]
