/* SPDX-License-Identifier: MIT */
/* test_random.h — the seeded generator the randomized Check suites share
 * (test_kernels, test_guard, test_parallel): a splitmix64 stream, input
 * values with nasty ones mixed in, descriptors biased towards a kernel's
 * shape class, and the index types a kernel takes. Header-only; each test
 * program has its own state. */
#ifndef SIMDPOOL_TEST_RANDOM_H
#define SIMDPOOL_TEST_RANDOM_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* The registry's shape classes by sp_shape value, as the suites print them. */
__attribute__((unused)) static const char *const shape_names[SP_SHAPE_COUNT] = {
    "general", "2x2s2",   "3x3s2p1", "3x3s1",   "global",
    "nd",      "2x2x2s2", "3x3x3s1", "1x3s2p1", "3x3s2"};

static uint64_t seed;
static uint64_t rng_state;

static inline uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline size_t rnd_range(size_t lo, size_t hi) {
  return lo + (size_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static inline float bits_to_float(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static inline uint32_t float_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* A value for an input tensor: mostly small integers (ties are frequent),
 * random floats, and now and then a nasty value. */
static inline float rnd_value(int nasty_rate) {
  const uint64_t r = rnd();
  if ((int)(r % 100) < nasty_rate) {
    switch ((r >> 8) % 10) {
    case 0: /* quiet NaN with a payload, either sign */
      return bits_to_float(0x7fc00000u | (uint32_t)(r >> 20 & 0x3fffff) |
                           (uint32_t)(r >> 63) << 31);
    case 1: /* signalling NaN with a payload */
      return bits_to_float(0x7f800000u | 1u | (uint32_t)(r >> 24 & 0x3fffff) |
                           (uint32_t)(r >> 62 & 1) << 31);
    case 2:
      return 0.0f;
    case 3:
      return -0.0f;
    case 4:
      return INFINITY;
    case 5:
      return -INFINITY;
    case 6: /* denormal */
      return bits_to_float((uint32_t)(r >> 20 & 0x7fffff) | 1u |
                           (uint32_t)(r >> 63) << 31);
    case 7:
      return FLT_MAX;
    case 8:
      return -FLT_MAX;
    default:
      return FLT_MIN;
    }
  }
  if ((r >> 32) % 2)
    return (float)((int)((r >> 40) % 7) - 3);
  return (float)((double)(int64_t)(r >> 11) / (double)(1ull << 50));
}

/* A value for the floating-point-environment tests: rich in subnormals
 * (as inputs; small normals of both signs whose sums cancel into
 * subnormals; values whose squares or quotients underflow), mixed with
 * full-mantissa values (inexact sums: the rounding mode shows), values near
 * FLT_MAX (overflow: round toward zero gives FLT_MAX, not inf), ties and now
 * and then a NaN or an infinity. */
static inline float rnd_value_subnormal(void) {
  const uint64_t r = rnd();
  const uint32_t sign = (uint32_t)(r >> 63) << 31;
  const uint32_t mant = (uint32_t)(r >> 20) & 0x7fffff;
  switch (r % 16) {
  case 0:
  case 1:
  case 2:
  case 3:
  case 4: /* subnormal */
    return bits_to_float(sign | mant | 1u);
  case 5:
  case 6:
  case 7: /* exponents 1..4: normal, a few cancellations from subnormal */
    return bits_to_float(sign | (uint32_t)(1 + (r >> 8) % 4) << 23 | mant);
  case 8:
    return sign ? -0.0f : 0.0f;
  case 9:
    return sign ? -FLT_MIN : FLT_MIN;
  case 10: /* |v| in [2^-75, 2^-63): squares are subnormal */
    return bits_to_float(sign | (uint32_t)(52 + (r >> 8) % 12) << 23 | mant);
  case 11:
  case 12: /* full mantissa in (-4, 4): inexact sums and quotients */
    return bits_to_float(sign | (uint32_t)(120 + (r >> 8) % 8) << 23 | mant);
  case 13:
    return (float)((int)((r >> 40) % 5) - 2);
  case 14: /* near FLT_MAX */
    return bits_to_float(sign | 0xfeu << 23 | mant);
  default:
    return rnd_value(100);
  }
}

/* The index types kernel e handles (out needs room for 4); backward without
 * indices and AVG/LP handle NONE only. */
static inline int index_types_of(const sp_kernel_entry *e,
                                 simdpool_index_type *out) {
  int k = 0;
  for (int t = SIMDPOOL_INDEX_NONE; t <= SIMDPOOL_INDEX_U8; t++)
    if (e->index_mask & SP_IDX_BIT(t))
      out[k++] = (simdpool_index_type)t;
  return k;
}

/* rnd_desc's draw before its cost bound (below). */
static inline void rnd_desc_draw(simdpool_desc *d, const sp_kernel_entry *e,
                                 simdpool_index_type it) {
  const size_t n = rnd_range(1, 2);
  /* Channels sweep 1 .. 3*16+1 for NHWC (lanes over channels), and now and
   * then 50..90 so the four-block unrolled paths run at 16 lanes too; NCHW
   * mostly keeps few channels and sweeps widths, and a quarter of the time
   * has 8..40 planes so paths that carry state across planes (the scratch
   * bands, lanes over planes) see many of them. */
  const size_t c = e->layout == SIMDPOOL_NHWC
                       ? (rnd() % 4 ? rnd_range(1, 49) : rnd_range(50, 90))
                       : (rnd() % 4 ? rnd_range(1, 3) : rnd_range(8, 40));
  const size_t wmax = e->layout == SIMDPOOL_NHWC ? 12 : c >= 8 ? 24 : 70;
  size_t h = rnd_range(1, 12), w = rnd_range(1, wmax);
  size_t k = rnd_range(1, 4), kw2 = rnd_range(1, 4);
  simdpool_desc_init(d, e->method, e->layout, n, c, h, w, k, kw2);
  d->index_type = it;
  d->isa =
      SIMDPOOL_ISA_SCALAR; /* geometry only; the kernel is called directly */
  switch (e->shape) {
  case SP_SHAPE_2X2S2:
    d->kernel_h = d->kernel_w = d->stride_h = d->stride_w = 2;
    d->h = rnd_range(2, 12);
    d->w = rnd_range(2, wmax);
    d->ceil_mode = (int)rnd_range(0, 1);
    return;
  case SP_SHAPE_3X3S2P1:
    d->kernel_h = d->kernel_w = 3;
    d->stride_h = d->stride_w = 2;
    d->pad_top = d->pad_left = 1;
    d->pad_bottom = rnd_range(0, 2);
    d->pad_right = rnd_range(0, 2);
    d->ceil_mode = (int)rnd_range(0, 1);
    return;
  case SP_SHAPE_1X3S2P1:
    /* k3/s2/pad 1 along rows, one input row per output row (1D plans have
     * one row; 2D plans of 1x3 windows several): widths past a ring strip
     * (S2_STRIP) at times, so strips meet inside a row. */
    d->h = rnd_range(1, 4);
    if (rnd() % 4 == 0)
      d->w = rnd_range(1000, 1100);
    d->kernel_h = d->stride_h = 1;
    d->kernel_w = 3;
    d->stride_w = 2;
    d->pad_top = d->pad_bottom = 0;
    d->pad_left = 1;
    d->pad_right = rnd_range(0, 2);
    d->ceil_mode = (int)rnd_range(0, 1);
    return;
  case SP_SHAPE_3X3S1:
  case SP_SHAPE_3X3S2: {
    /* 3x3 at stride 1 or 2, any padding on each side (up to 2 at stride 1,
     * 1 at stride 2), stride 2 at times in ceil mode (GoogLeNet's) */
    const size_t s = e->shape == SP_SHAPE_3X3S2 ? 2 : 1;
    d->kernel_h = d->kernel_w = 3;
    d->stride_h = d->stride_w = s;
    d->pad_top = rnd_range(0, 3 - s);
    d->pad_left = rnd_range(0, 3 - s);
    d->pad_bottom = rnd_range(0, 3 - s);
    d->pad_right = rnd_range(0, 3 - s);
    if (s == 2)
      d->ceil_mode = (int)rnd_range(0, 1);
    return;
  }
  case SP_SHAPE_2X2X2S2:
    /* 2x2x2/s2 over 2..7 slices (odd counts leave a slice no window
     * reaches), odd and even rows and columns, at times ceil mode (whose
     * last windows would overhang: no longer this class). */
    simdpool_desc_init_3d(d, e->method, e->layout, n, c, rnd_range(2, 7),
                          rnd_range(2, 12), rnd_range(2, wmax), 2, 2, 2);
    d->index_type = it;
    d->isa = SIMDPOOL_ISA_SCALAR;
    d->ceil_mode = rnd() % 4 == 0;
    return;
  case SP_SHAPE_3X3X3S1:
    /* 3x3x3/s1 over 1..8 slices, every padding on every axis (pads up to
     * 2: a window may hold a single slice, row or column). */
    simdpool_desc_init_3d(d, e->method, e->layout, n, c, rnd_range(1, 8),
                          rnd_range(1, 12), rnd_range(1, wmax), 3, 3, 3);
    d->index_type = it;
    d->isa = SIMDPOOL_ISA_SCALAR;
    d->stride_d = d->stride_h = d->stride_w = 1;
    d->pad_front = rnd_range(0, 2);
    d->pad_back = rnd_range(0, 2);
    d->pad_top = rnd_range(0, 2);
    d->pad_bottom = rnd_range(0, 2);
    d->pad_left = rnd_range(0, 2);
    d->pad_right = rnd_range(0, 2);
    d->count_include_pad = (int)rnd_range(0, 1);
    d->ceil_mode = rnd() % 4 == 0;
    return;
  case SP_SHAPE_ND: {
    /* A depth window of 2 or 3 slices, or adaptive windows (MAX and AVG;
     * not with U8 indices), any rank up to 3; small, the kernels walk
     * one window at a time. NHWC: now and then 91..140 channels, so that
     * the channel chunks of pool_nd.c run full (8 vectors of 16 lanes) and
     * with every tail length. */
    const size_t cc =
        e->layout == SIMDPOOL_NHWC && rnd() % 3 == 0 ? rnd_range(91, 140) : c;
    size_t dd = rnd_range(1, 5), hh = rnd_range(1, 7);
    size_t ww = rnd_range(1, 9);
    /* NCHW, a tenth of the time: planes too large for the scratch groups
     * of whole planes (up to 2 x 32 x 64: on every ISA from about 2 x 20 x
     * 64), which go through it in tiles of outputs (forward; backward, tiles
     * that own boxes of dx) or the strided walk. */
    if (e->layout == SIMDPOOL_NCHW && rnd() % 10 == 0) {
      dd = rnd_range(1, 2);
      hh = rnd_range(16, 32);
      ww = rnd_range(16, 64);
    }
    if (e->method != SIMDPOOL_LP && it != SIMDPOOL_INDEX_U8 && rnd() % 3 == 0) {
      const size_t od = rnd_range(1, dd + 2), oh = rnd_range(1, hh + 2);
      simdpool_desc_init_adaptive(d, e->method, e->layout, n, cc, dd, hh, ww,
                                  od, oh, rnd_range(1, ww + 2));
      d->index_type = it;
      d->isa = SIMDPOOL_ISA_SCALAR;
      return;
    }
    const size_t kd = rnd_range(2, 3);
    simdpool_desc_init_3d(d, e->method, e->layout, n, cc, dd + kd, hh, ww, kd,
                          rnd_range(1, 3), rnd_range(1, 3));
    d->index_type = it;
    d->isa = SIMDPOOL_ISA_SCALAR;
    d->stride_d = rnd_range(1, 2);
    d->stride_h = rnd_range(1, 2);
    d->stride_w = rnd_range(1, 3);
    d->dilation_d = rnd() % 4 ? 1 : 2;
    d->dilation_w = rnd() % 4 ? 1 : 2;
    d->pad_front = rnd_range(0, kd - 1);
    d->pad_back = rnd_range(0, kd - 1);
    d->pad_top = rnd_range(0, d->kernel_h - 1);
    d->pad_left = rnd_range(0, d->kernel_w - 1);
    d->ceil_mode = (int)rnd_range(0, 1);
    d->count_include_pad = (int)rnd_range(0, 1);
    static const float nd_ps[] = {1.0f, 2.0f, 1.5f};
    d->p = nd_ps[rnd() % 3];
    return;
  }
  case SP_SHAPE_GLOBAL: {
    /* NCHW global kernels run lanes over planes: sweep planes too. The
     * window is the whole plane of any rank: fixed windows (2D, or 3D over
     * 2..4 slices), or adaptive windows with every output size 1 (MAX and
     * AVG, not U8; AVG then divides by each axis in turn). */
    const size_t cc = rnd_range(1, 49), hh = rnd_range(1, 9);
    const size_t ww = rnd_range(1, 9), dd = rnd() % 3 ? 1 : rnd_range(2, 4);
    if (e->method != SIMDPOOL_LP && it != SIMDPOOL_INDEX_U8 && rnd() % 3 == 0)
      simdpool_desc_init_adaptive(d, e->method, e->layout, n, cc, dd, hh, ww, 1,
                                  1, 1);
    else
      simdpool_desc_init_3d(d, e->method, e->layout, n, cc, dd, hh, ww, dd, hh,
                            ww);
    d->index_type = it;
    d->isa = SIMDPOOL_ISA_SCALAR;
    return;
  }
  default:
    break;
  }
  if (rnd() % 8 == 0) {
    /* The frameworks' 3x3 windows with pad 1 (stride 1 keeps the size):
     * the general kernels route them to paths of their own. */
    d->kernel_h = d->kernel_w = 3;
    d->stride_h = d->stride_w = rnd_range(1, 2);
    d->pad_top = d->pad_left = d->pad_bottom = d->pad_right = 1;
    d->count_include_pad = (int)rnd_range(0, 1);
    d->p = 2.0f;
    return;
  }
  d->stride_h = rnd_range(1, 4);
  d->stride_w = rnd_range(1, 4);
  d->dilation_h = rnd() % 4 ? 1 : rnd_range(2, 3);
  d->dilation_w = rnd() % 4 ? 1 : rnd_range(2, 3);
  switch (rnd() % 6) {
  case 0:
    d->padding = SIMDPOOL_PAD_VALID;
    break;
  case 1:
    d->padding = SIMDPOOL_PAD_SAME_UPPER;
    break;
  case 2:
    d->padding = SIMDPOOL_PAD_SAME_LOWER;
    break;
  default: {
    const size_t eh = d->dilation_h * (d->kernel_h - 1) + 1;
    const size_t ew = d->dilation_w * (d->kernel_w - 1) + 1;
    d->pad_top = rnd_range(0, eh - 1);
    d->pad_bottom = rnd_range(0, eh - 1);
    d->pad_left = rnd_range(0, ew - 1);
    d->pad_right = rnd_range(0, ew - 1);
    d->ceil_mode = (int)rnd_range(0, 1);
    break;
  }
  }
  d->count_include_pad = (int)rnd_range(0, 1);
  static const float ps[] = {1.0f, 2.0f, 3.0f, 0.5f, 1.5f, 2.5f};
  d->p = ps[rnd() % 6];
}

/* LP with p other than 1 and 2 calls powf for every tap and output (forward)
 * and every tap again (backward), scalar in every variant: 10-20x the cost of
 * the other methods per element, and under emulation (qemu, which also
 * emulates the float library) much more. Unbounded, one draw of the ND family
 * (2 x 36 planes of 4 x 27 x 56, 435K elements) cost 0.7 s per variant
 * natively and most of a CI stage's sweep under qemu. So those draws keep at
 * most LP_POW_BUDGET input elements: one image, then fewer planes (NCHW) or
 * channels (NHWC: never below 33, two full vectors of 16 lanes and a tail).
 * The geometry (windows, pads, strides, rank, the plane sizes that make the
 * NCHW kernels tile) stays as drawn; the large channel counts that fill the
 * NHWC channel chunks are covered by p = 1 and p = 2, which run the same
 * chunk loops with another per-lane function. */
#define LP_POW_BUDGET 32768u

/* A random descriptor biased towards the shape class of the kernel under
 * test; the caller keeps only those whose geometry matches the class. */
static inline void rnd_desc(simdpool_desc *d, const sp_kernel_entry *e,
                            simdpool_index_type it) {
  rnd_desc_draw(d, e, it);
  if (d->method != SIMDPOOL_LP || d->p == 1.0f || d->p == 2.0f)
    return;
  const size_t plane = d->d * d->h * d->w;
  if (d->n * d->c * plane <= LP_POW_BUDGET)
    return;
  d->n = 1;
  const size_t least = d->layout == SIMDPOOL_NHWC ? 33 : 1;
  const size_t fit = plane ? LP_POW_BUDGET / plane : d->c;
  if (d->c > least && d->c > fit)
    d->c = fit > least ? fit : least;
}

/* Seeds the generator from SIMDPOOL_TEST_SEED (else the clock) and returns
 * SIMDPOOL_TEST_SCALE, the factor on iteration counts (default 1). */
static inline double test_random_init(void) {
  const char *s = getenv("SIMDPOOL_TEST_SEED");
  seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
  rng_state = seed;
  const char *sc = getenv("SIMDPOOL_TEST_SCALE");
  return sc && atof(sc) > 0 ? atof(sc) : 1.0;
}

/* Prints which ISAs this build has and this CPU runs. */
static inline void print_isas(void) {
  printf("ISAs:");
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; i++)
    printf(" %s=%s", simdpool_isa_name((simdpool_isa)i),
           !sp_isa_built((simdpool_isa)i) ? "not-built"
           : sp_cpu_runs((simdpool_isa)i) ? "runs"
                                          : "cpu-lacks");
  printf("\n");
  fflush(stdout);
}

#endif /* SIMDPOOL_TEST_RANDOM_H */
