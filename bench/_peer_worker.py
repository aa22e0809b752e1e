"""One peer memory system, run inside that peer's own virtual environment by ``bench/peers.py``.

    PEER_VENV/bin/python bench/_peer_worker.py JOB.json RESULT.json

It imports only the standard library and the peer's own packages (the peer venv has neither the
project nor httpx). Contract, as ``bench/peers.py`` writes and reads it:

JOB.json::

    {"system": "mem0" | "mem0-bm25" | "chroma" | "bm25",
     "model_path": "/…/all-MiniLM-L6-v2",  # a local sentence-transformers folder, loaded by path
     "bm25_model_path": "/…/qdrant-bm25",  # mem0-bm25: a local folder for fastembed's Qdrant/bm25
     "threads": 1, "store_dir": "/tmp/…",   # where the peer keeps its store (created)
     "limit": 10,
     "conversations": [{"sample_id": "conv-26",
                        "turns": [{"dia_id": "D1:1", "session": 1, "text": "Caroline: …"}]}],
     "questions": [{"sample_id": "conv-26", "question": "…"}]}

RESULT.json::

    {"versions": {package: version}, "settings": {name: value}, "load_s": float,
     "turns": int, "ingest_s": float,        # storing every turn (one call each) until searchable
     "searchable": bool,                     # each conversation's last turn found by its own text
     "answers": [{"refs": [dia_id, …], "latency_ms": float}],  # one per question, in order
     "rss_mb": float, "peak_rss_mb": float,  # VmRSS after the searches, VmHWM of the process
     "network_attempts": [str]}              # non-loopback connects or lookups (refused)

Every socket this interpreter opens to anything but loopback, and every lookup of a name that is not
local, is refused and recorded, so a peer that tries to phone home (telemetry, a model hub, an LLM)
fails loudly in the table's checks instead of measuring something else.
"""

from __future__ import annotations

import errno
import importlib.metadata
import json
import os
import re
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "", None})
# What each system's table row names (installed versions, read from the venv).
PACKAGES = {
    "mem0": ("mem0ai", "qdrant-client", "sentence-transformers", "torch"),
    "mem0-bm25": ("mem0ai", "qdrant-client", "fastembed", "sentence-transformers", "torch"),
    "chroma": ("chromadb", "sentence-transformers", "torch"),
    "bm25": ("rank-bm25", "numpy"),
}

Ingest = Callable[[dict[str, Any], dict[str, Any]], None]  # (conversation, turn) -> None
Search = Callable[[str, str, int], list[str]]  # (sample_id, question, limit) -> ranked dia_ids


def guard_network(attempts: list[str]) -> None:
    """Refuse (and record in ``attempts``) every non-loopback connect and name lookup from Python."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_getaddrinfo = socket.getaddrinfo

    def local(address: Any) -> bool:
        if isinstance(address, str | bytes):  # AF_UNIX
            return True
        host = address[0]
        return host in LOCAL_HOSTS or str(host).startswith("127.")

    def connect(self: socket.socket, address: Any) -> None:
        if not local(address):
            attempts.append(f"connect {address!r}")
            raise OSError(errno.ENETUNREACH, "peers bench: network refused")
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not local(address):
            attempts.append(f"connect {address!r}")
            return errno.ENETUNREACH
        return original_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOCAL_HOSTS and not str(host).startswith("127."):
            attempts.append(f"lookup {host!r}")
            raise socket.gaierror(socket.EAI_NONAME, "peers bench: network refused")
        return original_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo


def memory_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB, from /proc (the parent reads the daemon's the same way)."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return round(values["VmRSS"], 1), round(values["VmHWM"], 1)


def limit_torch_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def mem0_system(job: dict[str, Any], settings: dict[str, Any]) -> tuple[Ingest, Search]:
    """Mem0 OSS: ``add(infer=False)`` per turn into local Qdrant; ``search`` scoped by user_id.

    ``mem0``: fastembed is made unimportable, so Mem0 runs as installed without its extras
    (semantic search only). ``mem0-bm25``: Mem0's own BM25 (fastembed's ``Qdrant/bm25`` sparse
    vectors in the same Qdrant collection), its files read from ``bm25_model_path``.
    """
    store = Path(job["store_dir"])
    if job["system"] == "mem0":
        sys.modules["fastembed"] = None  # type: ignore[assignment]  # ImportError: keyword search off
    else:
        import fastembed

        class SparseFromFolder(fastembed.SparseTextEmbedding):  # type: ignore[misc]
            """What Mem0 builds for ``Qdrant/bm25``, its files read from a local folder (no hub)."""

            def __init__(self, model_name: str, **kwargs: Any) -> None:
                kwargs.setdefault("specific_model_path", job["bm25_model_path"])
                super().__init__(model_name, **kwargs)

        # Mem0 imports the name from the module when it first encodes (mem0/vector_stores/qdrant.py).
        fastembed.SparseTextEmbedding = SparseFromFolder  # type: ignore[misc]
    limit_torch_threads(job["threads"])
    from mem0 import Memory

    config = {
        "embedder": {
            "provider": "huggingface",
            "config": {"model": job["model_path"], "embedding_dims": 384, "model_kwargs": {"device": "cpu"}},
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "locomo",
                "path": str(store / "qdrant"),
                "embedding_model_dims": 384,
                "on_disk": True,
            },
        },
        # Never called with infer=False; a dummy key, and the network guard would refuse it anyway.
        "llm": {
            "provider": "openai",
            "config": {"model": "gpt-4o-mini", "api_key": "sk-unused-by-infer-false"},
        },
        "history_db_path": str(store / "history.db"),
    }
    memory = Memory.from_config(config)
    settings.update(
        vector_store="qdrant local (on disk), cosine",
        add="add(text, user_id, metadata, infer=False), one call per turn",
        search="search(query, top_k, filters={user_id}), threshold 0.1 (default), no rerank",
        keyword_search="on (fastembed Qdrant/bm25)" if job["system"] == "mem0-bm25" else "off (no fastembed)",
        spacy="not installed (lemmatisation and entity boosts off)",
        telemetry="MEM0_TELEMETRY=False",
    )

    def ingest(conv: dict[str, Any], turn: dict[str, Any]) -> None:
        meta = {"dia_id": turn["dia_id"], "session": turn["session"]}
        memory.add(turn["text"], user_id=conv["sample_id"], metadata=meta, infer=False)

    def search(sample_id: str, question: str, limit: int) -> list[str]:
        found = memory.search(question, top_k=limit, filters={"user_id": sample_id})["results"]
        return [str((item.get("metadata") or {}).get("dia_id")) for item in found]

    # The keyword side is on exactly when asked for (Mem0 turns it off silently when it cannot load).
    keyword_on = memory.vector_store._get_bm25_encoder() is not None
    if keyword_on != (job["system"] == "mem0-bm25"):
        raise RuntimeError(f"{job['system']}: Mem0's BM25 encoder is {'on' if keyword_on else 'off'}")
    memory.embedding_model.embed("warm up", "search")
    return ingest, search


def chroma_system(job: dict[str, Any], settings: dict[str, Any]) -> tuple[Ingest, Search]:
    """Chroma: a PersistentClient, one collection, one ``add`` per turn; ``query`` with a user filter."""
    limit_torch_threads(job["threads"])
    import chromadb
    from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

    client = chromadb.PersistentClient(
        path=str(Path(job["store_dir"]) / "chroma"),
        settings=chromadb.Settings(anonymized_telemetry=False),
    )
    embed = SentenceTransformerEmbeddingFunction(model_name=job["model_path"], device="cpu")
    collection = client.create_collection(
        "locomo",
        embedding_function=embed,  # type: ignore[arg-type]
        metadata={"hnsw:space": "cosine", "hnsw:num_threads": job["threads"]},
    )
    settings.update(
        embedding="SentenceTransformerEmbeddingFunction(local model folder)",
        index="HNSW, cosine, num_threads = --threads, other HNSW settings default",
        add="collection.add(one document), one call per turn",
        search="collection.query(n_results, where={user_id})",
        telemetry="anonymized_telemetry=False",
    )

    def ingest(conv: dict[str, Any], turn: dict[str, Any]) -> None:
        collection.add(
            ids=[f"{conv['sample_id']}/{turn['dia_id']}"],
            documents=[turn["text"]],
            metadatas=[{"user_id": conv["sample_id"], "dia_id": turn["dia_id"], "session": turn["session"]}],
        )

    def search(sample_id: str, question: str, limit: int) -> list[str]:
        found = collection.query(query_texts=[question], n_results=limit, where={"user_id": sample_id})
        return [str(meta["dia_id"]) for meta in (found["metadatas"] or [[]])[0]]

    embed(["warm up"])
    return ingest, search


def bm25_system(job: dict[str, Any], settings: dict[str, Any]) -> tuple[Ingest, Search]:
    """rank-bm25's BM25Okapi, one index per conversation, built at its first search (the
    searchable check that ends the timed ingest)."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    texts: dict[str, list[tuple[str, list[str]]]] = {}
    indexes: dict[str, BM25Okapi] = {}
    settings.update(
        model="BM25Okapi, k1 1.5, b 0.75, epsilon 0.25 (defaults)",
        tokens="lower-cased \\w+ words, no stop words, no stemming",
        ingest="tokenise per turn; one index per conversation, built at its first search (in the ingest time)",
    )

    def tokens(text: str) -> list[str]:
        return re.findall(r"\w+", text.lower())

    def ingest(conv: dict[str, Any], turn: dict[str, Any]) -> None:
        texts.setdefault(conv["sample_id"], []).append((turn["dia_id"], tokens(turn["text"])))

    def search(sample_id: str, question: str, limit: int) -> list[str]:
        if sample_id not in indexes:
            indexes[sample_id] = BM25Okapi([words for _, words in texts[sample_id]])
        scores = indexes[sample_id].get_scores(tokens(question))
        best = np.argsort(-scores, kind="stable")[:limit]
        return [texts[sample_id][i][0] for i in best]

    return ingest, search


SYSTEMS = {"mem0": mem0_system, "mem0-bm25": mem0_system, "chroma": chroma_system, "bm25": bm25_system}


def run(job: dict[str, Any]) -> dict[str, Any]:
    """Start the system, store every turn (timed), ask every question (each timed), measure RSS."""
    settings: dict[str, Any] = {"threads": job["threads"]}
    started = time.perf_counter()
    ingest, search = SYSTEMS[job["system"]](job, settings)
    load_s = time.perf_counter() - started
    turns = 0
    started = time.perf_counter()
    for conv in job["conversations"]:
        for turn in conv["turns"]:
            ingest(conv, turn)
            turns += 1
    # Until searchable: each conversation's last turn, searched by its own text, is in the results.
    searchable = [
        conv["turns"][-1]["dia_id"] in search(conv["sample_id"], conv["turns"][-1]["text"], job["limit"])
        for conv in job["conversations"]
    ]
    ingest_s = time.perf_counter() - started
    answers = []
    for question in job["questions"]:
        began = time.perf_counter()
        refs = search(question["sample_id"], question["question"], job["limit"])
        answers.append({"refs": refs, "latency_ms": (time.perf_counter() - began) * 1000})
    rss_mb, peak_rss_mb = memory_mb()
    return {
        "versions": {name: importlib.metadata.version(name) for name in PACKAGES[job["system"]]},
        "settings": settings,
        "load_s": round(load_s, 2),
        "turns": turns,
        "ingest_s": ingest_s,
        "searchable": all(searchable),
        "answers": answers,
        "rss_mb": rss_mb,
        "peak_rss_mb": peak_rss_mb,
    }


def main() -> int:
    job_path, result_path = Path(sys.argv[1]), Path(sys.argv[2])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    attempts: list[str] = []
    guard_network(attempts)
    os.makedirs(job["store_dir"], exist_ok=True)
    result = run(job)
    result["network_attempts"] = attempts
    result_path.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
