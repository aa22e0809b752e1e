"""``GET /ui``: the dashboard's page and its static assets.

The page and its assets carry no data, so they load without the API token; every request the page
then makes goes through the API and its token check (the page asks for the token on a 401).
"""

from __future__ import annotations

from aiohttp import web

from ..ui import INDEX_HTML, STATIC_DIR

UI_PATH = "/ui/"
STATIC_PREFIX = "/ui/static"

# The page runs only its own scripts and talks only to this daemon: an injected memory text can
# neither load a script nor send data elsewhere (the pages also insert text, never HTML).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def is_public(path: str) -> bool:
    """True for the dashboard's shell and assets, which need no token (they hold no data)."""
    return path in ("/", "/ui", UI_PATH) or path.startswith(STATIC_PREFIX + "/")


async def ui_redirect(request: web.Request) -> web.StreamResponse:
    raise web.HTTPPermanentRedirect(UI_PATH)


async def root_redirect(request: web.Request) -> web.StreamResponse:
    """The daemon's bare address, as a browser opens it: the dashboard."""
    raise web.HTTPPermanentRedirect(UI_PATH)


async def ui_index(request: web.Request) -> web.StreamResponse:
    response = web.FileResponse(INDEX_HTML, headers=_ui_headers())
    response.content_type = "text/html"
    return response


def _ui_headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        # A new version of the daemon serves new assets at once.
        "Cache-Control": "no-cache",
    }


async def ui_asset(request: web.Request) -> web.StreamResponse:
    """One file of ``static/`` (flat: no sub-folders, so no path can leave it)."""
    name = request.match_info["name"]
    path = STATIC_DIR / name
    if "/" in name or "\\" in name or name.startswith(".") or not path.is_file():
        raise web.HTTPNotFound(text=f"no dashboard asset {name!r}")
    response = web.FileResponse(path, headers=_ui_headers())
    content_type = _CONTENT_TYPES.get(path.suffix)
    if content_type is not None:
        response.content_type = content_type
    return response


_CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml"}
