"""The dashboard's assets (``/ui``): plain HTML, CSS and ES modules shipped inside the package.

No build step and no CDN: what is in ``static/`` is what the browser gets, so the dashboard works on
a machine with no network. The pages read and change data only through the HTTP API, with the same
token as any other client.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
INDEX_HTML = STATIC_DIR / "index.html"
