"""Domain exceptions. Services raise these; one HTTP middleware maps them to JSON errors.

Each carries a stable machine-readable ``code`` and the HTTP status it stands for, so the mapping
lives in one place and the services never import aiohttp.
"""

from __future__ import annotations


class CortexError(Exception):
    """Base of every error the daemon raises on purpose."""

    code = "internal_error"
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def details(self) -> dict[str, object]:
        """Fields the error body carries beside ``code`` and ``message`` (none by default)."""
        return {}


class InvalidRequest(CortexError):
    """The request is well-formed JSON but breaks a rule (bad field, bad bound)."""

    code = "invalid_request"
    status = 400


class OnlyASecret(InvalidRequest):
    """A memory whose text is nothing but a secret (a password, a key): secrets are never stored."""

    code = "only_a_secret"

    def __init__(self, what: str = "the fact") -> None:
        super().__init__(
            f"{what} holds nothing but a secret (a password, PIN, key or card number), and secrets are never"
            " stored; say what it is about instead"
        )


class MemoryNotFound(CortexError):
    """No memory with that id (or not for that user: we do not tell the difference)."""

    code = "memory_not_found"
    status = 404

    def __init__(self, memory_id: int) -> None:
        super().__init__(f"memory {memory_id} not found")
        self.memory_id = memory_id


class EntityNotFound(CortexError):
    """No entity with that id that this requester may see (we do not tell the difference)."""

    code = "entity_not_found"
    status = 404

    def __init__(self, entity_id: int) -> None:
        super().__init__(f"entity {entity_id} not found")


class RelationNotFound(CortexError):
    """No relation with that id that this requester may see."""

    code = "relation_not_found"
    status = 404

    def __init__(self, relation_id: int) -> None:
        super().__init__(f"relation {relation_id} not found")


class EmbedderUnavailable(CortexError):
    """The embedding backend failed or timed out; callers fall back or store without a vector."""

    code = "embedder_unavailable"
    status = 503


class StoreUnavailable(CortexError):
    """The database is closed or shutting down."""

    code = "store_unavailable"
    status = 503


class StorageFull(CortexError):
    """The database refused a write for lack of disk space (507). Nothing of it was stored; reads
    keep working, and writes work again once space is freed (``store/space.py``)."""

    code = "disk_full"
    status = 507

    def __init__(self) -> None:
        super().__init__(
            "the disk that holds the database is full: nothing was stored; free some space and send it again"
        )


class RequestTimedOut(CortexError):
    """An endpoint worked past its time bound (``http/time_bounds.py``)."""

    code = "timeout"
    status = 503


class RunUnderWay(CortexError):
    """Work of this kind is already under way (409). ``run_id``: that work, when known: the error
    body names it, so a client follows it instead of starting another."""

    status = 409

    def __init__(self, message: str, run_id: int | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id

    def details(self) -> dict[str, object]:
        return {} if self.run_id is None else {"run_id": self.run_id}


class ImportBusy(RunUnderWay):
    """An import of the same workspace (user and agent) is under way: a second one would race it."""

    code = "import_busy"


class ImportNotFound(CortexError):
    """No import with that id."""

    code = "import_not_found"
    status = 404


class RunNotFound(CortexError):
    """No lifecycle run with that id."""

    code = "run_not_found"
    status = 404


class JobNotFound(CortexError):
    """No failed ingest job with that id (only failed jobs can be retried)."""

    code = "job_not_found"
    status = 404

    def __init__(self, job_id: int) -> None:
        super().__init__(f"no failed ingest job {job_id}")
        self.job_id = job_id


class LifecycleBusy(RunUnderWay):
    """A lifecycle run is already under way; one runs at a time."""

    code = "lifecycle_busy"
