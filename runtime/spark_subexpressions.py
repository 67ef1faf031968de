"""Which subexpressions Spark evaluates ahead, on every row of an operator.

Spark's generated code for a projection or a filter first computes each common
subexpression (one that occurs twice or more) for the row, then the expressions that read
it (subexpression elimination, EquivalentExpressions). So such a subexpression raises on
rows where an expression evaluated alone would not reach it: behind a NULL operand
(`j + (i + 2147483000)` skips its right side where j is NULL, runtime/expressions.py
`_Compiler.args`), or on the right of an OR.

Occurrences are compared as Spark compares them (Expression.canonicalized): the operands
of a chain of `+` (or `*`, AND, OR, the bitwise operators, greatest, least) in any order,
`a = b` as `b = a`, `a > b` as `b < a`.

Spark counts occurrences the way its evaluation reaches them: all operands of an
ordinary call, AND and OR included; of a conditional (CASE, COALESCE) only the operand
it always evaluates, plus what is common to all its branches. Once an expression is
counted twice, the parts inside it are not counted again.

This models Spark's physical operators, not its optimizer: a rewrite that changes which
subexpressions repeat (reassociating `j + (2147483000 + i)` to `(j + i) + 2147483000`,
say) is not followed.
"""

from __future__ import annotations

from dbspc.compiler.logical.scalar import Call, Lit, Scalar


def evaluated_ahead(exprs: tuple[Scalar, ...]) -> frozenset[Call]:
    """The calls of `exprs` (one operator's expressions) Spark computes for every row."""
    counter = _Counter()
    try:
        for e in exprs:
            counter.count(e, counter.seen)
    except TypeError:  # an unhashable literal (a list): nothing is found common
        return frozenset()
    return frozenset(c for calls in counter.seen.values() if len(calls) > 1 for c in calls)


# Spark's Canonicalize: chains of these are compared as multisets of their operands.
_COMMUTATIVE = frozenset("add mul and or bit_and bit_or bit_xor greatest least eq null_safe_eq".split())
_MIRRORED = {"gt": "lt", "ge": "le"}  # a > b is compared as b < a
_MASK = (1 << 64) - 1


class _Counter:
    """Counts occurrences by canonical key. A key is a hash built from the operands' keys,
    once per node, so counting is linear in the size of the expressions."""

    def __init__(self) -> None:
        self.seen: dict[int, list[Call]] = {}
        self._keys: dict[int, int] = {}  # id(node) -> key (the nodes outlive the count)
        self._bags: dict[int, int] = {}  # id(chain node) -> sum of its chain's operand keys

    def count(self, e: Scalar, into: dict[int, list[Call]]) -> None:
        """Count `e`, and what it always evaluates if it is new."""
        if not isinstance(e, Call):  # a column or a constant is never worth a subexpression
            return
        key = self.key(e)
        if key in into:
            into[key].append(e)
            return
        into[key] = [e]
        always, groups = _operands(e)
        for operand in always:
            self.count(operand, into)
        for group in groups:
            for shared in self._common(group):
                self.count(shared, into)

    def key(self, e: Scalar) -> int:
        found = self._keys.get(id(e))
        if found is not None:
            return found
        if not isinstance(e, Call):
            key = hash(e)
        elif e.fn in _COMMUTATIVE:
            key = hash((e.fn, e.type, self._bag(e)))
        elif e.fn in _MIRRORED:
            key = hash((_MIRRORED[e.fn], e.type, self.key(e.args[1]), self.key(e.args[0])))
        else:
            key = hash((e.fn, e.type, *(self.key(a) for a in e.args)))
        self._keys[id(e)] = key
        return key

    def _bag(self, e: Call) -> int:
        """The operands of `e`'s chain of its own function, as an order-free sum."""
        found = self._bags.get(id(e))
        if found is None:
            found = 0
            for a in e.args:
                if isinstance(a, Call) and a.fn == e.fn and a.type == e.type:
                    part = self._bag(a)
                else:
                    part = hash((self.key(a), 1))
                found = (found + part) & _MASK
            self._bags[id(e)] = found
        return found

    def _common(self, group: tuple[Scalar, ...]) -> list[Call]:
        """The largest calls every branch of `group` evaluates."""
        seen: list[dict[int, list[Call]]] = []
        for branch in group:
            local: dict[int, list[Call]] = {}
            self.count(branch, local)
            seen.append(local)
        shared = set(seen[0]).intersection(*seen[1:])
        chosen: list[Call] = []
        for e in sorted((seen[0][key][0] for key in shared), key=_height, reverse=True):
            if not any(_inside(e, c) for c in chosen):
                chosen.append(e)
        return chosen


def _operands(call: Call) -> tuple[tuple[Scalar, ...], list[tuple[Scalar, ...]]]:
    """The operands evaluated whenever `call` is, and the groups of branches one of which
    is (Spark's ConditionalExpression: alwaysEvaluatedInputs, branchGroups)."""
    args = call.args
    if call.fn == "case":  # (cond1, value1, ..., condN, valueN[, else])
        conditions, values = args[0 : len(args) - 1 : 2], args[1::2]
        has_else = len(args) % 2 == 1 and not (isinstance(args[-1], Lit) and args[-1].value is None)
        groups = [conditions] if len(conditions) > 1 else []
        if has_else:
            groups.append((*values[: len(conditions)], args[-1]))
        return args[:1], groups
    if call.fn == "coalesce":
        return args[:1], [args] if len(args) > 1 else []
    if call.fn == "error_if":
        # dbspc's own check beside a value computed from the same operands (add_months'
        # overflow, make_date's fields): one Spark expression, counted once
        return args[:1], []
    return args, []


def _height(e: Scalar) -> int:
    return 1 + max((_height(a) for a in e.args), default=0) if isinstance(e, Call) else 0


def _inside(part: Call, whole: Scalar) -> bool:
    return whole is part or whole == part or (isinstance(whole, Call) and any(_inside(part, a) for a in whole.args))
