from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from kestrel_protocol import KestrelError, OperationResumption
from kestrel_sdk.runtime.operations import Operations


def test_slow_work_returns_a_resumption_then_the_result() -> None:
    gate = threading.Event()
    ops: Operations[str] = Operations()

    def work(progress: Callable[[int, int], None]) -> str:
        progress(3, 10)
        gate.wait(5)
        return "done"

    op = ops.start("op_x", "alice", work)
    first = ops.wait(op, 0.05)
    assert isinstance(first, OperationResumption)
    assert first.operation == "op_x"
    assert first.progress.total == 10
    assert first.resume_after_ms > 0
    # the same operation started again joins the running one
    assert ops.start("op_x", "alice", work) is op
    gate.set()
    assert ops.wait(ops.find("alice", first.token), 5) == "done"


def test_unknown_or_foreign_tokens_are_unknown_operation() -> None:
    ops: Operations[str] = Operations()
    op = ops.start("op_y", "alice", lambda progress: "ok")
    with pytest.raises(KestrelError) as bad:
        ops.find("alice", "opt_nonsense")
    assert bad.value.code == "UNKNOWN_OPERATION"
    with pytest.raises(KestrelError) as foreign:
        ops.find("bob", op.token)
    assert foreign.value.code == "UNKNOWN_OPERATION"


def test_a_failing_operation_raises_to_the_waiter() -> None:
    ops: Operations[str] = Operations()

    def work(progress: Callable[[int, int], None]) -> str:
        raise KestrelError("UNKNOWN_ARTIFACT", "gone")

    op = ops.start("op_z", "alice", work)
    with pytest.raises(KestrelError, match="gone"):
        ops.wait(op, 5)


def test_old_finished_operations_are_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    from kestrel_sdk.runtime import operations

    monkeypatch.setattr(operations, "KEEP_FINISHED", 2)
    ops: Operations[str] = Operations()
    first = ops.start("op_1", "a", lambda progress: "1")
    assert ops.wait(first, 5) == "1"
    for n in (2, 3, 4):
        assert ops.wait(ops.start(f"op_{n}", "a", lambda progress: "x"), 5) == "x"
    with pytest.raises(KestrelError) as err:
        ops.find("a", first.token)
    assert err.value.code == "UNKNOWN_OPERATION"


def test_the_total_is_reported_before_the_work_reports_anything() -> None:
    gate = threading.Event()
    ops: Operations[str] = Operations()

    def work(progress: Callable[[int, int], None]) -> str:
        gate.wait(5)  # e.g. still loading its inputs
        return "done"

    op = ops.start("op_t", "alice", work, total=7)
    first = ops.wait(op, 0.01)
    assert isinstance(first, OperationResumption)
    assert (first.progress.done, first.progress.total) == (0, 7)
    gate.set()
    assert ops.wait(op, 5) == "done"
