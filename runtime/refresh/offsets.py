"""What the offsets check remembers: per change or append table, one span per refresh
that read rows of it, `[hi, count, hash sum]` of the rows it read (offsets in
(previous hi, hi]). The sum over all spans is what the table must still hold at offsets
<= the committed one (job.py `_verify`).

Spans also let a retention clean-up pass: when old rows are gone, the check goes on
over the spans above the oldest offset still present, which must be intact, and
forgets the ones below. Old spans are merged pairwise beyond MAX_SPANS, so the manifest
stays small; a coarser span only moves the point from which the check resumes after a
clean-up.
"""

from __future__ import annotations

Spans = list[list[int]]
MAX_SPANS = 64


def record(spans: Spans, hi: int, count: int, hash_sum: int) -> Spans:
    out = [list(s) for s in spans]
    if count:
        out.append([hi, count, hash_sum])
    while len(out) > MAX_SPANS:  # merge the two oldest: the newer bound, summed figures
        a, b = out[0], out[1]
        out[:2] = [[b[0], a[1] + b[1], a[2] + b[2]]]
    return out


def total(spans: Spans) -> list[int]:
    return [sum(s[1] for s in spans), sum(s[2] for s in spans)]


def retained_from(spans: Spans, oldest: int) -> int | None:
    """The smallest span bound B >= oldest - 1: rows above B cannot have been cleaned up
    if the oldest offset still present is `oldest` (the span ending at B may have been,
    in part: it is not checked again). None without spans."""
    bounds = [s[0] for s in spans if s[0] >= oldest - 1]
    if bounds:
        return min(bounds)
    return spans[-1][0] if spans else None


def above(spans: Spans, bound: int) -> Spans:
    return [s for s in spans if s[0] > bound]
