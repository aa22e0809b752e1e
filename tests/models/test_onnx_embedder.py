"""The packaged MiniLM on ONNX Runtime (embeddings.backend: onnx): the same vectors as the torch
backend, an export made once from the package's weights and reused, no torch in the process that
embeds, and a clear refusal of what it cannot compute."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio

from memory_cortex.config import EmbeddingsConfig, load_config
from memory_cortex.errors import EmbedderUnavailable
from memory_cortex.models.embedders import SentenceTransformerEmbedder, bundled_minilm_path, create_embedder
from memory_cortex.models.onnx_embedder import OnnxEmbedder
from tests.processes import cli

TEXTS = [
    "Caroline: I went to the LGBTQ support group yesterday.",
    "ok",
    "",
    "Melanie: we painted a sunrise with the kids at the lake, " * 30,  # past 256 tokens: cut as torch cuts
    "我的猫叫小白，它三岁了。",
    "Sam's dentist is Dr. Okafor; the appointment moved to Tuesday 14:30.",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest_asyncio.fixture
async def onnx(cache_dir: Path) -> AsyncIterator[OnnxEmbedder]:
    embedder = create_embedder(EmbeddingsConfig(backend="onnx", quantize="none", cache_dir=cache_dir))
    assert isinstance(embedder, OnnxEmbedder)
    await embedder.start()
    yield embedder
    await embedder.close()


async def test_the_vectors_are_the_torch_backends(
    onnx: OnnxEmbedder, minilm: SentenceTransformerEmbedder
) -> None:
    """Interchangeable: a store embedded by one backend is searched by the other unchanged."""
    ours = await onnx.embed_documents(TEXTS)
    theirs = await minilm.embed_documents(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() < 1e-5
    query = "When did Caroline go to the support group?"
    assert np.abs(await onnx.embed_query(query) - await minilm.embed_query(query)).max() < 1e-5
    assert onnx.health().ok and onnx.health().dim == 384


def exported_files(cache_dir: Path) -> list[tuple[str, int]]:
    return [(path.name, path.stat().st_mtime_ns) for path in sorted(cache_dir.iterdir())]


async def test_the_export_is_made_once_and_then_reused(onnx: OnnxEmbedder, cache_dir: Path) -> None:
    made = exported_files(cache_dir)
    assert len(made) == 1 and made[0][0].startswith("all-MiniLM-L6-v2-") and made[0][0].endswith(".onnx")
    again = create_embedder(EmbeddingsConfig(backend="onnx", quantize="none", cache_dir=cache_dir))
    await again.start()
    await again.close()
    assert exported_files(cache_dir) == made  # the same file, untouched; no partial file left


async def test_int8_is_a_model_of_its_own_close_to_the_float_one(
    onnx: OnnxEmbedder, int8_cache: Path
) -> None:
    """embeddings.quantize: int8 runs a quantised copy of the export: vectors near the float model's,
    recorded under another name so the two are never compared, cached beside it under its own key."""
    int8 = create_embedder(EmbeddingsConfig(backend="onnx", quantize="int8", cache_dir=int8_cache))
    await int8.start()
    try:
        assert int8.model == "all-MiniLM-L6-v2+int8" and onnx.model == "all-MiniLM-L6-v2"
        ours, floats = await int8.embed_documents(TEXTS), await onnx.embed_documents(TEXTS)
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
        cosines = (ours * floats).sum(axis=1)
        assert cosines.min() > 0.97, cosines  # measured 0.986 at worst on LoCoMo turns
        assert np.abs(ours - floats).max() > 1e-4  # and yet another model's vectors
        query = "When did Caroline go to the support group?"
        alone = await int8.embed_query(query)
        assert float(alone @ await onnx.embed_query(query)) > 0.97
        # Quantised activations are scaled per call: a query batched with a long text must still
        # get the vector it gets alone (each text runs alone).
        batched = await int8._ready_thread().call(int8._encode, [query, TEXTS[3]])
        assert np.array_equal(batched[0], alone)
    finally:
        await int8.close()
    names = sorted(name for name, _ in exported_files(int8_cache))
    assert len(names) == 2 and names[1].startswith("all-MiniLM-L6-v2-int8-")  # made from the float one
    assert (int8_cache / names[1]).stat().st_size < 30_000_000 < (int8_cache / names[0]).stat().st_size


def test_auto_is_the_int8_copy_on_onnx_and_the_float_model_elsewhere() -> None:
    assert EmbeddingsConfig().recorded_model == "all-MiniLM-L6-v2+int8"  # the default backend, onnx
    assert EmbeddingsConfig(quantize="none").recorded_model == "all-MiniLM-L6-v2"
    for backend in ("sentence_transformers", "http", "openai"):
        assert EmbeddingsConfig(backend=backend).recorded_model == "all-MiniLM-L6-v2"  # type: ignore[arg-type]
    # Only the packaged model was measured quantised: a folder of one's own stays float.
    assert EmbeddingsConfig(model_path=bundled_minilm_path()).recorded_model == "all-MiniLM-L6-v2"


def test_the_daemon_re_embeds_by_itself_only_with_an_in_process_model_unless_told() -> None:
    """A shared embedding server or a paid API is never loaded with a whole store unasked."""
    assert [EmbeddingsConfig(backend=b).reembeds for b in ("onnx", "sentence_transformers")] == [True, True]
    assert [EmbeddingsConfig(backend=b).reembeds for b in ("http", "openai")] == [False, False]
    assert EmbeddingsConfig(backend="openai", reembed=True).reembeds is True
    assert EmbeddingsConfig(reembed=False).reembeds is False


def test_quantize_is_refused_for_a_backend_that_cannot_do_it() -> None:
    with pytest.raises(ValueError, match=r"embeddings\.quantize int8 needs embeddings\.backend onnx"):
        EmbeddingsConfig(backend="sentence_transformers", quantize="int8")


async def test_two_workers_embed_a_writes_texts_at_once_in_order(
    onnx: OnnxEmbedder, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """embeddings.workers: 2 runs two model calls at once on the one session (each call waits for
    the other at a barrier: one at a time would break it), and the vectors come back in order."""

    def model_threads() -> set[threading.Thread]:
        return {thread for thread in threading.enumerate() if thread.name.startswith("embedder")}

    before = model_threads()
    both = create_embedder(EmbeddingsConfig(backend="onnx", quantize="none", workers=2, cache_dir=cache_dir))
    await both.start()
    try:
        meeting = threading.Barrier(2, timeout=10)
        encode = both._encode

        def side_by_side(texts: list[str]) -> np.ndarray:
            meeting.wait()
            return encode(texts)

        monkeypatch.setattr(both, "_encode", side_by_side)
        ours = await both.embed_documents(TEXTS[:4])
        monkeypatch.setattr(both, "_encode", encode)
        assert np.abs(ours - await onnx.embed_documents(TEXTS[:4])).max() < 1e-6
        assert {thread.name for thread in model_threads() - before} == {"embedder", "embedder-1"}
    finally:
        await both.close()
    assert not model_threads() - before  # both model threads ended


def test_the_default_workers_leave_other_backends_loading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """workers is an onnx setting: the default (2) does not stop torch or a remote embedder."""
    path = tmp_path / "config.yaml"
    path.write_text("embeddings: {workers: 2}\n", encoding="utf-8")
    for backend in ("sentence_transformers", "http", "openai"):
        monkeypatch.setenv("MEMORY_CORTEX_EMBEDDINGS__BACKEND", backend)
        assert load_config(path).embeddings.backend == backend


def test_the_process_that_embeds_never_imports_torch(cache_dir: Path) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from memory_cortex.config import EmbeddingsConfig
        from memory_cortex.models.embedders import create_embedder

        async def main():
            embedder = create_embedder(EmbeddingsConfig(backend="onnx", quantize="none", cache_dir={str(cache_dir)!r}))
            await embedder.start()
            await embedder.embed_query("hello")
            await embedder.close()
            print("torch" in sys.modules, "sentence_transformers" in sys.modules)

        asyncio.run(main())
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["False", "False"]


def model_copy(folder: Path) -> Path:
    copy = folder / "model"
    shutil.copytree(bundled_minilm_path(), copy)
    return copy


async def test_a_model_pooled_otherwise_is_refused_with_the_backend_to_use(tmp_path: Path) -> None:
    model = model_copy(tmp_path)
    pooling = model / "1_Pooling" / "config.json"
    settings = json.loads(pooling.read_text())
    settings.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(settings))
    embedder = create_embedder(
        EmbeddingsConfig(backend="onnx", model_path=model, cache_dir=tmp_path / "cache")
    )
    with pytest.raises(EmbedderUnavailable, match=r"mean pooling only.*backend: sentence_transformers"):
        await embedder.start()
    await embedder.close()


async def test_a_folder_without_weights_says_so(tmp_path: Path) -> None:
    model = model_copy(tmp_path)
    (model / "model.safetensors").unlink()
    embedder = create_embedder(
        EmbeddingsConfig(backend="onnx", model_path=model, cache_dir=tmp_path / "cache")
    )
    with pytest.raises(
        EmbedderUnavailable, match=r"no model weights \(model.safetensors or pytorch_model.bin\)"
    ):
        await embedder.start()
    await embedder.close()


def test_a_cache_folder_that_cannot_be_written_stops_the_start_with_one_line(tmp_path: Path) -> None:
    """The export has nowhere to go: the daemon says where and what to set, and exits 2."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    started = cli(
        "serve",
        cwd=tmp_path,
        env={
            "MEMORY_CORTEX_DATABASE__PATH": str(tmp_path / "m.db"),
            "MEMORY_CORTEX_SERVER__PORT": "0",
            "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
            "MEMORY_CORTEX_EMBEDDINGS__CACHE_DIR": str(blocker / "models"),
        },
    )
    assert started.returncode == 2, started.stderr
    assert started.stderr.strip().splitlines()[-1] == (
        f"memory-cortex: cannot write the model's ONNX export into {blocker / 'models'} (Not a directory):"
        " set embeddings.cache_dir to a folder this user can write"
    )
    assert "Traceback" not in started.stderr
