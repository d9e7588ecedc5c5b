#!/usr/bin/env python3
"""Writes the Sequential cases cases/sequential/*.json (DESIGN §6, verify/README.md).

The JSON files are committed; this script is only how they were made (not part of the build).
Run from anywhere:  python3 verify/make_sequential_cases.py [--out cases]
It rewrites every file it generates and deletes nothing else. The case writer is
make_cases.py's (imported, not changed).

What the cases cover (layers/sequential.hpp and the chainable layers): chains of every
convolution and pooling family in 1-d, 2-d and 3-d joined by Repartitions, the selector, chains
of Linear layers, classifiers (convolutions, then Flatten on a partition that splits the batch
only, then Linear; ReLU between them), a partition shared by consecutive stages, idle, shared
and reordered workers, empty pieces, batch 0, halos wider than a piece, layers without bias,
world sizes 4 to 17 (and a classifier on 256 in cases/scale), float32 and float64; and refusals
found while the chain is built (a stage's channels or kernel against what the stage before it
gives) and at the first forward (a stage's input partition that is not the one before's output
partition: other workers, or the same workers in another order), and a Flatten given a partition
that splits the image.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_cases import CASES, case, generate, rng  # noqa: E402


def stage(layer, partitions, **options):
    """One stage: its layer, its partitions (stage name -> case partition name), its options."""
    out = {"layer": layer, "partitions": partitions}
    if options:
        out["options"] = options
    return out


def conv(layer, P_x, cin, cout, k, P_y=None, P_w=None, **options):
    parts = {"P_x": P_x}
    if P_y:
        parts["P_y"], parts["P_w"] = P_y, P_w
    return stage(layer, parts, in_channels=cin, out_channels=cout, kernel_size=k, **options)


def pool(layer, P_x, k, **options):
    return stage(layer, {"P_x": P_x}, kernel_size=k, **options)


def move(P_x, P_y):
    return stage("Repartition", {"P_x": P_x, "P_y": P_y})


def flatten(P_x, P_y):
    return stage("Flatten", {"P_x": P_x, "P_y": P_y})


def relu(P_x):
    return stage("ReLU", {"P_x": P_x})


def linear(P_x, P_y, P_w, fin, fout, **options):
    return stage("Linear", {"P_x": P_x, "P_y": P_y, "P_w": P_w}, in_features=fin, out_features=fout, **options)


def sequential(name, desc, ws, partitions, stages, x, dtype=None, expect="pass", folder="sequential"):
    case(folder, name, desc, "Sequential", ws, partitions, x, expect=expect, dtype=dtype)
    doc = CASES[-1][2]
    # The stages after the partitions, as a reader goes through the chain.
    ordered = {}
    for key, value in doc.items():
        ordered[key] = value
        if key == "partitions":
            ordered["stages"] = stages
    doc.clear()
    doc.update(ordered)


def learnt(s):
    """The stage built without its input shape: it learns it from the pieces at the first forward."""
    return dict(s, input_shape="learnt")


def every_family_2d(name, ws, dtype, idle_note, shapes=lambda s: s):
    parts = {"P_a": ([0, 1, 2, 3], [1, 1, 2, 2]), "P_b": ([5, 4], [1, 2, 1, 1]), "P_c": ([6, 7], [1, 2, 1, 1]),
             "P_w2": (rng(4, 8), [2, 2, 1, 1]), "P_d": ([3, 2, 1, 0], [1, 2, 2, 1]), "P_e": ([0, 2], [1, 1, 2, 1]),
             "P_w3": (rng(0, 4), [1, 2, 2, 1])}
    stages = [shapes(conv("FeatureConv2d", "P_a", 3, 4, 3, padding=1)), shapes(pool("MaxPool2d", "P_a", 2)),
              move("P_a", "P_b"), shapes(conv("ChannelConv2d", "P_b", 4, 5, 3, "P_c", "P_w2", padding=1)),
              move("P_c", "P_d"),
              shapes(conv("GeneralConv2d", "P_d", 5, 3, [3, 2], "P_e", "P_w3", padding=[1, 0], dilation=[2, 1])),
              shapes(pool("AvgPool2d", "P_e", 2, stride=1))]
    sequential(name, "FeatureConv2d -> MaxPool2d -> Repartition -> ChannelConv2d -> Repartition -> GeneralConv2d -> "
               "AvgPool2d on 8 workers (shared, reordered" + idle_note + ")", ws, parts, stages, [2, 3, 12, 10],
               dtype=dtype)


def passing_cases():
    every_family_2d("every_family_2d", 8, None, "")
    every_family_2d("every_family_2d_f32_idle", 12, "float32", "; workers 8-11 idle")
    every_family_2d("every_family_2d_learnt", 8, None, "; every convolution and pooling learns its input shape at "
                    "the first forward", shapes=learnt)

    sequential("1d_dilated_strided", "FeatureConv1d (kernel 5, dilation 2, padding 4) -> AvgPool1d (3, stride 2, "
               "padding 1) -> Repartition to 2 workers -> FeatureConv1d (kernel 2, stride 2) -> MaxPool1d 2", 6,
               {"P_a": (rng(0, 6), [1, 1, 6]), "P_b": ([4, 1], [1, 1, 2])},
               [conv("FeatureConv1d", "P_a", 2, 3, 5, dilation=2, padding=4),
                pool("AvgPool1d", "P_a", 3, stride=2, padding=1), move("P_a", "P_b"),
                conv("FeatureConv1d", "P_b", 3, 2, 2, stride=2), pool("MaxPool1d", "P_b", 2)], [3, 2, 23])

    sequential("3d_feature_pool_general", "FeatureConv3d -> MaxPool3d (padding 1) -> Repartition -> GeneralConv3d "
               "over split channels and depth", 8,
               {"P_a": (rng(0, 8), [1, 1, 2, 2, 2]), "P_b": (rng(4, 8), [1, 2, 2, 1, 1]),
                "P_c": ([6, 4], [1, 1, 2, 1, 1]), "P_w": ([7, 6, 5, 4], [1, 2, 2, 1, 1])},
               [conv("FeatureConv3d", "P_a", 2, 4, 3, padding=1), pool("MaxPool3d", "P_a", 2, padding=1),
                move("P_a", "P_b"), conv("GeneralConv3d", "P_b", 4, 3, [3, 2, 2], "P_c", "P_w", padding=[1, 0, 1])],
               [2, 2, 6, 5, 7], dtype="float32")

    sequential("same_partition_twice", "Two FeatureConv2d and an AvgPool2d on one partition, no Repartition: each "
               "stage's halo from the pieces the stage before left", 4, {"P_a": (rng(0, 4), [1, 1, 2, 2])},
               [conv("FeatureConv2d", "P_a", 2, 3, 3, padding=1), conv("FeatureConv2d", "P_a", 3, 2, [1, 3],
                                                                         padding=[0, 2], bias=False),
                pool("AvgPool2d", "P_a", 2, stride=1, padding=1)], [2, 2, 7, 9])

    sequential("selector_feature_then_channel", "Conv2d given only P_x (feature) -> Repartition -> Conv2d given "
               "P_x, P_y and P_w (channel)", 6,
               {"P_a": ([5, 3, 1], [1, 1, 3, 1]), "P_b": ([0, 2], [1, 2, 1, 1]), "P_c": ([4], [1, 1, 1, 1]),
                "P_w": ([0, 2], [1, 2, 1, 1])},
               [conv("Conv2d", "P_a", 4, 4, 3, padding=1), move("P_a", "P_b"),
                conv("Conv2d", "P_b", 4, 5, 1, "P_c", "P_w")], [2, 4, 8, 6])

    sequential("empty_pieces_and_halos", "Length 4 over 5 workers (empty pieces), kernel 5 with padding 2 (halos "
               "wider than a piece), then max pooling with padding", 5, {"P_a": (rng(0, 5), [1, 1, 5])},
               [conv("FeatureConv1d", "P_a", 2, 2, 5, padding=2), pool("MaxPool1d", "P_a", 3, stride=1, padding=1),
                conv("FeatureConv1d", "P_a", 2, 1, 2, padding=1)], [2, 2, 4])

    sequential("batch_0", "Batch 0 through a convolution, a pooling and a Repartition", 4,
               {"P_a": (rng(0, 4), [1, 1, 4]), "P_b": ([3, 2], [1, 2, 1])},
               [conv("FeatureConv1d", "P_a", 2, 2, 3, padding=1), pool("AvgPool1d", "P_a", 2), move("P_a", "P_b")],
               [0, 2, 8])

    sequential("linear_chain", "Linear 6 -> 5 -> 7 -> 4, each on its own P_w; the second's input partition is the "
               "first's output partition, a Repartition before the third", 12,
               {"P_x1": ([0, 1], [1, 2]), "P_y1": ([2, 3, 4], [1, 3]), "P_w1": (rng(0, 6), [3, 2]),
                "P_y2": ([7, 5], [1, 2]), "P_w2": (rng(6, 12), [2, 3]), "P_x3": ([11, 10, 9], [1, 3]),
                "P_y3": ([8], [1, 1]), "P_w3": ([9, 10, 11], [1, 3])},
               [linear("P_x1", "P_y1", "P_w1", 6, 5), linear("P_y1", "P_y2", "P_w2", 5, 7), move("P_y2", "P_x3"),
                linear("P_x3", "P_y3", "P_w3", 7, 4, bias=False)], [3, 6])
    sequential("linear_chain_f32", "Two Linear layers 9 -> 8 -> 3 on 4 workers, float32", 4,
               {"P_x": ([0, 1], [1, 2]), "P_h": ([2, 3], [1, 2]), "P_y": ([1], [1, 1]),
                "P_w1": (rng(0, 4), [2, 2]), "P_w2": ([3, 0], [1, 2])},
               [linear("P_x", "P_h", "P_w1", 9, 8), linear("P_h", "P_y", "P_w2", 8, 3)], [4, 9], dtype="float32")

    sequential("17_workers_reordered", "FeatureConv2d on 12 reordered workers -> Repartition to 4 -> GeneralConv2d "
               "over 2 x 2 x 2 -> MaxPool2d, in a world of 17", 17,
               {"P_a": ([16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5], [1, 1, 3, 4]),
                "P_b": ([0, 4, 1, 3], [1, 2, 2, 1]), "P_c": ([2, 1, 6, 5], [1, 2, 2, 1]),
                "P_w": (rng(0, 8), [2, 2, 2, 1])},
               [conv("FeatureConv2d", "P_a", 2, 4, 3, padding=1, stride=[1, 2]), move("P_a", "P_b"),
                conv("GeneralConv2d", "P_b", 4, 3, 2, "P_c", "P_w", padding=1),
                pool("MaxPool2d", "P_c", [2, 1])], [2, 2, 9, 13])

    sequential("classifier_2d", "FeatureConv2d -> MaxPool2d on 2 x 2 -> Repartition to one worker -> Flatten -> "
               "Repartition of the 48 features over 2 -> Linear 48 -> 5", 4,
               {"P_a": (rng(0, 4), [1, 1, 2, 2]), "P_one": ([0], [1, 1, 1, 1]), "P_f": ([0], [1, 1]),
                "P_lx": ([1, 2], [1, 2]), "P_ly": ([2, 3], [1, 2]), "P_lw": (rng(0, 4), [2, 2])},
               [conv("FeatureConv2d", "P_a", 2, 3, 3, padding=1), pool("MaxPool2d", "P_a", 2), move("P_a", "P_one"),
                flatten("P_one", "P_f"), move("P_f", "P_lx"), linear("P_lx", "P_ly", "P_lw", 48, 5)], [3, 2, 8, 8])
    sequential("classifier_relu", "FeatureConv2d -> ReLU -> MaxPool2d -> GeneralConv2d -> ReLU -> Repartition -> "
               "Flatten -> Repartition -> Linear -> ReLU -> Linear: a small convolutional classifier", 6,
               {"P_a": (rng(0, 4), [1, 1, 2, 2]), "P_b": ([4, 5], [1, 1, 2, 1]), "P_c": ([1, 3], [1, 1, 2, 1]),
                "P_w": ([4, 5], [1, 1, 2, 1]), "P_one": ([2], [1, 1, 1, 1]), "P_f": ([2], [1, 1]),
                "P_lx": ([0, 5], [1, 2]), "P_h": ([1, 4, 3], [1, 3]), "P_w1": (rng(0, 6), [3, 2]),
                "P_y": ([0], [1, 1]), "P_w2": ([3, 2, 1], [1, 3])},
               [conv("FeatureConv2d", "P_a", 2, 3, 3, padding=1), relu("P_a"), pool("MaxPool2d", "P_a", 2),
                move("P_a", "P_b"), conv("GeneralConv2d", "P_b", 3, 2, 3, "P_c", "P_w", padding=1), relu("P_c"),
                move("P_c", "P_one"), flatten("P_one", "P_f"), move("P_f", "P_lx"),
                linear("P_lx", "P_h", "P_w1", 32, 6), relu("P_h"), linear("P_h", "P_y", "P_w2", 6, 2)],
               [3, 2, 8, 8])
    sequential("classifier_batch_split_f32", "FeatureConv2d over 3 rows -> AvgPool2d -> Repartition to the batch "
               "over workers 4, 5 -> Flatten there -> Repartition to 3 feature blocks -> Linear 12 -> 3", 6,
               {"P_a": (rng(0, 3), [1, 1, 3, 1]), "P_b": ([4, 5], [2, 1, 1, 1]), "P_fb": ([4, 5], [2, 1]),
                "P_lx": (rng(0, 3), [1, 3]), "P_ly": ([5], [1, 1]), "P_lw": (rng(0, 3), [1, 3])},
               [conv("FeatureConv2d", "P_a", 2, 2, 3, padding=1), pool("AvgPool2d", "P_a", 2), move("P_a", "P_b"),
                flatten("P_b", "P_fb"), move("P_fb", "P_lx"), linear("P_lx", "P_ly", "P_lw", 12, 3)], [5, 2, 6, 4],
               dtype="float32")


def refusal_cases():
    sequential("channels_do_not_chain_refused", "The second convolution takes 5 channels; the first gives 4: the "
               "second refuses the input shape it is built with", 4, {"P_a": (rng(0, 4), [1, 1, 2, 2])},
               [conv("FeatureConv2d", "P_a", 3, 4, 3, padding=1), conv("FeatureConv2d", "P_a", 5, 2, 3, padding=1)],
               [2, 3, 6, 6],
               expect="FeatureConv2d: input_shape [2,4,6,6], expected [batch, 5, 2 spatial extents]")
    sequential("kernel_after_pooling_refused", "After pooling 8 x 8 to 2 x 2, a 3 x 3 kernel without padding does "
               "not fit", 4, {"P_a": (rng(0, 4), [1, 1, 2, 2])},
               [pool("MaxPool2d", "P_a", 4), conv("FeatureConv2d", "P_a", 2, 2, 3)], [1, 2, 8, 8],
               expect="kernel does not fit input_shape")
    sequential("kernel_after_pooling_learnt_refused", "As kernel_after_pooling_refused, with the convolution "
               "learning its input shape: it refuses at the first forward, on every worker of the chain", 4,
               {"P_a": (rng(0, 4), [1, 1, 2, 2])},
               [learnt(pool("MaxPool2d", "P_a", 4)), learnt(conv("FeatureConv2d", "P_a", 2, 2, 3))], [1, 2, 8, 8],
               expect="FeatureConv2d: the kernel does not fit in spatial dimension 0: extent 2 + 2*padding 0 < "
               "dilation 1 * (kernel_size 3 - 1) + 1 = 3")
    sequential("missing_repartition_refused", "A channel convolution's input partition is not the partition the "
               "feature convolution before it leaves its output on: the chain names both", 4,
               {"P_a": (rng(0, 4), [1, 1, 2, 2]), "P_b": ([0, 1], [1, 2, 1, 1]), "P_c": ([2, 3], [1, 2, 1, 1]),
                "P_w": (rng(0, 4), [2, 2, 1, 1])},
               [conv("FeatureConv2d", "P_a", 2, 4, 3, padding=1), conv("ChannelConv2d", "P_b", 4, 2, 3, "P_c", "P_w")],
               [2, 2, 6, 6], expect="sequential: module [1] of 2 takes its input on a partition of shape [1,2,1,1] "
               "over world ranks [0,1], but the module before it leaves its output on one of shape [1,1,2,2] over "
               "world ranks [0-3]")
    sequential("workers_reordered_refused", "A max pooling on the workers of the convolution before it in another "
               "order: every piece has the right shape, but would be read as another block", 4,
               {"P_a": (rng(0, 4), [1, 1, 4]), "P_r": ([3, 2, 1, 0], [1, 1, 4])},
               [conv("FeatureConv1d", "P_a", 2, 2, 3, padding=1), pool("MaxPool1d", "P_r", 2)], [1, 2, 16],
               expect="sequential: module [1] of 2 takes its input on a partition of shape [1,1,4] over world ranks "
               "[3,2,1,0], but the module before it leaves its output on one of shape [1,1,4] over world ranks [0-3]")
    sequential("flatten_split_image_refused", "Flatten straight after a convolution on 2 x 2, without the "
               "Repartition that gathers the images", 4,
               {"P_a": (rng(0, 4), [1, 1, 2, 2]), "P_f": (rng(0, 4), [1, 4])},
               [conv("FeatureConv2d", "P_a", 2, 2, 3, padding=1), flatten("P_a", "P_f")], [2, 2, 6, 6],
               expect="Flatten: P_x [1,1,2,2] splits dimension 2 into 2")


def scale_cases():
    """A classifier on 16 x 16 workers (cases/scale). On 32 x 32 it takes 5 s, and under a
    sanitizer beyond the case time limit."""
    for s in (16,):
        n, h = s * s, s // 2
        parts = {"P_a": (rng(0, n), [1, 1, s, s]), "P_b": (rng(0, n // 4), [1, 1, h, h]),
                 "P_one": ([0], [1, 1, 1, 1]), "P_flat": ([0], [1, 1]), "P_lx": (rng(0, 8), [1, 8]),
                 "P_lw": (rng(0, 16), [2, 8]), "P_ly": (rng(0, 2), [1, 2])}
        stages = [conv("FeatureConv2d", "P_a", 2, 3, 3, padding=1), relu("P_a"), pool("MaxPool2d", "P_a", 2),
                  move("P_a", "P_b"), conv("FeatureConv2d", "P_b", 3, 2, 3, padding=1), move("P_b", "P_one"),
                  flatten("P_one", "P_flat"), move("P_flat", "P_lx"), linear("P_lx", "P_ly", "P_lw", 8 * s * s, 10)]
        sequential(f"classifier_{s}x{s}",
                   f"FeatureConv2d, ReLU, MaxPool2d on a {s}x{s} grid of the image ({n} workers); Repartition to "
                   f"{h}x{h}; FeatureConv2d; Repartition to one worker; Flatten; Repartition over 8; Linear "
                   f"{8 * s * s} -> 10 on 16", n, parts, stages, [1, 2, 4 * s, 4 * s], folder="scale")


def main():
    generate(__doc__, passing_cases, refusal_cases, scale_cases)


if __name__ == "__main__":
    main()
