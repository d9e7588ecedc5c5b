#!/usr/bin/env python3
"""Writes the cases of the layers that move no data, cases/flatten/*.json and cases/relu/*.json
(DESIGN §6, layers/flatten.hpp, layers/relu.hpp).

The JSON files are committed; this script is only how they were made (not part of the build).
Run from anywhere:  python3 verify/make_local_cases.py [--out cases]
It rewrites every file it generates and deletes nothing else. The case writer is
make_cases.py's (imported, not changed).

Flatten: one worker and batch splits over 2 to 6 workers, inputs of 2 to 5 dimensions, fewer
samples than workers (empty pieces), batch 0, idle and reordered workers, world sizes 1 to 18,
float32 and float64; and the refusals at construction (P_x splitting a feature dimension, P_x of
one dimension, P_y of another shape or on other workers), also on idle workers.
ReLU: the layouts of a convolution's and a Linear layer's output, 1 to 5 dimensions, empty
pieces, batch 0, idle and reordered workers, world sizes 1 to 18, float32 and float64. (It
refuses nothing at construction that a case file can express; its refusal of a dy of another
shape is in tests/layers/relu_checks.cpp.)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_cases import case, generate, rng  # noqa: E402


def flat(name, desc, ws, workers, grid, x, dtype=None, y_workers=None, y_grid=None, expect="pass"):
    """P_x on `workers` with shape `grid`; P_y on the same workers as [grid[0], 1] unless given."""
    y_workers = workers if y_workers is None else y_workers
    y_grid = [grid[0], 1] if y_grid is None else y_grid
    case("flatten", name, desc, "Flatten", ws, {"P_x": (workers, grid), "P_y": (y_workers, y_grid)}, x,
         dtype=dtype, expect=expect)


def flatten_cases():
    flat("single_worker_4d", "A convolution's output N x C x H x W on one worker", 1, [0], [1, 1, 1, 1], [3, 2, 4, 5])
    flat("batch_split_3", "The batch over 3 workers (7 samples: 3, 2, 2)", 3, rng(0, 3), [3, 1, 1, 1], [7, 2, 3, 3])
    flat("idle_reordered_3d", "P_x on workers 4 and 1 of 6, the others idle", 6, [4, 1], [2, 1, 1], [5, 3, 4])
    flat("fewer_samples_than_workers", "2 samples over 4 workers: two empty pieces", 4, rng(0, 4), [4, 1, 1, 1],
         [2, 3, 2, 2])
    flat("5d_float32", "A 3-d convolution's output N x C x D x H x W", 2, [1, 0], [2, 1, 1, 1, 1], [3, 2, 2, 3, 2],
         dtype="float32")
    flat("2d_identity", "N x F is already flat", 2, rng(0, 2), [2, 1], [5, 7])
    flat("batch_0", "No samples", 2, rng(0, 2), [2, 1, 1, 1], [0, 2, 3, 3])
    flat("world18_float32", "6 workers of 18, the batch of 13 over them", 18, rng(12, 18), [6, 1, 1, 1], [13, 2, 3, 2],
         dtype="float32")
    flat("one_feature", "Features of extent 1", 3, [2, 0, 1], [3, 1, 1], [4, 1, 1])


def flatten_refusal_cases():
    flat("refuse_feature_split", "A convolution's partition, its spatial dimensions split: a Repartition must come "
         "first", 4, rng(0, 4), [1, 1, 2, 2], [2, 3, 4, 4], y_grid=[1, 4],
         expect="Flatten: P_x [1,1,2,2] splits dimension 2 into 2; only the batch (dimension 0) may be split")
    flat("refuse_channel_split_idle", "Channels split, two idle workers refuse too", 5, [3, 4], [1, 2, 1], [2, 4, 3],
         y_grid=[1, 2], expect="Flatten: P_x [1,2,1] splits dimension 1 into 2")
    flat("refuse_px_1d", "P_x of one dimension: nothing to flatten", 2, rng(0, 2), [2], [4], y_grid=[2, 1],
         expect="Flatten: P_x has shape [2]; expected 2 to 5 dimensions")
    flat("refuse_py_shape", "P_y [1,2] where the batch is split over 2", 2, rng(0, 2), [2, 1, 1], [4, 2, 2],
         y_grid=[1, 2], expect="Flatten: P_y has shape [1,2]; expected [2,1]")
    flat("refuse_py_other_workers", "P_y on the same workers in another order: Flatten moves no data", 3,
         [0, 1], [2, 1, 1], [4, 2, 2], y_workers=[1, 0],
         expect="Flatten: P_y must be on the workers of P_x in the same order")


def relu(name, desc, ws, workers, grid, x, dtype=None):
    case("relu", name, desc, "ReLU", ws, {"P_x": (workers, grid)}, x, dtype=dtype)


def relu_cases():
    relu("single_worker_1d", "A vector on one worker", 1, [0], [1], [9])
    relu("conv_output_2x2", "A 2-d convolution's output on a 2 x 2 grid of the images", 4, rng(0, 4), [1, 1, 2, 2],
         [2, 3, 5, 6])
    relu("linear_output_float32", "A Linear layer's output, the features over 3 workers", 3, rng(0, 3), [1, 3], [4, 7],
         dtype="float32")
    relu("idle_reordered", "P_x on workers 5, 2, 0 of 6", 6, [5, 2, 0], [1, 1, 3], [2, 2, 8])
    relu("empty_pieces", "Length 3 over 4 workers", 4, rng(0, 4), [1, 1, 4], [2, 2, 3])
    relu("batch_0", "No samples", 2, rng(0, 2), [1, 1, 2], [0, 3, 4])
    relu("world18_float32", "18 workers on a 3 x 6 grid", 18, rng(0, 18), [1, 1, 3, 6], [2, 2, 7, 8], dtype="float32")
    relu("5d_batch_and_channels", "Batch, channels and depth split", 8, rng(0, 8), [2, 2, 2, 1, 1], [3, 4, 5, 2, 3])


def main():
    generate(__doc__, flatten_cases, flatten_refusal_cases, relu_cases)


if __name__ == "__main__":
    main()
