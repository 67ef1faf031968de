"""Every operator class is known everywhere it must be: the runtime's evaluator table, the
report's costs, and the nested forms of recursion. Forgetting one place fails here, not
as a silent bug in a later step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import dbspc.runtime.executor  # noqa: F401  (fills the evaluator table)
from dbspc.compiler.circuit import operators as op
from dbspc.runtime.nested import nested_evaluator
from dbspc.runtime.registry import EVALUATORS


def missing_entries(classes: list[type[op.Operator]]) -> list[str]:
    """What each operator class lacks, as readable lines (empty when complete)."""
    problems: list[str] = []
    for cls in classes:
        name = cls.__name__
        if cls.lowering_only:
            pass  # replaced before any circuit is evaluated
        elif cls.scope_only:
            if nested_evaluator(cls) is None:
                problems.append(f"{name}: scope-only, but no incremental scope evaluates it")
        elif cls not in EVALUATORS:
            problems.append(f"{name}: no evaluator in runtime/registry.py's table")
        elif cls.stateful and EVALUATORS[cls].state is None:
            problems.append(f"{name}: stateful, but its evaluator declares no state")
        if cls.cost is op.Operator.cost:
            problems.append(f"{name}: no cost for the incrementality report")
        form = cls.nested_form
        if not (
            form == "same" or isinstance(form, op.Refused) or (isinstance(form, type) and issubclass(form, op.Operator))
        ):
            problems.append(f"{name}: neither a nested form nor an explicit refusal")
    return problems


def test_every_operator_is_registered_everywhere() -> None:
    classes = op.operator_classes()
    assert len(classes) >= 20
    assert missing_entries(classes) == []


def test_a_forgotten_operator_is_caught() -> None:
    """The check above can fail: an operator declared only in operators.py is reported
    three times over."""

    @dataclass(frozen=True, slots=True)
    class Forgotten(op.Operator):
        kind: ClassVar[str] = "forgotten"
        stateful: ClassVar[bool] = True

    assert missing_entries([Forgotten]) == [
        "Forgotten: no evaluator in runtime/registry.py's table",
        "Forgotten: no cost for the incrementality report",
        "Forgotten: neither a nested form nor an explicit refusal",
    ]


def test_a_partly_registered_operator_is_caught() -> None:
    """Registered with an evaluator and a cost but no nested form, and stateful without a
    state: each gap is named."""

    @dataclass(frozen=True, slots=True)
    class Partial(op.Operator):
        kind: ClassVar[str] = "partial"
        stateful: ClassVar[bool] = True

        def cost(self, ctx: op.CostContext) -> op.Cost:
            return op.NO_STATE

    EVALUATORS[Partial] = EVALUATORS[op.Map]
    try:
        assert missing_entries([Partial]) == [
            "Partial: stateful, but its evaluator declares no state",
            "Partial: neither a nested form nor an explicit refusal",
        ]
    finally:
        del EVALUATORS[Partial]


def test_nested_forms_build_from_the_same_fields() -> None:
    """A join's doubly incremental form keeps its keys; linear operators stay themselves."""
    from dbspc.compiler.types import INT

    j = op.Join((0, 1), (INT, INT), (0,), (0,))
    assert j.nested_incremental() == op.JoinNested((0, 1), (INT, INT), (0,), (0,))
    m = op.Plus((0, 1), (INT,))
    assert m.nested_incremental() is m
