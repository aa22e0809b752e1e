"""Backups and portability: the online backup, JSONL export and import, re-embedding imported rows.

The CLI verbs (``python -m memory_cortex backup|export|import``) are thin over these functions; the SQL
is in :mod:`memory_cortex.store.portability`.

The export format (JSON Lines, UTF-8):

- line 1, the header: ``{"format": "memory-cortex-export", "version": 1, "count": N, ...}``. The
  version changes whenever a reader of the old version would misread the new lines; ``count``
  lets import notice a truncated file.
- then one memory per line, id order, with every column of the ``memories`` table: ``metadata`` as
  a JSON object, ``embedding`` as base64 of its little-endian float32 bytes (or null).

Import is one transaction: a bad line (named with its number and field) or a short file rolls back
everything. Into an empty database the rows keep their ids and every value (round-trips exactly);
into a non-empty one only with ``merge``, which gives new ids, remaps ``superseded_by`` and skips
rows whose ``(user_id, fact)`` already exists.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from .. import __version__
from ..models.embedders import Embedder
from ..store import embeddings as embedding_sql
from ..store import memories as memory_sql
from ..store import portability as portability_sql
from ..store.connection import Connection
from ..store.portability import BackupResult, PortabilityError, TargetExists
from ..vectormath import to_blob
from .memory_text import stored_embedding_text

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "BackupResult",
    "ExportHeader",
    "ExportResult",
    "ExportedMemory",
    "ImportRejected",
    "ImportResult",
    "PortabilityError",
    "Progress",
    "TargetExists",
    "backup_database",
    "export_memories",
    "import_memories",
    "reembed_memories",
]

EXPORT_FORMAT = "memory-cortex-export"
EXPORT_VERSION = 1
EMBEDDING_ENCODING = "base64 of little-endian float32"


class ImportRejected(PortabilityError):
    """The file cannot be imported as asked; the message names the line and field. Nothing was written."""


class Progress(Protocol):
    """What the services report progress to (a ``tqdm`` bar fits)."""

    total: Any

    def update(self, n: float = 1) -> bool | None:
        """``n`` more memories done."""


# -- the format -----------------------------------------------------------------------------
class ExportHeader(BaseModel):
    """Line 1 of an export. Unknown keys are ignored: a reader only relies on ``format``/``version``."""

    model_config = ConfigDict(extra="ignore", strict=True)

    format: Literal["memory-cortex-export"] = Field(description="Always memory-cortex-export.")
    version: int = Field(description="Format version; this reader understands 1.")
    count: int = Field(ge=0, description="Memory lines that follow (a shorter file is truncated).")
    exported_at: str = Field(description="UTC time of the snapshot, ISO 8601.")
    memory_cortex: str = Field(description="Version of the program that wrote it.")
    user_id: str | None = Field(description="The one user exported, or null for everyone.")
    embeddings: bool = Field(description="False when written with --no-embeddings.")
    embedding_encoding: str = Field(EMBEDDING_ENCODING, description="How `embedding` is encoded.")
    columns: list[str] = Field(description="The keys of every memory line.")

    @field_validator("version")
    @classmethod
    def _readable_version(cls, version: int) -> int:
        if version != EXPORT_VERSION:
            raise ValueError(
                f"export version {version} cannot be read; this memory-cortex reads {EXPORT_VERSION}"
            )
        return version


class ExportedMemory(BaseModel):
    """One memory line: every column of ``memories``. Strict and closed, so nothing is guessed or lost."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: int = Field(ge=1)
    user_id: str = Field(min_length=1)
    topic: str
    fact: str = Field(min_length=1)
    importance: int = Field(ge=1, le=10)
    category: str
    source_session: str | None
    source_channel: str | None
    ref: str | None
    metadata: dict[str, Any]
    created_at: str = Field(min_length=1)
    updated_at: str = Field(min_length=1)
    access_count: int = Field(ge=0)
    last_accessed: str | None
    superseded_by: int | None = Field(ge=1)
    embedding: str | None = Field(description="base64 of little-endian float32, or null.")
    embedding_model: str | None
    embedding_dim: int | None = Field(ge=1)
    # Absent from files written before the column existed: those rows were embedded alone.
    embedding_context: int = Field(0, ge=0)
    # Absent from files written before migration 004: those rows were all core.
    layer: Literal["working", "core", "archive"] = "core"
    layer_since: str | None = None
    compressed_into: int | None = Field(None, ge=1)
    # Absent from files written before migration 006: those rows were about their created_at.
    occurred_at: str | None = None
    # Absent from files written before migration 009: every row then was a fact.
    kind: Literal["fact", "turn"] = "fact"
    # Absent from files written before migration 010: every row then was private, for every agent.
    agent_id: str | None = None
    visibility: Literal["private", "shared"] = "private"
    # Absent from files written before migration 015: no fact then named another subject or an attribute.
    attribute: str | None = None
    value: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    subject: str | None = Field(None, description="The entity it is about, by name (null: its user).")
    subject_kind: Literal["person", "pet", "place", "plan", "organisation", "thing"] | None = None

    _blob: bytes | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _embedding_is_whole(self) -> ExportedMemory:
        """Decode the vector once and check it against its dimension (errors name the field)."""
        if self.embedding is None:
            return self
        try:
            blob = base64.b64decode(self.embedding, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"embedding is not valid base64 ({exc})") from exc
        if self.embedding_model is None or self.embedding_dim is None:
            raise ValueError("an embedding needs its embedding_model and embedding_dim")
        if len(blob) != 4 * self.embedding_dim:
            raise ValueError(
                f"embedding holds {len(blob)} bytes; embedding_dim {self.embedding_dim} needs {4 * self.embedding_dim}"
            )
        self._blob = blob
        return self

    def as_row(self) -> dict[str, Any]:
        """Column → value for the store (``embedding`` as bytes)."""
        row = self.model_dump()
        row["embedding"] = self._blob
        return row


# Readable UTF-8, except the three characters that are line breaks to str.splitlines() and to some
# editors but not to JSON: escaped, so one line of the file is always one memory.
_LINE_BREAKS_ESCAPED = str.maketrans({"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def export_line(row: dict[str, Any]) -> str:
    """One memory as its JSON line (without the newline); ``row`` is a store row."""
    data = dict(row)
    data["metadata"] = json.loads(row["metadata"] or "{}")
    blob = row["embedding"]
    data["embedding"] = base64.b64encode(blob).decode("ascii") if blob is not None else None
    return json.dumps(data, ensure_ascii=False).translate(_LINE_BREAKS_ESCAPED)


# -- backup ---------------------------------------------------------------------------------
def backup_database(db_path: Path, target: Path, *, force: bool, busy_timeout_ms: int = 5000) -> BackupResult:
    """A consistent standalone copy of the live database (see the store function for the how)."""
    return portability_sql.backup_database(db_path, target, overwrite=force, busy_timeout_ms=busy_timeout_ms)


# -- export ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportResult:
    memories: int
    user_id: str | None
    embeddings: bool


def export_memories(
    address: str,
    out: TextIO,
    *,
    user_id: str | None = None,
    embeddings: bool = True,
    busy_timeout_ms: int = 5000,
    progress: Progress | None = None,
) -> ExportResult:
    """Write the header and one line per memory (of ``user_id``, or everyone) to ``out``.

    One read snapshot, streamed row by row, safe while the daemon writes.

    Args:
        address: the store to read: ``sqlite:PATH`` or a ``postgresql://`` URL
            (:func:`~memory_cortex.store.portability.store_address`).
        out: a text stream (UTF-8); lines end in ``\\n``.
        user_id: export only this user's memories.
        embeddings: False writes the three embedding columns as null (a smaller file; the
            importer can re-embed).
        busy_timeout_ms: lock wait of the reading connection.
        progress: told the total, then each memory written.
    """
    with portability_sql.read_snapshot(address, busy_timeout_ms=busy_timeout_ms) as conn:
        count = portability_sql.export_count(conn, user_id)
        header = ExportHeader(
            format=EXPORT_FORMAT,
            version=EXPORT_VERSION,
            count=count,
            exported_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            memory_cortex=__version__,
            user_id=user_id,
            embeddings=embeddings,
            columns=list(portability_sql.EXPORT_COLUMNS),
        )
        out.write(header.model_dump_json() + "\n")
        if progress is not None:
            progress.total = count
        for row in portability_sql.iter_export_rows(conn, user_id, with_embeddings=embeddings):
            out.write(export_line(row) + "\n")
            if progress is not None:
                progress.update(1)
    out.flush()
    return ExportResult(memories=count, user_id=user_id, embeddings=embeddings)


# -- import ---------------------------------------------------------------------------------
@dataclass
class ImportResult:
    """What an import did. ``needing_embedding``: ids (in the target) with no vector of ``model``."""

    header: ExportHeader
    kept_ids: bool
    added: int = 0
    skipped: int = 0
    needing_embedding: list[int] = field(default_factory=list)


def import_memories(
    address: str,
    lines: Iterable[str],
    *,
    model: str,
    merge: bool = False,
    busy_timeout_ms: int = 5000,
    progress: Progress | None = None,
) -> ImportResult:
    """Read an export into the store at ``address`` (created and migrated if needed; a PostgreSQL
    database must exist), in one transaction.

    Into an empty database every row keeps its id and every value. Into a non-empty one only with
    ``merge``: rows get new ids, ``superseded_by`` is remapped to them, and a row whose
    ``(user_id, fact)`` is already stored is skipped (links to it point at the stored memory), so
    importing the same file twice adds nothing the second time.

    Raises :class:`ImportRejected` (nothing written) for a bad header or line, an id given twice, a
    ``superseded_by`` naming a memory absent from the file, or fewer/more lines than announced.

    Args:
        address: the store to fill: ``sqlite:PATH`` or a ``postgresql://`` URL.
        lines: the export's lines (a text file or stdin).
        model: the live embedder's model; rows with no vector of it are listed in the result.
        merge: allow a non-empty target (see above).
        busy_timeout_ms: how long to wait for a running daemon's write lock.
        progress: told the header's count, then each memory read.
    """
    numbered = _numbered_lines(lines)
    header = _read_header(numbered)
    if progress is not None:
        progress.total = header.count
    with (
        portability_sql.writable(address, busy_timeout_ms=busy_timeout_ms) as conn,
        portability_sql.write_transaction(conn),
    ):
        existing = portability_sql.memory_count(conn)
        if existing and not merge:
            raise ImportRejected(
                f"{portability_sql.location(address)} already holds {existing} memories; import into an"
                " empty database, or merge into this one (--merge: new ids, rows with a stored"
                " (user_id, fact) skipped)"
            )
        result = ImportResult(header=header, kept_ids=existing == 0)
        _import_rows(conn, numbered, result, model, progress)
    return result


def _import_rows(
    conn: Connection,
    numbered: Iterator[tuple[int, str]],
    result: ImportResult,
    model: str,
    progress: Progress | None,
) -> None:
    """The body of the import transaction (see :func:`import_memories`)."""
    if not result.kept_ids:
        portability_sql.start_duplicate_lookup(conn)
    new_id_of: dict[int, int] = {}  # id in the file → id in the target
    links: list[tuple[int, int, int]] = []  # (target id, superseded_by as in the file, line)
    summaries: list[tuple[int, int, int]] = []  # (target id, compressed_into as in the file, line)
    for line_no, line in numbered:
        memory = _parse_memory(line, line_no)
        if memory.id in new_id_of:
            raise ImportRejected(f"line {line_no}: field 'id': memory {memory.id} appears twice in the file")
        stored = (
            None if result.kept_ids else portability_sql.existing_memory_id(conn, memory.user_id, memory.fact)
        )
        if stored is not None:
            new_id_of[memory.id] = stored
            result.skipped += 1
        else:
            new_id = _insert(conn, memory, line_no, keep_id=result.kept_ids)
            new_id_of[memory.id] = new_id
            result.added += 1
            if memory.superseded_by is not None:
                links.append((new_id, memory.superseded_by, line_no))
            if memory.compressed_into is not None:
                summaries.append((new_id, memory.compressed_into, line_no))
            if memory.embedding is None or memory.embedding_model != model:
                result.needing_embedding.append(new_id)
        if progress is not None:
            progress.update(1)
    seen = result.added + result.skipped
    if seen != result.header.count:
        raise ImportRejected(
            f"the file holds {seen} memories but its header announces {result.header.count}:"
            " truncated or edited? Nothing was imported"
        )
    for memory_id, older_target, line_no in links:
        if older_target not in new_id_of:
            raise ImportRejected(
                f"line {line_no}: field 'superseded_by': memory {older_target} is not in the file"
            )
        portability_sql.set_superseded_by(conn, memory_id, new_id_of[older_target])
    for memory_id, summary, line_no in summaries:
        if summary not in new_id_of:
            raise ImportRejected(
                f"line {line_no}: field 'compressed_into': memory {summary} is not in the file"
            )
        portability_sql.set_compressed_into(conn, memory_id, new_id_of[summary])
    if not result.kept_ids:
        portability_sql.stop_duplicate_lookup(conn)


def _insert(conn: Connection, memory: ExportedMemory, line_no: int, *, keep_id: bool) -> int:
    try:
        return portability_sql.insert_exact(conn, memory.as_row(), keep_id=keep_id)
    except sqlite3.IntegrityError as exc:  # a constraint the line model does not know about
        raise ImportRejected(f"line {line_no}: the database refused the row: {exc}") from exc
    except Exception as exc:
        if not _refused_by_postgres(exc):
            raise
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ImportRejected(f"line {line_no}: the database refused the row: {reason}") from exc


def _refused_by_postgres(exc: Exception) -> bool:
    """Whether PostgreSQL refused the row's values: a constraint (as SQLite's IntegrityError) or a
    value it cannot store (text with a NUL character, which SQLite keeps). psycopg is optional: an
    exception of its own means it is imported already."""
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, (psycopg.IntegrityError, psycopg.DataError))


def _numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the non-blank lines (a trailing blank line is not an error)."""
    for line_no, line in enumerate(lines, start=1):
        if line.strip():
            yield line_no, line


def _read_header(numbered: Iterator[tuple[int, str]]) -> ExportHeader:
    first = next(numbered, None)
    if first is None:
        raise ImportRejected("the file is empty: expected a memory-cortex export header on line 1")
    line_no, line = first
    try:
        return ExportHeader.model_validate_json(line)
    except ValidationError as exc:
        raise ImportRejected(f"{_describe(exc, line_no)} (is this a memory-cortex export?)") from exc


def _parse_memory(line: str, line_no: int) -> ExportedMemory:
    try:
        return ExportedMemory.model_validate_json(line)
    except ValidationError as exc:
        raise ImportRejected(_describe(exc, line_no)) from exc


def _describe(exc: ValidationError, line_no: int) -> str:
    """``line N: field 'x': reason`` for the first error (values are never echoed), plus a count."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    reason = first["msg"].removeprefix("Value error, ")
    where = ".".join(str(part) for part in first["loc"])
    text = f"line {line_no}: field '{where}': {reason}" if where else f"line {line_no}: {reason}"
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''} on this line)"
    return text


# -- re-embedding ---------------------------------------------------------------------------
async def reembed_memories(
    address: str,
    memory_ids: Sequence[int],
    embedder: Embedder,
    *,
    batch_size: int = 64,
    busy_timeout_ms: int = 5000,
    progress: Progress | None = None,
) -> int:
    """Give ``memory_ids`` a vector of the live ``embedder``; returns how many were stored.

    Runs after the import committed, in short transactions (one per batch) like
    ``scripts/backfill-embeddings.py``: a running daemon's writes never wait long, and after an
    interruption the imported data is complete and the daemon's re-embedding worker (or the
    backfill script) finishes the vectors. A row whose text changed meanwhile is left to them
    (its vector would be of old text).
    """
    if progress is not None:
        progress.total = len(memory_ids)
    stored = 0
    with portability_sql.writable(address, busy_timeout_ms=busy_timeout_ms) as conn:
        for start in range(0, len(memory_ids), batch_size):
            batch = memory_sql.get_many(conn, memory_ids[start : start + batch_size])
            records = list(batch.values())
            vectors = await embedder.embed_documents([stored_embedding_text(conn, r) for r in records])
            with portability_sql.write_transaction(conn):
                for record, vector in zip(records, vectors, strict=True):
                    current = memory_sql.get(conn, record.id)
                    if current is not None and (current.topic, current.fact) == (record.topic, record.fact):
                        embedding_sql.set_embedding(
                            conn, record.id, to_blob(vector), embedder.model, int(vector.shape[0])
                        )
                        stored += 1
            if progress is not None:
                progress.update(len(memory_ids[start : start + batch_size]))
    return stored
