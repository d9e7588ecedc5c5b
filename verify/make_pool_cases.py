#!/usr/bin/env python3
"""Writes the pooling cases cases/max_pool/*.json and cases/avg_pool/*.json (DESIGN §6).

The JSON files are committed; this script is only how they were made (not part of the build).
Run from anywhere:  python3 verify/make_pool_cases.py [--out cases]
It rewrites every file it generates and deletes nothing else. The case writer is
make_cases.py's (imported, not changed).

What the cases cover (layers/pool_max.hpp, layers/pool_avg.hpp): kernel sizes odd and even,
stride below, equal to and above the kernel, padding up to the dilated kernel extent
(max pooling: the boundary padding is -inf, so a window of negative inputs next to the
boundary must not come out 0), dilation, halos wider than a neighbour's piece, pieces of size
zero, fewer outputs than workers, split batch and channels, idle and reordered workers,
world sizes 1 to 18, float32 and float64; and the refusals.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_cases import case, generate, rng  # noqa: E402


def pool(kind, dims, name, desc, ws, workers, shape, x, k, s=None, p=None, d=None, dtype=None, expect="pass",
         layer_dims=None, input_shape=None):
    """One case of MaxPool<dims>d (kind "max") or AvgPool<dims>d (kind "avg")."""
    folder = "max_pool" if kind == "max" else "avg_pool"
    layer = ("MaxPool" if kind == "max" else "AvgPool") + f"{layer_dims or dims}d"
    opts = {"kernel_size": k}
    for key, value in (("stride", s), ("padding", p), ("dilation", d)):
        if value is not None:
            opts[key] = value
    case(folder, f"{dims}d_{name}", desc, layer, ws, {"P_x": (workers, shape)}, x, opts, expect=expect, dtype=dtype,
         input_shape=input_shape)


def shared_cases(kind):
    """Geometries both kinds run (no dilation: average pooling has none)."""
    P = lambda *a, **kw: pool(kind, *a, **kw)  # noqa: E731
    f32 = "float32"
    # ---- 1-d: P_x 1 x 1 x P
    P(1, "k2_direct_4", "Kernel 2 = stride on pieces of 4: every window inside its own piece, nothing moves",
      4, rng(0, 4), [1, 1, 4], [2, 3, 16], 2)
    P(1, "k3_s1_p1_4", "Kernel 3, stride 1, padding 1: one-element halos and boundary padding",
      4, rng(0, 4), [1, 1, 4], [2, 2, 12], 3, s=1, p=1)
    P(1, "k2_s1_p1_boundary", "Kernel 2, stride 1, padding 1: the first and last windows hold one input and padding",
      5, rng(0, 5), [1, 1, 5], [3, 2, 10], 2, s=1, p=1)
    P(1, "k4_s1_p2_even", "Even kernel 4, stride 1, padding 2 (more than (k-1)/2)",
      3, rng(0, 3), [1, 1, 3], [1, 2, 11], 4, s=1, p=2)
    P(1, "k3_s2_p1", "Kernel 3, stride 2, padding 1: windows shift against the pieces",
      4, rng(0, 4), [1, 1, 4], [2, 1, 17], 3, s=2, p=1)
    P(1, "k2_s3_gaps", "Stride 3 above kernel 2: inputs nobody reads", 4, rng(0, 4), [1, 1, 4], [1, 2, 14], 2, s=3)
    P(1, "k7_p3_wider_than_piece", "Kernel 7, padding 3 on pieces of 2: halos wider than a neighbour's piece",
      4, rng(0, 4), [1, 1, 4], [1, 2, 8], 7, s=1, p=3)
    P(1, "k5_s1_no_padding_pieces2", "Kernel 5, no padding, pieces of 2", 5, rng(0, 5), [1, 1, 5], [2, 1, 10], 5, s=1)
    P(1, "n_less_than_p", "Length 3 over 5 workers: empty pieces and empty output blocks",
      5, rng(0, 5), [1, 1, 5], [2, 2, 3], 2, s=1)
    P(1, "fewer_outputs_than_workers", "Length 12, kernel 4: 3 outputs over 6 workers",
      6, rng(0, 6), [1, 1, 6], [1, 3, 12], 4)
    P(1, "kernel_equals_length", "Kernel as long as the input: one output", 3, rng(0, 3), [1, 1, 3], [2, 2, 7], 7)
    P(1, "single_worker", "One worker: the serial layer", 1, [0], [1, 1, 1], [2, 3, 9], 3, s=2, p=1)
    P(1, "idle_workers", "P_x on workers 3..6 of a world of 9", 9, rng(3, 7), [1, 1, 4], [1, 2, 13], 3, s=1, p=1)
    P(1, "reversed_workers", "P_x lists the workers in reverse", 4, [3, 2, 1, 0], [1, 1, 4], [2, 1, 12], 3, s=2, p=1)
    P(1, "world18", "World of 18: length 40 over 18 workers, kernel 3 stride 2 padding 1",
      18, rng(0, 18), [1, 1, 18], [1, 2, 40], 3, s=2, p=1)
    P(1, "world11_float32", "World of 11, float32, kernel 4 stride 2 padding 2",
      11, rng(0, 11), [1, 1, 11], [2, 1, 30], 4, s=2, p=2, dtype=f32)
    P(1, "k3_s1_p1_float32", "float32, kernel 3 stride 1 padding 1", 3, rng(0, 3), [1, 1, 3], [2, 2, 9], 3, s=1,
      p=1, dtype=f32)
    P(1, "channels_split", "Channels split over 2 workers, length over 3", 6, rng(0, 6), [1, 2, 3], [2, 5, 12], 3,
      s=1, p=1)
    # ---- 2-d: P_x 1 x 1 x P x Q
    P(2, "2x2_k2_direct", "2x2 workers, 2x2 pooling of 8x8: nothing moves", 4, rng(0, 4), [1, 1, 2, 2], [2, 3, 8, 8], 2)
    P(2, "2x2_k3_s1_p1", "2x2 workers, 3x3 kernel, stride 1, padding 1: corners come from diagonal neighbours",
      4, rng(0, 4), [1, 1, 2, 2], [1, 2, 7, 6], 3, s=1, p=1)
    P(2, "3x3_k3_s2_p1", "3x3 workers, 3x3 kernel, stride 2, padding 1", 9, rng(0, 9), [1, 1, 3, 3],
      [1, 2, 11, 11], 3, s=2, p=1)
    P(2, "2x3_mixed", "2x3 workers, per-dimension kernel [3,2], stride [2,1], padding [1,0]",
      6, rng(0, 6), [1, 1, 2, 3], [2, 1, 9, 10], [3, 2], s=[2, 1], p=[1, 0])
    P(2, "4x4_k2_s2_p1_float32", "4x4 workers, kernel 2 stride 2 padding 1, float32", 16, rng(0, 16), [1, 1, 4, 4],
      [1, 2, 12, 13], 2, s=2, p=1, dtype=f32)
    P(2, "3x6_world18", "World of 18 as 3x6, kernel 3 stride 1 padding 1", 18, rng(0, 18), [1, 1, 3, 6],
      [1, 1, 9, 14], 3, s=1, p=1)
    P(2, "empty_pieces_4x4", "A 3x3 input over 4x4 workers: empty pieces, empty blocks", 16, rng(0, 16),
      [1, 1, 4, 4], [1, 2, 3, 3], 2, s=1)
    P(2, "batch_split", "Batch split over 2 and width over 2", 4, rng(0, 4), [2, 1, 1, 2], [3, 2, 5, 8], [2, 3],
      s=[2, 1], p=[0, 1])
    P(2, "scattered_workers", "P_x on workers 5,0,3,1 of 6", 6, [5, 0, 3, 1], [1, 1, 2, 2], [1, 2, 7, 7], 3, s=2, p=1)
    P(2, "k4_s3_p2_float32", "Even kernel 4, stride 3, padding 2, float32", 6, rng(0, 6), [1, 1, 3, 2],
      [2, 1, 13, 10], 4, s=3, p=2, dtype=f32)
    # ---- 3-d: P_x 1 x 1 x P x Q x R
    P(3, "2x2x2_k3_s2_p1", "2x2x2 workers, 3x3x3 kernel, stride 2, padding 1", 8, rng(0, 8), [1, 1, 2, 2, 2],
      [1, 2, 6, 6, 6], 3, s=2, p=1)
    P(3, "1x2x3_k2_direct", "1x2x3 workers, 2x2x2 pooling that divides every piece: nothing moves", 6, rng(0, 6),
      [1, 1, 1, 2, 3], [2, 1, 4, 4, 6], 2)
    P(3, "3x3x2_world18", "World of 18 as 3x3x2, kernel 2 stride 1", 18, rng(0, 18), [1, 1, 3, 3, 2],
      [1, 1, 5, 6, 4], 2, s=1)
    P(3, "mixed_float32", "Per-dimension kernel [2,3,1], stride [1,2,1], padding [1,1,0], float32", 4, rng(0, 4),
      [1, 1, 2, 1, 2], [1, 2, 5, 7, 4], [2, 3, 1], s=[1, 2, 1], p=[1, 1, 0], dtype=f32)
    P(3, "n_less_than_p", "Depth 2 over 3 workers, kernel 2 stride 1 padding 1", 3, rng(0, 3), [1, 1, 3, 1, 1],
      [1, 1, 2, 3, 3], 2, s=1, p=1)


def max_only_cases():
    P = lambda *a, **kw: pool("max", *a, **kw)  # noqa: E731
    P(1, "dilation2_k3_p2", "Dilation 2, kernel 3, padding 2 (= the dilated extent minus 1)",
      4, rng(0, 4), [1, 1, 4], [1, 2, 16], 3, s=1, p=2, d=2)
    P(1, "dilation3_wider_than_piece", "Dilation 3 on pieces of 2: halos of 6 reach past the neighbour",
      5, rng(0, 5), [1, 1, 5], [1, 1, 10], 3, s=1, p=3, d=3)
    P(1, "dilation2_stride2_even_k4", "Kernel 4, dilation 2, stride 2, padding 3", 4, rng(0, 4), [1, 1, 4],
      [2, 1, 19], 4, s=2, p=3, d=2)
    P(1, "world18_dilated_float32", "World of 18, kernel 5, dilation 2, padding 4, float32",
      18, rng(0, 18), [1, 1, 18], [1, 1, 24], 5, s=1, p=4, d=2, dtype="float32")
    P(2, "dilated_pieces_of_1", "2-D dilation 2 on pieces of 1: halos of two neighbours' pieces", 16, rng(0, 16),
      [1, 1, 4, 4], [1, 1, 5, 6], 3, s=1, p=2, d=2)
    P(3, "dilation_mixed", "3-D dilation [1,2,3], kernel 2, stride 1, padding [1,2,3]", 8, rng(0, 8),
      [1, 1, 2, 2, 2], [1, 1, 4, 6, 8], 2, s=1, p=[1, 2, 3], d=[1, 2, 3])
    P(2, "padding_only_windows", "Padding 2 beyond kernel 2: the first and last rows of windows hold padding only "
      "(-inf, no gradient)", 4, rng(0, 4), [1, 1, 2, 2], [2, 2, 5, 6], 2, s=1, p=[2, 1])
    P(1, "padding_only_windows_float32", "Kernel 1, padding 2 on 3 workers: windows of padding only at both ends, "
      "float32", 3, [2, 0, 1], [1, 1, 3], [1, 2, 7], 1, s=1, p=2, dtype="float32")


def avg_only_cases():
    P = lambda *a, **kw: pool("avg", *a, **kw)  # noqa: E731
    P(1, "all_padding_window", "Kernel 2, stride 1, padding 2: the first and last windows hold padding only (0)",
      3, rng(0, 3), [1, 1, 3], [1, 2, 7], 2, s=1, p=2)
    P(2, "padding_wider_than_piece", "Padding 3 beyond pieces of 1 or 2, kernel 5", 9, rng(0, 9), [1, 1, 3, 3],
      [1, 1, 4, 5], 5, s=1, p=2)
    P(3, "k3_s1_p1_float32", "3-D 3x3x3, stride 1, padding 1, float32", 12, rng(0, 12), [1, 1, 2, 2, 3],
      [1, 1, 4, 4, 6], 3, s=1, p=1, dtype="float32")


def refusal_cases():
    pool("max", 1, "refuse_kernel_too_large", "Kernel 7 on a length-4 input with padding 1",
         2, rng(0, 2), [1, 1, 2], [1, 1, 4], 7, p=1, expect="does not fit in spatial dimension 0")
    pool("max", 1, "refuse_dilated_kernel_too_wide", "Dilation 4 makes a kernel 3 span 9 > 6",
         3, rng(0, 3), [1, 1, 3], [1, 1, 6], 3, d=4, expect="does not fit in spatial dimension 0")
    pool("avg", 2, "refuse_dilation", "Average pooling has no dilation", 4, rng(0, 4), [1, 1, 2, 2], [1, 1, 6, 6],
         2, d=[1, 2], expect="AvgPool2d: dilation [1,2] given, expected 1")
    pool("max", 2, "refuse_kernel_zero", "Kernel size 0", 4, rng(0, 4), [1, 1, 2, 2], [1, 1, 6, 6], [0, 2],
         expect="must all be at least 1")
    pool("avg", 1, "refuse_stride_zero", "Stride 0", 2, rng(0, 2), [1, 1, 2], [1, 1, 6], 2, s=0,
         expect="must all be at least 1")
    pool("max", 1, "refuse_partition_rank", "A 2-D P_x for an N x C x L input", 4, rng(0, 4), [1, 4], [1, 1, 8], 2,
         expect="MaxPool1d: P_x shape [1,4] has 2 dimensions, expected 3")
    pool("max", 1, "refuse_wrong_digit", "MaxPool2d given an input with one spatial dimension",
         2, rng(0, 2), [1, 1, 2], [1, 1, 8], 2, layer_dims=2, expect="must be N × C × 2 spatial extents")
    pool("avg", 3, "refuse_kernel_too_large_idle", "Kernel 5 in depth 3, with idle workers", 6, rng(0, 4),
         [1, 1, 2, 2, 1], [1, 1, 3, 4, 4], [5, 2, 2], expect="does not fit in spatial dimension 0")
    pool("max", 3, "refuse_dilation_zero", "Dilation 0", 2, rng(0, 2), [1, 1, 2, 1, 1], [1, 1, 4, 4, 4], 2, d=0,
         expect="must all be at least 1")


def learnt_shape_cases():
    """The layers told no input shape: they learn it from the pieces at the first forward."""
    L = "learnt"
    pool("max", 2, "learnt_shape", "The input shape learnt from the pieces (3x3, stride 2, padding 1)", 4, rng(0, 4),
         [1, 1, 2, 2], [2, 3, 9, 7], 3, s=2, p=1, input_shape=L)
    pool("max", 1, "learnt_shape_empty_pieces_float32", "Learnt from pieces of which two are empty, dilation 2",
         5, [4, 2, 0, 1, 3], [1, 1, 5], [1, 2, 3], 2, s=1, p=1, d=2, dtype="float32", input_shape=L)
    pool("avg", 3, "learnt_shape", "3-d, learnt, split batch and depth", 8, rng(0, 8), [2, 1, 2, 2, 1],
         [3, 2, 5, 4, 4], 2, s=[2, 1, 2], input_shape=L)
    pool("avg", 2, "learnt_shape_float32", "Learnt, padding 2 beyond the pieces, float32", 9, rng(0, 9),
         [1, 1, 3, 3], [1, 2, 4, 5], 5, s=1, p=2, dtype="float32", input_shape=L)
    pool("max", 1, "refuse_kernel_too_large_learnt", "Kernel 7 on a length-4 input with padding 1, learnt (refused "
         "at the first forward)", 2, rng(0, 2), [1, 1, 2], [1, 1, 4], 7, p=1, input_shape=L,
         expect="does not fit in spatial dimension 0")
    pool("avg", 3, "refuse_kernel_too_large_learnt", "Kernel 5 in depth 3, learnt (refused at the first forward, "
         "by the workers of P_x: every worker here)", 4, [3, 1, 0, 2], [1, 1, 2, 2, 1], [1, 1, 3, 4, 4], [5, 2, 2],
         input_shape=L,
         expect="does not fit in spatial dimension 0")


def main():
    generate(__doc__, lambda: shared_cases("max"), lambda: shared_cases("avg"), max_only_cases, avg_only_cases,
             refusal_cases, learnt_shape_cases)


if __name__ == "__main__":
    main()
