# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Compiled iterations of a recursion scope over rows of integers (runtime/nested_compiled.py).

A `Batch` is a Z-set of fixed-width int64 rows held in C++; the scope's operators pass
batches to each other without building an array or a frame in between, so one
iteration of a nested join or distinct is one call. The C++ is iterscope.h.
"""

import numpy as np

from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

cdef extern from "iterscope.h" namespace "dbspc_iter":
    cdef cppclass Rows:
        int w
        vector[int64_t] v
        vector[int64_t] wt
        int64_t n()
        void clear()

    cdef cppclass IterIndex:
        int64_t n()
        int64_t live()
        int64_t bytes()
        void add_many(const int64_t* rows, const int32_t* its, const int64_t* wts, int64_t n)

    cdef cppclass NestedJoin:
        IterIndex sa
        IterIndex sb
        Rows ca
        Rows cb
        vector[int32_t] ca_it
        vector[int32_t] cb_it
        void init(int wa, int wb, const vector[int]& l, const vector[int]& r)
        void begin()
        void step(const Rows& a, const Rows& b, int32_t i, Rows& out)
        bint work_ahead(int32_t i)
        void commit()

    cdef cppclass RowSet:
        Rows rows

    cdef cppclass NestedDistinct:
        IterIndex s
        RowSet seen
        Rows in_ "in"
        vector[int32_t] in_it
        void init(int w)
        void begin()
        void step(const Rows& d, int32_t i, Rows& out)
        bint work_ahead(int32_t i)
        void commit()

    cdef cppclass NestedAggregate:
        IterIndex s
        RowSet keys
        Rows in_ "in"
        vector[int32_t] in_it
        void init(int w, const vector[int]& g, const vector[int]& k, const vector[int]& a)
        void begin()
        void step(const Rows& d, int32_t i, Rows& out)
        bint work_ahead(int32_t i)
        void commit()

    void consolidate(const Rows& r, Rows& out)

    cdef cppclass Strings:
        int64_t code(const char* p, int64_t n)
        vector[const string*] values
    uint64_t collide


def set_collisions(uint64_t values):
    """Reduce every hash modulo `values` (0: hashes as they are); for tests."""
    global collide
    collide = values


# the aggregate kinds of iterscope.h's NestedAggregate
AGG_COUNT, AGG_MIN, AGG_MAX = 0, 1, 2


cdef class Batch:
    """Weighted int64 rows of one width."""

    cdef Rows r

    def __init__(self, int width):
        self.r.w = width

    def __len__(self):
        return self.r.n()

    @property
    def width(self):
        return self.r.w


def batch(const int64_t[:, ::1] rows, const int64_t[::1] weights):
    """The batch of `rows` (n × width, C order) with `weights`."""
    cdef Batch b = Batch(rows.shape[1])
    cdef Py_ssize_t n = rows.shape[0], w = rows.shape[1]
    b.r.v.resize(n * w)
    b.r.wt.resize(n)
    if n:
        if w:
            memcpy(b.r.v.data(), &rows[0, 0], n * w * sizeof(int64_t))
        memcpy(b.r.wt.data(), &weights[0], n * sizeof(int64_t))
    return b


cdef tuple _arrays(const Rows& r):
    cdef Py_ssize_t n = r.n(), w = r.w
    rows = np.empty((n, w), dtype=np.int64)
    weights = np.empty(n, dtype=np.int64)
    cdef int64_t[:, ::1] rv = rows
    cdef int64_t[::1] wv = weights
    if n:
        if w:
            memcpy(&rv[0, 0], r.v.data(), n * w * sizeof(int64_t))
        memcpy(&wv[0], r.wt.data(), n * sizeof(int64_t))
    return rows, weights


def arrays(Batch b):
    """(rows n × width, weights) of a batch, as new numpy arrays."""
    return _arrays(b.r)


def project(Batch b, list columns):
    """The batch of each row's `columns`, weights unchanged (a projection: linear)."""
    cdef Py_ssize_t k = len(columns), n = b.r.n(), w = b.r.w, i, j
    cdef vector[int] cols = columns
    cdef Batch out = Batch(k)
    out.r.v.resize(n * k)
    out.r.wt = b.r.wt
    for i in range(n):
        for j in range(k):
            out.r.v[i * k + j] = b.r.v[i * w + cols[j]]
    return out


def concat(list parts, int width):
    """The sum of `parts`, not consolidated."""
    cdef Batch out = Batch(width), p
    for p in parts:
        out.r.v.insert(out.r.v.end(), p.r.v.begin(), p.r.v.end())
        out.r.wt.insert(out.r.wt.end(), p.r.wt.begin(), p.r.wt.end())
    return out


def negate(Batch b):
    cdef Batch out = Batch(b.r.w)
    out.r.v = b.r.v
    out.r.wt = b.r.wt
    cdef Py_ssize_t i
    for i in range(<Py_ssize_t>out.r.wt.size()):
        out.r.wt[i] = -out.r.wt[i]
    return out


def consolidated(Batch b):
    """Equal rows summed, zero weights dropped, in the order of each row's first copy."""
    cdef Batch out = Batch(b.r.w)
    consolidate(b.r, out.r)
    return out


cdef tuple _tagged(const Rows& r, const vector[int32_t]& tags):
    rows, weights = _arrays(r)
    iterations = np.empty(len(weights), dtype=np.int32)
    cdef int32_t[::1] iv = iterations
    if len(weights):
        memcpy(&iv[0], tags.data(), len(weights) * sizeof(int32_t))
    return rows, iterations, weights


cdef void _load(IterIndex* index, const int64_t[:, ::1] rows, const int32_t[::1] iterations, const int64_t[::1] weights):
    # (rows are the index's width: the callers slice off the iteration column)
    if rows.shape[0]:
        index.add_many(&rows[0, 0], &iterations[0], &weights[0], rows.shape[0])


cdef class Join:
    """A nested join's iteration traces of both sides and this step's running sums."""

    cdef NestedJoin j

    def __init__(self, int left_width, int right_width, list left_keys, list right_keys):
        self.j.init(left_width, right_width, left_keys, right_keys)

    def begin(self):
        """Forget this step's running sums (a step that failed, or a new one)."""
        self.j.begin()

    def step(self, Batch a, Batch b, int i):
        """a ⋈ b at iteration i of this outer step (its six terms; not consolidated)."""
        cdef Batch out = Batch(self.j.ca.w + self.j.cb.w)
        self.j.step(a.r, b.r, i, out.r)
        return out

    def work_ahead(self, int i):
        return self.j.work_ahead(i)

    def taken(self, int side):
        """This step's inputs of one side: (rows, iterations, weights)."""
        return _tagged(self.j.ca, self.j.ca_it) if side == 0 else _tagged(self.j.cb, self.j.cb_it)

    def commit(self):
        """Add this step's running sums to the iteration traces."""
        self.j.commit()

    def load(self, int side, const int64_t[:, ::1] rows, const int32_t[::1] iterations, const int64_t[::1] weights):
        """Add stored rows to one side's iteration trace (a restore)."""
        _load(&self.j.sa if side == 0 else &self.j.sb, rows, iterations, weights)

    def nbytes(self):
        """Bytes of both sides' compiled iteration traces."""
        return self.j.sa.bytes() + self.j.sb.bytes()

    def entries(self):
        """(slots, live entries) of both sides' indexes."""
        return self.j.sa.n() + self.j.sb.n(), self.j.sa.live() + self.j.sb.live()


cdef class Distinct:
    """A nested distinct's iteration trace and the rows touched in this step."""

    cdef NestedDistinct d

    def __init__(self, int width):
        self.d.init(width)

    def begin(self):
        self.d.begin()

    def step(self, Batch d, int i):
        cdef Batch out = Batch(self.d.seen.rows.w)
        self.d.step(d.r, i, out.r)
        return out

    def work_ahead(self, int i):
        return self.d.work_ahead(i)

    def taken(self, int side):
        return _tagged(self.d.in_, self.d.in_it)

    def commit(self):
        self.d.commit()

    def load(self, int side, const int64_t[:, ::1] rows, const int32_t[::1] iterations, const int64_t[::1] weights):
        _load(&self.d.s, rows, iterations, weights)

    def nbytes(self):
        return self.d.s.bytes()

    def entries(self):
        return self.d.s.n(), self.d.s.live()


cdef class Aggregate:
    """A nested GROUP BY of COUNT, MIN and MAX: its iteration trace and this step's groups."""

    cdef NestedAggregate a
    cdef int width

    def __init__(self, int width, list group, list kinds, list args, int out_width):
        self.a.init(width, group, kinds, args)
        self.width = out_width

    def begin(self):
        self.a.begin()

    def step(self, Batch d, int i):
        """The groups' change at iteration i (consolidated)."""
        cdef Batch out = Batch(self.width)
        self.a.step(d.r, i, out.r)
        return out

    def work_ahead(self, int i):
        return self.a.work_ahead(i)

    def taken(self, int side):
        return _tagged(self.a.in_, self.a.in_it)

    def commit(self):
        self.a.commit()

    def load(self, int side, const int64_t[:, ::1] rows, const int32_t[::1] iterations, const int64_t[::1] weights):
        _load(&self.a.s, rows, iterations, weights)

    def nbytes(self):
        return self.a.s.bytes()

    def entries(self):
        return self.a.s.n(), self.a.s.live()


cdef class Dictionary:
    """Codes for a scope's strings (iterscope.h: Strings)."""

    cdef Strings s

    def __len__(self):
        return self.s.values.size()

    def encode(self, const int8_t[::1] offsets, const int8_t[::1] data, bint wide, Py_ssize_t offset, Py_ssize_t n):
        """The code of each of n Arrow strings (offsets int64 when `wide`, else int32;
        starting at row `offset`), no NULLs among them."""
        codes = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] out = codes
        cdef Py_ssize_t i
        cdef int64_t start, end
        cdef const char* p = <const char*> &data[0] if data.shape[0] else NULL
        cdef const char* o = <const char*> &offsets[0]
        for i in range(n):
            if wide:
                start = (<const int64_t*> o)[i + offset]
                end = (<const int64_t*> o)[i + offset + 1]
            else:
                start = (<const int32_t*> o)[i + offset]
                end = (<const int32_t*> o)[i + offset + 1]
            out[i] = self.s.code(p + start, end - start)
        return codes

    def decode(self, const int64_t[:] codes):
        """(offsets int64, data) of the strings of `codes`, as an Arrow large_string's buffers."""
        cdef Py_ssize_t n = codes.shape[0], i, total = 0
        offsets = np.empty(n + 1, dtype=np.int64)
        cdef int64_t[::1] o = offsets
        o[0] = 0
        for i in range(n):
            total += self.s.values[codes[i]].size()
            o[i + 1] = total
        data = np.empty(total, dtype=np.uint8)
        cdef unsigned char[::1] d = data
        for i in range(n):
            if o[i + 1] > o[i]:
                memcpy(&d[o[i]], self.s.values[codes[i]].data(), o[i + 1] - o[i])
        return offsets, data
