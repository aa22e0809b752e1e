"""One user's rows of the vector index: a growable float32 matrix with a code per row (layer,
kind, agent, reach) and, once the user is large, the 1-bit sign codes its shortlist reads.

The per-row codes let a search keep only the rows it may return (layers, kinds, the requester's
agent, private or group session, channel) with a vectorised mask, not a lookup per row.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

_INITIAL_CAPACITY = 64

# A row's reach code: not shared (a private memory), or shared in every group session of its user;
# a code above these is the interned name of the one channel it is shared in.
PRIVATE = -1
SHARED_EVERYWHERE = 0
NO_ROW = -2  # an agent or channel no row has: a code no row carries

# The memory layers (migration 004) and kinds (migration 009), numbered for the per-row code
# array: a row's code is its layer's number, plus 4 when it is a turn (codes 0-2 and 4-6, so a
# mask of wanted codes fits in one byte).
LAYERS = ("working", "core", "archive")
KINDS = ("fact", "turn")
LAYER_CODE = {name: code for code, name in enumerate(LAYERS)}
TURN_BIT = 4
_ALL_CODES = [layer | kind * TURN_BIT for kind in range(len(KINDS)) for layer in range(len(LAYERS))]


def row_code(layer: str, kind: str = "fact") -> int:
    """The code of a row in ``layer`` of ``kind``."""
    return LAYER_CODE[layer] | (TURN_BIT if kind == "turn" else 0)


def layer_mask(layers: Iterable[str] | None, kinds: Iterable[str] | None = None) -> int | None:
    """A bit per wanted (layer, kind) code (``None``: every row, no filtering)."""
    if layers is None and kinds is None:
        return None
    wanted_layers = LAYERS if layers is None else tuple(layers)
    wanted_kinds = KINDS if kinds is None else tuple(kinds)
    mask = 0
    for layer in wanted_layers:
        for kind in wanted_kinds:
            mask |= 1 << row_code(layer, kind)
    return None if mask == sum(1 << code for code in _ALL_CODES) else mask


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """One bit per dimension (positive or not), packed into uint64 words: shape (rows, words).

    Plain signs, not signs around the rows' mean: centring only the stored rows skews their
    Hamming distances to a query (measured: it lost a fifth of the true top 10 on MiniLM vectors).
    """
    packed = np.packbits(vectors > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def hamming_shortlist(distances: np.ndarray, count: int) -> np.ndarray:
    """Positions of ``count`` smallest ``distances`` (small non-negative ints), in no order.

    A histogram of the distances (at most one bucket per bit) finds the cut-off in one pass,
    several times faster than ``argpartition`` over 100k values; ties at the cut-off are taken
    in row order.
    """
    histogram = np.bincount(distances)
    cutoff = int(np.searchsorted(np.cumsum(histogram), count))
    below = np.flatnonzero(distances < cutoff)
    at_cutoff = np.flatnonzero(distances == cutoff)[: count - below.shape[0]]
    return np.concatenate((below, at_cutoff))


class UserMatrix:
    """Rows of one user in a growable matrix; deletes swap the last row into the hole.

    ``codes`` (the 1-bit shortlist codes) exist only once the user is large enough to need them,
    and from then on follow every upsert, move and removal like the matrix does. They are stored
    word-major, shape (words, capacity): the Hamming distance of every row is then six passes
    over contiguous arrays, ~6× faster at 100k rows than XOR-ing row-major codes.
    """

    def __init__(self, dim: int, slot: int, capacity: int = _INITIAL_CAPACITY) -> None:
        self.slot = slot  # the user's number in the index's id map
        self.matrix = np.zeros((capacity, dim), dtype=np.float32)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.layers = np.zeros(capacity, dtype=np.uint8)  # row codes (row_code: layer and kind)
        # Scope codes (VectorIndex.scope_codes): the row's agent (0: every agent) and reach
        # (PRIVATE, SHARED_EVERYWHERE, or the code of the one channel it is shared in).
        self.agents = np.zeros(capacity, dtype=np.int32)
        self.reach = np.full(capacity, PRIVATE, dtype=np.int32)
        self.size = 0
        self.codes: np.ndarray | None = None

    def enable_codes(self) -> None:
        """Code every row (once, when the user grows large)."""
        codes = sign_codes(self.matrix[: self.size])
        self.codes = np.zeros((codes.shape[1], self.ids.shape[0]), dtype=np.uint64)
        self.codes[:, : self.size] = codes.T

    def put(
        self, row: int | None, memory_id: int, vector: np.ndarray, layer: int, scope: tuple[int, int]
    ) -> int:
        """Write ``memory_id``'s vector at ``row`` (None: a new row at the end), its row code and
        scope codes; returns the row."""
        if row is None:
            if self.size == self.ids.shape[0]:
                self._grow()
            row = self.size
            self.size += 1
            self.ids[row] = memory_id
        self.matrix[row] = vector
        self.layers[row] = layer
        self.agents[row], self.reach[row] = scope
        if self.codes is not None:
            self.codes[:, row] = sign_codes(vector[None, :])[0]
        return row

    def remove_row(self, row: int) -> int | None:
        """Drop ``row``: the last row moves into the hole; returns the id that moved (None if none)."""
        last = self.size - 1
        moved_id = None
        if row != last:
            moved_id = int(self.ids[last])
            self.matrix[row] = self.matrix[last]
            self.ids[row] = moved_id
            self.layers[row] = self.layers[last]
            self.agents[row] = self.agents[last]
            self.reach[row] = self.reach[last]
            if self.codes is not None:
                self.codes[:, row] = self.codes[:, last]
        self.size = last
        return moved_id

    def _grow(self) -> None:
        capacity = self.ids.shape[0] * 2
        matrix = np.zeros((capacity, self.matrix.shape[1]), dtype=np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self.size] = self.ids[: self.size]
        layers = np.zeros(capacity, dtype=np.uint8)
        layers[: self.size] = self.layers[: self.size]
        agents = np.zeros(capacity, dtype=np.int32)
        agents[: self.size] = self.agents[: self.size]
        reach = np.full(capacity, PRIVATE, dtype=np.int32)
        reach[: self.size] = self.reach[: self.size]
        self.matrix, self.ids, self.layers, self.agents, self.reach = matrix, ids, layers, agents, reach
        if self.codes is not None:
            codes = np.zeros((self.codes.shape[0], capacity), dtype=np.uint64)
            codes[:, : self.size] = self.codes[:, : self.size]
            self.codes = codes

    def allowed(
        self,
        layers: int | None,
        agent: int | None,
        channel: int | None,
        exact: tuple[int, int] | None = None,
    ) -> np.ndarray | None:
        """Which rows a search may return (None: every row).

        ``layers``: a :func:`layer_mask`. ``agent``: rows of every agent and of this agent's code
        only (None: any agent; NO_ROW: an agent with no row). ``channel``: rows shared everywhere or
        in this channel's code only (None: a private session, no such rule; NO_ROW: a channel with no
        row). ``exact``: rows with exactly these (agent, reach) codes only.
        """
        size = self.size
        allowed = None
        if layers is not None:
            allowed = (np.left_shift(np.uint8(1), self.layers[:size]) & np.uint8(layers)) != 0
        if agent is not None:
            mine = (self.agents[:size] == 0) | (self.agents[:size] == agent)
            allowed = mine if allowed is None else allowed & mine
        if channel is not None:
            shared = (self.reach[:size] == SHARED_EVERYWHERE) | (self.reach[:size] == channel)
            allowed = shared if allowed is None else allowed & shared
        if exact is not None:
            alike = (self.agents[:size] == exact[0]) & (self.reach[:size] == exact[1])
            allowed = alike if allowed is None else allowed & alike
        return allowed

    def top(
        self, query: np.ndarray, k: int, shortlist: int | None, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Row numbers and exact cosines of the best ``k`` rows, best first.

        With codes and a ``shortlist`` smaller than the rows searched, only the rows nearest in
        Hamming distance are scored exactly; otherwise every row is. ``allowed`` (from
        :meth:`allowed`) keeps only those rows.
        """
        searched = self.size if allowed is None else int(np.count_nonzero(allowed))
        if searched == 0:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
        if self.codes is not None and shortlist is not None and shortlist < searched:
            query_code = sign_codes(query[None, :])[0]
            distances = np.bitwise_count(self.codes[0, : self.size] ^ query_code[0]).astype(np.uint16)
            for word in range(1, query_code.shape[0]):
                distances += np.bitwise_count(self.codes[word, : self.size] ^ query_code[word])
            if allowed is not None:
                distances[~allowed] = 64 * query_code.shape[0] + 1  # farther than any real row
            rows = hamming_shortlist(distances, shortlist)
            scores = self.matrix[rows] @ query
        elif allowed is not None:
            rows = np.flatnonzero(allowed)
            scores = self.matrix[rows] @ query
        else:
            rows = np.arange(self.size)
            scores = self.matrix[: self.size] @ query
        k = min(k, scores.shape[0])
        best = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
        best = best[np.argsort(-scores[best], kind="stable")]
        return rows[best], scores[best]
