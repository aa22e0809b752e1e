"""How a tool's domain error reaches the model: as a tool error it can read."""

import contextlib
from collections.abc import Iterator

from mcp.server.mcpserver.exceptions import ToolError

from ..errors import CortexError


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Domain errors become tool errors the model can read (``is_error`` results); anything else
    is left to the SDK, which logs it and answers a generic error."""
    try:
        yield
    except CortexError as exc:
        raise ToolError(exc.message) from exc
