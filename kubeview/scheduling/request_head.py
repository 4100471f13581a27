"""An HTTP/1.x request's line and header fields, read without the `email` package.

`http.server` hands header lines to `email.parser` (a MIME parser, then `email.message.Message.get`
per lookup): ~0.15 ms a request, a tenth of a whole 5,000-node filter call, twice per pod. The
extender only needs a few fields, so this reads them into a dict, with http.client's limits and
stricter refusals where the old forms are ambiguous (obsolete line folding, conflicting
Content-Length: both ways to smuggle a request). Pure: `readline` in, fields or `HeadError` out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

MAX_LINE = 65536  # http.client's _MAXLINE
MAX_HEADERS = 100  # http.client's _MAXHEADERS
VERSIONS = ("HTTP/1.1", "HTTP/1.0")


class HeadError(Exception):
    """The request cannot be served; answer `status` with the message, then close the connection."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class Headers:
    """Header fields by lower-cased name; of a repeated field the first counts (as `Message.get`)."""

    fields: dict[str, str] = field(default_factory=dict)

    def get(self, name: str, default: str | None = None) -> str | None:
        return self.fields.get(name.lower(), default)

    def __contains__(self, name: str) -> bool:
        return name.lower() in self.fields


@dataclass(frozen=True, slots=True)
class RequestLine:
    command: str
    path: str
    version: str


def parse_request_line(text: str) -> RequestLine:
    """`POST /filter HTTP/1.1` (decoded as ISO-8859-1, as http.server does); HTTP/0.9's two-word form
    and HTTP/2+ are refused."""
    words = text.split()
    if len(words) != 3:
        raise HeadError(400, f"Bad request syntax ({text[:200]!r})")
    command, path, version = words
    if version not in VERSIONS:
        if version.startswith("HTTP/") and version[5:6].isdigit() and version[5:6] != "1":
            raise HeadError(505, f"Invalid HTTP version ({version[5:][:20]})")
        raise HeadError(400, f"Bad request version ({version[:20]!r})")
    if path.startswith("//"):  # as http.server: //host/path would read as a URL without a scheme
        path = "/" + path.lstrip("/")
    return RequestLine(command, path, version)


def read_headers(readline: Callable[[int], bytes]) -> Headers:
    """Header lines up to the blank one, from `readline(limit)` (a socket file's)."""
    headers = Headers()
    fields = headers.fields
    for _ in range(MAX_HEADERS + 1):
        line = readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise HeadError(431, "Line too long")
        if line in (b"\r\n", b"\n", b""):
            return headers
        if line[:1] in (b" ", b"\t"):
            raise HeadError(400, "obsolete line folding in a header field")
        name, sep, value = str(line, "iso-8859-1").partition(":")
        if not sep or not name or name != name.strip():
            raise HeadError(400, f"malformed header line {line[:100]!r}")
        key, value = name.lower(), value.strip()
        if key in fields:
            if key == "content-length" and fields[key] != value:
                raise HeadError(400, "conflicting Content-Length headers")
            continue
        fields[key] = value
    raise HeadError(431, "Too many headers")


def keeps_alive(version: str, headers: Headers) -> bool:
    """HTTP/1.1 keeps the connection unless told `close`; 1.0 only when told `keep-alive`."""
    connection = (headers.get("Connection") or "").lower()
    return connection != "close" and (version != "HTTP/1.0" or connection == "keep-alive")
