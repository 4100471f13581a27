"""The test API server's Jobs (tests/kubeapi/jobs.py) against the recordings, with the `kubernetes` client."""

from __future__ import annotations

import json

import pytest
from kubeapi import KubeAPI, fixtures
from kubeapi import jobs as job_api
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

PATCHES = [("patch-parallelism-4-response.json", {"spec": {"parallelism": 4}}),
           ("patch-parallelism-1-response.json", {"spec": {"parallelism": 1}}),
           ("patch-suspend-true-response.json", {"spec": {"suspend": True}}),
           ("patch-suspend-false-response.json", {"spec": {"suspend": False}}),
           ("patch-parallelism-3-response.json", {"spec": {"parallelism": 3}})]


def batch(api: KubeAPI) -> client.BatchV1Api:
    return client.BatchV1Api(config.new_client_from_config(str(api.kubeconfig)))


def recorded_patch_bodies() -> list[dict]:
    """The merge patches the capture sent, as index.json notes them."""
    notes = [e["note"] for e in fixtures.load("jobs/index.json") if e["method"] == "PATCH" and "jobs/" in e["path"]]
    return [json.loads(n.split("merge patch ", 1)[1].split(";", 1)[0]) for n in notes]


def test_lists_and_watches_as_recorded(kube_api: KubeAPI) -> None:
    job_api.serve_recorded(kube_api, "indexed")
    api = batch(kube_api)
    listed = api.list_namespaced_job("batch", _preload_content=False)
    assert json.loads(listed.data) == fixtures.load("jobs/indexed/jobs-list-initial.json")
    stream = api.list_job_for_all_namespaces(watch=True, resource_version="94595", timeout_seconds=1,
                                             _preload_content=False)
    lines = [line for line in stream.data.splitlines() if line.strip()]
    assert lines == fixtures.watch_lines("jobs/indexed/watch-jobs.jsonl")


def test_patches_give_the_recorded_spec_generation_and_old_status(kube_api: KubeAPI) -> None:
    start = fixtures.load("jobs/patch/job-01-running.json")
    kube_api.add_job(start)
    api = batch(kube_api)
    assert [b for _, b in PATCHES] == recorded_patch_bodies()
    for name, body in PATCHES:
        before = kube_api.job("batch", "tunable")
        got = api.patch_namespaced_job("tunable", "batch", body, _content_type="application/merge-patch+json",
                                       _preload_content=False)
        reply = json.loads(got.data)
        recorded = fixtures.load(f"jobs/patch/{name}")
        assert reply["spec"] == recorded["spec"]
        assert reply["metadata"]["generation"] == recorded["metadata"]["generation"]
        assert reply["status"] == before["status"]  # the old status, as the recorded responses
        # the recorded controller acted between the patches: carry its status on, as it did
        kube_api.add_job({**reply, "status": recorded["status"]})


@pytest.mark.parametrize("body", [{"spec": {"parallelism": -1}}, {"spec": {"suspend": "yes"}}])
def test_invalid_patches_are_refused_with_422(kube_api: KubeAPI, body: dict) -> None:
    kube_api.add_job(fixtures.load("jobs/patch/job-01-running.json"))
    with pytest.raises(ApiException) as err:
        batch(kube_api).patch_namespaced_job("tunable", "batch", body, _content_type="application/merge-patch+json")
    assert err.value.status == 422
    assert "is invalid: spec." in json.loads(err.value.body)["message"]
