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


def test_a_pod_bigger_than_every_node_never_fits_and_is_not_lost() -> None:
    # three 2-GPU nodes, one GPU free on each: a 2-GPU pod is lost to fragmentation, a 4-GPU one never fits
    f = fragmentation(np.array([1, 1, 1]), allocatable=np.array([2, 2, 2]))
    got = {s.size: (s.placeable, s.ideal, s.stranded, s.fits_a_node) for s in f.sizes}
    assert got == {1: (3, 3, 0, True), 2: (0, 1, 1, True), 4: (0, 0, 0, False), 8: (0, 0, 0, False)}


def test_free_gpus_on_nodes_too_small_for_k_are_not_lost_to_k() -> None:
    # a 2-GPU node with 2 free and an 8-GPU node with 3 free: 5 free, but a 4-GPU pod only ever had the 3
    f = fragmentation(np.array([2, 3]), allocatable=np.array([2, 8]))
    assert (f.size(4).placeable, f.size(4).ideal, f.size(4).stranded, f.size(4).fits_a_node) == (0, 0, 0, True)
    assert (f.size(2).placeable, f.size(2).ideal) == (2, 2)
