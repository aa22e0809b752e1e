"""Embedding vectors as numbers and as bytes: unit length, and the little-endian float32 BLOB
form they are stored in. Below the store and the models alike (both need them)."""

from __future__ import annotations

import numpy as np


def normalize(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows (a zero row stays zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)


def to_blob(vector: np.ndarray) -> bytes:
    """Little-endian float32 bytes, the on-disk form of an embedding."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int | None = None) -> np.ndarray:
    """Inverse of :func:`to_blob`; checks the length when ``dim`` is known."""
    vector = np.frombuffer(blob, dtype="<f4")
    if dim is not None and vector.shape[0] != dim:
        raise ValueError(f"embedding has {vector.shape[0]} values, expected {dim}")
    return vector.astype(np.float32)
