/* MIN and MAX with retractions: each group's values in order, with their counts.

   An incremental MIN or MAX must find a group's new extreme when its old one is deleted.
   runtime/kernels/aggregate.py keeps each group's multiset of values in a trace ordered
   by hash, so that read costs the whole group. Here every group (its key columns as int64,
   found exactly in a RowSet) has its values in order, value -> count > 0, so the
   new MIN after a change is the first value whose stored count plus change is positive:
   found by walking the group's values and its change together from the low end, one step
   per value the change takes away (MAX from the high end). A step costs
   O(|change| log |group|), whatever is deleted. Values are the int64 images of the
   aggregate's column, in the column's order (integers, DECIMAL(p <= 18) unscaled, DATE,
   TIMESTAMP, BOOLEAN). */
#pragma once

#include "iterscope.h"

namespace dbspc_iter {

/* One group's values in order with their counts (> 0): sorted blocks of at most
   2 * HALF entries, the blocks in order. An add or a removal moves at most a block's
   entries; a block is found by binary search on the blocks' last values. Contiguous,
   16 bytes a value (a std::map node takes ~48 and a cache miss per level). */
struct Ordered {
    typedef std::pair<int64_t, int64_t> Entry;  // value, count
    static const size_t HALF = 64;
    std::vector<std::vector<Entry>> blocks;

    /* The block that holds v, or would: the first whose last value is >= v, else the last. */
    size_t block_of(int64_t v) const {
        size_t lo = 0, hi = blocks.size();
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (blocks[mid].back().first < v) lo = mid + 1;
            else hi = mid;
        }
        return lo == blocks.size() ? lo - 1 : lo;
    }

    /* count(v) += w; the change in the number of values held (-1, 0, 1), or 2 when the
       count would fall below zero (nothing is changed then). */
    int add(int64_t v, int64_t w) {
        if (blocks.empty()) {
            if (w < 0) return 2;
            blocks.emplace_back(1, Entry(v, w));
            return 1;
        }
        size_t b = block_of(v);
        auto& block = blocks[b];
        auto it = std::lower_bound(block.begin(), block.end(), Entry(v, INT64_MIN));
        if (it != block.end() && it->first == v) {
            int64_t count = it->second + w;
            if (count < 0) return 2;
            if (count > 0) {
                it->second = count;
                return 0;
            }
            block.erase(it);
            if (block.empty()) blocks.erase(blocks.begin() + (ptrdiff_t)b);
            return -1;
        }
        if (w < 0) return 2;
        // grown by a quarter, not doubled: most groups are small, and their slack was
        // most of the index's bytes
        if (block.size() == block.capacity()) {
            size_t at = (size_t)(it - block.begin());
            block.reserve(block.size() + block.size() / 4 + 2);
            it = block.begin() + (ptrdiff_t)at;
        }
        block.insert(it, Entry(v, w));
        if (block.size() > 2 * HALF) {  // split in two halves
            std::vector<Entry> upper(block.begin() + HALF, block.end());
            block.resize(HALF);
            blocks.insert(blocks.begin() + (ptrdiff_t)b + 1, std::move(upper));
        }
        return 1;
    }

    int64_t bytes() const {
        int64_t b = (int64_t)(blocks.capacity() * sizeof(blocks[0]));
        for (const auto& block : blocks) b += (int64_t)(block.capacity() * sizeof(Entry));
        return b;
    }
};

/* (group, change row) pairs in order of group, then of the row's value: a change's rows
   of one (group, value) become neighbours, to be summed. */
static inline void by_group_and_value(std::vector<std::pair<int64_t, int64_t>>& by, const int64_t* vals) {
    std::sort(by.begin(), by.end(), [vals](const std::pair<int64_t, int64_t>& a, const std::pair<int64_t, int64_t>& b) {
        return a.first != b.first ? a.first < b.first : vals[a.second] < vals[b.second];
    });
}

struct Extrema {
    RowSet groups;                // key columns, each group once
    std::vector<Ordered> values;  // per group
    int64_t entries = 0;

    void init(int w) { groups.init(w); }

    /* Add a change (n rows: key columns, value, weight) to the counts. False when a count
       would end below zero (a change that deletes what is not there): the caller then
       drops the index. */
    bool apply(const int64_t* keys, const int64_t* vals, const int64_t* wts, int64_t n) {
        const int w = groups.rows.w;
        // each (group, value) once with its net weight: a row's weights may come in any order
        std::vector<std::pair<int64_t, int64_t>> by;  // (group, change row)
        by.reserve(n);
        for (int64_t x = 0; x < n; x++) {
            if (wts[x] == 0) continue;
            const int64_t* key = keys + x * w;
            uint64_t h = hash_row(key, w);
            int64_t g = groups.find(key, groups.cols.data(), h);
            if (g < 0) {
                g = groups.add(key, groups.cols.data(), h);
                values.emplace_back();
            }
            by.emplace_back(g, x);
        }
        by_group_and_value(by, vals);
        bool fine = true;
        for (size_t x = 0; x < by.size();) {
            int64_t g = by[x].first, v = vals[by[x].second], net = 0;
            for (; x < by.size() && by[x].first == g && vals[by[x].second] == v; x++) net += wts[by[x].second];
            if (net == 0) continue;
            int moved = values[g].add(v, net);
            if (moved == 2) fine = false;
            else entries += moved;
        }
        return fine;
    }

    /* For each of m groups (`want`, key columns), its MIN and MAX once a change (n rows:
       key columns, value, weight) is added, without adding it: has[t] = 0 for a group left
       without a value. A change row of a group not in `want` is ignored. */
    void extremes(const int64_t* want, int64_t m, const int64_t* keys, const int64_t* vals, const int64_t* wts,
                  int64_t n, int8_t* has, int64_t* lo, int64_t* hi) const {
        const int w = groups.rows.w;
        RowSet asked;
        asked.init(w);
        for (int64_t t = 0; t < m; t++) asked.add(want + t * w, asked.cols.data(), hash_row(want + t * w, w));
        // the change by (wanted group, value), equal values summed
        std::vector<std::pair<int64_t, int64_t>> by;  // (group, change row)
        by.reserve(n);
        for (int64_t x = 0; x < n; x++) {
            int64_t t = asked.find(keys + x * w, asked.cols.data(), hash_row(keys + x * w, w));
            if (t >= 0) by.emplace_back(t, x);
        }
        by_group_and_value(by, vals);
        std::vector<std::pair<int64_t, int64_t>> change;  // (value, net weight) of one group
        size_t at = 0;
        static const Ordered none;
        for (int64_t t = 0; t < m; t++) {
            change.clear();
            for (; at < by.size() && by[at].first == t; at++) {
                int64_t v = vals[by[at].second], wt = wts[by[at].second];
                if (!change.empty() && change.back().first == v) change.back().second += wt;
                else change.emplace_back(v, wt);
            }
            int64_t g = groups.find(want + t * w, groups.cols.data(), asked.h[t]);  // hashed as `asked` hashed it
            const auto& blocks = (g >= 0 ? values[g] : none).blocks;
            has[t] = 0;
            lo[t] = hi[t] = 0;
            // MIN: the first value, in the union of both, with a positive count after
            size_t b = 0, i = 0, c = 0;
            while (b < blocks.size() || c < change.size()) {
                bool stored = b < blocks.size();
                int64_t v = !stored ? change[c].first
                            : c == change.size() ? blocks[b][i].first
                            : std::min(blocks[b][i].first, change[c].first);
                int64_t count = 0;
                if (stored && blocks[b][i].first == v) {
                    count += blocks[b][i].second;
                    if (++i == blocks[b].size()) b++, i = 0;
                }
                if (c < change.size() && change[c].first == v) count += change[c++].second;
                if (count > 0) {
                    has[t] = 1;
                    lo[t] = v;
                    break;
                }
            }
            if (!has[t]) continue;
            // MAX: the same from the high end (there is one: the MIN at least)
            int64_t rb = (int64_t)blocks.size() - 1, ri = rb >= 0 ? (int64_t)blocks[rb].size() - 1 : 0;
            int64_t rc = (int64_t)change.size() - 1;
            while (true) {
                bool stored = rb >= 0;
                int64_t v = !stored ? change[rc].first
                            : rc < 0 ? blocks[rb][ri].first
                            : std::max(blocks[rb][ri].first, change[rc].first);
                int64_t count = 0;
                if (stored && blocks[rb][ri].first == v) {
                    count += blocks[rb][ri].second;
                    if (--ri < 0 && --rb >= 0) ri = (int64_t)blocks[rb].size() - 1;
                }
                if (rc >= 0 && change[rc].first == v) count += change[rc--].second;
                if (count > 0) {
                    hi[t] = v;
                    break;
                }
            }
        }
    }

    int64_t bytes() const {
        int64_t b = (int64_t)(values.capacity() * sizeof(Ordered));
        for (const auto& o : values) b += o.bytes();
        return b + (int64_t)(groups.rows.v.capacity() * 8 + groups.h.capacity() * 8 + groups.head.capacity() * 8 +
                             groups.next.capacity() * 8 + groups.rows.wt.capacity() * 8);
    }
};

}  // namespace dbspc_iter
