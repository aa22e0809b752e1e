"""The packaged sentence model on ONNX Runtime instead of torch (``embeddings.backend: onnx``).

Same folder, same vectors: the transformer is exported from the folder's own weights
(:mod:`.onnx_export`, once, cached in ``embeddings.cache_dir``, by default
``~/.cache/memory-cortex/models``), tokenised with the folder's
``tokenizer.json`` (the ``tokenizers`` library sentence-transformers itself uses), mean-pooled over
the real tokens and normalised, as the folder's sentence-transformers modules say. Vectors match the
torch backend's to float rounding, so a store embedded by either needs no re-embedding. Torch is
only ever imported by the export's child process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..config import user_cache_path
from ..errors import EmbedderUnavailable
from .embedders import SentenceTransformerEmbedder
from .onnx_export import INPUTS, ExportFailed, exported_model


class OnnxEmbedder(SentenceTransformerEmbedder):
    """:class:`SentenceTransformerEmbedder`'s queueing and batching, with ONNX Runtime as the model."""

    backend = "onnx"
    # One text per call: no padding, the most texts a second on a CPU (bench/RESULTS.md), and the
    # shortest wait for a query behind a write.
    DOCUMENT_CHUNK = 1

    def _workers(self) -> int:
        """``embeddings.workers``: ONNX Runtime sessions may be run by several threads at once."""
        return self.config.workers

    def _load(self, path: Path) -> Any:
        if not path.is_dir():
            raise EmbedderUnavailable(f"embedding model folder not found: {path}")
        _require_mean_pooling(path)
        try:
            cache_dir = self.config.cache_dir or user_cache_path() / "models"
            model_file = exported_model(path, cache_dir, self.config.model, self.config.quantization)
        except ExportFailed as exc:
            raise EmbedderUnavailable(str(exc)) from exc
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.config.torch_threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initialisers are not the user's
        session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=_max_tokens(path))
        tokenizer.no_padding()
        # Quantised, each text runs alone: dynamic quantisation scales a call's activations together,
        # so a text batched with others would not get the same vector as alone.
        batch_size = 1 if self.config.quantization != "none" else self.config.batch_size
        return _OnnxSentenceModel(session, tokenizer, batch_size)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(texts)


class _OnnxSentenceModel:
    """Tokenise, run the graph in batches of similar length (little padding), mean-pool, normalise."""

    def __init__(self, session: Any, tokenizer: Any, batch_size: int) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda index: len(encodings[index].ids))
        vectors: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encodings[index].ids) for index in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                tokens = encodings[index].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            feed = dict(zip(INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
            hidden = self.session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, index in enumerate(batch):
                vectors[index] = pooled[row]
        return np.vstack(vectors).astype(np.float32, copy=False)


def _require_mean_pooling(path: Path) -> None:
    """The folder's pooling must be the mean of the token states (what this backend computes)."""
    modules_file = path / "modules.json"
    modules = json.loads(modules_file.read_text(encoding="utf-8")) if modules_file.is_file() else []
    for module in modules:
        if module.get("type", "").endswith("Pooling"):
            config = json.loads((path / module["path"] / "config.json").read_text(encoding="utf-8"))
            if not config.get("pooling_mode_mean_tokens") or any(
                value
                for key, value in config.items()
                if key.startswith("pooling_mode_") and key != "pooling_mode_mean_tokens"
            ):
                raise EmbedderUnavailable(
                    f"{path}: the onnx backend computes mean pooling only; this model pools otherwise"
                    " (use embeddings.backend: sentence_transformers)"
                )
            return
    raise EmbedderUnavailable(f"{path}: no sentence-transformers Pooling module (modules.json)")


def _max_tokens(path: Path) -> int:
    """``max_seq_length`` of the folder's sentence_bert_config.json (what sentence-transformers cuts at)."""
    config_file = path / "sentence_bert_config.json"
    if config_file.is_file():
        return int(json.loads(config_file.read_text(encoding="utf-8")).get("max_seq_length", 512))
    return 512
