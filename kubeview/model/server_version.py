"""Which Kubernetes a real cluster runs, and what kubeview cannot show there because the API server
does not serve it. Pure: the source reads `/version` and discovery (cluster/kube/source.py) and
hands the answers here; the header names what is missing once, `snapshot --json` says why.

docs/versions.md has the table this follows: kubeview is tested on the minor versions in
`TESTED` (a start-and-snapshot test per version, tests/realk8s/test_version_skew.py); an older or
newer server is read all the same, with one word in the header.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from kubeview.model.gangs.messages import KIND_POD_GROUP, KIND_WORKLOAD

TESTED = (35, 38)  # the minor versions kubeview is tested on, inclusive
_VERSION = re.compile(r"^v?1\.(\d+)(?:\.(\d+))?")

# feature -> (its words in the header, why it is missing, where it comes from)
GANG_API = "gang API"
DRA_API = "DRA"
_WHY = {
    GANG_API: ("this API server does not serve scheduling.k8s.io Workload and PodGroup (v1alpha2 on 1.36, "
               "v1beta1 on 1.37+, each behind the GenericWorkload gate and its --runtime-config): "
               "upstream gangs are not shown; Kueue, Volcano and KAI gangs are where those are installed"),
    DRA_API: ("this API server does not serve resource.k8s.io/v1 (DRA: GA and on by default since 1.34): "
              "GPU figures count device-plugin resources only"),
}


@dataclass(frozen=True, slots=True)
class ServerVersion:
    text: str  # gitVersion as the server says it, e.g. "v1.35.4" or "v1.38.0-beta.0"
    minor: int | None  # None: not a version kubeview can read

    @property
    def skew(self) -> str | None:
        """One word for a server outside `TESTED` (None inside it)."""
        if self.minor is None:
            return f"{self.text}: not a Kubernetes version kubeview knows"
        if self.minor < TESTED[0]:
            return f"1.{self.minor} is older than kubeview is tested on (1.{TESTED[0]}-1.{TESTED[1]})"
        if self.minor > TESTED[1]:
            return f"1.{self.minor} is newer than kubeview is tested on (1.{TESTED[0]}-1.{TESTED[1]})"
        return None


def parse_version(git_version: str) -> ServerVersion:
    m = _VERSION.match(git_version.strip())
    return ServerVersion(git_version.strip(), int(m.group(1)) if m else None)


def not_served(kinds: Collection[str], *, gangs: bool, dra: bool) -> dict[str, str]:
    """Feature -> why, for the built-in APIs kubeview reads that discovery did not list (`kinds`: the
    kinds the source found served); `gangs`/`dra`: whether the source asked at all."""
    out: dict[str, str] = {}
    if gangs and not {KIND_WORKLOAD, KIND_POD_GROUP} & set(kinds):
        out[GANG_API] = _WHY[GANG_API]
    if dra and "ResourceSlice" not in kinds:
        out[DRA_API] = _WHY[DRA_API]
    return out


def title_words(version: ServerVersion | None, missing: Collection[str], skew: bool = False) -> str:
    """What the header adds to the title, once: "v1.35.4, no gang API" (empty when nothing to say);
    `skew`: a kube-scheduler workload's version does not match (`scheduler_skew`)."""
    parts = [version.text] if version is not None else []
    if version is not None and version.skew:
        parts.append("untested version")
    parts += [f"no {feature}" for feature in sorted(missing)]
    if skew:
        parts.append("kube-scheduler skew")
    return ", ".join(parts)


def image_name_tag(image: str) -> tuple[str, str]:
    """An image reference's last path part and tag: ("kube-scheduler", "v1.37.2") for
    `mirror.local:5000/k8s/kube-scheduler:v1.37.2@sha256:…`; the tag "" when it has none."""
    name, _, tag = image.split("@", 1)[0].rsplit("/", 1)[-1].partition(":")
    return name, tag


def scheduler_skew(server: ServerVersion | None, images: Iterable[tuple[str, str]]) -> list[str]:
    """Words for each kube-scheduler image (workload, image) whose minor version does not match the
    API server's, by the version skew policy: a kube-scheduler must not be newer than kube-apiserver
    and may be at most one minor older, during an upgrade. Images without a version tag say nothing."""
    if server is None or server.minor is None:
        return []
    out = []
    for where, image in images:
        tag = image_name_tag(image)[1]
        minor = parse_version(tag).minor if tag else None
        if minor is None or minor == server.minor:
            continue
        if minor > server.minor:
            verdict = "newer than the API server: not supported (a scheduler must not be newer)"
        elif minor == server.minor - 1:
            verdict = "one minor older than the API server: allowed during an upgrade; match it after"
        else:
            verdict = "more than one minor older than the API server: not supported"
        out.append(f"{where} runs {image}, {verdict} ({server.text})")
    return out
