"""GPU fragmentation by hand: sum floor(free_i / k) against floor(sum free / k)."""

from __future__ import annotations

import numpy as np

from kubeview.model.fragmentation import fragmentation


def test_hand_computed_sizes() -> None:
    # free GPUs per node; the overcommitted -2 counts as 0: total 3 + 5 + 8 + 1 = 17
    f = fragmentation(np.array([3, 5, 8, 1, 0, -2]))
    assert f.free_total == 17 and f.largest_fit == 8 and f.nodes == 6
    got = {s.size: (s.placeable, s.ideal, s.stranded) for s in f.sizes}
    assert got == {
        1: (17, 17, 0),
        2: (1 + 2 + 4 + 0, 8, 1),  # 7 of 8
        4: (0 + 1 + 2 + 0, 4, 1),  # 3 of 4
        8: (0 + 0 + 1 + 0, 2, 1),  # 1 of 2
    }


def test_the_field_story_two_nodes_one_gpu_free_each() -> None:
    f = fragmentation(np.array([1, 1]))
    assert (f.size(1).placeable, f.size(2).placeable, f.size(2).ideal) == (2, 0, 1)


def test_no_gpu_nodes() -> None:
    f = fragmentation(np.array([], dtype=np.int64))
    assert f.free_total == 0 and f.largest_fit == 0 and all(s.placeable == s.ideal == 0 for s in f.sizes)
