"""The best DAG of each Markov equivalence class among many listed DAGs, in compiled code.

Peeling (:class:`bnilp.ilp.dp.Peeler`) lists every credible DAG; class enumeration keeps one DAG per
class, the best (highest score, ties to the lexicographically smallest family choice). Classes are
told apart by their class words (:meth:`bnilp.ilp.families._Data.class_words`: equal iff the DAGs
are Markov equivalent, Verma & Pearl 1990). :class:`BestPerClass` folds chunks of DAGs into an
open-addressing hash table keyed on those words — each DAG one probe, compared word for word, so
the grouping is exact whatever the hash — with the classes' words, best scores and best choices in
dense arrays, in the order the classes were first met.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: slots per class at least (the table doubles past half full)
_LOAD = 2
_FNV_PRIME = 1099511628211
_MIX = -49064778989728563            # 0xff51afd7ed558ccd as a signed 64-bit integer (MurmurHash3's fmix64)


@njit(cache=True, nogil=True)
def _hash(words, i):
    """A 64-bit hash of ``words[i]`` (FNV-1a over the words, then MurmurHash3's final mix)."""
    h = np.int64(-3750763034362895579)             # FNV offset basis 0xcbf29ce484222325
    for j in range(words.shape[1]):
        h = (h ^ words[i, j]) * _FNV_PRIME
    h ^= (h >> 33) & 0x7FFFFFFF
    h *= _MIX
    h ^= (h >> 33) & 0x7FFFFFFF
    return h


@njit(cache=True, nogil=True)
def _better(s, row, i, best_s, best_r, k):
    """True iff DAG ``row[i]`` with score ``s`` beats the held best of class k: (−score, choice) smaller."""
    if s != best_s[k]:
        return s > best_s[k]
    for j in range(row.shape[1]):
        if row[i, j] != best_r[k, j]:
            return row[i, j] < best_r[k, j]
    return False


@njit(cache=True, nogil=True)
def _insert_slot(slots, hashes, k):
    """Put class k into the first free slot of its probe sequence (linear probing)."""
    mask = len(slots) - 1
    p = hashes[k] & mask
    while slots[p] >= 0:
        p = (p + 1) & mask
    slots[p] = k


@njit(cache=True, nogil=True)
def _rehash(slots, hashes, count):
    """Rebuild the slots of classes 0 … count − 1 after the table grew."""
    slots[:] = -1
    for k in range(count):
        _insert_slot(slots, hashes, k)


@njit(cache=True, nogil=True)
def _fold(words, scores, rows, slots, hashes, keys, best_s, best_r, count):
    """Fold DAGs ``rows`` (class words ``words``, scores ``scores``) into the table; returns the new class
    count. The caller leaves room: ``count + len(rows)`` classes fit the arrays and half the slots."""
    mask = len(slots) - 1
    nw = words.shape[1]
    for i in range(len(rows)):
        h = _hash(words, i)
        p = h & mask
        while True:
            k = slots[p]
            if k < 0:                                   # a new class
                slots[p] = count
                hashes[count] = h
                keys[count] = words[i]
                best_s[count] = scores[i]
                best_r[count] = rows[i]
                count += 1
                break
            if hashes[k] == h:
                same = True
                for j in range(nw):
                    if keys[k, j] != words[i, j]:
                        same = False
                        break
                if same:
                    if _better(scores[i], rows, i, best_s, best_r, k):
                        best_s[k] = scores[i]
                        best_r[k] = rows[i]
                    break
            p = (p + 1) & mask
    return count


def _as_int64_words(words: np.ndarray) -> np.ndarray:
    """Class words as int64 columns: int64 words as they are, packed bytes (n past the mask width) padded
    to whole 8-byte words and viewed as int64 — equal rows stay equal and different ones different."""
    if words.dtype == np.int64:
        return np.ascontiguousarray(words)
    b = np.ascontiguousarray(words, dtype=np.uint8)
    pad = (-b.shape[1]) % 8
    if pad:
        b = np.concatenate([b, np.zeros((len(b), pad), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(b).view(np.int64)


class BestPerClass:
    """Per class (a row of class words), the best DAG folded in so far: the highest score, ties to the
    lexicographically smallest row of family indices — the same as sorting all DAGs by
    (class, −score, choice) and keeping each class's first. ``len`` is the number of classes."""

    def __init__(self, n_variables: int, capacity: int = 1024):
        self.n = n_variables
        self.count = 0
        self._words: int | None = None          # columns of the int64 words, fixed by the first fold
        cap = max(16, int(capacity))
        self._alloc(cap, 0)

    def _alloc(self, cap: int, nw: int) -> None:
        self.hashes = np.zeros(cap, dtype=np.int64)
        self.keys = np.zeros((cap, nw), dtype=np.int64)
        self.best_s = np.zeros(cap)
        self.best_r = np.zeros((cap, self.n), dtype=np.int32)
        self.slots = np.full(1 << int(_LOAD * cap - 1).bit_length(), -1, dtype=np.int64)

    def _grow(self, need: int, nw: int) -> None:
        cap = len(self.hashes)
        if self._words is None:
            self._words = nw
            self._alloc(max(cap, need), nw)
            return
        if need <= cap:
            return
        while cap < need:
            cap *= 2
        c = self.count
        old = (self.hashes, self.keys, self.best_s, self.best_r)
        self._alloc(cap, nw)
        for new, held in zip((self.hashes, self.keys, self.best_s, self.best_r), old, strict=True):
            new[:c] = held[:c]
        del old
        _rehash(self.slots, self.hashes, c)

    def __len__(self) -> int:
        return self.count

    def add(self, words: np.ndarray, scores: np.ndarray, rows: np.ndarray) -> None:
        """Fold DAGs in: ``rows[m, v]`` the family of variable v in DAG m, ``words[m]`` its class words,
        ``scores[m]`` its exact score."""
        if len(rows) == 0:
            return
        w = _as_int64_words(words)
        if self._words is not None and w.shape[1] != self._words:
            raise ValueError(f"words: {w.shape[1]} columns, the table holds {self._words}")
        self._grow(self.count + len(rows), w.shape[1])
        self.count = _fold(w, np.ascontiguousarray(scores, dtype=np.float64),
                           np.ascontiguousarray(rows, dtype=np.int32), self.slots, self.hashes, self.keys,
                           self.best_s, self.best_r, self.count)

    def ranked(self) -> tuple[np.ndarray, np.ndarray]:
        """Each class's best (score, row), best first: by −score, then the row lexicographically."""
        s, r = self.best_s[:self.count], self.best_r[:self.count]
        order = np.lexsort((*r.T[::-1], -s))
        return s[order], r[order]
