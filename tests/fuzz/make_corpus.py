#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make_corpus.py — writes the seed corpus of the fuzz target (tests/fuzz/corpus/seed-*).

Each seed encodes one descriptor in fuzz_pool.c's input format (see the comment at the top of
fuzz_pool.c; this file mirrors it): the hot 2x2/s2 and 3x3/s2/p1 cases, SAME_UPPER/LOWER, ceil
mode, dilation, LP, AVG with count_include_pad 0 and 1, U8/I32/I64 indices, global pooling,
1D and 3D windows (the X byte's depth axis), adaptive windows (its adaptive bit), shapes big
enough for the parallel entry points to split rows, and descriptors plan_create must reject.
Data is mostly left to the target's generator (seeded by the input's hash); a few seeds spell
out ties, signed zeros, NaN payloads and index corruptions.

Usage: python3 tests/fuzz/make_corpus.py [OUTDIR]   (default: the corpus/ next to this file)
Regression inputs (regress-*) in the same directory are left alone.
"""
import math
import os
import struct
import sys

MAX, AVG, LP = 0, 1, 2
NCHW, NHWC = 0, 1
EXPLICIT, VALID, SAME_UPPER, SAME_LOWER = 0, 1, 2, 3
NONE, I32, I64, U8 = 0, 1, 2, 3
AUTO, SCALAR = 0, 1
ENV = {None: 0, 'scalar': 1, 'sse41': 2, 'avx2': 3, 'avx512': 4, 'neon': 5, 'auto': 6,
       'unknown': 7}

# Flag bits of the first byte.
F_PADS, F_CEIL_RAW, F_CEIL, F_CIP, F_CIP_RAW, F_STRIDE, F_DIL, F_GLOBAL = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80)
# Option bits.
OPT_AVG_NULL_X, OPT_IDX_NULL_X = 0x10, 0x20

# Size byte flavours (base, modulus), as in decode_desc().
FLAVOURS = {'n': (1, 3), 'c': (1, 12), 'hw': (1, 12), 'k': (1, 5), 's': (1, 4), 'd': (1, 3),
            'pad': (0, 4), 'c+': (0, 5), 'stride': (0, 16),
            # the depth axis (d, kernel_d, stride_d, dilation_d) and out_d
            'depth': (1, 8), 'kd': (1, 3), 'sd': (1, 3), 'dd': (1, 2), 'od': (1, 8)}
# The V byte's extension bit and the X byte's clamp, depth-axis and adaptive bits.
V_EXT, X_CLAMP, X_CLAMP_RAW, X_DEPTH, X_ADAPTIVE = 0x80, 0x10, 0x20, 0x40, 0x80
# The V byte's element-type bit, the dtypes and the quantization scale table.
V_DTYPE = 0x40
DT_F32, DT_BF16, DT_F16, DT_S8, DT_U8 = 0, 1, 2, 3, 4
SCALES = [1.0, 0.5, 0.0, -1.0, float('inf'), float('nan'), 2**-149, 0.01, 3.0, 2**-126]
CLAMP_BITS = [0xff800000, 0x7f800000, 0x80000000, 0x00000000, 0xbf800000, 0x3f800000,
              0x3f000000, 0xbf000000, 0x40c00000, 0xc0c00000, 0x7f7fffff, 0xff7fffff,
              0x00000001, 0x40000000, 0xc0800000, 0x7fc00000]
MEDIUM = [6, 7, 8, 11, 13, 15, 16, 17, 24, 31, 32, 33, 48, 64, 65, 128]
SPECIAL_SIZES = {0: 0xE0, 2**64 - 1: 0xE1, 2**63 - 1: 0xE2, 2**63: 0xE3, 2**31: 0xE4,
                 2**31 - 1: 0xE5, 2**32: 0xE6, 2**32 + 1: 0xE7, 255: 0xE8, 256: 0xE9,
                 257: 0xEA, 65536: 0xEB}
P_TABLE = [1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 1.5, 0.25, 1.0, 2.0, 7.0, 1e-3, 1.0, 2.0, 33.0]
SPECIAL_BITS = [
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001,
    0x7fa00000, 0x7fc12345, 0xffd00bad, 0x7fffffff, 0xffffffff, 0x00000001, 0x80000001,
    0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x3f800000,
    0xbf800000, 0x3f800001, 0x3f7fffff, 0x4b800000, 0x33800000, 0x5f800000, 0x1f800000,
    0x00400000, 0x3f000000, 0x40490fdb, 0xc0490fdb]


def size(v, flavour):
    base, mod = FLAVOURS[flavour]
    if base <= v < base + mod:
        return bytes([v - base])
    if v in MEDIUM:
        return bytes([0xF0 + MEDIUM.index(v)])
    if v in SPECIAL_SIZES:
        return bytes([SPECIAL_SIZES[v]])
    if v < 2**16:
        return bytes([0xED]) + v.to_bytes(2, 'little')
    if v < 2**32:
        return bytes([0xEE]) + v.to_bytes(4, 'little')
    return bytes([0xEF]) + v.to_bytes(8, 'little')


def enum(v, count):
    if 0 <= v < count:
        return bytes([v])
    named = {-1: 0xF8, count: 0xF9, count + 1: 0xFA, -2**31: 0xFB, 2**31 - 1: 0xFC}
    if v in named:
        return bytes([named[v]])
    return bytes([0xFD]) + struct.pack('<i', v)


def p_byte(p):
    if isinstance(p, float) and p in P_TABLE:
        return bytes([P_TABLE.index(p)])
    bits = p if isinstance(p, int) else struct.unpack('<I', struct.pack('<f', p))[0]
    return bytes([0x80]) + struct.pack('<I', bits)


def floats(values):
    """Data floats: small integers and the special table by tag, else raw bits.
    A value given as an int is a raw 32-bit pattern."""
    out = b''
    for v in values:
        if isinstance(v, int):
            if v in SPECIAL_BITS:
                out += bytes([0x60 + SPECIAL_BITS.index(v)])
            else:
                out += bytes([0xA0]) + struct.pack('<I', v)
        elif (math.isfinite(v) and v == int(v) and -4 <= v <= 4
              and struct.pack('<f', v) != struct.pack('<f', -0.0)):
            out += bytes([int(v) + 4])
        else:
            out += bytes([0xA0]) + struct.pack('<f', v)
    return out


def pixel_stride(v, c):
    """(X byte mode, operand bytes) of a pixel stride: None dense, else elements."""
    if v is None:
        return 0, b''
    if v == c:
        return 2, b''
    if c < v < c + 5:
        return 1, size(v - c, 'c+')
    return 3, size(v, 'stride')


def bound(v):
    """A clamp bound byte: the clamp table's index, or 0xF0 and raw bits."""
    bits = v if isinstance(v, int) else struct.unpack('<I', struct.pack('<f', v))[0]
    if bits in CLAMP_BITS:
        return bytes([CLAMP_BITS.index(bits)])
    return bytes([0xF0]) + struct.pack('<I', bits)


def seed(method=MAX, layout=NCHW, n=1, c=1, h=4, w=4, k=(2, 2), stride=None, dil=None,
         padding=EXPLICIT, pads=None, ceil=0, cip=1, p=2.0, index=NONE, isa=AUTO, env=None,
         glob=False, opts=0, data=b'', raw_ceil=None, raw_cip=None, xs=None, ys=None,
         clamp=None, raw_clamp=None, depth=None, dpads=None, adaptive=None,
         keep_window=False, dtype=None, quant=None):
    """xs, ys: pixel strides in elements (None: dense); clamp: (min, max) with clamp = 1,
    or with raw_clamp as the clamp field's raw value. depth: (d, kernel_d, stride_d,
    dilation_d) of a depth axis, dpads: (pad_front, pad_back) (either set of pads brings the
    other, as zeros); adaptive: (out_d, out_h, out_w) with adaptive = 1, whose window is
    kernel, stride and dilation 1 unless keep_window keeps the decoded ones (the F byte's
    global bit). dtype: the element type (data then in its bytes: halves(), raw
    bytes); quant: (x_scale, y_scale, x_zp, y_zp, y_min, y_max) of an S8/U8 plan, scales
    from SCALES, None bounds for the sentinels."""
    if depth is not None and (pads is not None or dpads is not None):
        pads = pads if pads is not None else (0, 0, 0, 0)
        dpads = dpads if dpads is not None else (0, 0)
    assert dpads is None or depth is not None, 'depth pads need a depth axis'
    assert not keep_window or adaptive is not None, 'keep_window is for adaptive seeds'
    f = 0
    if pads is not None:
        f |= F_PADS
    if raw_ceil is not None:
        f |= F_CEIL_RAW
    elif ceil:
        f |= F_CEIL
    if raw_cip is not None:
        f |= F_CIP_RAW
    elif cip:
        f |= F_CIP
    if stride is not None:
        f |= F_STRIDE
    if dil is not None:
        f |= F_DIL
    if glob or keep_window:
        f |= F_GLOBAL
    out = bytes([f]) + enum(method, 3) + enum(layout, 2) + enum(padding, 4)
    xmode, xops = pixel_stride(xs, c)
    ymode, yops = pixel_stride(ys, c)
    x = xmode | ymode << 2
    if clamp is not None:
        x |= X_CLAMP_RAW if raw_clamp is not None else X_CLAMP
    if depth is not None:
        x |= X_DEPTH
    if adaptive is not None:
        x |= X_ADAPTIVE
    out += enum(index, 4) + enum(isa, 6)
    v = ENV[env] | (V_DTYPE if dtype is not None else 0)
    out += bytes([v | V_EXT, x]) if x else bytes([v])
    if dtype is not None:
        out += enum(dtype, 5)
        if dtype in (DT_S8, DT_U8):
            xsc, ysc, xzp, yzp, lo, hi = quant or (1.0, 1.0, 0, 0, None, None)

            def qint(val, bound):
                if val is None:
                    return bytes([0])
                b = val + 128 if dtype == DT_S8 else val
                if 0 <= b < 0xF0 and not (bound and b == 0):
                    return bytes([b])
                return bytes([0xF0]) + struct.pack('<i', val)
            out += bytes([SCALES.index(xsc), SCALES.index(ysc)])
            out += qint(xzp, False) + qint(yzp, False) + qint(lo, True) + qint(hi, True)
    out += size(n, 'n') + size(c, 'c') + size(h, 'hw') + size(w, 'hw')
    out += size(k[0], 'k') + size(k[1], 'k')
    if stride is not None:
        out += size(stride[0], 's') + size(stride[1], 's')
    if dil is not None:
        out += size(dil[0], 'd') + size(dil[1], 'd')
    if pads is not None:
        out += b''.join(size(v, 'pad') for v in pads)
    if depth is not None:
        out += (size(depth[0], 'depth') + size(depth[1], 'kd') + size(depth[2], 'sd')
                + size(depth[3], 'dd'))
        if dpads is not None:
            out += size(dpads[0], 'pad') + size(dpads[1], 'pad')
    if adaptive is not None:
        out += size(adaptive[0], 'od') + size(adaptive[1], 'hw') + size(adaptive[2], 'hw')
    if raw_ceil is not None:
        out += struct.pack('<i', raw_ceil)
    if raw_cip is not None:
        out += struct.pack('<i', raw_cip)
    out += p_byte(p) + bytes([opts]) + xops + yops
    if clamp is not None:
        if raw_clamp is not None:
            out += struct.pack('<i', raw_clamp)
        out += bound(clamp[0]) + bound(clamp[1])
    return out + data


def halves(values):
    """bf16/f16 data: each a raw 16-bit pattern (tag 0x80 and the bits)."""
    return b''.join(bytes([0x80]) + struct.pack('<H', v) for v in values)


def corruption(pos, kind, operand=b''):
    """One index corruption: position, kind (0 +1, 1 -1, 2 +row, 3 -row, 4 raw, 5 special,
    6 copy another position's index, 7 small delta; 8 | 2, 8 | 3: plus or minus a depth
    slice instead of a row), operand bytes."""
    return struct.pack('<H', pos) + bytes([kind]) + operand


NAN_A, NAN_B, SNAN = 0x7fc12345, 0xffd00bad, 0x7fa00000
PZ, NZ, INF, NINF, DENORM = 0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x00000001

SEEDS = {
    # The hot path and its neighbours.
    'max-2x2s2-nchw': seed(c=3, h=8, w=8),
    'max-2x2s2-nchw-wide-u8': seed(c=2, h=5, w=48, index=U8, opts=0x05),
    'max-2x2s2-nhwc-i64': seed(layout=NHWC, n=2, c=17, h=6, w=11, index=I64),
    'max-2x2s2-ties-nan': seed(h=4, w=4, index=I32, data=floats([
        PZ, NZ, 1.0, 1.0, NZ, PZ, 1.0, 2.0,
        NAN_A, 3.0, SNAN, NAN_B, 3.0, NAN_A, INF, INF]) + floats([1.0, -0.0, 0.5, NINF])),
    'max-3x3s2p1-nchw-i32': seed(c=2, h=11, w=12, k=(3, 3), stride=(2, 2),
                                 pads=(1, 1, 1, 1), index=I32),
    'max-3x3s2p1-nhwc-u8': seed(layout=NHWC, c=16, h=9, w=8, k=(3, 3), stride=(2, 2),
                                pads=(1, 1, 1, 1), index=U8, opts=0x40 | OPT_IDX_NULL_X),
    'max-3x3s1-nchw-i64': seed(c=2, h=10, w=33, k=(3, 3), stride=(1, 1), index=I64,
                               opts=0xC0),
    'max-same-upper-nchw': seed(h=7, w=8, k=(3, 3), stride=(2, 2), padding=SAME_UPPER,
                                index=I32),
    'max-same-lower-nhwc-u8': seed(layout=NHWC, c=5, h=7, w=5, k=(2, 3), stride=(2, 2),
                                   padding=SAME_LOWER, index=U8),
    'max-ceil-i64': seed(c=3, h=8, w=7, k=(3, 3), stride=(2, 2), pads=(1, 0, 1, 0), ceil=1,
                         index=I64),
    'max-dilation-i32': seed(layout=NHWC, c=3, h=12, w=11, k=(3, 2), stride=(1, 2),
                             dil=(2, 3), pads=(2, 1, 0, 3), index=I32),
    'max-idx-neighbour': seed(h=5, w=5, k=(3, 3), stride=(1, 1), index=I32, opts=0x40,
                              data=floats([float(v % 3) for v in range(25)])
                              + floats([1.0] * 9)
                              + corruption(4, 6, struct.pack('<H', 3))
                              + corruption(0, 0)),
    'max-global-nchw-i32': seed(c=4, h=7, w=9, glob=True, index=I32),
    # AVG: count_include_pad both ways, SAME, ceil overhang, VALID.
    'avg-3x3s2p1-cip1-nchw': seed(method=AVG, c=3, h=9, w=13, k=(3, 3), stride=(2, 2),
                                  pads=(1, 1, 1, 1), cip=1),
    'avg-3x3s2p1-cip0-nhwc': seed(method=AVG, layout=NHWC, c=9, h=9, w=6, k=(3, 3),
                                  stride=(2, 2), pads=(1, 1, 1, 1), cip=0,
                                  opts=OPT_AVG_NULL_X | 0x06),
    'avg-same-lower-cip0': seed(method=AVG, c=2, h=6, w=7, k=(4, 3), stride=(3, 2),
                                padding=SAME_LOWER, cip=0),
    'avg-ceil-cip1-overhang': seed(method=AVG, layout=NHWC, c=4, h=6, w=6, k=(3, 3),
                                   stride=(2, 2), pads=(1, 1, 1, 1), ceil=1, cip=1),
    'avg-valid-dilation': seed(method=AVG, c=2, h=12, w=12, k=(3, 3), stride=(2, 3),
                               dil=(2, 2), padding=VALID),
    'avg-global-nhwc-inf': seed(method=AVG, layout=NHWC, c=3, h=2, w=2, glob=True,
                                data=floats([INF, 1.0, DENORM, NINF, 2.0, DENORM,
                                             1.0, 3.0, 0x7f7fffff, 0x7f7fffff, 4.0, NZ])),
    # LP: p = 1, 2 and SLEEF's pow.
    'lp-p2-3x3s2p1-nchw': seed(method=LP, c=2, h=9, w=9, k=(3, 3), stride=(2, 2),
                               pads=(1, 1, 1, 1), p=2.0),
    'lp-p1-nhwc': seed(method=LP, layout=NHWC, c=6, h=6, w=8, k=(2, 2), p=1.0),
    'lp-p3-dilation': seed(method=LP, c=2, h=10, w=9, k=(2, 3), stride=(1, 2), dil=(3, 1),
                           p=3.0),
    'lp-p0.5-same-upper': seed(method=LP, layout=NHWC, c=3, h=5, w=7, k=(3, 3),
                               stride=(2, 2), padding=SAME_UPPER, p=0.5),
    'lp-global-p1.5': seed(method=LP, c=5, h=6, w=5, glob=True, p=1.5),
    # The parallel entry points cut big tensors into row blocks or plane groups
    # (replayed by fuzz-corpus, above the size cap while fuzzing).
    'par-rows-max-3x3s2p1': seed(h=512, w=256, k=(3, 3), stride=(2, 2), pads=(1, 1, 1, 1)),
    'par-rows-avg-2x2-ceil': seed(method=AVG, h=511, w=256, k=(2, 2), ceil=1, pads=(1, 0, 0, 1),
                                cip=0),
    'par-planes-max-u8': seed(layout=NHWC, n=3, c=64, h=32, w=32, index=U8),
    # NHWC pixel strides (a channel slice in, a slice of a concat out) and the clamp.
    'stride-max-3x3s2p1-i64': seed(layout=NHWC, c=5, h=9, w=8, k=(3, 3), stride=(2, 2),
                                   pads=(1, 1, 1, 1), index=I64, xs=8, ys=7),
    'stride-max-2x2s2-u8-slice': seed(layout=NHWC, c=17, h=6, w=10, index=U8, xs=21, ys=17),
    'stride-avg-3x3s1p1-wide': seed(method=AVG, layout=NHWC, c=16, h=7, w=7, k=(3, 3),
                                    stride=(1, 1), pads=(1, 1, 1, 1), xs=19, ys=20),
    'stride-lp-p2-out': seed(method=LP, layout=NHWC, c=3, h=6, w=6, p=2.0, ys=4),
    'clamp-max-relu6-i32': seed(c=3, h=8, w=8, index=I32, clamp=(0.0, 6.0)),
    'clamp-avg-nhwc-stride': seed(method=AVG, layout=NHWC, c=9, h=6, w=7, k=(3, 3),
                                  stride=(2, 2), pads=(1, 1, 1, 1), xs=12, ys=11,
                                  clamp=(-0.5, 0.5)),
    'clamp-lp-point': seed(method=LP, c=2, h=6, w=6, p=1.0, clamp=(2.0, 2.0)),
    'clamp-max-1x1-negzero': seed(layout=NHWC, c=4, h=3, w=3, k=(1, 1), clamp=(0.0, 1.0),
                                  data=floats([NZ, PZ, NAN_A, INF, NINF, 0.5, -1.0, 2.0] * 5)),
    'reject-stride-below-c': seed(layout=NHWC, c=8, h=4, w=4, xs=5),
    'reject-stride-nchw': seed(c=2, h=4, w=4, ys=3),
    'reject-clamp-nan': seed(h=4, w=4, clamp=(0.0, 0x7fc00000)),
    'reject-clamp-empty': seed(h=4, w=4, clamp=(1.0, -1.0)),
    'reject-clamp-raw': seed(h=4, w=4, clamp=(0.0, 1.0), raw_clamp=2),
    # plan_create must reject these cleanly (and the env/isa paths).
    'reject-raw-enums': seed(method=-1, layout=7, padding=2**31 - 1, index=-2**31, isa=99),
    'reject-huge-sizes': seed(n=2**63, c=2**64 - 1, h=2**32 + 1, w=2**31, k=(2**31 - 1, 1)),
    'reject-zero-and-pads': seed(h=0, w=5, k=(3, 3), stride=(0, 2), pads=(3, 0, 0, 0),
                                 raw_ceil=2, raw_cip=-1),
    'reject-u8-17x16': seed(h=17, w=16, k=(17, 16), index=U8),
    'reject-lp-nan-p': seed(method=LP, h=4, w=4, p=0x7fc00000),
    'env-scalar-auto': seed(method=AVG, c=2, h=9, w=9, k=(3, 3), stride=(2, 2),
                            pads=(1, 1, 1, 1), env='scalar'),
    'env-unknown-forced': seed(c=2, h=8, w=8, env='unknown'),
    # 3D (depth axis: d, kernel_d, stride_d, dilation_d) and 1D (h = 1).
    '3d-max-2x2x2s2-i64': seed(n=2, c=3, h=6, w=7, depth=(4, 2, 2, 1), index=I64, opts=0x40),
    # Index corruptions by a depth slice (h*w): one slice up and down inside the window
    # (positions 1 and 6: every index still a valid tap), and out of it (position 5).
    '3d-max-idx-slice-i32': seed(h=4, w=4, depth=(4, 2, 2, 1), index=I32, opts=0x40,
                                 data=floats([float((v * 5) % 9 - 4) for v in range(64)])
                                 + floats([1.0] * 8)
                                 + corruption(1, 8 | 2) + corruption(6, 8 | 3)),
    '3d-max-idx-slice-out-i32': seed(h=4, w=4, depth=(4, 2, 2, 1), index=I32,
                                     data=floats([float((v * 5) % 9 - 4) for v in range(64)])
                                     + floats([1.0] * 8) + corruption(5, 8 | 3)),
    '3d-max-2x2x2s2-ndhwc-u8': seed(layout=NHWC, c=5, h=6, w=6, depth=(6, 2, 2, 1), index=U8,
                                    opts=0x80),
    '3d-avg-3x3x3s1p1-cip0': seed(method=AVG, c=2, h=6, w=7, k=(3, 3), stride=(1, 1),
                                  pads=(1, 1, 1, 1), depth=(5, 3, 1, 1), dpads=(1, 1), cip=0),
    '3d-avg-3x3x3s2p1-ndhwc-cip1-stride': seed(method=AVG, layout=NHWC, c=6, h=7, w=5,
                                               k=(3, 3), stride=(2, 2), pads=(1, 1, 1, 1),
                                               depth=(7, 3, 2, 1), dpads=(1, 0), cip=1,
                                               xs=9, ys=7, opts=OPT_AVG_NULL_X),
    '3d-max-dilation-ceil-i32': seed(c=2, h=7, w=9, k=(2, 3), stride=(2, 2), dil=(2, 1),
                                     pads=(1, 0, 0, 1), ceil=1, depth=(8, 3, 2, 2),
                                     dpads=(2, 1), index=I32, opts=0x40),
    '3d-max-same-upper-ndhwc-i64': seed(layout=NHWC, c=4, h=5, w=6, k=(3, 2), stride=(2, 2),
                                        padding=SAME_UPPER, depth=(5, 3, 2, 1), index=I64),
    '3d-lp-p2-2x2x2': seed(method=LP, c=3, h=6, w=6, depth=(4, 2, 2, 1), p=2.0),
    '3d-lp-p3-ndhwc': seed(method=LP, layout=NHWC, c=4, h=5, w=5, k=(3, 3), stride=(1, 1),
                           depth=(3, 2, 1, 1), p=3.0),
    '3d-max-global-i32': seed(c=3, h=5, w=4, glob=True, depth=(3, 1, 1, 1), index=I32),
    'depth1x1-max-2x2s2-i64': seed(c=3, h=8, w=6, depth=(5, 1, 1, 1), index=I64, opts=0x40),
    'depth1x1-max-3x3s2p1-i64': seed(c=2, h=9, w=9, k=(3, 3), stride=(2, 2), pads=(1, 1, 1, 1),
                                     depth=(3, 1, 1, 1), index=I64),
    'depth1x1-avg-3x3s1p1-ndhwc': seed(method=AVG, layout=NHWC, c=7, h=6, w=6, k=(3, 3),
                                       stride=(1, 1), pads=(1, 1, 1, 1), depth=(4, 1, 1, 1),
                                       cip=0),
    'depth1x1-stride2-max-u8': seed(c=2, h=6, w=6, depth=(6, 1, 2, 1), index=U8),
    '1d-max-k3s2-i32': seed(c=4, h=1, w=29, k=(1, 3), stride=(1, 2), pads=(0, 1, 0, 1),
                            index=I32),
    '1d-avg-nwc-k4s2-ceil': seed(method=AVG, layout=NHWC, c=9, h=1, w=17, k=(1, 4),
                                 stride=(1, 2), pads=(0, 1, 0, 1), ceil=1, cip=0),
    '1d-max-nwc-u8-global': seed(layout=NHWC, c=16, h=1, w=11, glob=True, index=U8),
    # Adaptive windows (out_d, out_h, out_w given; kernel, stride, dilation 1).
    'adaptive-avg-5to3': seed(method=AVG, c=3, h=5, w=5, adaptive=(1, 3, 3)),
    'adaptive-avg-14to7': seed(method=AVG, c=8, h=14, w=14, adaptive=(1, 7, 7)),
    'adaptive-avg-14to7-nhwc': seed(method=AVG, layout=NHWC, c=16, h=14, w=14,
                                    adaptive=(1, 7, 7), opts=OPT_AVG_NULL_X),
    'adaptive-avg-3d-7to3-nhwc-stride': seed(method=AVG, layout=NHWC, c=5, h=7, w=6,
                                             depth=(7, 1, 1, 1), adaptive=(3, 3, 4), xs=6,
                                             ys=8),
    'adaptive-avg-global-1x1': seed(method=AVG, c=12, h=7, w=7, adaptive=(1, 1, 1)),
    'adaptive-max-i32': seed(c=3, h=10, w=9, adaptive=(1, 4, 5), index=I32, opts=0x40),
    'adaptive-max-3d-i32': seed(c=2, h=10, w=9, depth=(5, 1, 1, 1), adaptive=(3, 4, 5),
                                index=I32, opts=0x80),
    'adaptive-max-upsample-nhwc-i64': seed(layout=NHWC, c=4, h=3, w=2, adaptive=(2, 5, 5),
                                           index=I64, opts=0xC0),
    'adaptive-max-14to7-nchw': seed(c=4, h=14, w=14, adaptive=(1, 7, 7)),
    'adaptive-max-clamp': seed(c=2, h=9, w=8, adaptive=(1, 4, 3), clamp=(-1.0, 1.0)),
    'adaptive-max-ties-nan-i64': seed(h=5, w=3, adaptive=(1, 3, 2), index=I64, data=floats([
        PZ, NZ, 1.0, NAN_A, 1.0, 1.0, NZ, PZ, SNAN, 2.0, 2.0, NAN_B, INF, INF, NINF])),
    # The library must reject these.
    'reject-adaptive-lp': seed(method=LP, h=6, w=6, adaptive=(1, 3, 3)),
    'reject-adaptive-u8': seed(h=6, w=6, adaptive=(1, 3, 3), index=U8),
    'reject-adaptive-out-h-0': seed(method=AVG, h=6, w=6, adaptive=(1, 0, 3)),
    'reject-adaptive-out-d-0': seed(h=6, w=6, depth=(4, 1, 1, 1), adaptive=(0, 3, 3)),
    'reject-adaptive-kernel': seed(method=AVG, h=6, w=6, k=(2, 2), adaptive=(1, 3, 3),
                                   keep_window=True),
    'reject-adaptive-stride': seed(h=6, w=6, k=(1, 1), stride=(1, 2), adaptive=(1, 3, 3),
                                   keep_window=True),
    'reject-adaptive-kernel-d': seed(h=6, w=6, depth=(4, 2, 1, 1), adaptive=(2, 3, 3),
                                     keep_window=True, k=(1, 1)),
    'reject-adaptive-pads': seed(method=AVG, h=6, w=6, pads=(0, 1, 0, 0), adaptive=(1, 3, 3)),
    'reject-adaptive-ceil': seed(h=6, w=6, ceil=1, adaptive=(1, 3, 3)),
    'reject-adaptive-same': seed(h=6, w=6, padding=SAME_UPPER, adaptive=(1, 3, 3)),
    'reject-3d-d0': seed(h=4, w=4, depth=(0, 1, 1, 1)),
    'reject-3d-pad-front': seed(h=4, w=4, depth=(4, 2, 2, 1), dpads=(2, 0)),
    'reject-3d-u8-2x16x16': seed(h=16, w=16, k=(16, 16), depth=(2, 2, 2, 1), index=U8),
    'reject-3d-huge-d': seed(h=4, w=4, depth=(2**62, 1, 1, 1)),
    # Element types (the scalar reference computes them; SIMD plans refuse them).
    'dtype-bf16-max-2x2-i64': seed(c=2, index=I64, dtype=DT_BF16, data=halves(
        [0x3f80, 0x7fa1, 0x3f80, 0xbf80, 0x0001, 0x8000, 0x0000, 0x4000] * 4)),
    'dtype-f16-avg-3x3-s1-pad': seed(method=AVG, layout=NHWC, c=3, h=5, w=6, k=(3, 3),
                                     stride=(1, 1), pads=(1, 1, 1, 1), dtype=DT_F16,
                                     xs=5),
    'dtype-bf16-lp-3d': seed(method=LP, p=3.0, c=2, h=4, w=5, depth=(3, 2, 1, 1),
                             dtype=DT_BF16),
    'dtype-f16-max-bwd-overlap': seed(layout=NHWC, c=4, h=7, w=7, k=(3, 3),
                                      stride=(2, 2), pads=(1, 1, 1, 1), index=U8,
                                      dtype=DT_F16, clamp=(-1.0, 2.0)),
    'dtype-u8-qavg': seed(method=AVG, c=3, h=6, w=6, k=(3, 3), stride=(2, 2),
                          pads=(1, 1, 1, 1), dtype=DT_U8, quant=(0.5, 1.0, 128, 100, 20, 250)),
    'dtype-s8-qavg-adaptive': seed(method=AVG, layout=NHWC, c=5, h=7, w=9,
                                   adaptive=(1, 3, 4), dtype=DT_S8,
                                   quant=(3.0, 0.5, -5, 7, None, None)),
    'dtype-s8-max-i32': seed(c=2, h=5, w=5, k=(2, 2), stride=(1, 1), index=I32, dtype=DT_S8),
    'dtype-u8-clamp-refused': seed(method=AVG, dtype=DT_U8, quant=(1.0, 1.0, 0, 0, None, None),
                                   clamp=(0.0, 1.0)),
    # A 3D tensor big enough for the parallel entry points to split it.
    'par-3d-max-2x2x2-i32': seed(c=8, h=32, w=32, depth=(16, 2, 2, 1), index=I32),
}


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'corpus')
    os.makedirs(outdir, exist_ok=True)
    for name in os.listdir(outdir):
        if name.startswith('seed-'):
            os.remove(os.path.join(outdir, name))
    for name, data in SEEDS.items():
        with open(os.path.join(outdir, 'seed-' + name), 'wb') as fp:
            fp.write(data)
    print(f'{len(SEEDS)} seeds written to {outdir}')


if __name__ == '__main__':
    main()
