"""`kubeview bench model --quota` at a small size: the cluster it builds is the one it says (a quota per
namespace, every tenth at its GPU quota with a Job held, every 50th's status one off), and its report
prints each share beside the 10 % target."""

from __future__ import annotations

from kubeview.bench.model_quota import TARGET, measure, report


def test_the_quota_bench_measures_what_it_says() -> None:
    r = measure(nodes=100, gpu_nodes=10, pods=3000, namespaces=30)
    assert (r["quotas"], r["held"], r["snapshot_quota_namespaces"]) == (30, 3, 30)
    assert r["differ"] >= 1  # team 25's status is one GPU off (and the bench's pod events may move others)
    assert r["build_s"] > 0 and r["quota_views_s"] > 0 and r["snapshot_s"] > 0 and r["target"] == TARGET
    lines = report(r, quick=False)
    assert lines[0].startswith("kubeview bench model --quota: 100 nodes, 3,000 pods in 30 namespaces, 30 ResourceQuotas, "
                               "3 Jobs held by quota")
    assert "% of the build" in lines[2] and "target <= 10 %" in lines[2] and "target <= 10 %" in lines[4]
