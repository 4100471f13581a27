"""The API server's container-resource validation, done by kubeview (model/resource_validation.py):
each rule of kube-apiserver 1.37's `validateResourceRequirements` gives its field and words, and
`refusal` is the message a 422 carries (tests/realk8s/test_fit_dry_run.py compares with the real one)."""

from __future__ import annotations

import pytest

from kubeview.model.quantity import canonical
from kubeview.model.resource_validation import is_extended, object_errors, refusal, resource_errors

C = "spec.containers[0].resources"


def _errors(limits: dict | None = None, requests: dict | None = None, defaulted: bool = True) -> list[str]:
    return [str(e) for e in resource_errors({"limits": limits, "requests": requests}, C, defaulted)]


@pytest.mark.parametrize(("text", "written"), [
    ("0.5", "500m"), ("-2", "-2"), (2, "2"), ("1000", "1k"), ("2048Mi", "2Gi"), ("1.5Gi", "1536Mi"),
    ("1023Mi", "1023Mi"), ("100m", "100m"), ("1e3", "1e3"), ("1.5e3", "1500"), ("0.1", "100m"), ("0", "0"),
    ("1e-10", "1e-9"), ("0.0000000001", "1n"), ("8Ei", "8Ei"), ("-9E", "-9E"), ("-1Gi", "-1Gi"), (0.5, "500m")])
def test_quantities_are_written_back_as_the_api_server_writes_them(text: object, written: str) -> None:
    assert canonical(text) == written  # type: ignore[arg-type]


def test_a_negative_gpu_is_refused_on_the_limit_and_the_defaulted_request() -> None:
    assert _errors({"nvidia.com/gpu": "-2"}) == [
        f'{C}.limits[nvidia.com/gpu]: Invalid value: "-2": must be greater than or equal to 0',
        f'{C}.requests[nvidia.com/gpu]: Invalid value: "-2": must be greater than or equal to 0']


def test_half_a_gpu_is_not_an_integer_but_half_a_cpu_is_fine() -> None:
    assert _errors({"nvidia.com/gpu": "0.5", "cpu": "0.5"})[0] == (
        f'{C}.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer')
    assert _errors({"cpu": "0.5"}) == []


def test_an_extended_request_must_equal_its_limit_and_needs_one() -> None:
    assert _errors({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": 2}) == [
        f'{C}.requests: Invalid value: "2": must be equal to nvidia.com/gpu limit of 1']
    assert _errors({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1}) == [
        f'{C}.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2']
    assert _errors(None, {"nvidia.com/gpu": 1}) == [
        f"{C}.limits: Required value: Limit must be set for non overcommitable resources"]


def test_cpu_and_memory_may_request_less_than_their_limit_never_more() -> None:
    assert _errors({"cpu": "1", "memory": "1Gi"}, {"cpu": "500m", "memory": "512Mi"}) == []
    assert _errors({"cpu": "1"}, {"cpu": "1500m"}) == [
        f'{C}.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1']


def test_names_without_a_domain_are_the_standard_ones() -> None:
    assert _errors(None, {"gpu": 1}) == [f'{C}.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers']
    assert _errors({"requests.nvidia.com/gpu": 1})[0] == (
        f'{C}.limits[requests.nvidia.com/gpu]: Invalid value: "requests.nvidia.com/gpu": '
        "doesn't follow extended resource name standard")
    assert is_extended("nvidia.com/gpu") and is_extended("example.com/foo_bar")
    assert not is_extended("kubernetes.io/x") and not is_extended("cpu") and not is_extended("a/-b")


def test_hugepages_are_whole_pages_set_beside_cpu_or_memory() -> None:
    assert _errors({"hugepages-2Mi": "3Mi", "memory": "1Gi"}) == [
        f'{C}.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
        f'{C}.requests[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi']
    assert _errors({"hugepages-2Mi": "4Mi"}) == [f"{C}: Forbidden: HugePages require cpu or memory"]
    assert _errors({"hugepages-2Mi": "4Mi", "memory": "1Gi"}) == []


def test_a_pod_is_defaulted_first_a_template_is_not() -> None:
    """Limits only: the Pod's requests are its limits (valid); a template's requests stay unset (valid
    too); requests only on a template: the limit is missing."""
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
           "spec": {"initContainers": [{"name": "i", "resources": {"limits": {"nvidia.com/gpu": "-1"}}}],
                    "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    errors = object_errors(pod)
    assert [e.field for e in errors] == ["spec.initContainers[0].resources.limits[nvidia.com/gpu]",
                                         "spec.initContainers[0].resources.requests[nvidia.com/gpu]"]
    assert refusal(pod, errors) == ('Pod "p" is invalid: spec.initContainers[0].resources.limits[nvidia.com/gpu]: '
                                    'Invalid value: "-1": must be greater than or equal to 0')
    job = {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": "j"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {
               "requests": {"example.com/fpga": 1}}}]}}}}
    assert refusal(job, object_errors(job)) == (
        'Job.batch "j" is invalid: spec.template.spec.containers[0].resources.limits: '
        "Required value: Limit must be set for non overcommitable resources")
    job["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"example.com/fpga": 1}}
    assert object_errors(job) == []


def test_what_the_parser_refuses_is_left_to_it() -> None:
    assert _errors({"cpu": "lots", "nvidia.com/gpu": "-1"}) == []
