"""URLs as they may be shown: in logs, messages and ``GET /config``, never with a password."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

# Parameters that are secrets, wherever they appear in a URL's query string (PostgreSQL's, and the
# keys an OpenAI-compatible server may take there).
SECRET_PARAMETERS = frozenset(
    {"password", "passfile", "sslpassword", "api_key", "apikey", "key", "token", "access_token", "secret"}
)


def redacted_url(url: str) -> str:
    """``url`` without its password (in the user part or the query string), for logs and messages."""
    base, mark, query = url.partition("?")
    parts = urlsplit(base)
    if parts.password is not None:
        user, host = parts.netloc.rsplit("@", 1)
        base = base.replace(parts.netloc, f"{user.split(':', 1)[0]}:***@{host}", 1)
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(key, "***" if key.lower() in SECRET_PARAMETERS else value) for key, value in pairs], safe="/*:"
        )
    return base + mark + query
