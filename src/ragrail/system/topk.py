"""Top-k over a block of sparse score rows at once, with the retrievers' tie-break.

The order is the one :func:`ragrail.system.retrieval.top_hits` gives a dense row:
score descending, then chunk index ascending (earlier chunk first); only scores
``s > 0`` with ``s >= min_score`` are kept. Here every row of a CSR block is cut
in one pass, with no Python loop over rows, by packing both sort keys into one
integer per stored score:

    key(s, j) = bits(s) * 2**32 + (2**32 - 1 - j)      (chunk indices j < 2**32)

``bits(s)`` is the float32's bit pattern read as an integer, which orders
positive floats exactly as their values, so ``key`` is larger exactly when
``s`` is larger or, at an equal ``s``, when the chunk ``j`` comes earlier. Keys
are unique within a row, so the k largest keys are the top k with no tie to
widen, and a row's ranking needs no second sort key.

A row's scores are laid into a block of width L (the longest kept row, padded
with -1, below every key) and ``np.partition`` takes the k largest per row.
Every array of a block costs a constant number of bytes per cell of rows x
(the most chunks one row can touch), so :func:`row_blocks` bounds the cells.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

# Cells (rows x chunks) one block may span. A cell costs under 50 bytes across the
# product, the packed keys and the padded block (28 MB traced at 2**20 cells with a
# word in every chunk), so a block stays under 64 MB whatever the questions match.
BLOCK_CELLS = 1 << 20
_LOW = np.int64(0xFFFFFFFF)


def row_blocks(
    touched: np.ndarray, max_rows: int | None = None, cells: int | None = None
) -> Iterator[tuple[int, int]]:
    """Consecutive (start, end) row ranges with (end - start) * max(touched[start:end])
    <= ``cells`` (default ``BLOCK_CELLS``; a row alone may exceed it) and at most
    ``max_rows`` rows each.

    ``touched[i]``: the most chunks row i can score (at most the number of chunks),
    which bounds both the row's stored scores and its width in the padded block.
    """
    cells = cells or BLOCK_CELLS
    start, widest = 0, 0
    limit = max_rows or len(touched) or 1
    for i, width in enumerate(touched.tolist()):
        wider = max(widest, width, 1)
        if i > start and (i - start >= limit or (i - start + 1) * wider > cells):
            yield start, i
            start, wider = i, max(width, 1)
        widest = wider
    if start < len(touched):
        yield start, len(touched)


def sparse_top_k(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, top_k: int, min_score: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The top ``top_k`` entries of every row of a CSR block of float32 scores.

    Returns ``(chunks, scores, counts)``: ``chunks[i, :counts[i]]`` are row i's
    kept chunk indices, best first, and ``scores`` their scores; the entries past
    ``counts[i]`` are padding. Entries need not be sorted within a row, and a row
    holds each chunk at most once (a matrix product's output).
    """
    if data.dtype != np.float32:
        raise TypeError(
            f"scores must be float32 (their bit patterns are the keys), not {data.dtype}"
        )
    n_rows = len(indptr) - 1
    lengths = np.diff(indptr)
    # min_score stays a Python float: compared with float32 scores exactly as top_hits does
    keep = (data > 0) & (data >= min_score)
    if not keep.all():
        rows = np.repeat(np.arange(n_rows, dtype=np.int32), lengths)[keep]
        lengths = np.bincount(rows, minlength=n_rows)
        data, indices = data[keep], indices[keep]
    width = int(lengths.max(initial=0))
    k = min(top_k, width)
    if k == 0:
        empty = np.zeros((n_rows, 0))
        return empty.astype(np.int64), empty.astype(np.float32), np.zeros(n_rows, np.int64)
    # in place where possible: each pass over a fresh array costs its page faults
    keys = data.view(np.int32).astype(np.int64)
    keys <<= 32
    keys |= _LOW
    keys -= indices  # low half: 2**32 - 1 - j, no borrow from the score's bits
    # flat position of each key in the (n_rows, width) block: row * width + rank in row
    index = np.int32 if n_rows * width < 2**31 else np.int64
    flat = np.repeat(
        (np.arange(n_rows, dtype=index) * width) - (indptr_of(lengths, index)), lengths
    )
    flat += np.arange(len(keys), dtype=index)
    block: np.ndarray = np.full(n_rows * width, -1, dtype=np.int64)  # reshaped below
    block[flat] = keys
    del keys, flat
    block = block.reshape(n_rows, width)
    if k < width:
        block.partition(width - k, axis=1)
        block = block[:, width - k :]
    best = -np.sort(-block, axis=1)  # descending; padding (-1) sorts last
    chunks = _LOW - (best & _LOW)
    scores = (best >> 32).astype(np.int32).view(np.float32)
    return chunks, scores, np.minimum(lengths, k)


def indptr_of(lengths: np.ndarray, dtype: type) -> np.ndarray:
    """Each row's first position in the flat arrays: the running sum of the lengths before it."""
    starts: np.ndarray = np.zeros(len(lengths), dtype=dtype)
    np.cumsum(lengths[:-1], out=starts[1:])
    return starts
