#!/usr/bin/env python3
"""Writes the convolution cases of the JSON case library (DESIGN §6):
cases/feature_conv/ (FeatureConv1d/2d/3d), cases/channel_conv/ (ChannelConvNd),
cases/general_conv/ (GeneralConvNd) and cases/conv/ (the ConvNd selector).

The JSON files are committed; this script is only how they were made (not part of the build).
It shares make_cases.py's case() helper. Run from anywhere:
    python3 verify/make_conv_cases.py [--out cases]
It rewrites every file it generates and deletes nothing else. Tensors are tiny: the whole case
library must stay fast on the simulator.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_cases import case, generate, refuse, rng  # noqa: E402


def conv(folder, layer, name, desc, ws, parts, x, cin, cout, k, s=None, p=None, d=None, bias=None, dtype=None,
         expect="pass", seed=None, input_shape=None):
    """parts: {"P_x": (workers, shape), ...}; x: the global input shape [batch, cin, L...]."""
    opts = {"in_channels": cin, "out_channels": cout, "kernel_size": k}
    for key, value in (("stride", s), ("padding", p), ("dilation", d), ("bias", bias)):
        if value is not None:
            opts[key] = value
    case(folder, name, desc, layer, ws, parts, x, opts, expect=expect, dtype=dtype, seed=seed, input_shape=input_shape)


# --------------------------------------------------------------------------------- FeatureConvNd
def feature_cases():
    f = "feature_conv"

    def fc(dims, name, desc, ws, workers, grid, x, cin, cout, k, **kw):
        conv(f, f"FeatureConv{dims}d", f"{dims}d_{name}", desc, ws, {"P_x": (workers, [1, 1] + grid)}, x, cin, cout, k,
             **kw)

    # 1-d: kernel sizes, strides, paddings, dilations, on 1..6 workers.
    fc(1, "serial_k3_p1", "One worker: the serial layer (kernel 3, padding 1)", 1, [0], [1], [2, 3, 9], 3, 2, 3, p=1)
    fc(1, "serial_k4_s2_float32", "One worker, even kernel, stride 2, float32", 1, [0], [1], [2, 2, 11], 2, 3, 4, s=2,
       dtype="float32")
    fc(1, "p2_k3_p1", "2 workers, kernel 3, padding 1 (same size)", 2, rng(0, 2), [2], [2, 3, 10], 3, 4, 3, p=1)
    fc(1, "p2_k3_p1_float32", "2 workers, kernel 3, padding 1, float32", 2, rng(0, 2), [2], [2, 3, 10], 3, 4, 3, p=1,
       dtype="float32")
    fc(1, "p3_k2_even", "3 workers, even kernel 2, no padding", 3, rng(0, 3), [3], [1, 2, 11], 2, 2, 2)
    fc(1, "p3_k4_p2_even", "3 workers, even kernel 4, padding 2 (output one longer)", 3, rng(0, 3), [3], [2, 2, 10], 2,
       3, 4, p=2)
    fc(1, "p4_k5_p2", "4 workers, kernel 5, padding 2", 4, rng(0, 4), [4], [1, 2, 13], 2, 2, 5, p=2)
    fc(1, "p4_stride2", "4 workers, stride 2", 4, rng(0, 4), [4], [2, 2, 17], 2, 3, 3, s=2, p=1)
    fc(1, "p4_stride3_k2", "4 workers, stride 3 over an even kernel", 4, rng(0, 4), [4], [1, 3, 20], 3, 2, 2, s=3)
    fc(1, "p3_stride_gt_kernel", "Stride 4 > kernel 2: inputs skipped between windows", 3, rng(0, 3), [3], [1, 2, 23],
       2, 2, 2, s=4)
    fc(1, "p3_dilation2", "Dilation 2, kernel 3, padding 2", 3, rng(0, 3), [3], [2, 2, 12], 2, 2, 3, p=2, d=2)
    fc(1, "p4_dilation3_stride2", "Dilation 3 with stride 2", 4, rng(0, 4), [4], [1, 2, 21], 2, 3, 3, s=2, p=1, d=3)
    fc(1, "p2_padding_gt_half_kernel", "Padding 4 > (k-1)/2 = 1: the output is longer than the input", 2, rng(0, 2),
       [2], [2, 2, 6], 2, 2, 3, p=4)
    fc(1, "p4_padding_all_padding_windows", "Padding 5 with kernel 2: the outer windows are pure padding", 4,
       rng(0, 4), [4], [1, 2, 4], 2, 1, 2, p=5)
    fc(1, "p6_halo_wider_than_pieces", "6 workers hold one element each; kernel 7 reaches three neighbours", 6,
       rng(0, 6), [6], [2, 2, 6], 2, 2, 7, p=3)
    fc(1, "p5_dilated_halo_wider", "Dilation 4, kernel 3 over pieces of 2: halos span several pieces", 5, rng(0, 5),
       [5], [1, 2, 10], 2, 2, 3, p=4, d=4)
    fc(1, "p5_empty_pieces", "3 elements over 5 workers: two empty pieces", 5, rng(0, 5), [5], [2, 2, 3], 2, 3, 3, p=1)
    fc(1, "p4_fewer_outputs_than_workers", "Output length 2 over 4 workers (kernel 5, stride 3)", 4, rng(0, 4), [4],
       [2, 2, 8], 2, 2, 5, s=3)
    fc(1, "p6_one_output", "One output element over 6 workers (kernel = input length)", 6, rng(0, 6), [6], [1, 2, 9],
       2, 2, 9)
    fc(1, "p3_no_bias", "No bias", 3, rng(0, 3), [3], [2, 3, 9], 3, 2, 3, p=1, bias=False)
    fc(1, "p3_no_bias_float32", "No bias, float32, stride 2", 3, rng(0, 3), [3], [2, 3, 9], 3, 2, 3, s=2, bias=False,
       dtype="float32")
    fc(1, "p3_batch0", "Batch 0", 3, rng(0, 3), [3], [0, 2, 9], 2, 2, 3, p=1)
    fc(1, "p2_kernel1", "Kernel 1: no halo at all", 2, rng(0, 2), [2], [3, 2, 7], 2, 4, 1)
    fc(1, "idle_workers", "World of 7, P_x on workers 2..5", 7, rng(2, 6), [4], [2, 2, 12], 2, 3, 3, p=1)
    fc(1, "scrambled_workers", "P_x lists its workers in a scrambled order", 4, [3, 1, 0, 2], [4], [1, 2, 11], 2, 2,
       4, p=1)
    fc(1, "p18", "World of 18: 18 workers along the only spatial dimension", 18, rng(0, 18), [18], [1, 2, 40], 2, 2,
       3, p=1)
    fc(1, "p17_float32_stride2", "17 workers, float32, stride 2, dilation 2", 17, rng(0, 17), [17], [1, 1, 45], 1, 2,
       3, s=2, p=2, d=2)
    # 2-d
    fc(2, "serial_3x3", "One worker, 3x3, padding 1", 1, [0], [1, 1], [2, 2, 6, 5], 2, 3, 3, p=1)
    fc(2, "p2x2_3x3_p1", "P_x 2x2, 3x3, padding 1", 4, rng(0, 4), [2, 2], [2, 2, 7, 6], 2, 3, 3, p=1)
    fc(2, "bias_gradient_cancels_float32", "One output channel: the bias gradient sums 42 dy of both signs to 0.0118, "
       "far below the sum of their magnitudes, against which float rounding is judged (found by distdl-verify "
       "--random 2000 --seed 6 --random-world 12)", 3, [0, 2], [1, 2], [3, 8, 5, 9], 8, 1, [5, 2], s=[4, 1],
       p=[5, 4], d=[3, 3], dtype="float32", seed=4170811475231760198)
    fc(1, "input_gradient_cancels_float32", "x of 2 elements, 20 output channels: each element of dx sums 20 products "
       "of both signs to nearly 0; float rounding is judged against the sum of their magnitudes (found by "
       "distdl-verify --random 2000 --seed 13 --random-world 18)", 2, [1], [1], [1, 1, 2], 1, 20, 1, s=2, p=5, d=2,
       dtype="float32", seed=15780232804970579485)
    fc(2, "p2x2_3x3_p1_float32", "P_x 2x2, 3x3, padding 1, float32", 4, rng(0, 4), [2, 2], [2, 3, 8, 8], 3, 4, 3, p=1,
       dtype="float32")
    fc(2, "p3x1_k2x4", "P_x 3x1, kernel 2x4 (even sizes), padding [1, 2]", 3, rng(0, 3), [3, 1], [1, 2, 9, 7], 2, 2,
       [2, 4], p=[1, 2])
    fc(2, "p1x4_stride2", "P_x 1x4, stride [1, 2]", 4, rng(0, 4), [1, 4], [2, 2, 5, 15], 2, 2, 3, s=[1, 2], p=1)
    fc(2, "p2x3_dilation", "P_x 2x3, dilation [2, 1], kernel [3, 2]", 6, rng(0, 6), [2, 3], [1, 2, 10, 9], 2, 3,
       [3, 2], d=[2, 1], p=[2, 0])
    fc(2, "p3x3_wide_halo", "P_x 3x3 on a 4x4 input: kernel 5, padding 2, halos wider than pieces", 9, rng(0, 9),
       [3, 3], [1, 2, 4, 4], 2, 2, 5, p=2)
    fc(2, "p2x2_fewer_outputs", "Output 1x3 over P_x 2x2: empty blocks in dimension 0", 4, rng(0, 4), [2, 2],
       [1, 2, 5, 7], 2, 2, [5, 3], s=[2, 2])
    fc(2, "p4x2_stride3_float32", "P_x 4x2, stride 3, float32", 8, rng(0, 8), [4, 2], [2, 1, 14, 9], 1, 2, 3, s=3,
       dtype="float32")
    fc(2, "p2x2_no_bias", "P_x 2x2, no bias, padding 3", 4, rng(0, 4), [2, 2], [1, 2, 6, 6], 2, 2, 2, p=3, bias=False)
    fc(2, "p3x4_world13", "World of 13, P_x 3x4 on workers 1..12", 13, rng(1, 13), [3, 4], [1, 2, 9, 11], 2, 2, 3, p=1)
    fc(2, "p3x6_world18_float32", "World of 18, P_x 3x6, float32", 18, rng(0, 18), [3, 6], [1, 1, 7, 13], 1, 2, 3,
       p=1, dtype="float32")
    # 3-d
    fc(3, "serial_3x3x3", "One worker, 3x3x3, padding 1", 1, [0], [1, 1, 1], [1, 2, 4, 4, 4], 2, 2, 3, p=1)
    fc(3, "p2x2x2", "P_x 2x2x2, 3x3x3, padding 1", 8, rng(0, 8), [2, 2, 2], [1, 2, 5, 4, 4], 2, 2, 3, p=1)
    fc(3, "p2x2x2_float32", "P_x 2x2x2, float32, kernel 2x3x2", 8, rng(0, 8), [2, 2, 2], [1, 2, 4, 5, 4], 2, 2,
       [2, 3, 2], p=1, dtype="float32")
    fc(3, "p1x2x3_stride2", "P_x 1x2x3, stride 2, dilation [1, 2, 1]", 6, rng(0, 6), [1, 2, 3], [1, 1, 3, 7, 8], 1, 2,
       3, s=2, p=1, d=[1, 2, 1])
    fc(3, "p3x1x1_empty_pieces", "P_x 3x1x1 on depth 2: one empty piece", 3, rng(0, 3), [3, 1, 1], [2, 1, 2, 3, 3], 1,
       2, [1, 3, 3], p=[0, 1, 1])
    fc(3, "p2x1x2_no_bias_float32", "P_x 2x1x2, no bias, float32", 5, rng(1, 5), [2, 1, 2], [1, 2, 4, 3, 5], 2, 1, 2,
       p=1, bias=False, dtype="float32")
    # Refusals.
    conv(f, "FeatureConv1d", "1d_refuse_channel_split", "A feature convolution does not split channels", 2,
         {"P_x": (rng(0, 2), [1, 2, 1])}, [1, 2, 6], 2, 2, 3,
         expect=refuse("FeatureConv1d: P_x shape [1,2,1] must be 1 x 1 x P_1..P_D (dimension 1 is 2, expected 1: "
                       "a feature-distributed convolution does not split channels)"))
    conv(f, "FeatureConv2d", "2d_refuse_batch_split", "A feature convolution does not split the batch", 4,
         {"P_x": (rng(0, 4), [2, 1, 2, 1])}, [2, 2, 6, 6], 2, 2, 3,
         expect=refuse("FeatureConv2d: P_x shape [2,1,2,1] must be 1 x 1 x P_1..P_D (dimension 0 is 2, expected 1: "
                       "the batch is not split)"))
    conv(f, "FeatureConv2d", "2d_refuse_partition_rank", "P_x of 3 dimensions for a 2-d convolution", 2,
         {"P_x": (rng(0, 2), [1, 1, 2])}, [1, 2, 6, 6], 2, 2, 3,
         expect=refuse("FeatureConv2d: P_x must have 4 dimensions (1 x 1 x P_1..P_D for 2 spatial dimensions), "
                       "got shape [1,1,2]"))
    fc(1, "refuse_kernel_does_not_fit", "Kernel 5 on an input of 3 without padding (refused at the first forward)",
       2, rng(0, 2), [2], [1, 2, 3], 2, 2, 5, input_shape="learnt",
       expect=refuse("FeatureConv1d: the kernel does not fit in spatial dimension 0: extent 3 + 2*padding 0 < "
                     "dilation 1 * (kernel_size 5 - 1) + 1 = 5"))
    fc(1, "refuse_kernel_does_not_fit_given", "Kernel 5 on an input of 3 without padding, the input shape given "
       "(refused at construction)", 2, rng(0, 2), [2], [1, 2, 3], 2, 2, 5,
       expect=refuse("FeatureConv1d: the kernel does not fit input_shape [1,2,3] in spatial dimension 0: extent 3 + "
                     "2*padding 0 < dilation 1 * (kernel_size 5 - 1) + 1 = 5"))
    fc(2, "refuse_dilated_kernel_does_not_fit", "Dilation 3 makes a 3x3 kernel span 7 > 4 + 2 (refused at the first "
       "forward)", 4, rng(0, 4), [2, 2], [1, 1, 4, 8], 1, 1, 3, p=1, d=3, input_shape="learnt",
       expect=refuse("FeatureConv2d: the kernel does not fit in spatial dimension 0"))
    fc(1, "refuse_input_channels", "x has 3 channels, in_channels is 2 (refused at the first forward)", 2, rng(0, 2),
       [2], [1, 3, 8], 2, 2, 3, input_shape="learnt",
       expect=refuse("FeatureConv1d: x on P_x worker 0 (world rank 0) has shape [1,3,4], expected [batch, 2, 1 "
                     "spatial extent]"))
    fc(1, "refuse_input_channels_given", "An input shape of 3 channels given, in_channels is 2 (refused at "
       "construction)", 2, rng(0, 2), [2], [1, 3, 8], 2, 2, 3,
       expect=refuse("FeatureConv1d: input_shape [1,3,8], expected [batch, 2, 1 spatial extent]"))
    fc(1, "refuse_kernel_size_zero", "Kernel size 0", 2, rng(0, 2), [2], [1, 2, 8], 2, 2, 0,
       expect=refuse("FeatureConv1d: kernel_size [0], stride [1] and dilation [1] must all be at least 1"))
    fc(2, "refuse_stride_zero", "Stride 0", 1, [0], [1, 1], [1, 2, 8, 8], 2, 2, 3, s=[1, 0],
       expect=refuse("FeatureConv2d: kernel_size [3,3], stride [1,0] and dilation [1,1] must all be at least 1"))
    fc(3, "refuse_dilation_zero", "Dilation 0", 2, rng(0, 2), [2, 1, 1], [1, 1, 4, 4, 4], 1, 1, 2, d=0,
       expect=refuse("must all be at least 1"))
    fc(1, "refuse_in_channels_zero", "in_channels 0", 2, rng(0, 2), [2], [1, 0, 8], 0, 2, 3,
       expect=refuse("FeatureConv1d: in_channels 0 and out_channels 2 must be at least 1"))
    overflow = ("FeatureConv3d: output shape [1,1,8388609,8388609,8388609]: 70368760954881 * 8388609 does not fit in "
                "a 64-bit size (overflow)")
    fc(3, "refuse_output_overflow", "Padding 2^22 on every side of 1 element: an output of 8388609^3 elements (refused "
       "at construction, naming the layer)", 1, [0], [1, 1, 1], [1, 1, 1, 1, 1], 1, 1, 1, p=4194304,
       expect=refuse(overflow))
    fc(3, "refuse_output_overflow_learnt", "The same, the input shape learnt (refused at the first forward)", 1, [0],
       [1, 1, 1], [1, 1, 1, 1, 1], 1, 1, 1, p=4194304, input_shape="learnt", expect=refuse(overflow))
    conv(f, "FeatureConv1d", "1d_refuse_idle_workers_too", "A channel split with idle workers: they refuse as well",
         5, {"P_x": (rng(1, 3), [1, 2, 1])}, [1, 2, 8], 2, 2, 3,
         expect=refuse("FeatureConv1d: P_x shape [1,2,1] must be 1 x 1 x P_1..P_D (dimension 1 is 2"))


# --------------------------------------------------------------------------------- ChannelConvNd
def channel_cases():
    f = "channel_conv"

    def cc(dims, name, desc, ws, px, py, pw, x, cin, cout, k, **kw):
        """px, py, pw: (workers, P_ci), (workers, P_co), (workers, (P_co, P_ci)); spatial dims unsplit."""
        ones = [1] * dims
        parts = {"P_x": (px[0], [1, px[1]] + ones), "P_y": (py[0], [1, py[1]] + ones),
                 "P_w": (pw[0], list(pw[1]) + ones)}
        conv(f, f"ChannelConv{dims}d", f"{dims}d_{name}", desc, ws, parts, x, cin, cout, k, **kw)

    cc(1, "spec_example_4_to_3", "Spec 004's example: P_x 1x4x1, P_y 1x3x1, P_w 3x4x1", 12, (rng(0, 4), 4),
       (rng(4, 7), 3), (rng(0, 12), (3, 4)), [2, 8, 9], 8, 6, 3, p=1)
    cc(1, "spec_example_float32", "Spec 004's example in float32", 12, (rng(0, 4), 4), (rng(4, 7), 3),
       (rng(0, 12), (3, 4)), [2, 8, 9], 8, 6, 3, p=1, dtype="float32")
    cc(1, "serial", "One worker in every partition", 1, ([0], 1), ([0], 1), ([0], (1, 1)), [2, 3, 7], 3, 2, 3, p=1)
    cc(1, "uneven_5_to_7", "5 -> 7 channels over P_ci 2, P_co 3 (uneven blocks)", 6, (rng(0, 2), 2), (rng(0, 3), 3),
       (rng(0, 6), (3, 2)), [2, 5, 8], 5, 7, 2, s=2)
    cc(1, "fewer_channels_than_workers", "2 -> 2 channels over a 3x3 P_w: empty blocks", 9, (rng(0, 3), 3),
       (rng(6, 9), 3), (rng(0, 9), (3, 3)), [2, 2, 6], 2, 2, 3, p=1)
    cc(1, "one_output_channel_float32", "1 output channel over P_co 2, float32", 4, (rng(0, 2), 2), (rng(2, 4), 2),
       (rng(0, 4), (2, 2)), [1, 3, 9], 3, 1, 4, p=2, dtype="float32")
    cc(1, "disjoint", "P_x, P_y and P_w on disjoint workers", 10, (rng(0, 2), 2), (rng(2, 4), 2), (rng(4, 8), (2, 2)),
       [2, 4, 7], 4, 3, 3, d=2, p=2)
    cc(1, "pco1", "P_co 1: only the input channels are split", 3, (rng(0, 3), 3), ([1], 1), (rng(0, 3), (1, 3)),
       [2, 6, 8], 6, 2, 3)
    cc(1, "pci1", "P_ci 1: x is broadcast to every output-channel worker", 4, ([3], 1), (rng(0, 4), 4),
       (rng(0, 4), (4, 1)), [1, 3, 8], 3, 8, 2, s=2)
    cc(1, "no_bias", "No bias", 4, (rng(0, 2), 2), (rng(0, 2), 2), (rng(0, 4), (2, 2)), [2, 4, 6], 4, 4, 3,
       bias=False)
    cc(1, "scrambled", "Scrambled worker orders", 6, ([4, 1], 2), ([5, 0, 2], 3), ([5, 3, 1, 0, 2, 4], (3, 2)),
       [1, 5, 7], 5, 6, 3, p=1)
    cc(1, "world18", "World of 18: P_w 3x6", 18, (rng(0, 6), 6), (rng(15, 18), 3), (rng(0, 18), (3, 6)), [1, 13, 5],
       13, 7, 3, p=1)
    cc(2, "p2x2", "P_w 2x2, 3x3 kernel", 4, (rng(0, 2), 2), (rng(2, 4), 2), (rng(0, 4), (2, 2)), [2, 4, 5, 5], 4, 3, 3,
       p=1)
    cc(2, "p2x2_float32", "P_w 2x2, float32, stride 2", 4, (rng(0, 2), 2), (rng(2, 4), 2), (rng(0, 4), (2, 2)),
       [2, 4, 6, 5], 4, 3, 3, s=2, p=1, dtype="float32")
    cc(2, "p3x2_uneven", "P_w 3x2, 5 -> 4 channels", 8, (rng(0, 2), 2), ([5, 6, 7], 3), (rng(0, 6), (3, 2)),
       [1, 5, 4, 6], 5, 4, [2, 3], p=[1, 0])
    cc(2, "world16", "World of 16: P_w 4x4", 16, (rng(0, 4), 4), (rng(12, 16), 4), (rng(0, 16), (4, 4)),
       [1, 8, 4, 4], 8, 8, 3, p=1)
    cc(3, "p2x2", "P_w 2x2, 3-d", 4, (rng(0, 2), 2), (rng(0, 2), 2), (rng(0, 4), (2, 2)), [1, 3, 3, 4, 3], 3, 3, 2,
       p=1)
    cc(3, "p1x3_float32", "P_w 1x3, 3-d, float32", 4, (rng(1, 4), 3), ([0], 1), (rng(1, 4), (1, 3)),
       [1, 4, 3, 3, 3], 4, 2, 3, p=1, dtype="float32")
    cc(2, "world11_p5x2", "World of 11: P_w 5x2, 3 -> 9 channels, stride 2", 11, ([9, 10], 2), (rng(0, 5), 5),
       (rng(0, 10), (5, 2)), [1, 3, 5, 6], 3, 9, 3, s=2, p=1)
    cc(3, "p3x1_no_bias", "P_w 3x1, 3-d, no bias, dilation 2", 3, ([0], 1), (rng(0, 3), 3), (rng(0, 3), (3, 1)),
       [1, 2, 5, 3, 3], 2, 3, 2, d=[2, 1, 1], bias=False)
    cc(3, "depth_padding_beyond_stride_float32", "3-d, depth padding 3 beyond depth stride 2, 1 input channel on 3 "
       "workers (oneDNN 2.6's weights pass is wrong there; the kernel avoids it)", 3, ([0, 2, 1], 3), ([1], 1),
       (rng(0, 3), (1, 3)), [2, 1, 4, 7, 3], 1, 3, 4, s=[2, 1, 2], p=[3, 2, 3], d=[1, 1, 2], dtype="float32")
    cc(3, "output_cancels_float32", "An output of 2 elements, each a sum of 17 x 60 products cancelling to nearly 0; "
       "float rounding is judged against the sum of their magnitudes (found by distdl-verify --random 2000 --seed 39 "
       "--random-world 18)", 1, ([0], 1), ([0], 1), ([0], (1, 1)), [1, 17, 4, 9, 1], 17, 1, [3, 5, 4], s=[3, 4, 3],
       p=[0, 3, 5], d=[1, 3, 2], bias=False, dtype="float32", seed=9805339772823788295)
    cc(1, "batch0", "Batch 0 through the channel pipeline", 4, (rng(0, 2), 2), (rng(2, 4), 2), (rng(0, 4), (2, 2)),
       [0, 3, 5], 3, 3, 3)
    cc(1, "refuse_input_channels", "x has 5 channels, in_channels 4 (refused at the first forward; every worker is in "
       "P_x, so every worker reports the reason)", 2, (rng(0, 2), 2), ([1], 1), ([0, 1], (1, 2)), [1, 5, 6], 4, 2, 3,
       input_shape="learnt",
       expect=refuse("ChannelConv1d: x on P_x worker 0 (world rank 0) has shape [1,3,6], expected [batch, 2, 1 "
                     "spatial extent]"))
    # Refusals.
    cc(1, "refuse_pw_ci_mismatch", "P_w 3x3 does not match P_x 1x4x1 in the input channels", 12, (rng(0, 4), 4),
       (rng(0, 3), 3), (rng(0, 9), (3, 3)), [1, 8, 6], 8, 6, 3,
       expect=refuse("ChannelConv1d: P_w shape [3,3,1] does not match P_x shape [1,4,1] in the input channels "
                     "(P_w dimension 1: 3 vs P_x dimension 1: 4)"))
    cc(2, "refuse_pw_co_mismatch", "P_w 2x2 does not match P_y 1x3 in the output channels", 7, (rng(0, 2), 2),
       (rng(4, 7), 3), (rng(0, 4), (2, 2)), [1, 4, 5, 5], 4, 6, 3,
       expect=refuse("ChannelConv2d: P_w shape [2,2,1,1] does not match P_y shape [1,3,1,1] in the output channels "
                     "(P_w dimension 0: 2 vs P_y dimension 1: 3)"))
    conv(f, "ChannelConv1d", "1d_refuse_spatial_split", "A channel convolution does not split spatial dimensions", 4,
         {"P_x": (rng(0, 2), [1, 1, 2]), "P_y": (rng(0, 2), [1, 1, 2]), "P_w": (rng(0, 2), [1, 1, 2])}, [1, 2, 8], 2, 2,
         3, expect=refuse("ChannelConv1d: P_x shape [1,1,2] must be 1 x P_ci x 1..1 (dimension 2 is 2, expected 1: "
                          "a channel-distributed convolution does not split spatial dimensions)"))
    # P_y 2x1x1 on P_w's workers: without the batch check each worker's unsummed partial output would
    # pass for a batch half of y.
    conv(f, "ChannelConv1d", "1d_refuse_py_batch_split", "P_y splits the batch over the workers of P_w (each holding "
         "the partial output of half the input channels)", 2,
         {"P_x": (rng(0, 2), [1, 2, 1]), "P_y": (rng(0, 2), [2, 1, 1]), "P_w": (rng(0, 2), [1, 2, 1])}, [2, 2, 8], 2, 1,
         3, expect=refuse("ChannelConv1d: P_y shape [2,1,1] must be 1 x P_co x 1..1"))


# --------------------------------------------------------------------------------- GeneralConvNd
def general_cases():
    f = "general_conv"

    def gc(dims, name, desc, ws, px, py, pw, x, cin, cout, k, **kw):
        """px, py, pw: (workers, shape) with full shapes."""
        conv(f, f"GeneralConv{dims}d", f"{dims}d_{name}", desc, ws, {"P_x": px, "P_y": py, "P_w": pw}, x, cin, cout, k,
             **kw)

    gc(1, "ci2_co3_d2", "P_x 1x2x2, P_y 1x3x2, P_w 3x2x2", 12, (rng(0, 4), [1, 2, 2]), (rng(6, 12), [1, 3, 2]),
       (rng(0, 12), [3, 2, 2]), [2, 5, 11], 5, 7, 3, p=1)
    gc(1, "ci2_co3_d2_float32", "As above in float32", 12, (rng(0, 4), [1, 2, 2]), (rng(6, 12), [1, 3, 2]),
       (rng(0, 12), [3, 2, 2]), [2, 5, 11], 5, 7, 3, p=1, dtype="float32")
    gc(1, "feature_shaped", "P_x = P_y = P_w 1x1x4: the feature configuration through GeneralConv1d", 4,
       (rng(0, 4), [1, 1, 4]), (rng(0, 4), [1, 1, 4]), (rng(0, 4), [1, 1, 4]), [2, 2, 13], 2, 3, 4, p=2)
    gc(1, "feature_shaped_disjoint", "P_x, P_y, P_w 1x1x3 on disjoint workers", 9, (rng(0, 3), [1, 1, 3]),
       (rng(3, 6), [1, 1, 3]), (rng(6, 9), [1, 1, 3]), [1, 2, 10], 2, 2, 3, s=2, p=1)
    gc(1, "channel_shaped", "Spatial dimension unsplit: the channel configuration through GeneralConv1d", 6,
       (rng(0, 2), [1, 2, 1]), (rng(0, 3), [1, 3, 1]), (rng(0, 6), [3, 2, 1]), [2, 4, 7], 4, 5, 3, p=1)
    gc(1, "wide_halo_empty_channels", "2 -> 1 channels on P_w 2x3x3, 4 elements: empty blocks and wide halos", 18,
       (rng(0, 9), [1, 3, 3]), (rng(12, 18), [1, 2, 3]), (rng(0, 18), [2, 3, 3]), [1, 2, 4], 2, 1, 5, p=2)
    gc(1, "dilated_stride", "Dilation 2, stride 2, P_w 2x2x3", 12, (rng(0, 6), [1, 2, 3]), (rng(0, 6), [1, 2, 3]),
       (rng(0, 12), [2, 2, 3]), [2, 3, 19], 3, 3, 3, s=2, p=1, d=2)
    gc(1, "no_bias_float32", "No bias, float32, P_w 2x2x2 on disjoint workers", 12, (rng(0, 4), [1, 2, 2]),
       (rng(4, 8), [1, 2, 2]), (rng(4, 12), [2, 2, 2]), [1, 4, 9], 4, 4, 2, p=1, bias=False, dtype="float32")
    gc(2, "ci2_co2_2x2", "P_w 2x2x2x2 (16 workers), 3x3", 16, (rng(0, 8), [1, 2, 2, 2]), (rng(8, 16), [1, 2, 2, 2]),
       (rng(0, 16), [2, 2, 2, 2]), [1, 3, 5, 6], 3, 4, 3, p=1)
    gc(2, "ci1_co2_2x1_float32", "P_w 2x1x2x1, float32", 4, (rng(0, 2), [1, 1, 2, 1]), (rng(0, 4), [1, 2, 2, 1]),
       (rng(0, 4), [2, 1, 2, 1]), [2, 2, 7, 5], 2, 3, [3, 2], p=1, dtype="float32")
    gc(2, "ci3_co1_1x2", "P_w 1x3x1x2, kernel 2, stride 2", 6, (rng(0, 6), [1, 3, 1, 2]), ([0, 1], [1, 1, 1, 2]),
       (rng(0, 6), [1, 3, 1, 2]), [1, 3, 6, 9], 3, 2, 2, s=2)
    gc(2, "fewer_outputs", "Output 2x2 over P_w 2x1x3x3 (18 workers)", 18, (rng(0, 9), [1, 1, 3, 3]),
       (rng(0, 18), [1, 2, 3, 3]), (rng(0, 18), [2, 1, 3, 3]), [1, 2, 5, 5], 2, 2, 3, s=2)
    gc(3, "ci2_co1_2x1x2", "P_w 1x2x2x1x2, 3-d", 8, (rng(0, 8), [1, 2, 2, 1, 2]), (rng(0, 4), [1, 1, 2, 1, 2]),
       (rng(0, 8), [1, 2, 2, 1, 2]), [1, 2, 4, 3, 4], 2, 2, 3, p=1)
    gc(3, "ci1_co2_1x2x1_float32", "P_w 2x1x1x2x1, 3-d, float32", 4, ([0, 1], [1, 1, 1, 2, 1]),
       (rng(0, 4), [1, 2, 1, 2, 1]), (rng(0, 4), [2, 1, 1, 2, 1]), [1, 2, 3, 5, 3], 2, 3, [2, 3, 2], p=[0, 1, 1],
       dtype="float32")
    gc(1, "world14", "World of 14: P_w 2x1x7 over 7 pieces of 3, kernel 4, padding 3", 14, (rng(0, 7), [1, 1, 7]),
       (rng(0, 14), [1, 2, 7]), (rng(0, 14), [2, 1, 7]), [1, 2, 21], 2, 3, 4, p=3)
    gc(2, "world15_float32", "World of 15: P_w 1x3x1x5 (input channels and width), float32", 15,
       (rng(0, 15), [1, 3, 1, 5]), (rng(0, 5), [1, 1, 1, 5]), (rng(0, 15), [1, 3, 1, 5]), [1, 4, 3, 11], 4, 2, 3,
       p=[1, 2], d=[1, 2], dtype="float32")
    gc(2, "stride_beyond_kernel", "Stride 3 over kernel 2, P_w 2x2x2x1", 8, (rng(0, 4), [1, 2, 2, 1]),
       (rng(4, 8), [1, 2, 2, 1]), (rng(0, 8), [2, 2, 2, 1]), [2, 3, 10, 4], 3, 3, 2, s=[3, 1])
    gc(3, "p1x1x2x2x1_float32", "3-d, P_w 1x1x2x2x1 (spatial only), float32", 4, (rng(0, 4), [1, 1, 2, 2, 1]),
       (rng(0, 4), [1, 1, 2, 2, 1]), (rng(0, 4), [1, 1, 2, 2, 1]), [1, 2, 4, 4, 3], 2, 2, 3, p=1, dtype="float32")
    gc(3, "ci2_co2_d2", "3-d, P_w 2x2x1x1x2 (16 workers), empty output blocks in depth", 16,
       (rng(0, 4), [1, 2, 1, 1, 2]), (rng(4, 8), [1, 2, 1, 1, 2]), (rng(8, 16), [2, 2, 1, 1, 2]), [1, 3, 3, 3, 2], 3,
       3, [3, 3, 2], p=[1, 1, 0], s=[1, 1, 2])
    gc(1, "refuse_kernel_does_not_fit", "Kernel 7 on 4 elements with padding 1 (refused at the first forward; every "
       "worker is in P_x)", 4, (rng(0, 4), [1, 2, 2]), ([3, 1], [1, 1, 2]), (rng(0, 4), [1, 2, 2]), [1, 4, 4], 4, 4, 7,
       p=1, input_shape="learnt",
       expect=refuse("GeneralConv1d: the kernel does not fit in spatial dimension 0: extent 4 + 2*padding 1 < "
                     "dilation 1 * (kernel_size 7 - 1) + 1 = 7"))
    gc(1, "refuse_kernel_does_not_fit_given", "Kernel 7 on 4 elements with padding 1, the input shape given (refused "
       "at construction, on every worker)", 4, (rng(0, 4), [1, 2, 2]), ([3, 1], [1, 1, 2]), (rng(0, 4), [1, 2, 2]),
       [1, 4, 4], 4, 4, 7, p=1,
       expect=refuse("GeneralConv1d: the kernel does not fit input_shape [1,4,4] in spatial dimension 0: extent 4 + "
                     "2*padding 1 < dilation 1 * (kernel_size 7 - 1) + 1 = 7"))
    # Refusals.
    gc(2, "refuse_spatial_mismatch", "P_y splits spatial dimension 1, P_x dimension 0", 8, (rng(0, 4), [1, 2, 2, 1]),
       (rng(0, 2), [1, 1, 1, 2]), (rng(0, 8), [1, 2, 2, 2]), [1, 2, 6, 6], 2, 2, 3,
       expect=refuse("GeneralConv2d: P_y shape [1,1,1,2] does not match P_x shape [1,2,2,1] in spatial dimension 0 "
                     "(P_y dimension 2: 1 vs P_x dimension 2: 2)"))
    gc(1, "refuse_pw_spatial", "P_w splits the spatial dimension in 3, P_x in 2", 12, (rng(0, 4), [1, 2, 2]),
       (rng(0, 2), [1, 1, 2]), (rng(0, 6), [1, 2, 3]), [1, 2, 8], 2, 2, 3,
       expect=refuse("GeneralConv1d: P_w shape [1,2,3] does not match P_x shape [1,2,2] in spatial dimension 0 "
                     "(P_w dimension 2: 3 vs P_x dimension 2: 2)"))


# --------------------------------------------------------------------------------- ConvNd (selector)
def selector_cases():
    f = "conv"

    def sc(dims, name, desc, ws, parts, x, cin, cout, k, **kw):
        conv(f, f"Conv{dims}d", f"{dims}d_{name}", desc, ws, parts, x, cin, cout, k, **kw)

    sc(1, "only_px_feature", "Only P_x: feature-distributed", 3, {"P_x": (rng(0, 3), [1, 1, 3])}, [2, 2, 10], 2, 3, 3,
       p=1)
    sc(2, "only_px_feature_float32", "Only P_x (2x2): feature-distributed, float32", 4,
       {"P_x": (rng(0, 4), [1, 1, 2, 2])}, [1, 2, 6, 6], 2, 2, 3, p=1, dtype="float32")
    sc(3, "only_px_feature", "Only P_x (1x2x1): feature-distributed 3-d", 2, {"P_x": (rng(0, 2), [1, 1, 1, 2, 1])},
       [1, 1, 3, 4, 3], 1, 2, 2, p=1)
    sc(1, "channel", "P_x, P_y, P_w with the spatial dimension unsplit: channel-distributed", 6,
       {"P_x": (rng(0, 2), [1, 2, 1]), "P_y": (rng(3, 6), [1, 3, 1]), "P_w": (rng(0, 6), [3, 2, 1])}, [2, 4, 7], 4, 6,
       3, p=1)
    sc(2, "channel_float32", "Channel-distributed 2-d through the selector, float32", 4,
       {"P_x": (rng(0, 2), [1, 2, 1, 1]), "P_y": (rng(0, 2), [1, 2, 1, 1]), "P_w": (rng(0, 4), [2, 2, 1, 1])},
       [1, 3, 5, 4], 3, 3, 3, p=1, dtype="float32")
    sc(3, "channel", "Channel-distributed 3-d through the selector", 3,
       {"P_x": ([0], [1, 1, 1, 1, 1]), "P_y": (rng(0, 3), [1, 3, 1, 1, 1]), "P_w": (rng(0, 3), [3, 1, 1, 1, 1])},
       [1, 2, 3, 3, 3], 2, 4, 2)
    sc(1, "general", "Spatial and channel splits: general", 8,
       {"P_x": (rng(0, 4), [1, 2, 2]), "P_y": (rng(4, 8), [1, 2, 2]), "P_w": (rng(0, 8), [2, 2, 2])}, [1, 4, 9], 4, 4,
       3, p=1)
    sc(2, "general_float32", "General 2-d through the selector, float32", 8,
       {"P_x": (rng(0, 4), [1, 1, 2, 2]), "P_y": (rng(0, 8), [1, 2, 2, 2]), "P_w": (rng(0, 8), [2, 1, 2, 2])},
       [1, 2, 5, 6], 2, 3, 3, s=2, p=1, dtype="float32")
    sc(3, "general", "General 3-d through the selector", 4,
       {"P_x": (rng(0, 2), [1, 1, 2, 1, 1]), "P_y": (rng(0, 4), [1, 2, 2, 1, 1]), "P_w": (rng(0, 4), [2, 1, 2, 1, 1])},
       [1, 1, 4, 3, 3], 1, 2, 3, p=1)
    sc(1, "general_world17", "World of 17, general 1-d, P_w 2x2x4", 17,
       {"P_x": (rng(1, 9), [1, 2, 4]), "P_y": (rng(9, 17), [1, 2, 4]), "P_w": (rng(1, 17), [2, 2, 4])}, [1, 3, 17], 3,
       3, 3, p=1)
    sc(2, "feature_world10", "Only P_x 1x1x2x5 in a world of 10, stride 2", 10, {"P_x": (rng(0, 10), [1, 1, 2, 5])},
       [1, 1, 6, 12], 1, 2, 3, s=2, p=1)
    sc(1, "channel_no_bias_float32", "Channel-distributed through the selector, no bias, float32", 5,
       {"P_x": (rng(0, 3), [1, 3, 1]), "P_y": ([4], [1, 1, 1]), "P_w": (rng(0, 3), [1, 3, 1])}, [2, 6, 5], 6, 2, 2,
       bias=False, dtype="float32")
    # Refusals.
    sc(2, "refuse_py_without_pw", "P_y given without P_w", 4,
       {"P_x": (rng(0, 2), [1, 2, 1, 1]), "P_y": (rng(2, 4), [1, 2, 1, 1])}, [1, 2, 5, 5], 2, 2, 3,
       expect=refuse("Conv2d: P_y is given but P_w is missing"))
    sc(1, "refuse_pw_without_py", "P_w given without P_y", 4,
       {"P_x": (rng(0, 2), [1, 2, 1]), "P_w": (rng(0, 4), [2, 2, 1])}, [1, 2, 5], 2, 2, 3,
       expect=refuse("Conv1d: P_w is given but P_y is missing"))
    sc(1, "refuse_inconsistent_channels", "P_w 2x3x1 against P_x 1x2x1", 6,
       {"P_x": (rng(0, 2), [1, 2, 1]), "P_y": (rng(0, 2), [1, 2, 1]), "P_w": (rng(0, 6), [2, 3, 1])}, [1, 2, 5], 2, 2,
       3, expect=refuse("Conv1d: P_w shape [2,3,1] does not match P_x shape [1,2,1] in the input channels "
                        "(P_w dimension 1: 3 vs P_x dimension 1: 2)"))
    sc(2, "refuse_inconsistent_spatial", "P_w splits spatial dimension 1 in 2, P_x not", 8,
       {"P_x": (rng(0, 2), [1, 1, 2, 1]), "P_y": (rng(0, 2), [1, 1, 2, 1]), "P_w": (rng(0, 4), [1, 1, 2, 2])},
       [1, 2, 6, 6], 2, 2, 3,
       expect=refuse("Conv2d: P_w shape [1,1,2,2] does not match P_x shape [1,1,2,1] in spatial dimension 1 "
                     "(P_w dimension 3: 2 vs P_x dimension 3: 1)"))
    sc(3, "refuse_only_px_with_channels", "Only P_x, but it splits channels", 2, {"P_x": (rng(0, 2), [1, 2, 1, 1, 1])},
       [1, 2, 3, 3, 3], 2, 2, 3,
       expect=refuse("Conv3d: P_x shape [1,2,1,1,1] must be 1 x 1 x P_1..P_D (dimension 1 is 2"))
    sc(1, "refuse_py_rank", "P_y of 2 dimensions for a 1-d convolution", 4,
       {"P_x": (rng(0, 2), [1, 2, 1]), "P_y": (rng(0, 2), [1, 2]), "P_w": (rng(0, 4), [2, 2, 1])}, [1, 2, 5], 2, 2, 3,
       expect=refuse("Conv1d: P_y must have 3 dimensions"))


# --------------------------------------------------------------------------------- learnt input shapes
def learnt_shape_cases():
    """The layers told no input shape: they learn it from the pieces at the first forward."""
    L = "learnt"
    conv("feature_conv", "FeatureConv2d", "2d_learnt_shape", "The input shape learnt from the pieces (P_x 1x1x2x2, "
         "stride 2, uneven pieces)", 4, {"P_x": (rng(0, 4), [1, 1, 2, 2])}, [2, 3, 9, 7], 3, 2, 3, s=2, p=1,
         input_shape=L)
    conv("feature_conv", "FeatureConv1d", "1d_learnt_shape_empty_pieces_float32", "Learnt from pieces of which two "
         "are empty (length 2 on 4 workers), kernel 3 with padding 2, float32", 4, {"P_x": (rng(0, 4), [1, 1, 4])},
         [2, 2, 2], 2, 3, 3, p=2, dtype="float32", input_shape=L)
    conv("channel_conv", "ChannelConv2d", "2d_learnt_shape", "The input shape learnt from the channel pieces (P_ci 2, "
         "P_co 3)", 6, {"P_x": ([5, 0], [1, 2, 1, 1]), "P_y": ([1, 3, 2], [1, 3, 1, 1]),
                        "P_w": (rng(0, 6), [3, 2, 1, 1])}, [2, 5, 5, 6], 5, 4, [3, 2], p=[1, 0], input_shape=L)
    conv("channel_conv", "ChannelConv1d", "1d_learnt_shape_batch0", "A batch of 0 learnt from the pieces", 4,
         {"P_x": (rng(0, 2), [1, 2, 1]), "P_y": (rng(2, 4), [1, 2, 1]), "P_w": (rng(0, 4), [2, 2, 1])}, [0, 3, 5], 3, 3,
         3, input_shape=L)
    conv("general_conv", "GeneralConv2d", "2d_learnt_shape", "The input shape learnt from pieces split in channels and "
         "height", 8, {"P_x": (rng(0, 4), [1, 2, 2, 1]), "P_y": ([4, 6, 5, 7], [1, 2, 2, 1]),
                       "P_w": (rng(0, 8), [2, 2, 2, 1])}, [1, 3, 7, 5], 3, 3, 3, s=[2, 1], p=1, input_shape=L)
    conv("general_conv", "GeneralConv3d", "3d_learnt_shape_float32", "3-d, learnt, float32, dilation 2", 8,
         {"P_x": (rng(0, 4), [1, 2, 1, 2, 1]), "P_y": (rng(4, 8), [1, 2, 1, 2, 1]),
          "P_w": (rng(0, 8), [2, 2, 1, 2, 1])}, [2, 2, 3, 8, 4], 2, 3, 2, p=1, d=[1, 2, 1], dtype="float32",
         input_shape=L)
    conv("conv", "Conv1d", "1d_learnt_general", "The selector's general layer, learnt", 8,
         {"P_x": (rng(0, 4), [1, 2, 2]), "P_y": (rng(4, 8), [1, 2, 2]), "P_w": (rng(0, 8), [2, 2, 2])}, [2, 4, 9], 4, 3,
         4, p=2, input_shape=L)
    conv("conv", "Conv2d", "2d_learnt_feature", "The selector's feature layer, learnt, halos wider than the pieces", 6,
         {"P_x": (rng(0, 6), [1, 1, 3, 2])}, [1, 2, 4, 5], 2, 2, 5, p=2, input_shape=L)


def main():
    generate(__doc__, feature_cases, channel_cases, general_cases, selector_cases, learnt_shape_cases)


if __name__ == "__main__":
    main()
