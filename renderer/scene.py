"""Scene YAML -> validated numpy arrays for the path tracer.

A scene file fully determines an image: image size, samples per pixel, maximum path
depth, the seed of the counter-based random numbers, the camera, the materials, the
spheres, and how the job is cut into tasks (tile size x samples per chunk).  Every
field is checked; the first problem found is raised as one :class:`SceneError` whose
message names the file and the field, so command lines can print it and exit 2.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Set
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from renderer import bounded_yaml
from renderer.bvh import build_bvh, single_leaf

# Bounds that keep a job sane: a scene asking for more is rejected, not attempted.
MAX_SIDE = 16_384
MAX_PIXELS = 64 * 1024 * 1024
MAX_SPP = 1_000_000
MAX_DEPTH = 1_000
MAX_OBJECTS = 100_000
MAX_MATERIALS = 100_000
MAX_COORD = 1.0e7
MAX_TILE = 512
MAX_SCENE_BYTES = 8 * 1024 * 1024
MAX_SEED = 2**32 - 1
MAX_TASKS = 1_000_000
"""Tasks in one job: the producer's task table costs ~100 bytes a task (heap, queue set, leases)."""
IMAGE_BYTES_PER_PIXEL = 8 * 3 * 2 + 3
"""The producer's image buffers: int64 accumulator, float64 final image, plus the 8-bit image."""
MAX_IMAGE_BYTES = 1 << 30
"""Bound on those buffers (4096x4096 is 816 MiB; 8192x8192 would be 3.2 GiB)."""

MATERIAL_TYPES = {"lambertian": 0, "metal": 1, "dielectric": 2}
BUNDLED = Path(__file__).parent / "scenes"


class SceneError(ValueError):
    """A scene is unusable; ``str(err)`` is one line naming the file and the field."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        where = f"{file}: {field}: " if field else f"{file}: "
        super().__init__(where + problem)


@dataclass(frozen=True)
class Scene:
    """A validated scene as flat arrays, ready for :mod:`renderer.kernels`."""

    name: str
    source: str  # file name, for messages
    text: str  # the YAML text the scene came from (sent to consumers)
    width: int
    height: int
    spp: int
    max_depth: int
    seed: int
    tile: int  # tiles are tile x tile pixels (smaller at the right/bottom edge)
    chunk: int  # samples per task
    camera: np.ndarray  # (19,) float64, see _camera_array
    background: np.ndarray  # (6,) float64: bottom rgb, top rgb
    spheres: np.ndarray  # (N, 4) float64: cx, cy, cz, radius (in BVH order)
    sphere_material: np.ndarray  # (N,) int32 index into materials
    materials: np.ndarray  # (M, 5) float64: type, r, g, b, fuzz-or-ior
    bvh_bounds: np.ndarray  # (K, 6) float64
    bvh_info: np.ndarray  # (K, 3) int32

    @property
    def n_chunks(self) -> int:
        return -(-self.spp // self.chunk)

    def fingerprint(self) -> str:
        """Identity of the job: same text and settings -> same image, bit for bit."""
        h = hashlib.sha256(self.text.encode())
        h.update(repr((self.width, self.height, self.spp, self.tile, self.chunk)).encode())
        return h.hexdigest()

    def brute_force(self) -> Scene:
        """The same scene with a one-leaf BVH: every ray tests every sphere."""
        bounds, info = single_leaf(self.spheres)
        return replace(self, bvh_bounds=bounds, bvh_info=info)


def bundled(name: str) -> Path:
    """Path of a bundled scene by bare name (``spheres``) or file name."""
    stem = name[:-5] if name.endswith(".yaml") else name
    return BUNDLED / f"{stem}.yaml"


def resolve(arg: str) -> Path:
    """A scene argument: an existing path, else a bundled scene name."""
    p = Path(arg)
    if p.exists() or "/" in arg:
        return p
    b = bundled(arg)
    return b if b.exists() else p


def chunk_ranges(spp: int, chunk: int) -> list[tuple[int, int]]:
    """The job's fixed sample chunks: [(s0, s1), ...] in reduction order.

    Here rather than in kernels.py so that the producer, which never traces, does not import numba."""
    return [(s, min(s + chunk, spp)) for s in range(0, spp, chunk)]


def load(path: str | Path, **overrides: int | None) -> Scene:
    """Read and validate a scene file; ``overrides`` are width/height/spp/tile/chunk."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_SCENE_BYTES:
            raise SceneError(p.name, "", f"file is {size} bytes, limit {MAX_SCENE_BYTES}")
        text = p.read_text(encoding="utf-8")
    except SceneError:
        raise
    except (OSError, UnicodeDecodeError) as e:
        raise SceneError(str(path), "", f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    return parse(text, p.name, **overrides)


def parse(text: str, source: str = "<scene>", **overrides: int | None) -> Scene:
    """Validate scene YAML text; ``source`` names it in error messages."""
    if len(text.encode()) > MAX_SCENE_BYTES:
        raise SceneError(source, "", f"scene is larger than {MAX_SCENE_BYTES} bytes")
    try:
        doc = bounded_yaml.safe_load(text)
    except bounded_yaml.TooDeep as e:
        raise SceneError(source, f"line {e.line}", str(e).split(" (")[0]) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "yaml"
        raise SceneError(source, where, f"not valid YAML ({getattr(e, 'problem', None) or e})") from None
    return _Validator(source).scene(doc, text, overrides)


class _Validator:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, field: str, problem: str) -> SceneError:
        return SceneError(self.source, field, problem)

    # -- primitives ---------------------------------------------------------------
    def mapping(self, v: Any, field: str, required: Set[str], optional: Set[str] = frozenset()) -> dict:
        if not isinstance(v, Mapping):
            raise self.fail(field or "(top level)", f"must be a mapping, got {_kind(v)}")
        for k in v:
            if not isinstance(k, str) or k not in required | optional:
                raise self.fail(_join(field, str(k)), "unknown key")
        for k in sorted(required):
            if k not in v:
                raise self.fail(_join(field, k), "missing key")
        return dict(v)

    def number(self, v: Any, field: str, lo: float, hi: float, *, lo_open: bool = False) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.fail(field, f"must be a number, got {_kind(v)}")
        x = float(v)
        if not math.isfinite(x):
            raise self.fail(field, f"must be finite, got {x}")
        if x < lo or (lo_open and x == lo):
            raise self.fail(field, f"must be {'>' if lo_open else '>='} {lo:g}, got {x:g}")
        if x > hi:
            raise self.fail(field, f"must be <= {hi:g}, got {x:g}")
        return x

    def integer(self, v: Any, field: str, lo: int, hi: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(field, f"must be an integer, got {_kind(v)}")
        if v < lo:
            raise self.fail(field, f"must be >= {lo}, got {v}")
        if v > hi:
            raise self.fail(field, f"must be <= {hi}, got {v}")
        return int(v)

    def vec3(self, v: Any, field: str, lo: float = -MAX_COORD, hi: float = MAX_COORD) -> list[float]:
        if not isinstance(v, list | tuple) or len(v) != 3:
            raise self.fail(field, f"must be a list of 3 numbers, got {_kind(v)}")
        return [self.number(x, f"{field}[{i}]", lo, hi) for i, x in enumerate(v)]

    # -- sections -----------------------------------------------------------------
    def scene(self, doc: Any, text: str, overrides: Mapping[str, int | None]) -> Scene:
        top = self.mapping(
            doc, "", {"name", "seed", "image", "camera", "materials", "objects"}, {"tasks", "background"}
        )
        name = top["name"]
        if not isinstance(name, str) or not name or len(name) > 100:
            raise self.fail("name", "must be a non-empty string of at most 100 characters")
        seed = self.integer(top["seed"], "seed", 0, MAX_SEED)
        img = self.mapping(top["image"], "image", {"width", "height", "samples_per_pixel", "max_depth"})
        width = self.integer(img["width"], "image.width", 1, MAX_SIDE)
        height = self.integer(img["height"], "image.height", 1, MAX_SIDE)
        spp = self.integer(img["samples_per_pixel"], "image.samples_per_pixel", 1, MAX_SPP)
        depth = self.integer(img["max_depth"], "image.max_depth", 1, MAX_DEPTH)
        tasks = self.mapping(top.get("tasks", {}), "tasks", set(), {"tile", "samples"})
        tile = self.integer(tasks.get("tile", 32), "tasks.tile", 1, MAX_TILE)
        chunk = self.integer(tasks.get("samples", 16), "tasks.samples", 1, MAX_SPP)
        settings = {"width": width, "height": height, "spp": spp, "tile": tile, "chunk": chunk}
        for key, hi in (("width", MAX_SIDE), ("height", MAX_SIDE), ("spp", MAX_SPP),
                        ("tile", MAX_TILE), ("chunk", MAX_SPP)):
            if overrides.get(key) is not None:
                settings[key] = self.integer(overrides[key], f"--{key}", 1, hi)
        width, height, spp, tile, chunk = (settings[k] for k in ("width", "height", "spp", "tile", "chunk"))
        if width * height > MAX_PIXELS:
            raise self.fail("image", f"{width}x{height} is more than {MAX_PIXELS} pixels")
        chunk = min(chunk, spp)
        self.job_size(width, height, spp, tile, chunk)
        camera = self.camera(top["camera"], width / height)
        background = self.background(top.get("background", {}))
        names, material_list = self.materials(top["materials"])
        spheres, mat_index, materials = self.objects(top["objects"], names, material_list)
        order, bounds, info = build_bvh(spheres)
        return Scene(
            name=name, source=self.source, text=text, width=width, height=height, spp=spp,
            max_depth=depth, seed=seed, tile=tile, chunk=chunk, camera=camera, background=background,
            spheres=np.ascontiguousarray(spheres[order]),
            sphere_material=np.ascontiguousarray(mat_index[order]),
            materials=materials, bvh_bounds=bounds, bvh_info=info,
        )

    def job_size(self, width: int, height: int, spp: int, tile: int, chunk: int) -> None:
        """Refuse a job too big in total, from its settings alone: before anything is allocated
        (per-field limits let tile 1 x chunk 1 x spp 10^6 through to a MemoryError)."""
        image_bytes = width * height * IMAGE_BYTES_PER_PIXEL
        if image_bytes > MAX_IMAGE_BYTES:
            raise self.fail("image", f"{width}x{height} needs {image_bytes / (1 << 30):.1f} GiB of image buffers "
                                     f"({IMAGE_BYTES_PER_PIXEL} bytes/pixel), limit {MAX_IMAGE_BYTES >> 30} GiB")
        tasks = -(-width // tile) * -(-height // tile) * -(-spp // chunk)
        if tasks > MAX_TASKS:
            raise self.fail("tasks", f"the job would have {tasks:,} tasks (tile {tile}, {chunk} samples per task), "
                                     f"limit {MAX_TASKS:,}: use larger tiles or more samples per task")

    def camera(self, v: Any, aspect: float) -> np.ndarray:
        cam = self.mapping(
            v, "camera", {"lookfrom", "lookat", "vfov"}, {"vup", "aperture", "focus_distance"}
        )
        lookfrom = np.array(self.vec3(cam["lookfrom"], "camera.lookfrom"))
        lookat = np.array(self.vec3(cam["lookat"], "camera.lookat"))
        vup = np.array(self.vec3(cam.get("vup", [0.0, 1.0, 0.0]), "camera.vup"))
        vfov = self.number(cam["vfov"], "camera.vfov", 0.0, 179.0, lo_open=True)
        aperture = self.number(cam.get("aperture", 0.0), "camera.aperture", 0.0, 1.0e3)
        dist = float(np.linalg.norm(lookfrom - lookat))
        if dist == 0.0:
            raise self.fail("camera.lookat", "must differ from camera.lookfrom")
        focus = self.number(cam.get("focus_distance", dist), "camera.focus_distance", 0.0, MAX_COORD,
                            lo_open=True)
        w = (lookfrom - lookat) / dist
        cross = np.cross(vup, w)
        n = float(np.linalg.norm(cross))
        if not n > 1e-12:
            raise self.fail("camera.vup", "must not be parallel to the view direction")
        u = cross / n
        v_ = np.cross(w, u)
        half_h = math.tan(math.radians(vfov) / 2.0)
        vp_h = 2.0 * half_h
        vp_w = aspect * vp_h
        horizontal = focus * vp_w * u
        vertical = focus * vp_h * v_
        lower_left = lookfrom - horizontal / 2.0 - vertical / 2.0 - focus * w
        return np.concatenate([lookfrom, lower_left, horizontal, vertical, u, v_, [aperture / 2.0]])

    def background(self, v: Any) -> np.ndarray:
        bg = self.mapping(v, "background", set(), {"top", "bottom"})
        bottom = self.vec3(bg.get("bottom", [1.0, 1.0, 1.0]), "background.bottom", 0.0, 1.0e3)
        top = self.vec3(bg.get("top", [0.5, 0.7, 1.0]), "background.top", 0.0, 1.0e3)
        return np.array(bottom + top, dtype=np.float64)

    def material(self, v: Any, field: str) -> list[float]:
        if not isinstance(v, Mapping):
            raise self.fail(field, f"must be a mapping, got {_kind(v)}")
        kind = v.get("type")
        if kind is None:
            raise self.fail(f"{field}.type", "missing key")
        if kind not in MATERIAL_TYPES:
            raise self.fail(f"{field}.type", f"unknown material {kind!r} (known: {', '.join(MATERIAL_TYPES)})")
        if kind == "lambertian":
            m = self.mapping(v, field, {"type", "albedo"})
            return [0.0, *self.vec3(m["albedo"], f"{field}.albedo", 0.0, 1.0), 0.0]
        if kind == "metal":
            m = self.mapping(v, field, {"type", "albedo"}, {"fuzz"})
            fuzz = self.number(m.get("fuzz", 0.0), f"{field}.fuzz", 0.0, 1.0)
            return [1.0, *self.vec3(m["albedo"], f"{field}.albedo", 0.0, 1.0), fuzz]
        m = self.mapping(v, field, {"type", "ior"})
        return [2.0, 1.0, 1.0, 1.0, self.number(m["ior"], f"{field}.ior", 0.0, 100.0, lo_open=True)]

    def materials(self, v: Any) -> tuple[dict[str, int], list[list[float]]]:
        if not isinstance(v, Mapping):
            raise self.fail("materials", f"must be a mapping of name -> material, got {_kind(v)}")
        if len(v) > MAX_MATERIALS:
            raise self.fail("materials", f"{len(v)} materials, limit {MAX_MATERIALS}")
        names: dict[str, int] = {}
        rows: list[list[float]] = []
        for name, m in v.items():
            if not isinstance(name, str):
                raise self.fail("materials", f"material names must be strings, got {name!r}")
            names[name] = len(rows)
            rows.append(self.material(m, f"materials.{name}"))
        return names, rows

    def objects(
        self, v: Any, names: dict[str, int], rows: list[list[float]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not isinstance(v, list) or not v:
            raise self.fail("objects", f"must be a non-empty list, got {_kind(v)}")
        if len(v) > MAX_OBJECTS:
            raise self.fail("objects", f"{len(v)} objects, limit {MAX_OBJECTS}")
        spheres = np.empty((len(v), 4), dtype=np.float64)
        mat = np.empty(len(v), dtype=np.int32)
        for i, obj in enumerate(v):
            f = f"objects[{i}]"
            o = self.mapping(obj, f, {"center", "radius", "material"}, {"type"})
            if o.get("type", "sphere") != "sphere":
                raise self.fail(f"{f}.type", f"unknown object type {o['type']!r} (known: sphere)")
            spheres[i, :3] = self.vec3(o["center"], f"{f}.center")
            spheres[i, 3] = self.number(o["radius"], f"{f}.radius", 0.0, MAX_COORD, lo_open=True)
            m = o["material"]
            if isinstance(m, str):
                if m not in names:
                    raise self.fail(f"{f}.material", f"unknown material {m!r}")
                mat[i] = names[m]
            else:
                mat[i] = len(rows)
                rows.append(self.material(m, f"{f}.material"))
        return spheres, mat, np.array(rows, dtype=np.float64).reshape(-1, 5)


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def _kind(v: Any) -> str:
    if v is None:
        return "nothing"
    if isinstance(v, bool):
        return f"boolean {v}"
    if isinstance(v, int | float | str):
        return f"{type(v).__name__} {v!r}"
    return type(v).__name__
