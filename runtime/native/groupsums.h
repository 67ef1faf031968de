/* A linear aggregate's running sums per group (runtime/kernels/group_sums.py).

   COUNT and SUM are linear (DBSP §7.2): a group's new sums are its old sums plus the
   change's. The aggregate used to keep them in a trace keyed by group, so each step
   probed the trace for the touched groups and then inserted their old rows (-1) and
   new rows (+1) into it: a run made and merged every step. Here a group is one slot of
   an open-addressed table (linear probing), its key words and sums side by side, so a
   step reads and adds in place: O(|change|), a cache miss or two a group.

   Keys are w int64 words (each key column as its value and a NULL flag), compared
   exactly, so two groups whose hashes agree stay apart. A group whose row count falls
   to zero is removed (backward-shift deletion: no tombstones, so memory follows the
   live groups). The trace stays the state of record for checkpoints: the table notes
   which groups changed since the trace last heard of them (`dirty`, and the keys of
   removed groups), and `drain` hands those over. The slots marked are listed as they
   are marked (`touched`), so a drain costs the changed groups, not a scan of every
   slot: at 4M groups a scan took ~30 ms a checkpoint whatever changed. */
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "iterscope.h"

namespace dbspc_groups {

using dbspc_iter::hash_row;  // (reduced modulo dbspc_iter::collide when tests ask)

struct GroupSums {
    int w = 1, s = 1;
    uint64_t mask = 0;
    int64_t live = 0;
    std::vector<uint64_t> hash;
    std::vector<uint8_t> used, dirty;
    std::vector<int64_t> key, sum;
    std::vector<int64_t> removed;  // key words of groups removed since the last drain
    /* Slots marked dirty since the last drain, in the order marked: an entry that a
       deletion's backward shift moves is listed again at its new slot, so the list may
       name a slot twice or one that is empty now (drain checks the flags). Kept within
       twice the slots by a rescan of the flags. */
    std::vector<uint64_t> touched;

    void init(int w_, int s_) {
        w = w_;
        s = s_;
        reset(16);
    }

    void reset(uint64_t cap) {
        mask = cap - 1;
        live = 0;
        hash.assign(cap, 0);
        used.assign(cap, 0);
        dirty.assign(cap, 0);
        key.assign(cap * w, 0);
        sum.assign(cap * s, 0);
        touched.clear();
    }

    void mark_slot(uint64_t j) {
        dirty[j] = 1;
        if (touched.size() >= 2 * (mask + 1) + 64) {
            touched.clear();  // (the list outgrew the table: the flags say it all)
            for (uint64_t i = 0; i <= mask; i++)
                if (used[i] && dirty[i] && i != j) touched.push_back(i);
        }
        touched.push_back(j);
    }

    int64_t find(const int64_t* k, uint64_t h) const {
        for (uint64_t i = h & mask;; i = (i + 1) & mask) {
            if (!used[i]) return -1;
            if (hash[i] == h && std::memcmp(&key[i * w], k, sizeof(int64_t) * w) == 0) return (int64_t)i;
        }
    }

    void prefetch(uint64_t h) const {
        __builtin_prefetch(&used[h & mask]);
        __builtin_prefetch(&hash[h & mask]);
    }

    /* A change's n rows (key words `keys`, n x w; linear parts `parts`, n x s) summed
       by group, and each group's sums held now: a step's grouping and its lookup in one
       pass, where a sort of the rows' hashes and a probe of the distinct groups took a
       dozen calls. Groups are numbered in the order first seen; per group g, reps[g] is
       its first row, deltas[g] the sum of its rows' parts, present[g] whether the table
       holds it and old[g] its sums (zeros if not). Returns the number of groups. The
       caller bounds the parts so that their sums stay inside int64. */
    int64_t gather(const int64_t* keys, int64_t n, const int64_t* parts, int64_t* reps, int64_t* deltas,
                   int8_t* present, int64_t* old) const {
        uint64_t cap = 16;
        while (cap < 2 * (uint64_t)n) cap *= 2;
        const uint64_t local = cap - 1;
        std::vector<int64_t> slot(cap, -1);  // a group's number, by its key's hash
        std::vector<uint64_t> hs;            // each group's hash
        hs.reserve(n);
        int64_t g = 0;
        for (int64_t i = 0; i < n; i++) {
            const int64_t* k = keys + i * w;
            const int64_t* d = parts + i * s;
            uint64_t h = hash_row(k, w);
            uint64_t j = h & local;
            int64_t t;
            while ((t = slot[j]) >= 0 && !(hs[t] == h && std::memcmp(keys + reps[t] * w, k, sizeof(int64_t) * w) == 0))
                j = (j + 1) & local;
            if (t < 0) {
                t = slot[j] = g++;
                reps[t] = i;
                hs.push_back(h);
                std::memcpy(deltas + t * s, d, sizeof(int64_t) * s);
            } else {
                for (int c = 0; c < s; c++) deltas[t * s + c] += d[c];
            }
        }
        const int64_t AHEAD = 8;
        for (int64_t t = 0; t < g && t < AHEAD; t++) prefetch(hs[t]);
        for (int64_t t = 0; t < g; t++) {
            if (t + AHEAD < g) prefetch(hs[t + AHEAD]);
            int64_t at = find(keys + reps[t] * w, hs[t]);
            present[t] = at >= 0;
            if (at >= 0) std::memcpy(old + t * s, &sum[at * s], sizeof(int64_t) * s);
            else std::memset(old + t * s, 0, sizeof(int64_t) * s);
        }
        return g;
    }

    void grow() {
        std::vector<uint64_t> oh;
        std::vector<uint8_t> ou, od;
        std::vector<int64_t> ok, os;
        oh.swap(hash);
        ou.swap(used);
        od.swap(dirty);
        ok.swap(key);
        os.swap(sum);
        int64_t n = live;
        reset((mask + 1) * 2);
        for (size_t i = 0; i < ou.size(); i++) {
            if (!ou[i]) continue;
            uint64_t j = oh[i] & mask;
            while (used[j]) j = (j + 1) & mask;
            place(j, oh[i], &ok[i * w], &os[i * s], od[i]);
        }
        live = n;
    }

    void place(uint64_t j, uint64_t h, const int64_t* k, const int64_t* v, uint8_t d) {
        used[j] = 1;
        dirty[j] = 0;
        if (d) mark_slot(j);
        hash[j] = h;
        std::memcpy(&key[j * w], k, sizeof(int64_t) * w);
        std::memcpy(&sum[j * s], v, sizeof(int64_t) * s);
    }

    /* Empty slot i, then move back each later entry of its cluster that may live there
       (its home slot is not after the hole, cyclically), so no probe stops short. */
    void erase(uint64_t i) {
        used[i] = 0;
        live--;
        for (uint64_t j = (i + 1) & mask; used[j]; j = (j + 1) & mask) {
            uint64_t home = hash[j] & mask;
            if (((j - home) & mask) >= ((j - i) & mask)) {
                place(i, hash[j], &key[j * w], &sum[j * s], dirty[j]);
                used[j] = 0;
                i = j;
            }
        }
    }

    /* sums += deltas for m groups (distinct keys); a group left with a zero row count
       (sum column 0) is removed, and one absent with a zero count is not added. `mark`:
       note the groups as changed for the next drain. */
    void add(const int64_t* keys, int64_t m, const int64_t* deltas, bool mark) {
        for (int64_t i = 0; i < m; i++) {
            const int64_t* k = keys + i * w;
            const int64_t* d = deltas + i * s;
            uint64_t h = hash_row(k, w);
            int64_t t = find(k, h);
            if (t < 0) {
                if (d[0] == 0) continue;
                if ((uint64_t)(live + 1) * 2 > mask + 1) grow();
                uint64_t j = h & mask;
                while (used[j]) j = (j + 1) & mask;
                place(j, h, k, d, mark);
                live++;
                continue;
            }
            int64_t* v = &sum[t * s];
            for (int c = 0; c < s; c++) v[c] += d[c];
            if (v[0] == 0) {
                if (mark) removed.insert(removed.end(), k, k + w);
                erase((uint64_t)t);
            } else if (mark && !dirty[t]) {
                mark_slot((uint64_t)t);
            }
        }
    }

    /* The groups changed since the last drain: those held (keys, sums) and the keys of
       those removed and not held again, each once; clears the marks. */
    void drain(std::vector<int64_t>& keys, std::vector<int64_t>& sums, std::vector<int64_t>& gone) {
        std::sort(touched.begin(), touched.end());  // in slot order, as a scan would give them
        for (uint64_t i : touched) {
            if (!used[i] || !dirty[i]) continue;
            dirty[i] = 0;
            keys.insert(keys.end(), &key[i * w], &key[i * w] + w);
            sums.insert(sums.end(), &sum[i * s], &sum[i * s] + s);
        }
        touched.clear();
        if (touched.capacity() > 2 * (mask + 1) / 8 + 64) touched.shrink_to_fit();
        GroupSums seen;
        seen.init(w, 1);
        const int64_t one = 1;
        for (size_t r = 0; r < removed.size(); r += w) {
            const int64_t* k = &removed[r];
            uint64_t h = hash_row(k, w);
            if (find(k, h) >= 0 || seen.find(k, h) >= 0) continue;
            seen.add(k, 1, &one, false);
            gone.insert(gone.end(), k, k + w);
        }
        removed.clear();
        removed.shrink_to_fit();
    }

    int64_t bytes() const {
        return (int64_t)((mask + 1) * (sizeof(uint64_t) + 2 + sizeof(int64_t) * (w + s)) +
                         removed.capacity() * sizeof(int64_t) + touched.capacity() * sizeof(uint64_t));
    }
};

}  // namespace dbspc_groups
