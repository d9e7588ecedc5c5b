#!/usr/bin/env python3
"""Writes the JSON case library cases/<folder>/*.json (DESIGN §6).

The JSON files are committed; this script is only how they were made (not part of the build).
Run from anywhere:  python3 verify/make_cases.py [--out cases]
It rewrites every file it generates and deletes nothing else.
"""
import argparse
import json
import os
from math import isqrt, prod

CASES = []


def rng(a, b):
    """Workers a..b-1."""
    return {"range": [a, b]}


def case(folder, name, description, layer, world_size, partitions, x_shape, options=None, expect="pass",
         dtype=None, seed=None, input_split=None, input_shape=None):
    doc = {"schema": 1, "name": f"{folder}/{name}", "description": description, "layer": layer,
           "world_size": world_size, "partitions": {}}
    for pname, (workers, shape) in partitions.items():
        count = (workers["range"][1] - workers["range"][0]) if isinstance(workers, dict) else len(workers)
        assert count == prod(shape), (name, pname, workers, shape)
        doc["partitions"][pname] = {"workers": workers, "shape": list(shape)}
    if options is not None:
        doc["options"] = options
    doc["x_shape"] = list(x_shape)
    if input_split is not None:
        doc["input_split"] = input_split
    if input_shape is not None:
        doc["input_shape"] = input_shape
    if dtype is not None:
        doc["dtype"] = dtype
    doc["expect"] = expect if expect == "pass" else {"error": expect}
    if seed is not None:
        doc["seed"] = seed
    CASES.append((folder, name, doc))


def refuse(text):
    return text


# --------------------------------------------------------------------------------- Broadcast
def broadcast_cases():
    f, L = "broadcast", "Broadcast"
    case(f, "spec001_1x3x1_to_2x3x2",
         "Spec 001 worked table: 1x3x1 on workers 1,2,3 broadcast to 2x3x2 on all 12 (workers 1,2 copy to themselves, 3 sends and receives)",
         L, 12, {"P_x": ([1, 2, 3], [1, 3, 1]), "P_y": (rng(0, 12), [2, 3, 2])}, [2, 3])
    case(f, "spec001_1x3x1_to_2x3x2_float32", "Spec 001 worked table broadcast in float32",
         L, 12, {"P_x": ([1, 2, 3], [1, 3, 1]), "P_y": (rng(0, 12), [2, 3, 2])}, [2, 3], dtype="float32")
    case(f, "identity_1_to_1", "World of one: the same partition on both sides is a copy",
         L, 1, {"P_x": ([0], [1]), "P_y": ([0], [1])}, [3, 4])
    case(f, "identity_same_2x2", "P_x and P_y are the same 2x2 partition: identity, no communication",
         L, 4, {"P_x": (rng(0, 4), [2, 2]), "P_y": (rng(0, 4), [2, 2])}, [2, 3])
    case(f, "identity_same_2x2_transposed_both", "Same 2x2 partition with both transpose flags: identity",
         L, 4, {"P_x": (rng(0, 4), [2, 2]), "P_y": (rng(0, 4), [2, 2])}, [2, 3],
         {"transpose_src": True, "transpose_dest": True})
    case(f, "single_source_disjoint_1_to_4", "One source worker copies to four other workers",
         L, 5, {"P_x": ([0], [1]), "P_y": (rng(1, 5), [4])}, [3, 2])
    case(f, "single_source_overlap_1_to_4", "One source worker copies to itself and three others",
         L, 4, {"P_x": ([0], [1]), "P_y": (rng(0, 4), [4])}, [3, 2])
    case(f, "single_source_last_rank", "The source is the last worker of the world",
         L, 6, {"P_x": ([5], [1]), "P_y": (rng(0, 6), [6])}, [4])
    case(f, "single_source_1_to_17", "One worker feeds 17: world of 18", L, 18,
         {"P_x": ([17], [1]), "P_y": (rng(0, 17), [17])}, [2, 2])
    case(f, "disjoint_3_to_2x3", "3 workers to a disjoint 2x3 partition (P_x padded to 1x3)",
         L, 9, {"P_x": (rng(0, 3), [3]), "P_y": (rng(3, 9), [2, 3])}, [2, 5])
    case(f, "overlap_3_to_2x3", "3 workers to a 2x3 partition that contains them",
         L, 6, {"P_x": (rng(0, 3), [3]), "P_y": (rng(0, 6), [2, 3])}, [2, 5])
    case(f, "overlap_reversed_order", "P_y lists the world in reverse: sources are receivers of other pieces",
         L, 6, {"P_x": (rng(0, 3), [1, 3]), "P_y": ([5, 4, 3, 2, 1, 0], [2, 3])}, [3, 1])
    case(f, "idle_workers_2_to_2x2", "Sources 7,8 and receivers 1,3,5,7 in a world of 10; five workers idle",
         L, 10, {"P_x": ([7, 8], [2]), "P_y": ([1, 3, 5, 7], [2, 2])}, [2, 3])
    case(f, "idle_workers_preserve_batch_false", "Idle and source-only workers return {0} without the batch",
         L, 10, {"P_x": ([7, 8], [2]), "P_y": ([1, 3, 5, 7], [2, 2])}, [2, 3], {"preserve_batch": False})
    case(f, "source_only_preserve_batch_true", "Workers only in P_x return {batch, 0}",
         L, 8, {"P_x": ([6, 7], [2]), "P_y": (rng(0, 6), [3, 2])}, [4, 3], {"preserve_batch": True})
    case(f, "source_only_preserve_batch_false", "Workers only in P_x return {0}",
         L, 8, {"P_x": ([6, 7], [2]), "P_y": (rng(0, 6), [3, 2])}, [4, 3], {"preserve_batch": False})
    case(f, "transpose_src_2x2x1_to_3x2x2", "DESIGN §3 example: with transpose_src worker (a,b,0) feeds (*,a,b)",
         L, 12, {"P_x": ([8, 9, 10, 11], [2, 2, 1]), "P_y": (rng(0, 12), [3, 2, 2])}, [2, 2], {"transpose_src": True})
    case(f, "transpose_src_2x2x1_to_3x2x2_disjoint", "transpose_src broadcast onto disjoint workers",
         L, 16, {"P_x": (rng(12, 16), [2, 2, 1]), "P_y": (rng(0, 12), [3, 2, 2])}, [3], {"transpose_src": True})
    case(f, "transpose_dest_3x1_to_2x3", "transpose_dest: P_y 2x3 acts as 3x2",
         L, 6, {"P_x": (rng(0, 3), [3, 1]), "P_y": (rng(0, 6), [2, 3])}, [2, 2], {"transpose_dest": True})
    case(f, "transpose_both_1x3_to_3x2", "Both flags: P_x 1x3 acts as 3x1, P_y 2x3 acts as 3x2",
         L, 9, {"P_x": (rng(6, 9), [1, 3]), "P_y": (rng(0, 6), [2, 3])}, [2, 2],
         {"transpose_src": True, "transpose_dest": True})
    case(f, "transpose_src_3_to_3x2", "transpose_src on a 1-D partition changes nothing",
         L, 6, {"P_x": (rng(0, 3), [3]), "P_y": (rng(0, 6), [2, 3])}, [5], {"transpose_src": True})
    case(f, "rank4_1x1x1x1_to_2x1x2x2", "Rank-4 partitions, one source",
         L, 8, {"P_x": ([3], [1, 1, 1, 1]), "P_y": (rng(0, 8), [2, 1, 2, 2])}, [1, 2, 1, 3])
    case(f, "x_rank1", "Rank-1 local tensors", L, 4, {"P_x": ([0, 1], [2]), "P_y": (rng(0, 4), [2, 2])}, [7])
    case(f, "x_empty_pieces", "Zero-volume local pieces [2,0] are broadcast too",
         L, 4, {"P_x": ([0, 1], [2]), "P_y": (rng(0, 4), [2, 2])}, [2, 0])
    case(f, "world18_1x3_to_5x3", "Sources 15..17 feed a 5x3 partition on 0..14: world of 18",
         L, 18, {"P_x": (rng(15, 18), [1, 3]), "P_y": (rng(0, 15), [5, 3])}, [2, 2])
    case(f, "world18_float32", "World of 18 in float32",
         L, 18, {"P_x": (rng(15, 18), [1, 3]), "P_y": (rng(0, 15), [5, 3])}, [2, 2], dtype="float32")
    case(f, "world7_1_to_7_float32", "One source, seven receivers, float32",
         L, 7, {"P_x": ([3], [1]), "P_y": (rng(0, 7), [7])}, [3, 3], dtype="float32")
    case(f, "world2_1_to_2", "Smallest non-trivial broadcast", L, 2, {"P_x": ([1], [1]), "P_y": (rng(0, 2), [2])}, [4])
    case(f, "seeded_2x1_to_2x4", "Explicit seed; 2x1 to 2x4",
         L, 8, {"P_x": ([0, 4], [2, 1]), "P_y": (rng(0, 8), [2, 4])}, [3, 2], seed=7)
    # refusals
    case(f, "refuse_2_to_3", "Extents 2 and 3 cannot be matched",
         L, 5, {"P_x": ([0, 1], [2]), "P_y": (rng(2, 5), [3])}, [2],
         expect=refuse("Broadcast: P_x shape [2] cannot broadcast to P_y shape [3] (dimension 0: 2 vs 3)"))
    case(f, "refuse_dim_px_gt_py", "dim(P_x) > dim(P_y) is not a broadcast",
         L, 4, {"P_x": (rng(0, 2), [1, 1, 2]), "P_y": (rng(2, 4), [2])}, [2],
         expect=refuse("(P_x has dimension 3 > 1)"))
    case(f, "refuse_3x1_to_1x3", "Without a transpose flag a 3x1 partition does not broadcast to 1x3",
         L, 3, {"P_x": (rng(0, 3), [3, 1]), "P_y": (rng(0, 3), [1, 3])}, [2],
         expect=refuse("Broadcast: P_x shape [3,1] cannot broadcast to P_y shape [1,3] (dimension 0: 3 vs 1)"))
    case(f, "refuse_transposed_mismatch", "transpose_src turns 2x3 into 3x2, which does not match 2x3",
         L, 12, {"P_x": (rng(0, 6), [2, 3]), "P_y": (rng(6, 12), [2, 3])}, [2], {"transpose_src": True},
         expect=refuse("P_x shape [2,3] (transposed) cannot broadcast to P_y shape [2,3]"))


# --------------------------------------------------------------------------------- SumReduce
def sum_reduce_cases():
    f, L = "sum_reduce", "SumReduce"
    case(f, "spec000_example1_4_to_1", "Spec 000 example 1: a 4 partition reduces to 1",
         L, 4, {"P_x": (rng(0, 4), [4]), "P_y": ([0], [1])}, [3, 5])
    case(f, "spec000_example2_2x3_to_1", "Spec 000 example 2: 2x3 reduces to 1 (P_y padded to 1x1)",
         L, 6, {"P_x": (rng(0, 6), [2, 3]), "P_y": ([0], [1])}, [2, 2])
    case(f, "spec000_example3_3x4_to_3x1", "Spec 000 example 3: 3x4 reduces to 3x1",
         L, 12, {"P_x": (rng(0, 12), [3, 4]), "P_y": ([0, 4, 8], [3, 1])}, [2, 3])
    case(f, "spec000_example4_4x4x3_to_1x1x3", "Spec 000 example 4: 4x4x3 reduces to 1x1x3 (48 workers)",
         L, 48, {"P_x": (rng(0, 48), [4, 4, 3]), "P_y": ([0, 1, 2], [1, 1, 3])}, [2, 2])
    case(f, "spec000_example5_refused", "Spec 000 example 5: 3x3x2 does not reduce to 1x1x3",
         L, 18, {"P_x": (rng(0, 18), [3, 3, 2]), "P_y": ([0, 1, 2], [1, 1, 3])}, [2],
         expect=refuse("SumReduce: P_x shape [3,3,2] cannot reduce to P_y shape [1,1,3] (dimension 2: 2 vs 3)"))
    case(f, "spec000_example6_refused", "Spec 000 example 6: 1x3 does not reduce to 3x1",
         L, 3, {"P_x": (rng(0, 3), [1, 3]), "P_y": (rng(0, 3), [3, 1])}, [2],
         expect=refuse("SumReduce: P_x shape [1,3] cannot reduce to P_y shape [3,1] (dimension 0: 1 vs 3)"))
    case(f, "spec000_example6_transpose_src", "Spec 000 example 6 with transpose_src: it reduces (not an identity)",
         L, 3, {"P_x": (rng(0, 3), [1, 3]), "P_y": (rng(0, 3), [3, 1])}, [2, 2], {"transpose_src": True})
    case(f, "spec000_example6_transpose_dest", "Spec 000 example 6 with transpose_dest: it reduces",
         L, 3, {"P_x": (rng(0, 3), [1, 3]), "P_y": (rng(0, 3), [3, 1])}, [2, 2], {"transpose_dest": True})
    case(f, "spec000_example7_transpose_src_3x4_to_1x3", "Spec 000 example 7: 3x4 to 1x3 with transpose_src",
         L, 12, {"P_x": (rng(0, 12), [3, 4]), "P_y": (rng(0, 3), [1, 3])}, [2, 2], {"transpose_src": True})
    case(f, "spec000_example8_transpose_dest_3x4_to_4x1", "Spec 000 example 8: 3x4 to 4x1 with transpose_dest",
         L, 12, {"P_x": (rng(0, 12), [3, 4]), "P_y": (rng(0, 4), [4, 1])}, [2, 2], {"transpose_dest": True})
    case(f, "spec000_code_4x3_to_1x3", "Spec 000 code example: 4x3 to 1x3, local [7,5], preserve_batch false",
         L, 12, {"P_x": (rng(0, 12), [4, 3]), "P_y": (rng(0, 3), [1, 3])}, [7, 5], {"preserve_batch": False})
    case(f, "spec001_2x3x2_to_1x3x1", "Spec 001 worked table: 2x3x2 on 12 workers to 1x3x1 on workers 1,2,3",
         L, 12, {"P_x": (rng(0, 12), [2, 3, 2]), "P_y": ([1, 2, 3], [1, 3, 1])}, [2, 3])
    case(f, "spec001_2x3x2_to_1x3x1_float32", "Spec 001 worked table reduction in float32",
         L, 12, {"P_x": (rng(0, 12), [2, 3, 2]), "P_y": ([1, 2, 3], [1, 3, 1])}, [2, 3], dtype="float32")
    case(f, "identity_1_to_1", "World of one: a reduction of one piece is a copy",
         L, 1, {"P_x": ([0], [1]), "P_y": ([0], [1])}, [2, 2])
    case(f, "identity_same_3", "Same 3-worker partition on both sides: identity",
         L, 3, {"P_x": (rng(0, 3), [3]), "P_y": (rng(0, 3), [3])}, [4])
    case(f, "disjoint_2x3_to_1x3", "Sources and destinations are disjoint",
         L, 9, {"P_x": (rng(0, 6), [2, 3]), "P_y": (rng(6, 9), [1, 3])}, [3, 2])
    case(f, "single_destination_outside", "Five sources reduce into one worker outside them",
         L, 6, {"P_x": (rng(1, 6), [5]), "P_y": ([0], [1])}, [2, 3])
    case(f, "idle_workers", "Workers 0, 5 and 9 take no part",
         L, 10, {"P_x": ([1, 2, 3, 4], [2, 2]), "P_y": ([6, 7], [1, 2])}, [3, 2])
    case(f, "idle_workers_float32", "Idle workers, float32",
         L, 10, {"P_x": ([1, 2, 3, 4], [2, 2]), "P_y": ([6, 7], [1, 2])}, [3, 2], dtype="float32")
    case(f, "preserve_batch_false", "Source-only workers return {0}",
         L, 6, {"P_x": (rng(0, 6), [3, 2]), "P_y": ([4, 5], [1, 2])}, [4, 2], {"preserve_batch": False})
    case(f, "preserve_batch_true", "Source-only workers return {batch, 0}",
         L, 6, {"P_x": (rng(0, 6), [3, 2]), "P_y": ([4, 5], [1, 2])}, [4, 2], {"preserve_batch": True})
    case(f, "destination_reversed", "Destinations listed in reverse world order",
         L, 8, {"P_x": (rng(0, 8), [2, 4]), "P_y": ([7, 6, 5, 4], [1, 4])}, [2, 2])
    case(f, "rank1_pieces", "Rank-1 pieces", L, 5, {"P_x": (rng(0, 4), [4]), "P_y": ([4], [1])}, [9])
    case(f, "empty_pieces", "Zero-volume pieces [3,0] still reduce", L, 4,
         {"P_x": (rng(0, 4), [2, 2]), "P_y": ([0, 1], [2, 1])}, [3, 0])
    case(f, "rank4_2x1x2x2_to_1x1x1x2", "Rank-4 partitions",
         L, 8, {"P_x": (rng(0, 8), [2, 1, 2, 2]), "P_y": ([2, 5], [1, 1, 1, 2])}, [1, 2, 2, 1])
    case(f, "world18_6x3_to_1x3", "18 sources reduce into three",
         L, 18, {"P_x": (rng(0, 18), [6, 3]), "P_y": ([15, 16, 17], [1, 3])}, [2, 3])
    case(f, "world17_17_to_1", "17 workers reduce onto worker 8", L, 17, {"P_x": (rng(0, 17), [17]), "P_y": ([8], [1])}, [3])
    case(f, "world11_float32", "11 workers, float32", L, 11, {"P_x": (rng(0, 11), [11]), "P_y": ([10], [1])},
         [5, 2], dtype="float32")
    case(f, "transpose_both", "Both flags on a 2x3 -> 2x1 reduction (acts as 3x2 -> 1x2)",
         L, 8, {"P_x": (rng(0, 6), [2, 3]), "P_y": (rng(6, 8), [2, 1])}, [2, 2],
         {"transpose_src": True, "transpose_dest": True})
    # refusals
    case(f, "refuse_2_to_3", "3 is neither 2 nor 1", L, 5, {"P_x": (rng(0, 2), [2]), "P_y": (rng(2, 5), [3])}, [2],
         expect=refuse("SumReduce: P_x shape [2] cannot reduce to P_y shape [3] (dimension 0: 2 vs 3)"))
    case(f, "refuse_dim_py_gt_px", "dim(P_y) > dim(P_x) is not a reduction",
         L, 4, {"P_x": (rng(0, 2), [2]), "P_y": (rng(2, 4), [1, 2])}, [2],
         expect=refuse("(P_y has dimension 2 > 1)"))
    case(f, "refuse_transpose_dest_mismatch", "transpose_dest turns 1x2 into 2x1, which 1x2 cannot reduce to",
         L, 4, {"P_x": (rng(0, 2), [1, 2]), "P_y": (rng(2, 4), [1, 2])}, [2], {"transpose_dest": True},
         expect=refuse("P_y shape [1,2] (transposed)"))


# --------------------------------------------------------------------------------- AllSumReduce
def all_sum_reduce_cases():
    f, L = "all_sum_reduce", "AllSumReduce"
    case(f, "spec001_2x3x2_axes_0_2", "Spec 001: 2x3x2 all-reduction over dims 0 and 2 (teams {0,1,6,7}, {2,3,8,9}, {4,5,10,11})",
         L, 12, {"P_x": (rng(0, 12), [2, 3, 2])}, [2, 3], {"axes_reduce": [0, 2]})
    case(f, "spec001_2x3x2_axes_0_2_float32", "Spec 001 all-reduction in float32",
         L, 12, {"P_x": (rng(0, 12), [2, 3, 2])}, [2, 3], {"axes_reduce": [0, 2]}, dtype="float32")
    case(f, "no_axes_identity", "No axes: the identity", L, 4, {"P_x": (rng(0, 4), [2, 2])}, [3], {"axes_reduce": []})
    case(f, "all_axes", "All axes: every worker gets the sum over P_x",
         L, 8, {"P_x": (rng(0, 8), [2, 2, 2])}, [2, 2], {"axes_reduce": [0, 1, 2]})
    case(f, "axis0_of_3x2", "Sum down the columns of a 3x2 partition", L, 6, {"P_x": (rng(0, 6), [3, 2])}, [4],
         {"axes_reduce": [0]})
    case(f, "axis1_of_3x2", "Sum along the rows of a 3x2 partition", L, 6, {"P_x": (rng(0, 6), [3, 2])}, [4],
         {"axes_reduce": [1]})
    case(f, "axes_listed_out_of_order", "Axes [2, 0] mean the same as [0, 2]",
         L, 12, {"P_x": (rng(0, 12), [2, 3, 2])}, [2], {"axes_reduce": [2, 0]})
    case(f, "single_worker", "World of one", L, 1, {"P_x": ([0], [1])}, [2, 3], {"axes_reduce": [0]})
    case(f, "idle_workers", "P_x on workers 2..7 of 10; the others return their input",
         L, 10, {"P_x": (rng(2, 8), [2, 3])}, [3, 3], {"axes_reduce": [1]})
    case(f, "scattered_workers", "P_x on a scattered, reordered set of workers",
         L, 9, {"P_x": ([8, 1, 6, 3], [2, 2])}, [2, 2], {"axes_reduce": [0]})
    case(f, "extent1_axis", "Reducing over an axis of extent 1 changes nothing",
         L, 3, {"P_x": (rng(0, 3), [1, 3])}, [5], {"axes_reduce": [0]})
    case(f, "rank4_partition", "Rank-4 partition, axes 1 and 3",
         L, 16, {"P_x": (rng(0, 16), [2, 2, 2, 2])}, [2], {"axes_reduce": [1, 3]})
    case(f, "world18_3x6_axis1", "World of 18: 3 teams of 6", L, 18, {"P_x": (rng(0, 18), [3, 6])}, [2, 2],
         {"axes_reduce": [1]})
    case(f, "world18_2x3x3_axes01", "World of 18: 3 teams of 6 over two axes",
         L, 18, {"P_x": (rng(0, 18), [2, 3, 3])}, [3], {"axes_reduce": [0, 1]}, dtype="float32")
    case(f, "world5_all", "5 workers all sum", L, 5, {"P_x": (rng(0, 5), [5])}, [4, 2], {"axes_reduce": [0]})
    case(f, "world13_partial", "13 of 14 workers", L, 14, {"P_x": (rng(1, 14), [13])}, [2], {"axes_reduce": [0]})
    case(f, "empty_pieces", "Zero-volume pieces", L, 4, {"P_x": (rng(0, 4), [4])}, [2, 0], {"axes_reduce": [0]})
    case(f, "float32_2x2", "float32, one axis", L, 4, {"P_x": (rng(0, 4), [2, 2])}, [3, 3], {"axes_reduce": [1]},
         dtype="float32")
    # refusals
    case(f, "refuse_axis_out_of_range", "Axis 2 of a 2-D partition", L, 4, {"P_x": (rng(0, 4), [2, 2])}, [2],
         {"axes_reduce": [2]}, expect=refuse("AllSumReduce: axis 2 out of range for P_x shape [2,2]"))
    case(f, "refuse_axis_repeated", "Axis 0 twice", L, 4, {"P_x": (rng(0, 4), [2, 2])}, [2],
         {"axes_reduce": [0, 0]}, expect=refuse("AllSumReduce: axis 0 repeated in axes_reduce [0,0]"))
    case(f, "refuse_axis_out_of_range_idle", "Out-of-range axis; idle workers must refuse too",
         L, 6, {"P_x": (rng(0, 3), [3])}, [2], {"axes_reduce": [1]},
         expect=refuse("AllSumReduce: axis 1 out of range for P_x shape [3]"))


# --------------------------------------------------------------------------------- Repartition
def repartition_cases():
    f, L = "repartition", "Repartition"
    case(f, "spec003_example1_5_to_3", "Spec 003 example 1: 1-D, 5 workers to 3",
         L, 5, {"P_x": (rng(0, 5), [5]), "P_y": (rng(0, 3), [3])}, [11])
    case(f, "spec003_example1_5_to_3_disjoint", "Spec 003 example 1 on disjoint workers",
         L, 8, {"P_x": (rng(0, 5), [5]), "P_y": (rng(5, 8), [3])}, [11])
    case(f, "spec003_example2_3x4_to_4x2", "Spec 003 example 2: 3x4 to 4x2",
         L, 12, {"P_x": (rng(0, 12), [3, 4]), "P_y": (rng(0, 8), [4, 2])}, [10, 9])
    case(f, "spec003_example3_3x2x2_to_1x2x3", "Spec 003 example 3: 3x2x2 to 1x2x3",
         L, 12, {"P_x": (rng(0, 12), [3, 2, 2]), "P_y": (rng(0, 6), [1, 2, 3])}, [5, 4, 7])
    case(f, "spec003_example4_scatter_1x1x1_to_1x3x2", "Spec 003 example 4: scatter from one worker to 1x3x2",
         L, 6, {"P_x": ([0], [1, 1, 1]), "P_y": (rng(0, 6), [1, 3, 2])}, [2, 7, 5])
    case(f, "spec003_example4_scatter_1x1x1_to_1x2x3", "Spec 003 example 4 (as drawn): scatter to 1x2x3",
         L, 6, {"P_x": ([0], [1, 1, 1]), "P_y": (rng(0, 6), [1, 2, 3])}, [2, 5, 7])
    case(f, "spec003_example5_gather_1x3x2_to_1x1x1", "Spec 003 example 5: gather from 1x3x2 to one worker",
         L, 6, {"P_x": (rng(0, 6), [1, 3, 2]), "P_y": ([0], [1, 1, 1])}, [2, 7, 5])
    case(f, "spec003_3x3_to_4x4", "Spec 003 sketch: 3x3 to 4x4",
         L, 16, {"P_x": (rng(0, 9), [3, 3]), "P_y": (rng(0, 16), [4, 4])}, [11, 10])
    case(f, "spec003_3x3_to_4x4_float32", "Spec 003 sketch in float32",
         L, 16, {"P_x": (rng(0, 9), [3, 3]), "P_y": (rng(0, 16), [4, 4])}, [11, 10], dtype="float32")
    case(f, "identity_same_partition", "Identical layouts move no data", L, 4,
         {"P_x": (rng(0, 4), [2, 2]), "P_y": (rng(0, 4), [2, 2])}, [5, 6])
    case(f, "identity_single_worker", "World of one", L, 1, {"P_x": ([0], [1, 1]), "P_y": ([0], [1, 1])}, [3, 4])
    case(f, "rebalance_same_partition", "Unbalanced input on the same partition is rebalanced",
         L, 3, {"P_x": (rng(0, 3), [3]), "P_y": (rng(0, 3), [3])}, [8], input_split="unbalanced")
    case(f, "unbalanced_2x2_to_3x1", "Unbalanced 2x2 input (remainders on the first worker of each dimension)",
         L, 4, {"P_x": (rng(0, 4), [2, 2]), "P_y": (rng(0, 3), [3, 1])}, [7, 5], input_split="unbalanced")
    case(f, "unbalanced_3x2x1_to_1x2x3", "Unbalanced 3-D input",
         L, 8, {"P_x": (rng(0, 6), [3, 2, 1]), "P_y": (rng(2, 8), [1, 2, 3])}, [8, 5, 7], input_split="unbalanced")
    case(f, "balanced_explicit", "input_split given as balanced", L, 6,
         {"P_x": (rng(0, 6), [6]), "P_y": (rng(0, 4), [4])}, [13], input_split="balanced")
    case(f, "n_less_than_p_input", "7 workers hold a length-4 dimension: some pieces are empty",
         L, 7, {"P_x": (rng(0, 7), [7, 1]), "P_y": (rng(0, 2), [2, 1])}, [4, 3])
    case(f, "n_less_than_p_output", "A length-3 dimension over 5 output workers",
         L, 5, {"P_x": ([0], [1, 1]), "P_y": (rng(0, 5), [1, 5])}, [2, 3])
    case(f, "n_less_than_p_both", "Empty pieces on both sides", L, 9,
         {"P_x": (rng(0, 6), [6]), "P_y": (rng(3, 9), [6])}, [2])
    case(f, "disjoint_2x2_to_2x2_transposed_data", "Disjoint 2x2 to 2x2 with different workers",
         L, 8, {"P_x": (rng(0, 4), [2, 2]), "P_y": ([7, 6, 5, 4], [2, 2])}, [5, 5])
    case(f, "row_to_column", "4x1 rows to 1x4 columns (the all-to-all of spec 003's motivation)",
         L, 4, {"P_x": (rng(0, 4), [4, 1]), "P_y": (rng(0, 4), [1, 4])}, [4, 4])
    case(f, "idle_workers", "Workers 0 and 9 idle; P_x and P_y overlap partly",
         L, 10, {"P_x": (rng(1, 7), [2, 3]), "P_y": (rng(4, 9), [5, 1])}, [6, 6])
    case(f, "preserve_batch_false", "Input-only workers return {0}",
         L, 6, {"P_x": (rng(0, 6), [3, 2]), "P_y": ([0, 1], [2, 1])}, [6, 4], {"preserve_batch": False})
    case(f, "preserve_batch_true", "Input-only workers return {batch, 0}",
         L, 6, {"P_x": (rng(0, 6), [3, 2]), "P_y": ([0, 1], [2, 1])}, [6, 4], {"preserve_batch": True})
    case(f, "rank4_tensor", "Rank-4 tensor, 2x1x2x1 to 1x2x1x2",
         L, 8, {"P_x": (rng(0, 4), [2, 1, 2, 1]), "P_y": (rng(4, 8), [1, 2, 1, 2])}, [3, 4, 5, 3])
    case(f, "world18_3x6_to_6x3", "World of 18: 3x6 to 6x3", L, 18,
         {"P_x": (rng(0, 18), [3, 6]), "P_y": (rng(0, 18), [6, 3])}, [9, 8])
    case(f, "world18_unbalanced_float32", "World of 18, unbalanced input, float32", L, 18,
         {"P_x": (rng(0, 18), [2, 9]), "P_y": (rng(0, 18), [9, 2])}, [10, 11], input_split="unbalanced",
         dtype="float32")
    case(f, "world15_5x3_to_3x5", "World of 15", L, 15, {"P_x": (rng(0, 15), [5, 3]), "P_y": (rng(0, 15), [3, 5])},
         [7, 7])
    case(f, "world13_13_to_1", "Gather of 13 pieces onto the last worker", L, 13,
         {"P_x": (rng(0, 13), [13]), "P_y": ([12], [1])}, [20])
    case(f, "world14_scatter", "Scatter from worker 13 to 2x7", L, 14,
         {"P_x": ([13], [1, 1]), "P_y": (rng(0, 14), [2, 7])}, [3, 9], dtype="float32")
    case(f, "batch_dim_kept", "Only the feature dimension is repartitioned", L, 5,
         {"P_x": (rng(0, 2), [1, 2]), "P_y": (rng(2, 5), [1, 3])}, [4, 10])
    # refusals
    case(f, "refuse_partition_dimensions_differ", "P_x and P_y must have the same dimension",
         L, 4, {"P_x": (rng(0, 2), [2]), "P_y": (rng(2, 4), [2, 1])}, [4],
         expect=refuse("Repartition: P_x shape [2] and P_y shape [2,1] differ in dimension (1 vs 2)"))
    case(f, "refuse_tensor_rank_mismatch", "A 1-D tensor on 2-D partitions (every worker takes part)",
         L, 2, {"P_x": (rng(0, 2), [2, 1]), "P_y": (rng(0, 2), [1, 2])}, [6],
         expect=refuse("the tensor must have rank 2"))
    case(f, "size1_dimension_split", "A size-1 tensor dimension split by P_y: pieces of extent 1 and 0 (a "
         "batch of 1 on a partition that splits the batch)", L, 2,
         {"P_x": (rng(0, 2), [1, 2]), "P_y": (rng(0, 2), [2, 1])}, [1, 6])
    case(f, "size1_dimension_split_3d", "Size-1 middle dimension split over 3 (every worker takes part)",
         L, 3, {"P_x": (rng(0, 3), [3, 1, 1]), "P_y": (rng(0, 3), [1, 3, 1])}, [6, 1, 2])


# --------------------------------------------------------------------------------- scale
def scale_cases(sizes, folder="scale"):
    """Square worlds of n = s*s workers, 4x4 elements (pixels) per worker: the four primitives,
    HaloExchange, and a layer of each family with halos or parameters (few channels; Linear 4s
    features), and three refusals. What the simulator must run at cluster scale
    (scripts/sim-scaling.sh times the cases that pass)."""
    for n in sizes:
        s = round(n ** 0.5)
        assert s * s == n and s % 2 == 0, n
        every = rng(0, n)
        layer_scale_cases(folder, n, s)
        case(folder, f"broadcast_1_to_{s}x{s}", f"Broadcast from one worker to all {n}", "Broadcast", n,
             {"P_x": ([0], [1, 1]), "P_y": (every, [s, s])}, [4, 4])
        case(folder, f"sum_reduce_{s}x{s}_to_1", f"SumReduce of all {n} workers onto one", "SumReduce", n,
             {"P_x": (every, [s, s]), "P_y": ([0], [1, 1])}, [4, 4])
        case(folder, f"all_sum_reduce_{s}x{s}", f"AllSumReduce over both axes of {n} workers", "AllSumReduce", n,
             {"P_x": (every, [s, s])}, [4, 4], {"axes_reduce": [0, 1]})
        case(folder, f"repartition_{s}x{s}_to_{2 * s}x{s // 2}", f"Repartition of {n} workers, 4x4 elements each",
             "Repartition", n, {"P_x": (every, [s, s]), "P_y": (every, [2 * s, s // 2])}, [4 * s, 4 * s])


def layer_scale_cases(folder, n, s):
    every, h = rng(0, n), s // 2
    image = {"P_x": (every, [1, 1, s, s])}
    conv3 = {"kernel_size": 3, "padding": 1}
    case(folder, f"halo_exchange_{s}x{s}", f"HaloExchange of a 3x3 kernel, padding 1, over {n} workers",
         "HaloExchange", n, {"P_x": (every, [s, s])}, [4 * s, 4 * s], {"kernel_size": [3, 3], "padding": [1, 1]})
    case(folder, f"feature_conv2d_{s}x{s}", f"FeatureConv2d 2 -> 3 channels over a {s}x{s} grid of the image",
         "FeatureConv2d", n, image, [1, 2, 4 * s, 4 * s], {"in_channels": 2, "out_channels": 3, **conv3})
    channels = {"P_x": (rng(0, s), [1, s, 1, 1]), "P_y": (rng(0, s), [1, s, 1, 1]), "P_w": (every, [s, s, 1, 1])}
    case(folder, f"channel_conv2d_{s}x{s}", f"ChannelConv2d {s} -> {s} channels over P_w {s}x{s}",
         "ChannelConv2d", n, channels, [1, s, 4, 4], {"in_channels": s, "out_channels": s, **conv3})
    case(folder, f"general_conv2d_2x2x{h}x{h}", f"GeneralConv2d 4 -> 4 channels over P_w 2x2x{h}x{h}",
         "GeneralConv2d", n, {"P_x": (rng(0, n // 2), [1, 2, h, h]), "P_y": (rng(0, n // 2), [1, 2, h, h]),
                              "P_w": (every, [2, 2, h, h])}, [1, 4, 4 * h, 4 * h],
         {"in_channels": 4, "out_channels": 4, **conv3})
    case(folder, f"max_pool2d_{s}x{s}", f"MaxPool2d 2x2 over a {s}x{s} grid of the image", "MaxPool2d", n, image,
         [1, 2, 4 * s, 4 * s], {"kernel_size": 2})
    case(folder, f"avg_pool2d_{s}x{s}", f"AvgPool2d 3x3, stride 2, padding 1 over a {s}x{s} grid of the image",
         "AvgPool2d", n, image, [1, 2, 4 * s, 4 * s], {"kernel_size": 3, "stride": 2, "padding": 1})
    linear = {"P_x": (rng(0, s), [1, s]), "P_y": (rng(0, s), [1, s]), "P_w": (every, [s, s])}
    case(folder, f"linear_{s}x{s}", f"Linear {4 * s} -> {4 * s} features over P_w {s}x{s}", "Linear", n, linear,
         [2, 4 * s], {"in_features": 4 * s, "out_features": 4 * s})
    # Refusals: every worker ends with the error, none waits (at the first call; at construction).
    case(folder, f"feature_conv2d_{s}x{s}_wrong_channels_refused",
         f"FeatureConv2d learning its input shape is given 3 channels for 2, on all {n} workers", "FeatureConv2d", n,
         image, [1, 3, 4 * s, 4 * s], {"in_channels": 2, "out_channels": 3, **conv3}, input_shape="learnt",
         expect=refuse("FeatureConv2d: x on P_x worker 0 (world rank 0) has shape [1,3,4,4], expected [batch, 2, "
                       "2 spatial extents]"))
    case(folder, f"linear_{s}x{s}_half_P_x_refused", f"Linear with P_x 1x{h} against P_w {s}x{s}", "Linear", n,
         {**linear, "P_x": (rng(0, h), [1, h])}, [2, 4 * s], {"in_features": 4 * s, "out_features": 4 * s},
         expect=refuse(f"Linear: P_W shape [{s},{s}] does not match P_x shape [1,{h}] in the in_features split "
                       f"(P_W dimension 1: {s} vs P_x dimension 1: {h})"))
    case(folder, f"max_pool2d_{s}x{s}_kernel_too_large_refused", "A kernel longer than the image",
         "MaxPool2d", n, image, [1, 2, 4 * s, 4 * s], {"kernel_size": [4 * s + 1, 1]},
         expect=refuse(f"MaxPool2d: kernel {4 * s + 1} (dilation 1, extent {4 * s + 1}) does not fit in spatial "
                       f"dimension 0 of length {4 * s}"))


# --------------------------------------------------------------------------------- HaloExchange
def halo_cases():
    f, L = "halo_exchange", "HaloExchange"

    def halo(name, desc, ws, workers, shape, x, k, s=None, p=None, d=None, dtype=None, expect="pass"):
        opts = {"kernel_size": k}
        if s is not None:
            opts["stride"] = s
        if p is not None:
            opts["padding"] = p
        if d is not None:
            opts["dilation"] = d
        case(f, name, desc, L, ws, {"P_x": (workers, shape)}, x, opts, expect=expect, dtype=dtype)

    halo("k3_p1_1d_4", "1-D, kernel 3, padding 1 on 4 workers: one-element halos", 4, rng(0, 4), [4], [12], 3, p=1)
    halo("k3_p0_1d_4", "1-D, kernel 3, no padding: the output is shorter, halos are one-sided", 4, rng(0, 4), [4], [12], 3)
    halo("k1_identity", "Kernel 1, stride 1: every worker needs exactly its own piece", 3, rng(0, 3), [3], [9], 1)
    halo("k5_p2_1d_3", "Kernel 5, padding 2: two-element halos", 3, rng(0, 3), [3], [12], 5, p=2)
    halo("stride2_k3_p1", "Stride 2: windows shift relative to the owned pieces", 4, rng(0, 4), [4], [16], 3, s=2, p=1)
    halo("stride2_k1_negative_halo", "Stride 2, kernel 1: workers need less than they own (negative halos)",
         4, rng(0, 4), [4], [16], 1, s=2)
    halo("stride3_k2_p2", "Stride 3, kernel 2, padding 2", 3, rng(0, 3), [3], [14], 2, s=3, p=2)
    halo("dilation2_k3_p2", "Dilation 2: a kernel of span 5", 4, rng(0, 4), [4], [16], 3, p=2, d=2)
    halo("dilation3_k3_wider_than_piece", "Dilation 3 on pieces of 2: halos of 3 reach past the neighbour",
         5, rng(0, 5), [5], [10], 3, p=3, d=3)
    halo("wide_kernel_wider_than_piece", "Kernel 7, padding 3 on pieces of 2: halos wider than a neighbour's piece",
         4, rng(0, 4), [4], [8], 7, p=3)
    halo("wide_kernel_no_padding", "Kernel 7, no padding, pieces of 2", 5, rng(0, 5), [5], [10], 7)
    halo("kernel_equals_length", "Kernel as long as the input: one output, every worker but one idle",
         3, rng(0, 3), [3], [6], 6)
    halo("n_less_than_p", "Length 3 over 5 workers: empty pieces and empty windows", 5, rng(0, 5), [5], [3], 1)
    halo("n_less_than_p_k3_p1", "Length 4 over 6 workers with a kernel 3", 6, rng(0, 6), [6], [4], 3, p=1)
    halo("stride_dilation_padding", "Stride 2, dilation 2, padding 3, kernel 4", 4, rng(0, 4), [4], [19], 4, s=2, p=3,
         d=2)
    halo("big_padding", "Padding larger than the pieces", 4, rng(0, 4), [4], [8], 3, p=4)
    halo("single_worker", "One worker: its window is the padded tensor", 1, [0], [1], [7], 3, p=1)
    halo("single_worker_2d", "One worker, 2-D", 1, [0], [1, 1], [4, 5], [3, 3], p=[1, 1])
    halo("2d_2x2_k3_p1", "2-D 2x2 partition, 3x3 kernel, padding 1 (corners come from diagonal neighbours)",
         4, rng(0, 4), [2, 2], [6, 6], 3, p=1)
    halo("2d_2x3_mixed", "2-D, per-dimension kernel [3,5], stride [1,2], padding [1,2]",
         6, rng(0, 6), [2, 3], [7, 11], [3, 5], s=[1, 2], p=[1, 2])
    halo("2d_3x3_dilated", "2-D 3x3 partition, dilation 2", 9, rng(0, 9), [3, 3], [9, 9], 3, p=2, d=2)
    halo("2d_batch_channel_unsplit", "Batch and channel dimensions unsplit, kernel 1 on them",
         4, rng(0, 4), [1, 1, 4], [2, 3, 16], [1, 1, 3], p=[0, 0, 1])
    halo("3d_2x2x2", "3-D 2x2x2 partition, 3x3x3 kernel, padding 1", 8, rng(0, 8), [2, 2, 2], [4, 5, 6], 3, p=1)
    halo("3d_conv_like", "Conv2d-like: batch 2, channels 2 unsplit, 2x2 spatial, kernel 3 stride 2",
         4, rng(0, 4), [1, 1, 2, 2], [2, 2, 7, 7], [1, 1, 3, 3], s=[1, 1, 2, 2], p=[0, 0, 1, 1])
    halo("idle_workers", "P_x on workers 3..6 of 9; the others idle", 9, rng(3, 7), [4], [12], 3, p=1)
    halo("scattered_workers", "P_x on reordered workers", 6, [5, 0, 3, 1], [2, 2], [6, 5], 3, p=1)
    halo("float32_2d", "2-D, float32", 6, rng(0, 6), [3, 2], [9, 6], 3, p=1, dtype="float32")
    halo("float32_wide", "Wide kernel, float32", 4, rng(0, 4), [4], [8], 5, p=2, dtype="float32")
    halo("world18_3x6", "World of 18: 3x6 partition, 3x3 kernel", 18, rng(0, 18), [3, 6], [9, 14], 3, p=1)
    halo("world18_1d_wide", "World of 18, 1-D, length 20, kernel 5 dilation 2: halos wider than pieces",
         18, rng(0, 18), [18], [20], 5, p=4, d=2)
    halo("world16_4x4_stride2", "World of 16, stride 2", 16, rng(0, 16), [4, 4], [12, 12], 3, s=2, p=1,
         dtype="float32")
    halo("world11_1d", "World of 11, 1-D", 11, rng(0, 11), [11], [30], 3, p=1)
    halo("world10_2x5", "World of 10", 10, rng(0, 10), [2, 5], [5, 12], [3, 3], p=[1, 0])
    halo("world12_2x2x3", "World of 12, 3-D", 12, rng(0, 12), [2, 2, 3], [4, 4, 6], 3, p=1, d=1)
    halo("stride_larger_than_kernel", "Stride 3 with kernel 2: input entries nobody reads",
         4, rng(0, 4), [4], [13], 2, s=3)
    # refusals
    halo("refuse_kernel_larger_than_padded_input", "Kernel 7 on a length-4 input with padding 1",
         2, rng(0, 2), [2], [4], 7, p=1, expect=refuse("kernel does not fit in dimension 0"))
    halo("refuse_kernel_larger_2d", "Kernel 6 in dimension 1 of a [5,4] input",
         4, rng(0, 4), [2, 2], [5, 4], [3, 6], expect=refuse("kernel does not fit in dimension 1"))
    halo("refuse_dilated_kernel_too_wide", "Dilation 4 makes a kernel 3 span 9 > 6",
         3, rng(0, 3), [3], [6], 3, d=4, expect=refuse("kernel does not fit in dimension 0"))
    halo("refuse_kernel_zero", "Kernel size 0", 2, rng(0, 2), [2], [6], 0, expect=refuse("must be at least 1"))
    halo("refuse_stride_zero", "Stride 0", 2, rng(0, 2), [2], [6], 3, s=0, expect=refuse("must be at least 1"))
    halo("refuse_dilation_zero", "Dilation 0", 2, rng(0, 2), [2], [6], 3, d=0, expect=refuse("must be at least 1"))
    halo("refuse_partition_tensor_dims", "A 2-D partition for a 3-D tensor", 4, rng(0, 4), [2, 2], [4, 4, 4], 3,
         expect=refuse("dimensions differ (2 vs 3)"))
    halo("refuse_partition_tensor_dims_idle", "A 1-D partition for a 2-D tensor, with idle workers",
         5, rng(0, 3), [3], [6, 6], 1, expect=refuse("dimensions differ (1 vs 2)"))


# --------------------------------------------------------------------------------- Linear
def linear_cases():
    f, L = "linear", "Linear"

    def lin(name, desc, ws, px, py, pw, batch, fin, fout, bias=None, dtype=None, expect="pass"):
        """px, py, pw: (workers, shape); x_shape is the global [batch, in_features]."""
        opts = {"in_features": fin, "out_features": fout}
        if bias is not None:
            opts["bias"] = bias
        case(f, name, desc, L, ws, {"P_x": px, "P_y": py, "P_w": pw}, [batch, fin], opts, expect=expect, dtype=dtype)

    # Spec 002's example: P_x 1x4 on 0..3, P_y 1x3 on 4..6, P_W 3x4 on 0..11, 16 -> 12 features.
    spec = dict(px=(rng(0, 4), [1, 4]), py=(rng(4, 7), [1, 3]), pw=(rng(0, 12), [3, 4]))
    lin("spec002_example", "Spec 002 example: P_x 1x4, P_y 1x3, P_W 3x4, 16 -> 12 features, batch 1", 12,
        batch=1, fin=16, fout=12, **spec)
    lin("spec002_example_batch5", "Spec 002 example with batch 5", 12, batch=5, fin=16, fout=12, **spec)
    lin("spec002_example_float32", "Spec 002 example in float32, batch 3", 12, batch=3, fin=16, fout=12,
        dtype="float32", **spec)
    lin("spec002_example_no_bias", "Spec 002 example without bias", 12, batch=2, fin=16, fout=12, bias=False, **spec)
    lin("spec002_example_uneven", "Spec 002 partitions, 17 -> 11 features (uneven splits of both)", 12,
        batch=4, fin=17, fout=11, **spec)
    # One worker: the serial layer.
    one = dict(px=([0], [1, 1]), py=([0], [1, 1]), pw=([0], [1, 1]))
    lin("serial_1x1", "World of one: every partition is worker 0 (identical partitions)", 1, batch=3, fin=5, fout=4, **one)
    lin("serial_no_bias_float32", "World of one, no bias, float32", 1, batch=2, fin=6, fout=3, bias=False,
        dtype="float32", **one)
    lin("serial_batch0", "World of one, batch 0", 1, batch=0, fin=4, fout=3, **one)
    # Identical, overlapping, disjoint worker sets.
    lin("px_equals_py_2x2", "P_x and P_y are the same two workers; P_W 2x2 holds them and two more", 4,
        ([0, 1], [1, 2]), ([0, 1], [1, 2]), (rng(0, 4), [2, 2]), batch=3, fin=7, fout=5)
    lin("px_row0_py_col0", "P_x is row 0 of P_W, P_y its column 0", 6,
        (rng(0, 3), [1, 3]), ([0, 3], [1, 2]), (rng(0, 6), [2, 3]), batch=2, fin=9, fout=4)
    lin("px_last_row_py_last_col", "P_x is the last row of P_W, P_y its last column", 6,
        (rng(3, 6), [1, 3]), ([2, 5], [1, 2]), (rng(0, 6), [2, 3]), batch=2, fin=8, fout=5)
    lin("disjoint_all_three", "P_x, P_y and P_W on disjoint workers", 11,
        ([0, 1], [1, 2]), (rng(2, 5), [1, 3]), (rng(5, 11), [3, 2]), batch=3, fin=6, fout=7)
    lin("disjoint_float32_no_bias", "Disjoint partitions, float32, no bias", 11,
        ([0, 1], [1, 2]), (rng(2, 5), [1, 3]), (rng(5, 11), [3, 2]), batch=2, fin=5, fout=6, bias=False,
        dtype="float32")
    lin("reversed_orders", "Partitions list their workers in scrambled orders", 6,
        ([5, 2], [1, 2]), ([4, 0, 3], [1, 3]), ([5, 4, 3, 2, 1, 0], [3, 2]), batch=2, fin=5, fout=7)
    lin("idle_workers", "World of 10; workers 0, 8, 9 take no part", 10,
        ([1, 2], [1, 2]), ([6, 7], [1, 2]), (rng(2, 6), [2, 2]), batch=2, fin=6, fout=4)
    # Splits in one dimension only.
    lin("pfi1_output_split", "P_fi = 1: only out_features is split (4 rows of P_W)", 5,
        ([0], [1, 1]), (rng(1, 5), [1, 4]), (rng(1, 5), [4, 1]), batch=3, fin=5, fout=10)
    lin("pfo1_input_split", "P_fo = 1: only in_features is split; the row reduces onto one worker", 5,
        (rng(0, 4), [1, 4]), ([4], [1, 1]), (rng(0, 4), [1, 4]), batch=3, fin=10, fout=3)
    lin("pfo1_input_split_float32", "P_fo = 1 in float32, P_y inside P_W", 4,
        (rng(0, 4), [1, 4]), ([2], [1, 1]), (rng(0, 4), [1, 4]), batch=2, fin=9, fout=2, dtype="float32")
    # n < P: empty weight blocks, empty pieces.
    lin("in_less_than_pfi", "2 in-features over 3 columns: one column holds empty blocks", 9,
        (rng(0, 3), [1, 3]), (rng(6, 9), [1, 3]), (rng(0, 9), [3, 3]), batch=2, fin=2, fout=6)
    lin("out_less_than_pfo", "1 out-feature over 3 rows: two rows hold empty blocks and empty outputs", 9,
        (rng(0, 3), [1, 3]), (rng(6, 9), [1, 3]), (rng(0, 9), [3, 3]), batch=2, fin=7, fout=1)
    lin("both_less_than_p", "2 -> 2 features on a 3x3 P_W", 9,
        (rng(0, 3), [1, 3]), (rng(0, 3), [1, 3]), (rng(0, 9), [3, 3]), batch=3, fin=2, fout=2)
    lin("both_less_than_p_no_bias_float32", "1 -> 1 feature on a 2x2 P_W, no bias, float32", 4,
        ([0, 1], [1, 2]), ([2, 3], [1, 2]), (rng(0, 4), [2, 2]), batch=2, fin=1, fout=1, bias=False, dtype="float32")
    # Batch sizes.
    lin("batch0", "Batch 0: every piece is empty", 6, (rng(0, 2), [1, 2]), (rng(0, 3), [1, 3]),
        (rng(0, 6), [3, 2]), batch=0, fin=5, fout=4)
    lin("batch0_float32", "Batch 0 in float32, disjoint", 7, (rng(0, 2), [1, 2]), (rng(2, 4), [1, 2]),
        (rng(3, 7), [2, 2]), batch=0, fin=3, fout=3, dtype="float32")
    lin("batch16", "Batch 16", 4, (rng(0, 2), [1, 2]), (rng(2, 4), [1, 2]), (rng(0, 4), [2, 2]), batch=16, fin=9,
        fout=8)
    # World sizes 2 .. 18.
    lin("world2_1x2", "World of 2: P_W 1x2", 2, (rng(0, 2), [1, 2]), ([1], [1, 1]), (rng(0, 2), [1, 2]),
        batch=2, fin=3, fout=2)
    lin("world3_3x1", "World of 3: P_W 3x1", 3, ([2], [1, 1]), (rng(0, 3), [1, 3]), (rng(0, 3), [3, 1]),
        batch=2, fin=4, fout=5)
    lin("world8_2x4", "World of 8: P_W 2x4, P_y outside P_x", 8, (rng(0, 4), [1, 4]), ([6, 7], [1, 2]),
        (rng(0, 8), [2, 4]), batch=3, fin=13, fout=6)
    lin("world13_3x4", "World of 13: P_W 3x4 on 1..12, P_x and P_y through worker 0", 13,
        ([0, 1, 2, 3], [1, 4]), ([0, 5, 9], [1, 3]), (rng(1, 13), [3, 4]), batch=2, fin=11, fout=10)
    lin("world14_float32", "World of 14, float32: P_W 2x6", 14, (rng(8, 14), [1, 6]), (rng(12, 14), [1, 2]),
        (rng(0, 12), [2, 6]), batch=2, fin=14, fout=5, dtype="float32")
    lin("world16_4x4", "World of 16: P_W 4x4", 16, ([0, 4, 8, 12], [1, 4]), (rng(0, 4), [1, 4]),
        (rng(0, 16), [4, 4]), batch=2, fin=10, fout=9)
    lin("world17_4x4_disjoint_x", "World of 17: P_x on worker 16 alone", 17, ([16], [1, 1]), (rng(0, 4), [1, 4]),
        (rng(0, 4), [4, 1]), batch=3, fin=6, fout=7, bias=False)
    lin("world18_3x6", "World of 18: P_W 3x6, P_y the last three workers", 18, (rng(0, 6), [1, 6]),
        (rng(15, 18), [1, 3]), (rng(0, 18), [3, 6]), batch=2, fin=20, fout=7)
    lin("world18_6x3_float32", "World of 18, float32: P_W 6x3, uneven", 18, (rng(15, 18), [1, 3]),
        (rng(0, 6), [1, 6]), (rng(0, 18), [6, 3]), batch=3, fin=8, fout=13, dtype="float32")
    # Refusals (every worker, at construction).
    lin("refuse_px_1x4_pw_3x3", "P_x 1x4 does not match P_W 3x3 (in_features split)", 12,
        (rng(0, 4), [1, 4]), (rng(0, 3), [1, 3]), (rng(0, 9), [3, 3]), batch=1, fin=8, fout=6,
        expect=refuse("Linear: P_W shape [3,3] does not match P_x shape [1,4] in the in_features split "
                      "(P_W dimension 1: 3 vs P_x dimension 1: 4)"))
    lin("refuse_py_size_not_pw_rows", "P_y 1x2 does not match the 3 rows of P_W 3x4", 12,
        (rng(0, 4), [1, 4]), (rng(4, 6), [1, 2]), (rng(0, 12), [3, 4]), batch=1, fin=16, fout=12,
        expect=refuse("Linear: P_W shape [3,4] does not match P_y shape [1,2] in the out_features split "
                      "(P_W dimension 0: 3 vs P_y dimension 1: 2)"))
    lin("refuse_px_not_1_by_p", "P_x 2x2 splits the batch", 8, (rng(0, 4), [2, 2]), (rng(4, 6), [1, 2]),
        (rng(0, 4), [2, 2]), batch=2, fin=4, fout=4,
        expect=refuse("Linear: P_x shape [2,2] must be 1 x P_fi (dimension 0 is 2, expected 1"))
    lin("refuse_py_column", "P_y 3x1 splits the batch", 9, (rng(0, 3), [1, 3]), (rng(3, 6), [3, 1]),
        (rng(0, 9), [3, 3]), batch=2, fin=4, fout=4,
        expect=refuse("Linear: P_y shape [3,1] must be 1 x P_fo (dimension 0 is 3, expected 1"))
    lin("refuse_px_1d", "P_x must be 2-dimensional", 4, (rng(0, 2), [2]), (rng(2, 4), [1, 2]),
        (rng(0, 4), [2, 2]), batch=2, fin=4, fout=4,
        expect=refuse("Linear: P_x must be 2-dimensional (1 x P_fi), got shape [2]"))
    lin("refuse_pw_3d", "P_W must be 2-dimensional", 4, (rng(0, 2), [1, 2]), (rng(2, 4), [1, 2]),
        (rng(0, 4), [2, 2, 1]), batch=2, fin=4, fout=4,
        expect=refuse("Linear: P_W must be 2-dimensional (P_fo x P_fi), got shape [2,2,1]"))
    lin("refuse_idle_workers_too", "Mismatch with idle workers: they refuse as well", 10,
        ([1, 2], [1, 2]), ([6, 7, 8], [1, 3]), (rng(2, 6), [2, 2]), batch=2, fin=6, fout=4,
        expect=refuse("Linear: P_W shape [2,2] does not match P_y shape [1,3] in the out_features split"))


def write_cases(out_dir):
    """Writes every case of CASES as <out_dir>/<folder>/<name>.json and prints a summary."""
    names = set()
    for folder, name, doc in CASES:
        assert doc["name"] not in names, doc["name"]
        names.add(doc["name"])
        os.makedirs(os.path.join(out_dir, folder), exist_ok=True)
        with open(os.path.join(out_dir, folder, name + ".json"), "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=2, ensure_ascii=False)
            out.write("\n")
    counts = {}
    for folder, _, _ in CASES:
        counts[folder] = counts.get(folder, 0) + 1
    sizes = sorted({doc["world_size"] for _, _, doc in CASES})
    refused = sum(1 for _, _, doc in CASES if doc["expect"] != "pass")
    print(f"{len(CASES)} cases ({refused} refusals): {counts}; world sizes {sizes}")


def generate(description, *builders):
    """The main of a case script: --out DIR (default cases/), then every builder, then write_cases."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases"))
    args = parser.parse_args()
    for build in builders:
        build()
    write_cases(args.out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases"))
    parser.add_argument("--scale-only", metavar="N,N,...",
                        help="write only the scale cases for these world sizes (squares of even numbers)")
    args = parser.parse_args()
    if args.scale_only:
        sizes = []
        for item in args.scale_only.split(","):
            n = int(item) if item.isdigit() else 0
            side = isqrt(n)
            if n < 4 or side * side != n or side % 2 or n > 4096:
                parser.error(f"--scale-only: world sizes are squares of even numbers from 4 to 4096, got '{item}'")
            sizes.append(n)
        scale_cases(sizes)
    else:
        broadcast_cases()
        sum_reduce_cases()
        all_sum_reduce_cases()
        repartition_cases()
        halo_cases()
        linear_cases()
        scale_cases([256, 1024, 4096])
    write_cases(args.out)


if __name__ == "__main__":
    main()
