"""Scene validation: bundled scenes load; each class of bad scene gets one message naming
the file and the field, and the CLI exits 2 without a traceback."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from renderer import checkpoint as ckpt
from renderer import scene as scene_mod
from renderer.scene import SceneError
from renderer.tasks import TaskBook
from tests.renderer.testkit import SPHERES, THREE, run_cli


def test_three_spheres_loads() -> None:
    s = scene_mod.load(THREE)
    assert (s.name, s.width, s.height, s.spp) == ("three-spheres", 48, 32, 16)
    assert s.spheres.shape == (4, 4) and s.spheres.dtype == np.float64
    assert s.sphere_material.dtype == np.int32 and s.materials.shape[1] == 5
    assert s.n_chunks == 4 and s.tile == 16


def test_spheres_is_the_final_scene_of_the_book() -> None:
    s = scene_mod.load(SPHERES)
    radii = s.spheres[:, 3]
    assert 470 <= int((radii == 0.2).sum()) <= 484
    assert int((radii == 1.0).sum()) == 3 and int((radii == 1000.0).sum()) == 1
    kinds = set(s.materials[s.sphere_material, 0].tolist())
    assert kinds == {0.0, 1.0, 2.0}  # lambertian, metal, dielectric
    assert np.allclose(s.camera[:3], [13, 2, 3]) and s.camera[18] == pytest.approx(0.05)
    assert s.max_depth == 50


def test_spheres_yaml_is_what_the_generator_writes() -> None:
    from renderer.tools.make_spheres import generate

    assert SPHERES.read_text() == generate()


def test_overrides_and_fingerprint() -> None:
    a = scene_mod.load(THREE)
    b = scene_mod.load(THREE, width=20, height=10, spp=3, chunk=8, tile=4)
    assert (b.width, b.height, b.spp, b.chunk, b.tile) == (20, 10, 3, 3, 4)  # chunk clamps to spp
    assert a.fingerprint() != b.fingerprint()
    assert a.fingerprint() == scene_mod.load(THREE).fingerprint()


def _doc() -> dict:
    return yaml.safe_load(THREE.read_text())


def _drop(d: dict, key: str) -> dict:
    del d[key]
    return d


def _set(path: list, value: object) -> dict:
    d = _doc()
    node = d
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return d


# one case per error class: (id, document, field named in the message, words in the message)
BAD = [
    ("missing-key", lambda: _drop(_doc(), "camera"), "camera", "missing key"),
    ("missing-nested-key", lambda: _set(["image"], {"width": 4, "height": 4, "max_depth": 3}),
     "image.samples_per_pixel", "missing key"),
    ("negative-radius", lambda: _set(["objects", 2, "radius"], -0.5), "objects[2].radius", "must be >"),
    ("unknown-material-name", lambda: _set(["objects", 1, "material"], "unobtainium"),
     "objects[1].material", "unknown material"),
    ("unknown-material-type", lambda: _set(["materials", "gold", "type"], "plasma"),
     "materials.gold.type", "unknown material"),
    ("nan", lambda: _set(["camera", "lookfrom", 1], float("nan")), "camera.lookfrom[1]", "finite"),
    ("absurd-size", lambda: _set(["image", "width"], 10**9), "image.width", "<= 16384"),
    ("absurd-spp", lambda: _set(["image", "samples_per_pixel"], 10**12), "image.samples_per_pixel", "<="),
    ("wrong-type", lambda: _set(["image", "max_depth"], "deep"), "image.max_depth", "integer"),
]


@pytest.mark.parametrize(("doc", "field", "words"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_scene_names_file_and_field(tmp_path: Path, doc: Callable[[], dict], field: str, words: str) -> None:
    path = tmp_path / "bad-scene.yaml"
    path.write_text(yaml.safe_dump(doc()))
    with pytest.raises(SceneError) as err:
        scene_mod.load(path)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"bad-scene.yaml: {field}: "), msg
    assert words in msg
    assert err.value.field == field and err.value.file == "bad-scene.yaml"


def test_nan_written_as_yaml_nan(tmp_path: Path) -> None:
    path = tmp_path / "nan.yaml"
    path.write_text(THREE.read_text().replace("radius: 0.5, material: center", "radius: .nan, material: center"))
    with pytest.raises(SceneError, match=r"^nan.yaml: objects\[1\].radius: must be finite"):
        scene_mod.load(path)


def test_not_yaml_and_unknown_key(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("name: [unclosed\n")
    with pytest.raises(SceneError, match=r"^a.yaml: line \d+: not valid YAML"):
        scene_mod.load(tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text(THREE.read_text().replace("max_depth: 10", "max_depth: 10\n  gamma: 2"))
    with pytest.raises(SceneError, match=r"^b.yaml: image.gamma: unknown key"):
        scene_mod.load(tmp_path / "b.yaml")


@pytest.mark.parametrize(("doc", "field"), [(b[1], b[2]) for b in BAD[::2]], ids=[b[0] for b in BAD[::2]])
def test_cli_bad_scene_exits_2_with_one_line(tmp_path: Path, doc: Callable[[], dict], field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc()))
    for args in (["render", str(path), "-o", str(tmp_path / "x.png")],
                 ["producer", str(path), "--listen", "127.0.0.1:0", "-o", str(tmp_path / "x.png")]):
        r = run_cli(*args)
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "bad.yaml" in lines[0] and field in lines[0], r.stderr


def test_cli_bad_arguments_exit_2(tmp_path: Path) -> None:
    for args in (["render", "no-such-scene", "-o", "x.png"], ["consumer", "--connect", "nohostport"],
                 ["producer", "three-spheres", "--listen", "1.2.3.4:99999", "-o", "x.png"],
                 ["producer", "three-spheres", "--token-file", str(tmp_path / "missing"), "-o", "x.png"],
                 ["render", "three-spheres", "-o", str(tmp_path / "no" / "dir.png")],
                 ["render", "three-spheres", "--spp", "0", "-o", "x.png"]):
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_cli_help() -> None:
    for cmd in ("render", "producer", "consumer", "bench"):
        r = run_cli(cmd, "--help")
        assert r.returncode == 0 and "usage:" in r.stdout


def test_cli_checkpoint_of_another_job_and_busy_port(tmp_path: Path) -> None:
    other = scene_mod.load(THREE, spp=5)
    ckpt.save(tmp_path / "c.ckpt", ckpt.snapshot(TaskBook(other), other.fingerprint()))
    r = run_cli("producer", "three-spheres", "--listen", "127.0.0.1:0", "--checkpoint", str(tmp_path / "c.ckpt"),
                "-o", str(tmp_path / "o.png"))
    assert r.returncode == 2 and "different job" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run_cli("producer", "three-spheres", "--listen", f"127.0.0.1:{port}", "-o", str(tmp_path / "o.png"))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "address already in use" in r.stderr.lower(), r.stderr
