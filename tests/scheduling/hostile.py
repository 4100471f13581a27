"""A seeded, structure-aware fuzzer of extender requests and a raw-socket client, for the hostile-client tests.

Mutations start from the recorded kube-scheduler calls (tests/fixtures/k8s/extender-requests-*.jsonl):
a random place in the JSON tree gets a value of the wrong type or out of range (the shapes issue #16
found: `"cpu": true`, `"nodeSelector": ["a"]`, `"taints": "x"`, `"memory": "1e19"`, `1e999990`), a key
goes or is duplicated, or the bytes are cut or flipped. Same seed, same mutations.
"""

from __future__ import annotations

import json
import random
import socket
import time

HOSTILE_VALUES: list[str] = [
    "true", "false", "null", "0", "-1", "1e999990", "-1e999990", "1e19", '"1e19"', '"1e999990"', '"-5"',
    '"x"', '""', "[]", "{}", '["a"]', '{"a": 1}', '"' + "9" * 70 + '"', "9" * 400, "1.5", '"\\u0000"',
    '"\\ud800"', "[" * 3000 + "]" * 3000, '{"a":' * 3000 + "1" + "}" * 3000, '"nvidia.com/gpu"',
    '{"cpu": true}', '{"memory": "1e19"}', '[{"key": 1}]',
]


def _places(doc: object, path: tuple = ()) -> list[tuple]:
    """Every path into the JSON tree (dict keys and list indexes)."""
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _places(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:8]):
            out += _places(v, (*path, i))
    return out


def _encode_with(doc: object, path: tuple, raw: str | None, drop: bool = False) -> str:
    """`doc` as JSON with the value at `path` replaced by the raw text `raw` (or its key dropped)."""
    marker = "\u0001MUTATION\u0001"
    copy = json.loads(json.dumps(doc))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if drop and isinstance(parent, dict):
        del parent[path[-1]]
        return json.dumps(copy)
    parent[path[-1]] = marker
    return json.dumps(copy).replace(json.dumps(marker), raw or "null")


def mutations(bodies: list[bytes], count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    docs = [json.loads(b) for b in bodies]
    places = [[p for p in _places(d) if p] for d in docs]
    out = []
    for _ in range(count):
        i = rng.randrange(len(docs))
        doc, body = docs[i], bodies[i]
        kind = rng.random()
        path = rng.choice(places[i])
        if kind < 0.7:
            text = _encode_with(doc, path, rng.choice(HOSTILE_VALUES))
        elif kind < 0.8:
            text = _encode_with(doc, path, None, drop=True)
        elif kind < 0.85:  # a duplicated key at the top
            text = json.dumps(doc)[:-1] + ', "Pod": ' + rng.choice(HOSTILE_VALUES) + "}"
        elif kind < 0.93:
            out.append(body[: rng.randrange(len(body))])
            continue
        else:
            b = bytearray(body)
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.randrange(256)
            out.append(bytes(b))
            continue
        out.append(text.encode("utf-8", "surrogatepass"))
    return out


def raw_exchange(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    """Send `data` on a new connection and read until the server closes it (or `timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed `sock` (reading and dropping anything it sends), or None."""
    started = time.monotonic()
    sock.settimeout(0.05)
    while time.monotonic() - started < seconds:
        try:
            if not sock.recv(65536):
                return time.monotonic() - started
        except TimeoutError:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return time.monotonic() - started
    return None
