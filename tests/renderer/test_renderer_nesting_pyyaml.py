"""Issue 23 item 4: the nesting bound's message does not depend on which PyYAML is installed.

PyYAML 6.0.4's libyaml stops at 1,000 levels in its scanner, before ``bounded_yaml`` counts level
65 of a flow collection; 6.0.3's has no limit. Both real releases are run here: the locked one
(whatever the environment has) and 6.0.3, installed once from PyPI into a cache outside the
repository (keyed by version), so the test runs the real C extension of each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hermetic
import pytest
import yaml

from renderer import bounded_yaml
from tests.renderer.testkit import ROOT

DEEP_FLOW = "[" * 25_000 + "]" * 25_000
DEEP_BLOCK = "k:\n" + "  - " * 1_200 + "x\n"  # compact block sequences, 1,200 deep on line 2
DEEP_MAPPING = "a: " + "{b: " * 2_000 + "1" + "}" * 2_000
OLD_PYYAML = "6.0.3"


def _cached_pyyaml(version: str) -> Path:
    """A --target install of PyYAML ``version`` (binary wheel only) in $KUBEVIEW_TEST_CACHE."""
    cache = hermetic.cache("KUBEVIEW_TEST_CACHE") / f"pyyaml-{version}"
    if not (cache / "yaml" / "__init__.py").exists():
        tmp = cache.with_name(cache.name + ".tmp")
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary", ":all:",
                            "--target", str(tmp), f"pyyaml=={version}"], capture_output=True, text=True)
        assert r.returncode == 0, f"could not install PyYAML {version} from PyPI: {r.stderr.strip()[-300:]}"
        tmp.rename(cache)
    return cache


SCRIPT = """
import sys, yaml
from renderer import bounded_yaml
print(yaml.__version__, yaml.__with_libyaml__)
try:
    bounded_yaml.safe_load(sys.stdin.read())
except bounded_yaml.TooDeep as e:
    print(e)
except yaml.YAMLError as e:
    print("YAMLError", e.problem)
"""


def _run_with(pyyaml_dir: Path | None, text: str) -> list[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*([str(pyyaml_dir)] if pyyaml_dir else []), str(ROOT)])
    r = subprocess.run([sys.executable, "-c", SCRIPT], input=text, capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


@pytest.mark.parametrize(("text", "line"), [(DEEP_FLOW, 1), (DEEP_BLOCK, 2), (DEEP_MAPPING, 1)],
                         ids=["flow", "block", "mapping"])
def test_same_message_with_the_locked_and_the_old_pyyaml(text: str, line: int) -> None:
    old = _run_with(_cached_pyyaml(OLD_PYYAML), text)
    new = _run_with(None, text)
    assert old[0] == f"{OLD_PYYAML} True", old  # the real 6.0.3 C extension was the one run
    assert new[0] == f"{yaml.__version__} True", new
    expected = f"nested more than 64 levels deep (line {line})"
    assert old[1:] == new[1:] == [expected]


def test_libyaml_limit_is_mapped_not_leaked() -> None:
    """The installed libyaml's own limit (where it has one) never reaches the user as its text."""
    try:
        list(yaml.parse(DEEP_FLOW, Loader=bounded_yaml.LOADER))
        has_limit = False
    except yaml.YAMLError as exc:
        has_limit = "maximum nesting depth" in str(exc)
    with pytest.raises(bounded_yaml.TooDeep, match=r"^nested more than 64 levels deep \(line 1\)$"):
        bounded_yaml.check_depth(DEEP_FLOW)
    # with no bound below libyaml's, its own error is what is left: still a YAMLError, never a crash
    if has_limit:
        with pytest.raises(yaml.YAMLError, match="maximum nesting depth"):
            bounded_yaml.check_depth(DEEP_FLOW, limit=100_000)


@pytest.mark.parametrize("loader", [yaml.SafeLoader, bounded_yaml.LOADER], ids=["python", "libyaml"])
def test_depth_at_the_bound_loads_with_either_parser(loader: type) -> None:
    assert bounded_yaml.safe_load("[" * 64 + "]" * 64, loader=loader) is not None
    with pytest.raises(bounded_yaml.TooDeep, match=r"\(line 1\)$"):
        bounded_yaml.safe_load("[" * 65 + "]" * 65, loader=loader)
