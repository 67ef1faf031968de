/* The doubly incremental operators of a recursion scope (DBSP §6) over rows of integers.

   runtime/nested.py evaluates an incremental scope with one polars or numpy call per term
   and per iteration; a step of a recursive view runs ~10 iterations, so their fixed costs
   are most of the step. When every value of the scope is an integer (the integer kinds,
   DATE and TIMESTAMP by their physical value) and none is NULL, a row is a fixed-width
   array of int64, and each nested operator's iteration is one call here.

   IterIndex is an iteration trace (runtime/nested.py: IterationTrace): the sum over
   earlier outer steps of an operator input, one weight per (row, iteration), chained by
   the hash of the key columns for probes and by the hash of (row, iteration) to add
   weights. A weight that returns to zero keeps its entry until the batch of adds that
   zeroed it is done (probes skip it, and the same row at the same iteration revives it);
   then the entry leaves its chains and its slot serves the next new entry. Entries move
   only between steps, so a step's probes may hold entry numbers. */
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace dbspc_iter {

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Tests set this to make hashes collide (tests/collisions.py): every hash is reduced
   modulo it, and the chains' exact comparisons must still give the same answers. */
static uint64_t collide = 0;

static inline uint64_t reduced(uint64_t h) { return collide ? h % collide : h; }

static inline uint64_t hash_cols(const int64_t* row, const int* cols, int k) {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int j = 0; j < k; j++) h = mix(h ^ (uint64_t)row[cols[j]]) + 0x632be59bd9b4e019ULL;
    return reduced(h);
}

static inline uint64_t hash_row(const int64_t* row, int w) {
    uint64_t h = 0x2545f4914f6cdd1dULL;
    for (int j = 0; j < w; j++) h = mix(h ^ (uint64_t)row[j]) + 0x632be59bd9b4e019ULL;
    return reduced(h);
}

static inline bool same_cols(const int64_t* a, const int* ac, const int64_t* b, const int* bc, int k) {
    for (int j = 0; j < k; j++)
        if (a[ac[j]] != b[bc[j]]) return false;
    return true;
}

/* Rows (row-major, `w` wide) with weights, growing. */
struct Rows {
    int w = 0;
    std::vector<int64_t> v;
    std::vector<int64_t> wt;
    int64_t n() const { return (int64_t)wt.size(); }
    const int64_t* row(int64_t i) const { return v.data() + i * w; }
    void clear() { v.clear(); wt.clear(); }
    void push(const int64_t* r, int64_t weight) {
        v.insert(v.end(), r, r + w);
        wt.push_back(weight);
    }
    void push2(const int64_t* l, int lw, const int64_t* r, int rw, int64_t weight) {
        v.insert(v.end(), l, l + lw);
        v.insert(v.end(), r, r + rw);
        wt.push_back(weight);
    }
};

/* A growing array in blocks of 4,096 items: appending never moves what is stored, so a
   step never pays the copy of the whole state that a vector's doubling costs. */
template <class T>
struct Blocks {
    static const int BITS = 12;
    int width = 1;  // items per element (a row's columns)
    std::vector<std::vector<T>> blocks;
    int64_t count = 0;
    void clear() { blocks.clear(); count = 0; }
    int64_t size() const { return count; }
    T* at(int64_t i) { return blocks[i >> BITS].data() + (i & ((1 << BITS) - 1)) * width; }
    const T* at(int64_t i) const { return blocks[i >> BITS].data() + (i & ((1 << BITS) - 1)) * width; }
    T& operator[](int64_t i) { return *at(i); }
    const T& operator[](int64_t i) const { return *at(i); }
    void push(const T* items) {
        if ((count & ((1 << BITS) - 1)) == 0) blocks.emplace_back((size_t)width << BITS);
        std::memcpy(at(count), items, sizeof(T) * width);
        count++;
    }
};

struct IterIndex {
    /* What a probe reads of an entry, together: one cache line holds two entries. */
    struct Entry {
        uint64_t kh;     // hash of the key columns
        int64_t knext;   // the next entry of the key's chain
        int64_t wt;
        int32_t it;
    };
    struct RowLink {
        uint64_t rh;     // hash of (row, iteration)
        int64_t rnext;
    };
    int w = 0;
    std::vector<int> key;  // key columns of a stored row
    /* The key is the whole row (a distinct's index): a (row, iteration) is found on the
       key's chain, so the row chains (rl, rhead) stay empty. */
    bool whole = false;
    Blocks<int64_t> rows;
    Blocks<Entry> es;
    Blocks<RowLink> rl;
    /* The previous entry of each entry's key chain (-1: it heads its chain), apart from
       Entry since only adds and unlinks read it: a key whose chain holds many entries (a
       hub node's paths, every iteration of them) unlinks a dead one in O(1), where a
       walk from the head cost a miss per entry before it. Empty in a `whole` index,
       whose key chains are a row's iterations and rows sharing a bucket: short, and a
       walk costs less than keeping the links. */
    Blocks<int64_t> kprev;
    std::vector<int64_t> khead, rhead;
    uint64_t mask = 0;
    /* An entry whose weight returns to zero is unlinked from its chains once the batch
       of adds is done (reclaim) and its slot serves the next new entry: a stream that
       keeps moving rows between iterations (a path that gets shorter, then longer)
       would otherwise leave such entries behind for good, and memory and chains would
       grow with the changes, not the state. */
    std::vector<int64_t> died, free_slots;
    /* Growth moves the chains to a table twice the size a few buckets per add, not all
       at once: a step never pays the rehash of the whole state. While it runs, a bucket
       of the old table below `cursor` has moved; the others are searched there too. */
    std::vector<int64_t> kold, rold;
    uint64_t old_mask = 0, cursor = 0;
    static const int MOVES_PER_ADD = 8;

    void init(int width, const std::vector<int>& k) {
        w = width;
        key = k;
        rows.clear(); es.clear(); rl.clear(); kprev.clear(); kold.clear(); rold.clear();
        rows.width = width;
        whole = (int)k.size() == width;
        for (int j = 0; whole && j < width; j++) whole = k[j] == j;
        khead.assign(16, -1);
        rhead.assign(whole ? 0 : 16, -1);
        mask = 15;
        old_mask = cursor = 0;
        died.clear();
        free_slots.clear();
    }
    int64_t n() const { return (int64_t)es.size(); }  // slots: live entries and free ones
    int64_t live() const { return n() - (int64_t)free_slots.size(); }
    const int64_t* row(int64_t e) const { return rows.at(e); }
    int32_t it_of(int64_t e) const { return es[e].it; }
    int64_t wt_of(int64_t e) const { return es[e].wt; }
    bool moving() const { return !kold.empty(); }
    int64_t bytes() const {
        return n() * (int64_t)(sizeof(int64_t) * w + sizeof(Entry) + (whole ? 0 : sizeof(RowLink) + sizeof(int64_t))) +
               (int64_t)(khead.size() + rhead.size() + kold.size() + rold.size()) * (int64_t)sizeof(int64_t);
    }

    void move_buckets(uint64_t count) {
        for (; count && moving(); count--) {
            for (int64_t e = kold[cursor], next; e >= 0; e = next) {
                next = es[e].knext;
                link_key(e, es[e].kh);
            }
            for (int64_t e = whole ? -1 : rold[cursor], next; e >= 0; e = next) {
                next = rl[e].rnext;
                rl[e].rnext = rhead[rl[e].rh & mask];
                rhead[rl[e].rh & mask] = e;
            }
            if (++cursor > old_mask) {
                kold.clear(); kold.shrink_to_fit();
                rold.clear(); rold.shrink_to_fit();
            }
        }
    }

    void grow() {
        move_buckets(UINT64_MAX);  // (a growth still under way ends first)
        old_mask = mask;
        cursor = 0;
        kold.swap(khead);
        rold.swap(rhead);
        mask = mask * 2 + 1;
        khead.assign(mask + 1, -1);
        rhead.assign(whole ? 0 : mask + 1, -1);
    }

    /* The heads of the chains that may hold hash h: the new table's, and the old
       table's while its bucket has not moved (-1: none). */
    int64_t old_head(const std::vector<int64_t>& old, uint64_t h) const {
        return moving() && (h & old_mask) >= cursor ? old[h & old_mask] : -1;
    }

    uint64_t row_hash(const int64_t* r, int32_t iteration) const {
        return reduced(mix(hash_row(r, w) ^ (uint64_t)(uint32_t)iteration));
    }
    uint64_t key_hash(const int64_t* r) const { return hash_cols(r, key.data(), (int)key.size()); }

    /* An index much larger than the caches costs a miss for each chain head, entry and
       row a probe or an add reads; the batch calls below ask for them a few rows ahead,
       so the misses overlap instead of following one another. */
    static const int64_t AHEAD = 16;
    void prefetch_heads(uint64_t k, uint64_t h) const {
        __builtin_prefetch(&khead[k & mask]);
        if (h && !whole) __builtin_prefetch(&rhead[h & mask]);
    }
    void prefetch_entry(int64_t e) const {
        if (e < 0) return;
        __builtin_prefetch(es.at(e));
        __builtin_prefetch(rows.at(e));
    }

    /* state[rows[x], its[x]] += rows.wt[x], for every x. */
    void add_all(const Rows& r, const std::vector<int32_t>& its) {
        add_many(r.v.data(), its.data(), r.wt.data(), r.n());
    }

    /* add_all over n row-major rows of w columns, their iterations and weights. */
    void add_many(const int64_t* rs, const int32_t* its, const int64_t* wts, int64_t n) {
        std::vector<uint64_t> ks(n), hs(n);
        for (int64_t x = 0; x < n; x++) {
            ks[x] = key_hash(rs + x * w);
            hs[x] = whole ? 0 : row_hash(rs + x * w, its[x]);
        }
        for (int64_t x = 0; x < n; x++) {
            if (x + AHEAD < n) prefetch_heads(ks[x + AHEAD], hs[x + AHEAD]);
            if (x + AHEAD / 2 < n) {
                const int64_t head = khead[ks[x + AHEAD / 2] & mask];  // a new entry links before it
                if (head >= 0 && !whole) __builtin_prefetch(kprev.at(head));
                int64_t e = whole ? head : rhead[hs[x + AHEAD / 2] & mask];
                if (e >= 0 && !whole) __builtin_prefetch(rl.at(e));
                prefetch_entry(e);
            }
            add_hashed(rs + x * w, its[x], wts[x], ks[x], hs[x]);
        }
        reclaim();
    }

    /* The entry of (row r, iteration), or -1: on the row chains by its row_hash, or, in
       a `whole` index, on the key chains by its key_hash. */
    int64_t find_entry(const int64_t* r, int32_t iteration, uint64_t hash) const {
        for (int64_t start : {(whole ? khead : rhead)[hash & mask], old_head(whole ? kold : rold, hash)}) {
            for (int64_t e = start; e >= 0; e = whole ? es[e].knext : rl[e].rnext) {
                if ((whole ? es[e].kh : rl[e].rh) == hash && es[e].it == iteration &&
                    std::memcmp(row(e), r, sizeof(int64_t) * w) == 0)
                    return e;
            }
        }
        return -1;
    }

    /* state[row, iteration] += weight, with the row's key_hash k and row_hash h (whole:
       unused) */
    void add_hashed(const int64_t* r, int32_t iteration, int64_t weight, uint64_t k, uint64_t h) {
        if (weight == 0) return;
        move_buckets(MOVES_PER_ADD);
        add_at(find_entry(r, iteration, whole ? k : h), r, iteration, weight, k, h);
    }

    /* add_many in a `whole` index whose caller found each (row, iteration)'s entry
       already (found[x], -1: not stored): the nested distinct, whose step walked each
       touched row's chain, every stored iteration of it, one miss an entry. A second
       walk here cost as much again; this asks for the one entry, or chain head, ahead. */
    void add_found(const int64_t* rs, const int32_t* its, const int64_t* wts, const uint64_t* ks, const int64_t* found,
                   int64_t n) {
        for (int64_t x = 0; x < n; x++) {
            if (x + AHEAD < n) {
                if (found[x + AHEAD] >= 0)
                    __builtin_prefetch(es.at(found[x + AHEAD]));
                else
                    prefetch_heads(ks[x + AHEAD], 0);
            }
            if (wts[x] == 0) continue;
            move_buckets(MOVES_PER_ADD);
            add_at(found[x], rs + x * w, its[x], wts[x], ks[x], 0);
        }
        reclaim();
    }

    /* add_hashed, given the entry of (r, iteration) (-1: none yet) */
    void add_at(int64_t found, const int64_t* r, int32_t iteration, int64_t weight, uint64_t k, uint64_t h) {
        if (found >= 0) {
            es[found].wt += weight;
            if (es[found].wt == 0) died.push_back(found);
            return;
        }
        if ((uint64_t)live() + 1 > (mask + 1) / 2) grow();
        Entry entry{k, -1, weight, iteration};
        const bool reuse = !free_slots.empty();
        int64_t e = n();
        if (reuse) {
            e = free_slots.back();
            free_slots.pop_back();
            std::memcpy(rows.at(e), r, sizeof(int64_t) * w);
            *es.at(e) = entry;
        } else {
            const int64_t none = -1;
            rows.push(r);
            es.push(&entry);
            if (!whole) kprev.push(&none);
        }
        link_key(e, k);
        if (whole) return;
        RowLink link{h, rhead[h & mask]};
        if (reuse)
            *rl.at(e) = link;
        else
            rl.push(&link);
        rhead[h & mask] = e;
    }

    /* Put entry e (key hash k) at the head of its key chain in the new table. */
    void link_key(int64_t e, uint64_t k) {
        const int64_t head = khead[k & mask];
        es[e].knext = head;
        khead[k & mask] = e;
        if (whole) return;
        kprev[e] = -1;
        if (head >= 0) kprev[head] = e;
    }

    /* Take entry e off its key chain: in O(1) through its neighbours, or as a chain's
       head, the new table's or (a growth under way) the old one's; in a `whole` index,
       by a walk of the chain. */
    void unlink_key(int64_t e) {
        if (whole) {
            unlink(khead, kold, es[e].kh, e, [&](int64_t x) -> int64_t& { return es.at(x)->knext; });
            return;
        }
        const int64_t prev = kprev[e], next = es[e].knext;
        if (prev >= 0) {
            es[prev].knext = next;
        } else {
            const uint64_t h = es[e].kh;
            int64_t& head = khead[h & mask] == e ? khead[h & mask] : kold[h & old_mask];
            head = next;
        }
        if (next >= 0) kprev[next] = prev;
    }

    /* Unlink the entries whose weight is zero after a batch of adds and free their
       slots: O(1) off the key chain, O(chain) off the row chain (short: a row's hash is
       of the whole row and its iteration). Between steps only, since a step's probes
       hold entry numbers (the join's filed meetings, say). An entry that an add zeroed
       and a later one revived stays. */
    void reclaim() {
        std::sort(died.begin(), died.end());
        died.erase(std::unique(died.begin(), died.end()), died.end());
        const int64_t n = (int64_t)died.size();
        for (int64_t x = 0; x < n; x++) {
            // (the dead entries are scattered: ask for them, then their neighbours, ahead)
            if (x + AHEAD < n) {
                __builtin_prefetch(es.at(died[x + AHEAD]));
                if (!whole) __builtin_prefetch(kprev.at(died[x + AHEAD]));
            }
            if (x + AHEAD / 2 < n && !whole) {
                const int64_t d = died[x + AHEAD / 2], prev = kprev[d], next = es[d].knext;
                if (prev >= 0) __builtin_prefetch(es.at(prev));
                if (next >= 0) __builtin_prefetch(kprev.at(next));
                __builtin_prefetch(rl.at(d));
            }
            const int64_t e = died[x];
            if (es[e].wt != 0) continue;
            unlink_key(e);
            if (!whole) unlink(rhead, rold, rl[e].rh, e, [&](int64_t x) -> int64_t& { return rl.at(x)->rnext; });
            free_slots.push_back(e);
        }
        died.clear();
    }

    /* Take entry e off the chain of hash h: the new table's, or while a growth is under
       way the old table's, where an entry added before the growth may still be. */
    template <class Next>
    void unlink(std::vector<int64_t>& heads, std::vector<int64_t>& old, uint64_t h, int64_t e, Next next) {
        auto off = [&](int64_t* link) {
            for (; *link >= 0; link = &next(*link)) {
                if (*link == e) {
                    *link = next(e);
                    return true;
                }
            }
            return false;
        };
        if (!off(&heads[h & mask]) && moving() && (h & old_mask) >= cursor) off(&old[h & old_mask]);
    }

    /* For m probes (probe q: row probe_row(q), columns `pk`, key hash hs[q]), calls
       f(q, e) for each live entry whose key equals the probe's and whose iteration lies
       in [lo, hi], in no particular order. A few probes' chains are walked side
       by side, one entry of each in turn, every entry asked for a turn before it is read:
       a key whose chain holds many entries (a row stored at many iterations) cost a miss
       an entry, one after another, where side by side their misses overlap. */
    template <class P, class F>
    void probe_side_by_side(int64_t m, const uint64_t* hs, P probe_row, const int* pk, int32_t lo, int32_t hi,
                            F f) const {
        if (lo > hi || n() == 0 || m == 0) return;
        static const int G = 8;
        struct Walk {
            int64_t q, e;
            bool old;  // on the old table's chain (a growth under way)
        };
        Walk walks[G];
        int64_t next = 0;
        for (int64_t q = 0; q < std::min<int64_t>(m, 2 * G); q++) prefetch_heads(hs[q], 0);
        auto start = [&](Walk& w) -> bool {  // the next probe whose chain holds an entry
            while (next < m) {
                const int64_t q = next++;
                if (q + 2 * G < m) prefetch_heads(hs[q + 2 * G], 0);
                int64_t e = khead[hs[q] & mask];
                bool old = false;
                if (e < 0) {
                    e = old_head(kold, hs[q]);
                    old = true;
                }
                if (e >= 0) {
                    w = Walk{q, e, old};
                    prefetch_entry(e);
                    return true;
                }
            }
            return false;
        };
        int live = 0;
        while (live < G && start(walks[live])) live++;
        while (live > 0) {
            for (int g = 0; g < live;) {
                Walk& w = walks[g];
                const Entry& x = es[w.e];
                if (x.kh == hs[w.q] && x.wt != 0 && x.it >= lo && x.it <= hi &&
                    same_cols(row(w.e), key.data(), probe_row(w.q), pk, (int)key.size()))
                    f(w.q, w.e);
                int64_t e = x.knext;
                if (e < 0 && !w.old) {
                    e = old_head(kold, hs[w.q]);
                    w.old = true;
                }
                if (e >= 0) {
                    w.e = e;
                    prefetch_entry(e);
                    g++;
                } else if (start(w)) {
                    g++;
                } else {
                    walks[g] = walks[--live];  // (visited next, in this turn)
                }
            }
        }
    }
};

/* A join's probe of `side`'s rows into an in-step hash of `other`'s rows (both small):
   calls f(i, j) for each pair whose keys agree. */
struct SmallHash {
    std::vector<int64_t> head, next;
    std::vector<uint64_t> h;
    uint64_t mask = 0;
    void build(const Rows& r, const int* k, int nk) {
        uint64_t size = 16;
        while (size < (uint64_t)r.n() * 2) size *= 2;
        mask = size - 1;
        head.assign(size, -1);
        next.assign(r.n(), -1);
        h.resize(r.n());
        for (int64_t i = 0; i < r.n(); i++) {
            h[i] = hash_cols(r.row(i), k, nk);
            next[i] = head[h[i] & mask];
            head[h[i] & mask] = i;
        }
    }
};

static void join_rows(const Rows& l, const int* lk, const Rows& r, const int* rk, int nk, Rows& out) {
    if (l.n() == 0 || r.n() == 0) return;
    SmallHash sh;
    sh.build(r, rk, nk);
    for (int64_t i = 0; i < l.n(); i++) {
        const int64_t* lr = l.row(i);
        uint64_t k = hash_cols(lr, lk, nk);
        for (int64_t j = sh.head[k & sh.mask]; j >= 0; j = sh.next[j]) {
            if (sh.h[j] == k && same_cols(lr, lk, r.row(j), rk, nk))
                out.push2(lr, l.w, r.row(j), r.w, l.wt[i] * r.wt[j]);
        }
    }
}

/* The stored entries of a step's fresh touched rows (a nested distinct's rows, an
   aggregate's groups: fresh[k] is touched row s_start.size() - 1 + k, its row row_of(k),
   hash hs[k] by columns `cols`), walked side by side and appended to `entries` in their
   rows' order, with each row's end in s_start; at[j] lists the touched rows stored at
   iteration j. Probing the fresh rows in one pass after their batch keeps the index's
   misses together: most of a batch's rows were touched before and cost a lookup only. */
struct FreshProbe {
    struct Hit {
        int64_t k, e;
    };
    std::vector<Hit> hits;
    std::vector<int64_t> place;

    template <class R>
    void run(const IterIndex& s, const std::vector<int64_t>& fresh, const std::vector<uint64_t>& hs, R row_of,
             const int* cols, std::vector<int64_t>& s_start, std::vector<int64_t>& entries,
             std::vector<std::vector<int64_t>>& at) {
        const int64_t m = (int64_t)fresh.size();
        hits.clear();
        s.probe_side_by_side(m, hs.data(), row_of, cols, 0, INT32_MAX,
                             [&](int64_t k, int64_t e) { hits.push_back(Hit{k, e}); });
        place.assign((size_t)m + 1, 0);
        for (const Hit& h : hits) place[h.k + 1]++;
        const int64_t base = (int64_t)entries.size();
        for (int64_t k = 0; k < m; k++) {
            place[k + 1] += place[k];
            s_start.push_back(base + place[k + 1]);
        }
        entries.resize(entries.size() + hits.size());
        for (const Hit& h : hits) entries[base + place[h.k]++] = h.e;
        for (int64_t k = 0; k < m; k++) {
            const int64_t t = fresh[k];
            for (int64_t p = s_start[t]; p < s_start[t + 1]; p++) {
                const size_t j = (size_t)s.it_of(entries[p]);
                if (j >= at.size()) at.resize(j + 1);
                if (at[j].empty() || at[j].back() != t) at[j].push_back(t);
            }
        }
    }
};

/* f(row, weight, entry) for each row of `probes` from row `from` (key columns `cols`)
   and each entry of `s` it meets in iterations [lo, hi], in no particular order: the
   probes' chains are walked side by side (a key's chain holds its rows of every
   iteration, most of them outside [lo, hi]). */
template <class F>
static void probe_all(const IterIndex& s, const Rows& probes, const std::vector<int>& cols, int32_t lo, int32_t hi, F f,
                      int64_t from = 0) {
    const int64_t m = probes.n() - from;
    if (lo > hi || s.n() == 0 || m <= 0) return;
    std::vector<uint64_t> hs((size_t)m);
    for (int64_t q = 0; q < m; q++) hs[q] = hash_cols(probes.row(from + q), cols.data(), (int)cols.size());
    s.probe_side_by_side(
        m, hs.data(), [&](int64_t q) { return probes.row(from + q); }, cols.data(), lo, hi,
        [&](int64_t q, int64_t e) { f(probes.row(from + q), probes.wt[from + q], e, from + q); });
}

/* One nested join a ⋈ b: the stored iteration traces of both sides, and this outer
   step's running sums C_a, C_b with each row's iteration. */
struct NestedJoin {
    IterIndex sa, sb;
    std::vector<int> lk, rk;
    Rows ca, cb;
    std::vector<int32_t> ca_it, cb_it;
    /* Where this step's inputs meet the other side's stored entries at later iterations,
       found once, when a row joins C_a or C_b, and kept by iteration: the terms
       C_a[<i]⋈S_b[=i] and S_a[=i]⋈C_b[<i] read them at iteration i, where a probe per
       iteration walks each key's chain again, every iteration of it. Stored entries do
       not change within a step (commit adds to them after), so what was found holds. */
    struct Hit {
        int64_t x;  // row of ca (a_hits) or cb (b_hits)
        int64_t e;  // entry of sb (a_hits) or sa (b_hits)
    };
    std::vector<std::vector<Hit>> a_hits, b_hits;  // by iteration

    void init(int wa, int wb, const std::vector<int>& l, const std::vector<int>& r) {
        lk = l;
        rk = r;
        sa.init(wa, l);
        sb.init(wb, r);
        ca.w = wa;
        cb.w = wb;
        begin();
    }
    void begin() {
        ca.clear(); cb.clear(); ca_it.clear(); cb_it.clear();
        a_hits.clear(); b_hits.clear();
    }

    /* Rows from..c.n() of c joined it at iteration i: file their meetings with s's
       entries of iterations after i (the probe rows' key columns `cols`). */
    static void later(const IterIndex& s, const Rows& c, int64_t from, const std::vector<int>& cols, int32_t i,
                      std::vector<std::vector<Hit>>& hits) {
        probe_all(
            s, c, cols, i + 1, INT32_MAX,
            [&](const int64_t*, int64_t, int64_t e, int64_t x) {
                size_t j = (size_t)s.it_of(e);
                if (j >= hits.size()) hits.resize(j + 1);
                hits[j].push_back(Hit{x, e});
            },
            from);
    }

    /* The six terms of runtime/nested.py's IncrementalScope._join, for iteration i:
       a⋈(S_b[≤i] + C_b[<i] + b) + S_a[=i]⋈(C_b[<i] + b) + C_a[<i]⋈(S_b[=i] + b) + S_a[<i]⋈b. */
    void step(const Rows& a, const Rows& b, int32_t i, Rows& out) {
        const int nk = (int)lk.size();
        const int wa = ca.w, wb = cb.w;
        probe_all(sb, a, lk, 0, i, [&](const int64_t* ar, int64_t w, int64_t e, int64_t) {
            out.push2(ar, wa, sb.row(e), wb, w * sb.wt_of(e));
        });
        join_rows(a, lk.data(), cb, rk.data(), nk, out);
        join_rows(a, lk.data(), b, rk.data(), nk, out);
        auto from_a = [&](const int64_t* br, int64_t w, int64_t e, int64_t) {
            out.push2(sa.row(e), wa, br, wb, sa.wt_of(e) * w);
        };
        if ((size_t)i < b_hits.size())
            for (const Hit& h : b_hits[i]) out.push2(sa.row(h.e), wa, cb.row(h.x), wb, sa.wt_of(h.e) * cb.wt[h.x]);
        probe_all(sa, b, rk, i, i, from_a);
        if ((size_t)i < a_hits.size())
            for (const Hit& h : a_hits[i]) out.push2(ca.row(h.x), wa, sb.row(h.e), wb, ca.wt[h.x] * sb.wt_of(h.e));
        join_rows(ca, lk.data(), b, rk.data(), nk, out);
        probe_all(sa, b, rk, 0, i - 1, from_a);
        const int64_t na = ca.n(), nb = cb.n();
        for (int64_t x = 0; x < a.n(); x++) { ca.push(a.row(x), a.wt[x]); ca_it.push_back(i); }
        for (int64_t x = 0; x < b.n(); x++) { cb.push(b.row(x), b.wt[x]); cb_it.push_back(i); }
        later(sb, ca, na, lk, i, a_hits);
        later(sa, cb, nb, rk, i, b_hits);
    }

    /* Whether a stored row of an iteration after i meets a key this step touched: the
       loop may stop before the stored depth when none does (IncrementalScope._work_ahead). */
    bool work_ahead(int32_t i) const {
        for (const auto* hits : {&a_hits, &b_hits})
            for (size_t j = (size_t)i + 1; j < hits->size(); j++)
                if (!(*hits)[j].empty()) return true;
        return false;
    }

    void commit() {
        sa.add_all(ca, ca_it);
        sb.add_all(cb, cb_it);
        begin();
    }
};

/* Rows (of `w` columns) kept once each and found by hash: the rows a nested distinct, or
   the group keys a nested aggregate, touched in this outer step. */
struct RowSet {
    Rows rows;
    std::vector<int> cols;  // 0..w-1
    std::vector<uint64_t> h;
    std::vector<int64_t> head, next;
    uint64_t mask = 15;

    void init(int w) {
        rows.w = w;
        cols.resize(w);
        for (int j = 0; j < w; j++) cols[j] = j;
        clear();
    }
    void clear() {
        rows.clear(); h.clear(); next.clear();
        head.assign(16, -1);
        mask = 15;
    }
    int64_t n() const { return rows.n(); }
    const int64_t* row(int64_t t) const { return rows.row(t); }

    /* The set's index of columns `rc` of row r, or -1; `hash` is hash_cols(r, rc, w). */
    int64_t find(const int64_t* r, const int* rc, uint64_t hash) const {
        for (int64_t t = head[hash & mask]; t >= 0; t = next[t])
            if (h[t] == hash && same_cols(rows.row(t), cols.data(), r, rc, rows.w)) return t;
        return -1;
    }

    /* Add columns `rc` of row r (not in the set) with their hash; returns its index. */
    int64_t add(const int64_t* r, const int* rc, uint64_t hash) {
        int64_t t = rows.n();
        for (int j = 0; j < rows.w; j++) rows.v.push_back(r[rc[j]]);
        rows.wt.push_back(0);
        h.push_back(hash);
        if ((uint64_t)rows.n() > (mask + 1) / 2) {
            mask = mask * 2 + 1;
            head.assign(mask + 1, -1);
            next.resize(rows.n());
            for (int64_t u = 0; u < rows.n(); u++) {
                next[u] = head[h[u] & mask];
                head[h[u] & mask] = u;
            }
        } else {
            next.push_back(head[hash & mask]);
            head[hash & mask] = t;
        }
        return t;
    }
};

/* One nested distinct: per row touched in this outer step, its running sum C[≤i] and its
   stored weights per iteration, so each iteration applies
   distinct(X[t][i]) − distinct(X[t-1][i]) − distinct(X[t][i-1]) + distinct(X[t-1][i-1])
   to the touched rows (runtime/nested.py: IncrementalScope._distinct_touched). Only rows
   that change at iteration i can give a non-zero result there: those in its input
   (C[≤i] ≠ C[≤i-1]) and those stored at iteration i (S[≤i] ≠ S[≤i-1]); for any other row
   the four terms cancel. So an iteration visits those rows only. */
struct NestedDistinct {
    IterIndex s;
    std::vector<int> all;
    RowSet seen;                     // the touched rows, each once
    std::vector<int64_t> now;        // C[≤i] per touched row
    std::vector<int64_t> was;        // C[≤i-1] per touched row, for the rows of this iteration
    std::vector<int64_t> s_start;    // per touched row, its stored entries in s_it/s_w/s_e
    std::vector<int32_t> s_it;
    std::vector<int64_t> s_w;
    std::vector<int64_t> s_e;        // (the entries themselves, for the commit's adds)
    std::vector<std::vector<int64_t>> at;  // per iteration j, the touched rows stored at j
    std::vector<int32_t> mark;       // 1 + the last iteration that visited a touched row
    std::vector<int64_t> visit;
    Rows in;                          // this step's inputs, for the commit
    std::vector<int32_t> in_it;
    /* A touched row's input is summed per iteration: its place in `in` and 1 + the
       iteration it holds there (0: none yet). The join's six terms give a row once per
       derivation, and each row of `in` costs the commit an add and the iteration trace
       a row. */
    std::vector<int64_t> in_pos;
    std::vector<int32_t> in_iter;
    std::vector<int64_t> in_t;       // the touched row of each row of `in`

    void init(int w) {
        all.resize(w);
        for (int j = 0; j < w; j++) all[j] = j;
        s.init(w, all);
        seen.init(w);
        in.w = w;
        begin();
    }
    void begin() {
        seen.clear(); now.clear(); was.clear(); s_it.clear(); s_w.clear(); s_e.clear(); in.clear();
        in_it.clear(); at.clear(); mark.clear(); in_pos.clear(); in_iter.clear(); in_t.clear(); fresh.clear();
        s_start.assign(1, 0);
    }

    std::vector<int64_t> fresh;  // touched rows added by this iteration, not probed yet
    std::vector<uint64_t> hs, fresh_h;

    /* The touched row r (its hash h, as the set and the index's key chains hash it); a
       new one waits in `fresh` for its stored entries (probe_fresh). */
    int64_t find_or_add(const int64_t* r, uint64_t h) {
        int64_t t = seen.find(r, all.data(), h);
        if (t >= 0) return t;
        t = seen.add(r, all.data(), h);
        now.push_back(0);
        was.push_back(0);
        mark.push_back(0);
        in_pos.push_back(0);
        in_iter.push_back(0);
        fresh.push_back(t);
        return t;
    }

    FreshProbe probe;

    /* The stored entries of the fresh rows (FreshProbe), with their iterations and
       weights beside them for the visits. */
    void probe_fresh() {
        const int64_t m = (int64_t)fresh.size();
        fresh_h.resize((size_t)m);
        for (int64_t k = 0; k < m; k++) fresh_h[k] = seen.h[fresh[k]];
        const size_t base = s_e.size();
        probe.run(s, fresh, fresh_h, [&](int64_t k) { return seen.row(fresh[k]); }, all.data(), s_start, s_e, at);
        s_it.resize(s_e.size());
        s_w.resize(s_e.size());
        for (size_t p = base; p < s_e.size(); p++) {
            s_it[p] = s.it_of(s_e[p]);
            s_w[p] = s.wt_of(s_e[p]);
        }
        fresh.clear();
    }

    void step(const Rows& d, int32_t i, Rows& out) {
        visit.clear();
        hs.resize((size_t)d.n());
        for (int64_t x = 0; x < d.n(); x++) hs[x] = hash_cols(d.row(x), all.data(), (int)all.size());
        for (int64_t x = 0; x < d.n(); x++) {
            int64_t t = find_or_add(d.row(x), hs[x]);
            if (mark[t] != i + 1) {
                mark[t] = i + 1;
                was[t] = now[t];
                visit.push_back(t);
            }
            now[t] += d.wt[x];
            if (in_iter[t] == i + 1) {
                in.wt[in_pos[t]] += d.wt[x];
            } else {
                in_iter[t] = i + 1;
                in_pos[t] = in.n();
                in.push(d.row(x), d.wt[x]);
                in_it.push_back(i);
                in_t.push_back(t);
            }
        }
        probe_fresh();
        if ((size_t)i < at.size()) {
            for (int64_t t : at[i]) {
                if (mark[t] != i + 1) {
                    mark[t] = i + 1;
                    was[t] = now[t];
                    visit.push_back(t);
                }
            }
        }
        for (int64_t t : visit) {
            int64_t si = 0, sp = 0;
            for (int64_t e = s_start[t]; e < s_start[t + 1]; e++) {
                if (s_it[e] <= i) si += s_w[e];
                if (s_it[e] <= i - 1) sp += s_w[e];
            }
            int64_t o = (int64_t)(si + now[t] > 0) - (int64_t)(si > 0) - (int64_t)(sp + was[t] > 0) + (int64_t)(sp > 0);
            if (o != 0) out.push(seen.row(t), o);
        }
    }

    bool work_ahead(int32_t i) const {
        for (int64_t t = 0; t < seen.n(); t++) {
            if (now[t] == 0) continue;
            for (int64_t e = s_start[t]; e < s_start[t + 1]; e++)
                if (s_it[e] > i && s_w[e] != 0) return true;
        }
        return false;
    }

    /* Each row of `in` added at its iteration: the entry the step's probe found for it,
       if any, is where it goes (probe_fresh saw every stored iteration of each touched
       row, and nothing was added since). */
    void commit() {
        const int64_t n = in.n();
        std::vector<int64_t> found((size_t)n, -1);
        std::vector<uint64_t> ks((size_t)n);
        for (int64_t x = 0; x < n; x++) {
            const int64_t t = in_t[x];
            ks[x] = seen.h[t];
            for (int64_t p = s_start[t]; p < s_start[t + 1]; p++) {
                if (s_it[p] == in_it[x]) {
                    found[x] = s_e[p];
                    break;
                }
            }
        }
        if (n) s.add_found(in.v.data(), in_it.data(), in.wt.data(), ks.data(), found.data(), n);
        begin();
    }
};

/* Sum the weights of equal rows, drop zeros; rows keep the order of their first copy. */
static void consolidate(const Rows& r, Rows& out) {
    RowSet set;
    set.init(r.w);
    std::vector<int64_t> sum;
    for (int64_t i = 0; i < r.n(); i++) {
        const int64_t* row = r.row(i);
        uint64_t h = hash_cols(row, set.cols.data(), r.w);
        int64_t g = set.find(row, set.cols.data(), h);
        if (g < 0) {
            g = set.add(row, set.cols.data(), h);
            sum.push_back(0);
        }
        sum[g] += r.wt[i];
    }
    out.w = r.w;
    for (int64_t g = 0; g < set.n(); g++)
        if (sum[g] != 0) out.push(set.row(g), sum[g]);
}

/* One nested GROUP BY of COUNT(*), COUNT, MIN and MAX: the four corners of each group
   changed at iteration i, aggregated,
   Agg(X[t][i]) − Agg(X[t-1][i]) − Agg(X[t][i-1]) + Agg(X[t-1][i-1]) for its rows
   (runtime/nested.py: IncrementalScope._aggregate). As for the distinct, only a group in
   the iteration's input or stored at iteration i can change there. */
enum AggKind { AGG_COUNT = 0, AGG_MIN = 1, AGG_MAX = 2 };

struct NestedAggregate {
    IterIndex s;                     // stored inputs, keyed by the group columns
    std::vector<int> group;
    std::vector<int> kinds, args;    // per aggregate: AggKind, input column (COUNT: unused)
    RowSet keys;                     // the touched groups' key values, each once
    std::vector<int64_t> s_start, s_entry;          // per group, its stored entries
    std::vector<std::vector<int64_t>> c_rows;       // per group, its rows in `in`
    std::vector<std::vector<int64_t>> at;           // per iteration j, groups stored at j
    std::vector<int32_t> mark;
    std::vector<int64_t> visit;
    Rows in;                         // this step's inputs, for the commit
    std::vector<int32_t> in_it;

    void init(int w, const std::vector<int>& g, const std::vector<int>& k, const std::vector<int>& a) {
        group = g;
        kinds = k;
        args = a;
        s.init(w, g);
        in.w = w;
        keys.init((int)g.size());
        begin();
    }
    void begin() {
        keys.clear(); s_entry.clear(); c_rows.clear(); at.clear(); mark.clear();
        in.clear(); in_it.clear(); fresh.clear(); fresh_h.clear();
        s_start.assign(1, 0);
    }

    /* The touched group of row r (h: the hash of its group columns). */
    int64_t find_or_add(const int64_t* r, uint64_t h) {
        int64_t g = keys.find(r, group.data(), h);
        if (g >= 0) return g;
        g = keys.add(r, group.data(), h);
        c_rows.emplace_back();
        mark.push_back(0);
        fresh.push_back(g);
        fresh_h.push_back(h);
        return g;
    }

    std::vector<int64_t> fresh;  // groups added by this iteration, not probed yet
    std::vector<uint64_t> fresh_h;
    FreshProbe probe;

    struct Item { const int64_t* row; int64_t w[4]; };

    // corners' scratch, kept between calls: a group visit allocates nothing
    std::vector<Item> items;
    std::vector<int64_t> row, value;
    std::vector<char> seen;

    /* The group's four corners, aggregated, into `out` with their signs. */
    void corners(int64_t g, int32_t i, Rows& out) {
        const int w = in.w;
        items.clear();
        for (int64_t x = s_start[g]; x < s_start[g + 1]; x++) {
            int64_t e = s_entry[x], wt = s.wt_of(e);
            int32_t j = s.it_of(e);
            if (wt == 0 || j > i) continue;
            int64_t prev = j <= i - 1 ? wt : 0;
            items.push_back(Item{s.row(e), {wt, wt, prev, prev}});
        }
        for (int64_t x : c_rows[g]) {
            int64_t wt = in.wt[x];
            items.push_back(Item{in.row(x), {wt, 0, in_it[x] <= i - 1 ? wt : 0, 0}});
        }
        std::sort(items.begin(), items.end(), [w](const Item& a, const Item& b) {
            return std::memcmp(a.row, b.row, sizeof(int64_t) * w) < 0;
        });
        const size_t na = kinds.size();
        row.resize(keys.rows.w + na);
        for (int c = 0; c < 4; c++) {
            int64_t count = 0;
            value.assign(na, 0);
            seen.assign(na, 0);
            for (size_t x = 0; x < items.size();) {
                size_t y = x;
                int64_t net = 0;
                while (y < items.size() && std::memcmp(items[y].row, items[x].row, sizeof(int64_t) * w) == 0)
                    net += items[y++].w[c];
                if (net > 0) {
                    count += net;
                    for (size_t a = 0; a < na; a++) {
                        if (kinds[a] == AGG_COUNT) continue;
                        int64_t v = items[x].row[args[a]];
                        if (!seen[a] || (kinds[a] == AGG_MIN ? v < value[a] : v > value[a])) value[a] = v;
                        seen[a] = true;
                    }
                }
                x = y;
            }
            if (count <= 0) continue;  // no rows: no group in this corner
            const int k = keys.rows.w;
            for (int j = 0; j < k; j++) row[j] = keys.row(g)[j];
            for (size_t a = 0; a < na; a++) row[k + a] = kinds[a] == AGG_COUNT ? count : value[a];
            out.push(row.data(), c == 0 || c == 3 ? 1 : -1);
        }
    }

    std::vector<uint64_t> hs;

    void step(const Rows& d, int32_t i, Rows& out) {
        visit.clear();
        hs.resize((size_t)d.n());
        for (int64_t x = 0; x < d.n(); x++) hs[x] = hash_cols(d.row(x), group.data(), (int)group.size());
        for (int64_t x = 0; x < d.n(); x++) {
            int64_t g = find_or_add(d.row(x), hs[x]);
            in.push(d.row(x), d.wt[x]);
            in_it.push_back(i);
            c_rows[g].push_back(in.n() - 1);
            if (mark[g] != i + 1) { mark[g] = i + 1; visit.push_back(g); }
        }
        probe.run(s, fresh, fresh_h, [&](int64_t k) { return keys.row(fresh[k]); }, keys.cols.data(), s_start, s_entry,
                  at);
        fresh.clear();
        fresh_h.clear();
        if ((size_t)i < at.size())
            for (int64_t g : at[i])
                if (mark[g] != i + 1) { mark[g] = i + 1; visit.push_back(g); }
        Rows all;
        all.w = out.w;
        for (int64_t g : visit) corners(g, i, all);
        consolidate(all, out);
    }

    bool work_ahead(int32_t i) const {
        for (int64_t g = 0; g < keys.n(); g++) {
            if (c_rows[g].empty()) continue;
            for (int64_t x = s_start[g]; x < s_start[g + 1]; x++)
                if (s.it_of(s_entry[x]) > i && s.wt_of(s_entry[x]) != 0) return true;
        }
        return false;
    }

    void commit() {
        s.add_all(in, in_it);
        begin();
    }
};

/* A scope's strings, each with a code: equal strings get equal codes, so joins and
   distinct compare strings by their codes. Codes are given in order of first sight and
   kept for the scope's life (the dictionary only grows). */
struct Strings {
    std::unordered_map<std::string, int64_t> codes;
    std::vector<const std::string*> values;  // by code (the map's nodes do not move)

    int64_t code(const char* p, int64_t n) {
        auto found = codes.try_emplace(std::string(p, (size_t)n), (int64_t)values.size());
        if (found.second) values.push_back(&found.first->first);
        return found.first->second;
    }
};

}  // namespace dbspc_iter
