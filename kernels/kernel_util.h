/* SPDX-License-Identifier: MIT */
/* kernel_util.h — small scalar helpers shared by every kernel: the MAX step,
 * canonical NaN, index I/O. */
#ifndef SIMDPOOL_KERNEL_UTIL_H
#define SIMDPOOL_KERNEL_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if SP_HAVE_SLEEF
#include <sleef.h>
#endif

#include "dtype.h"
#include "kernel.h"

/* x^y as LP with p other than 1 and 2 defines it: SLEEF's no-FMA
 * Sleef_powf1_u10purec. Without SLEEF plan creation rejects such plans
 * (UNSUPPORTED), so no kernel reaches the NaN below. */
static inline float sp_powf(float x, float y) {
#if SP_HAVE_SLEEF
  return Sleef_powf1_u10purec(x, y);
#else
  (void)x, (void)y;
  return NAN;
#endif
}

/* The MAX step (docs/semantics.md#max-forward): does v replace the max m? */
static inline int sp_max_replaces(float v, float m) {
  return v > m || isnan(v);
}

/* v, or the canonical quiet NaN when v is any NaN. */
static inline float sp_canonical(float v) {
  if (isnan(v)) {
    uint32_t bits = SP_CANONICAL_NAN_BITS;
    memcpy(&v, &bits, sizeof v);
  }
  return v;
}

/* Writes the index of a MAX sp_winner at element o of the indices tensor:
 * the flat input position for I32/I64, the tap number for U8. */
static inline void sp_store_index(void *indices, simdpool_index_type type,
                                  size_t o, size_t flat, size_t tap) {
  switch (type) {
  case SIMDPOOL_INDEX_I32:
    ((int32_t *)indices)[o] = (int32_t)flat;
    break;
  case SIMDPOOL_INDEX_I64:
    ((int64_t *)indices)[o] = (int64_t)flat;
    break;
  case SIMDPOOL_INDEX_U8:
    ((uint8_t *)indices)[o] = (uint8_t)tap;
    break;
  case SIMDPOOL_INDEX_NONE:
    break;
  }
}

/* Reads a flat I32/I64 index (already validated by dispatch). */
static inline size_t sp_load_flat_index(const void *indices,
                                        simdpool_index_type type, size_t o) {
  if (type == SIMDPOOL_INDEX_I32)
    return (size_t)((const int32_t *)indices)[o];
  return (size_t)((const int64_t *)indices)[o];
}

/* ------------------------------------------------ element types
 * docs/semantics.md#element-types. Kernels call these with a constant t
 * (each body is instantiated per dtype), so f32 code stays plain loads. */

/* Element i of a tensor of dtype t as f32, exactly: bf16 and f16 widen
 * (NaN payloads kept), s8 and u8 convert. */
static inline float sp_elem(const void *x, size_t i, simdpool_dtype t) {
  uint32_t u;
  switch (t) {
  case SIMDPOOL_BF16:
    u = sp_bf16_widen_bits(((const uint16_t *)x)[i]);
    break;
  case SIMDPOOL_F16:
    u = sp_f16_widen_bits(((const uint16_t *)x)[i]);
    break;
  case SIMDPOOL_S8:
    return (float)((const int8_t *)x)[i];
  case SIMDPOOL_U8:
    return (float)((const uint8_t *)x)[i];
  default:
    return ((const float *)x)[i];
  }
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* Stores the f32 result r as element i of a floating-point dtype t: f32
 * as it is, bf16 and f16 rounded once to nearest even (a NaN as the
 * canonical NaN of the type). */
static inline void sp_put(void *y, size_t i, float r, simdpool_dtype t) {
  uint32_t u;
  memcpy(&u, &r, sizeof u);
  if (t == SIMDPOOL_BF16)
    ((uint16_t *)y)[i] = sp_bf16_round_bits(u);
  else if (t == SIMDPOOL_F16)
    ((uint16_t *)y)[i] = sp_f16_round_bits(u);
  else
    ((float *)y)[i] = r;
}

/* Copies element j of x to element i of y, bit for bit (MAX's winner,
 * unpooling). */
static inline void sp_copy_elem(void *y, size_t i, const void *x, size_t j,
                                simdpool_dtype t) {
  const size_t es = sp_dtype_size(t);
  memcpy((char *)y + i * es, (const char *)x + j * es, es);
}

/* Forward's output clamp of a float result (docs/semantics.md#output-clamp):
 * v < lo gives lo, v > hi gives hi, anything else (NaN included) stays. */
static inline float sp_clamp_value(const sp_geom *g, float v) {
  return v < g->clamp_lo ? g->clamp_lo : v > g->clamp_hi ? g->clamp_hi : v;
}

/* ------------------------------------------------ one output at a time
 * The reference computes every output with these; SIMD kernels use them for
 * border windows, so both share one definition of the semantics. */

/* One (n, c) plane of a tensor: element (y, x) sits at base + (y*w + x)*step.
 */
typedef struct sp_plane {
  size_t base, step;
} sp_plane;

static inline sp_plane sp_plane_of(const sp_geom *g, size_t n, size_t c,
                                   size_t h, size_t w) {
  sp_plane p;
  if (g->layout == SIMDPOOL_NCHW) {
    p.base = (n * g->c + c) * h * w;
    p.step = 1;
  } else {
    p.base = n * h * w * g->c + c;
    p.step = g->c;
  }
  return p;
}

/* The planes of x and dx (sp_plane_x) and of y and dy (sp_plane_y), with
 * the plan's NHWC pixel strides (pixel elements apart); sp_plane_of is the
 * dense plane (indices). */
static inline sp_plane sp_plane_px(const sp_geom *g, size_t n, size_t c,
                                   size_t h, size_t w, size_t pixel) {
  sp_plane p = sp_plane_of(g, n, c, h, w);
  if (g->layout == SIMDPOOL_NHWC) {
    p.base = n * h * w * pixel + c;
    p.step = pixel;
  }
  return p;
}

/* 3D planes are the d (od) slices stacked into d*h (od*oh) rows. */
static inline sp_plane sp_plane_x(const sp_geom *g, size_t n, size_t c) {
  return sp_plane_px(g, n, c, g->d * g->h, g->w, g->xs);
}

static inline sp_plane sp_plane_y(const sp_geom *g, size_t n, size_t c) {
  return sp_plane_px(g, n, c, g->od * g->oh, g->ow, g->ys);
}

/* The dense plane of the indices. */
static inline sp_plane sp_plane_i(const sp_geom *g, size_t n, size_t c) {
  return sp_plane_of(g, n, c, g->od * g->oh, g->ow);
}

/* Input row (or column) of tap i of the window that starts at output o. */
static inline ptrdiff_t sp_tap_pos(size_t o, size_t stride, size_t pad,
                                   size_t i, size_t dil) {
  return (ptrdiff_t)(o * stride) - (ptrdiff_t)pad + (ptrdiff_t)(i * dil);
}

static inline int sp_inside(ptrdiff_t pos, size_t extent) {
  return pos >= 0 && pos < (ptrdiff_t)extent;
}

/* o*in/out rounded down (sp_adaptive_start) and (o+1)*in/out rounded up
 * (sp_adaptive_end): the bounds of adaptive window o, computed exactly in
 * twice size_t's width (o < out, so neither exceeds in). */
#if SIZE_MAX <= UINT32_MAX
typedef uint64_t sp_wide;
#else
__extension__ typedef unsigned __int128 sp_wide;
#endif

/* Extents below 2^32 (all real ones) on a 64-bit size_t keep every term
 * in size_t, (o + 1) * in + out - 1 < 2^64, and skip the wide division (a
 * library call per bound: the adaptive kernels make six per output). */
static inline int sp_adaptive_narrow(size_t in, size_t out) {
  return SIZE_MAX > UINT32_MAX && (in | out) <= UINT32_MAX;
}

static inline size_t sp_adaptive_start(size_t o, size_t in, size_t out) {
  if (sp_adaptive_narrow(in, out))
    return o * in / out;
  return (size_t)((sp_wide)o * in / out);
}

static inline size_t sp_adaptive_end(size_t o, size_t in, size_t out) {
  if (sp_adaptive_narrow(in, out))
    return ((o + 1) * in + out - 1) / out;
  return (size_t)(((sp_wide)(o + 1) * in + out - 1) / out);
}

/* One axis of a window: its taps sit at start + i*dil for i in [0, k)
 * (valid where inside the input). */
typedef struct sp_win {
  ptrdiff_t start;
  size_t k, dil;
} sp_win;

/* Adaptive: the window of output o of an axis of `in` inputs and `out`
 * outputs, or of a block of the whole axis that `cut` describes (its
 * output o is output cut->o0 + o of the whole axis, and its positions
 * count from input cut->i0). */
static inline sp_win sp_axis_win(int adaptive, size_t o, size_t in, size_t out,
                                 size_t k, size_t s, size_t pad, size_t dil,
                                 const sp_acut *cut) {
  sp_win r;
  if (adaptive) {
    const size_t IN = cut->i0 + in + cut->i1, OUT = cut->o0 + out + cut->o1;
    const size_t a = sp_adaptive_start(cut->o0 + o, IN, OUT);
    r.start = (ptrdiff_t)(a - cut->i0);
    r.k = sp_adaptive_end(cut->o0 + o, IN, OUT) - a;
    r.dil = 1;
  } else {
    r.start = (ptrdiff_t)(o * s) - (ptrdiff_t)pad;
    r.k = k;
    r.dil = dil;
  }
  return r;
}

/* The window of output od (depth), oy (row) or ox (column). */
static inline sp_win sp_win_d(const sp_geom *g, size_t od) {
  return sp_axis_win(g->adaptive, od, g->d, g->od, g->kd, g->sd, g->pf, g->dd,
                     &g->acut[0]);
}

static inline sp_win sp_win_h(const sp_geom *g, size_t oy) {
  return sp_axis_win(g->adaptive, oy, g->h, g->oh, g->kh, g->sh, g->pt, g->dh,
                     &g->acut[1]);
}

static inline sp_win sp_win_w(const sp_geom *g, size_t ox) {
  return sp_axis_win(g->adaptive, ox, g->w, g->ow, g->kw, g->sw, g->pl, g->dw,
                     &g->acut[2]);
}

/* One axis of a geometry cut to its block of outputs [o0, o1): *in inputs,
 * *out outputs, *lead and *trail pads, stride s and extent e (fixed
 * windows), or adaptive windows (*cut, which composes with an earlier cut).
 * Every window of the block keeps its taps, padding and divisor: the block
 * starts at input `first` (returned), the first window's first input or 0,
 * and keeps the rest of the leading padding; its inputs end
 *   SP_CUT_TO_END  at the axis's end (forward blocks of the parallel split),
 *   SP_CUT_OWN     at the next block's first window (backward blocks, whose
 *                  windows must not overlap: the caller checks),
 *   SP_CUT_SPAN    at the block's last window's end (scratch tiles).
 * Rewrites the fields. */
enum { SP_CUT_TO_END, SP_CUT_OWN, SP_CUT_SPAN };
static inline size_t sp_cut_axis(int adaptive, size_t *in, size_t *out,
                                 size_t *lead, size_t *trail, size_t s,
                                 size_t e, sp_acut *cut, size_t o0, size_t o1,
                                 int mode) {
  size_t first, end = *in;
  if (adaptive) {
    const sp_win a = sp_axis_win(1, o0, *in, *out, 1, 1, 0, 1, cut);
    first = (size_t)a.start;
    if (mode == SP_CUT_OWN && o1 < *out)
      end = (size_t)sp_axis_win(1, o1, *in, *out, 1, 1, 0, 1, cut).start;
    if (mode == SP_CUT_SPAN) {
      const sp_win b = sp_axis_win(1, o1 - 1, *in, *out, 1, 1, 0, 1, cut);
      end = (size_t)b.start + b.k;
    }
    cut->o0 += o0;
    cut->o1 += *out - o1;
    cut->i0 += first;
    cut->i1 += *in - end;
  } else {
    const size_t start = o0 * s; /* first window position, plus lead */
    first = start >= *lead ? start - *lead : 0;
    if (mode == SP_CUT_OWN && o1 < *out) {
      end = o1 * s - *lead;
      *trail = 0;
    }
    if (mode == SP_CUT_SPAN && (o1 - 1) * s + e - *lead < end) {
      end = (o1 - 1) * s + e - *lead; /* > first: every window has a tap */
      *trail = 0;
    }
    *lead = start >= *lead ? 0 : *lead - start;
  }
  *out = o1 - o0;
  *in = end - first;
  return first;
}

/* The taps of window axis a that lie inside an input of `in` positions:
 * i in [*i0, *i1) (possibly empty). */
static inline void sp_win_valid(sp_win a, size_t in, size_t *i0, size_t *i1) {
  const ptrdiff_t dil = (ptrdiff_t)a.dil, n = (ptrdiff_t)in;
  ptrdiff_t lo = 0, hi = (ptrdiff_t)a.k;
  if (a.start < 0)
    lo = dil == 1 ? -a.start : (-a.start + dil - 1) / dil;
  const ptrdiff_t end = a.start >= n ? 0
                        : dil == 1   ? n - a.start
                                     : (n - a.start + dil - 1) / dil;
  if (end < hi)
    hi = end;
  *i0 = (size_t)lo;
  *i1 = hi > lo ? (size_t)hi : (size_t)lo;
}

/* Position of tap i of a window axis. */
static inline ptrdiff_t sp_win_at(sp_win a, size_t i) {
  return a.start + (ptrdiff_t)(i * a.dil);
}

/* The position in its input plane, (id*h + iy)*w + ix, of tap number t
 * ((kd_i*kh + ki)*kw + kj) of window (od, oy, ox); fixed windows, and t a
 * valid tap (dispatch checks U8 indices before any kernel reads them). */
static inline size_t sp_tap_flat(const sp_geom *g, size_t t, size_t od,
                                 size_t oy, size_t ox) {
  const size_t t2 = g->kh * g->kw;
  const ptrdiff_t id = sp_win_at(sp_win_d(g, od), t / t2);
  const ptrdiff_t iy = sp_win_at(sp_win_h(g, oy), t % t2 / g->kw);
  const ptrdiff_t ix = sp_win_at(sp_win_w(g, ox), t % g->kw);
  return ((size_t)id * g->h + (size_t)iy) * g->w + (size_t)ix;
}

/* The input-plane position that indices[e], of window (od, oy, ox), names:
 * an I32/I64 flat index as stored, a U8 tap number decoded. */
static inline size_t sp_index_pos(const sp_geom *g, const void *indices,
                                  size_t e, size_t od, size_t oy, size_t ox) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    return sp_tap_flat(g, ((const uint8_t *)indices)[e], od, oy, ox);
  return sp_load_flat_index(indices, g->index_type, e);
}

/* The valid taps of window (od, oy, ox) in row-major order (depth outer,
 * then rows, columns inner): runs BODY with size_t `flat` (the tap's
 * position in the input plane, (id*h + iy)*w + ix) and `tap` (its number
 * in the window, (kd_i*kh + ki)*kw + kj; fixed windows only). */
#define SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, ...)                         \
  do {                                                                         \
    const sp_win wd_ = sp_win_d(g, od), wh_ = sp_win_h(g, oy),                 \
                 ww_ = sp_win_w(g, ox);                                        \
    for (size_t a_ = 0; a_ < wd_.k; a_++) {                                    \
      const ptrdiff_t id_ = sp_win_at(wd_, a_);                                \
      if (!sp_inside(id_, (g)->d))                                             \
        continue;                                                              \
      for (size_t b_ = 0; b_ < wh_.k; b_++) {                                  \
        const ptrdiff_t iy_ = sp_win_at(wh_, b_);                              \
        if (!sp_inside(iy_, (g)->h))                                           \
          continue;                                                            \
        for (size_t c_ = 0; c_ < ww_.k; c_++) {                                \
          const ptrdiff_t ix_ = sp_win_at(ww_, c_);                            \
          if (!sp_inside(ix_, (g)->w))                                         \
            continue;                                                          \
          const size_t flat =                                                  \
              ((size_t)id_ * (g)->h + (size_t)iy_) * (g)->w + (size_t)ix_;     \
          const size_t tap = (a_ * (g)->kh + b_) * (g)->kw + c_;               \
          (void)tap;                                                           \
          __VA_ARGS__                                                          \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* The sp_winner of one MAX window: its input position (flat) and its tap
 * number. Scans the valid taps row-major; a later tap replaces the running
 * max when v > max or v is NaN. sp_max_window3 for any rank,
 * sp_max_window for 2D plans. */
typedef struct sp_winner {
  size_t flat, tap;
} sp_winner;

static inline sp_winner sp_max_window3(const sp_geom *g, const void *x,
                                       simdpool_dtype t, sp_plane px, size_t od,
                                       size_t oy, size_t ox) {
  sp_winner best = {0, 0};
  float m = 0.0f;
  int found = 0;
  SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, {
    const float v = sp_elem(x, px.base + flat * px.step, t);
    if (!found || v > m || isnan(v)) {
      m = v;
      best.flat = flat;
      best.tap = tap;
      found = 1;
    }
  });
  return best;
}

static inline sp_winner sp_max_window(const sp_geom *g, const float *x,
                                      sp_plane px, size_t oy, size_t ox) {
  return sp_max_window3(g, x, SIMDPOOL_F32, px, 0, oy, ox);
}

/* Number of taps of one axis whose position lies in [lo, hi): the taps sit
 * at start + i*dil for i in [0, k), so the count is the overlap of [0, k)
 * with [ceil((lo - start) / dil), ceil((hi - start) / dil)). */
static inline size_t sp_taps_in(size_t o, size_t stride, size_t pad, size_t k,
                                size_t dil, ptrdiff_t lo, ptrdiff_t hi) {
  const ptrdiff_t start = (ptrdiff_t)(o * stride) - (ptrdiff_t)pad;
  const ptrdiff_t d = (ptrdiff_t)dil, kk = (ptrdiff_t)k;
  ptrdiff_t i0 = 0, i1 = 0;
  if (lo > start)
    i0 = d == 1 ? lo - start : (lo - start + d - 1) / d;
  if (hi > start)
    i1 = d == 1 ? hi - start : (hi - start + d - 1) / d;
  if (i1 > kk)
    i1 = kk;
  return i1 > i0 ? (size_t)(i1 - i0) : 0;
}

/* The taps of window row oy (sp_avg_taps_h) or column ox (sp_avg_taps_w)
 * an AVG divisor counts: the valid ones, or with count_include_pad those
 * inside [-pad_begin, in + pad_end). */
static inline size_t sp_avg_taps_h(const sp_geom *g, size_t oy) {
  const ptrdiff_t lo = g->count_include_pad ? -(ptrdiff_t)g->pt : 0;
  const size_t hi = g->h + (g->count_include_pad ? g->pb : 0);
  return sp_taps_in(oy, g->sh, g->pt, g->kh, g->dh, lo, (ptrdiff_t)hi);
}

static inline size_t sp_avg_taps_w(const sp_geom *g, size_t ox) {
  const ptrdiff_t lo = g->count_include_pad ? -(ptrdiff_t)g->pl : 0;
  const size_t hi = g->w + (g->count_include_pad ? g->pr : 0);
  return sp_taps_in(ox, g->sw, g->pl, g->kw, g->dw, lo, (ptrdiff_t)hi);
}

static inline size_t sp_avg_taps_d(const sp_geom *g, size_t od) {
  const ptrdiff_t lo = g->count_include_pad ? -(ptrdiff_t)g->pf : 0;
  const size_t hi = g->d + (g->count_include_pad ? g->pk : 0);
  return sp_taps_in(od, g->sd, g->pf, g->kd, g->dd, lo, (ptrdiff_t)hi);
}

/* AVG divisor of the fixed window at (od, oy, ox): the product of its
 * axes' counts, converted once (exact in sp_wide: each count is below
 * 2^41). sp_avg_divisor: 2D plans. */
static inline float sp_avg_divisor3(const sp_geom *g, size_t od, size_t oy,
                                    size_t ox) {
  return (float)((sp_wide)sp_avg_taps_d(g, od) * sp_avg_taps_h(g, oy) *
                 sp_avg_taps_w(g, ox));
}

static inline float sp_avg_divisor(const sp_geom *g, size_t oy, size_t ox) {
  return (float)(sp_avg_taps_h(g, oy) * sp_avg_taps_w(g, ox));
}

/* v divided as AVG divides window (od, oy, ox)'s sum (or, backward, its
 * dy): by the divisor; adaptive windows ((v / kd) / kh) / kw with the
 * window's extents (PyTorch's adaptive kernels). No canonicalization. */
static inline float sp_avg_share(const sp_geom *g, float v, size_t od,
                                 size_t oy, size_t ox) {
  if (g->adaptive)
    return ((v / (float)sp_win_d(g, od).k) / (float)sp_win_h(g, oy).k) /
           (float)sp_win_w(g, ox).k;
  return v / sp_avg_divisor3(g, od, oy, ox);
}

/* y of one AVG window: the row-major sum of its valid taps, divided (any
 * rank), NaN canonical. */
static inline float sp_avg_window3(const sp_geom *g, const void *x,
                                   simdpool_dtype t, sp_plane px, size_t od,
                                   size_t oy, size_t ox) {
  float acc = 0.0f;
  SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap,
                  { acc += sp_elem(x, px.base + flat * px.step, t); });
  return sp_canonical(sp_avg_share(g, acc, od, oy, ox));
}

/* y of one quantized AVG window (S8/U8, docs/semantics.md#quantized-avg):
 * the int32 sum of q - x_zero_point over its valid taps, times
 * m = ratio / divisor (adaptive: kd*kh*kw), clamped to the output range
 * less y_zero_point, rounded half to even (lrintf: kernels run in the
 * default environment), plus y_zero_point. */
/* m = ratio / divisor of quantized AVG window (od, oy, ox). */
static inline float sp_qavg_m(const sp_geom *g, size_t od, size_t oy,
                              size_t ox) {
  const float divisor = g->adaptive
                            ? (float)((sp_wide)sp_win_d(g, od).k *
                                      sp_win_h(g, oy).k * sp_win_w(g, ox).k)
                            : sp_avg_divisor3(g, od, oy, ox);
  return g->q_ratio / divisor;
}

static inline int32_t sp_qavg_window3(const sp_geom *g, const void *x,
                                      simdpool_dtype t, sp_plane px, size_t od,
                                      size_t oy, size_t ox) {
  int32_t acc = 0;
  SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, {
    acc += (int32_t)sp_elem(x, px.base + flat * px.step, t) - g->q_xzp;
  });
  float v = (float)acc * sp_qavg_m(g, od, oy, ox);
  const float lo = (float)(g->q_lo - g->q_yzp),
              hi = (float)(g->q_hi - g->q_yzp);
  v = v < lo ? lo : v > hi ? hi : v;
  return (int32_t)lrintf(v) + g->q_yzp;
}

/* The valid taps of the window at output o along one axis form the range
 * [*i0, *i1) (non-empty: dispatch rejects windows without input). */
static inline void sp_tap_range(size_t o, size_t stride, size_t pad, size_t k,
                                size_t dil, size_t in, size_t *i0, size_t *i1) {
  const size_t start = o * stride; /* padded coordinates */
  size_t first = 0, end;
  /* Taps at padded positions in [pad, pad + in) are inside; dilation 1
   * needs no division (this runs per output row and column). */
  if (dil == 1) {
    first = start < pad ? pad - start : 0;
    end = pad + in - start;
  } else {
    if (start < pad)
      first = (pad - start + dil - 1) / dil;
    end = (pad + in - start + dil - 1) / dil;
  }
  *i0 = first;
  *i1 = end < k ? end : k;
}

/* t(v) and r(a) of docs/semantics.md#lp-forward for the plan's p. */
static inline float sp_lp_term(float p, float v) {
  if (p == 1.0f)
    return v;
  if (p == 2.0f)
    return v * v;
  return sp_powf(v, p);
}

static inline float sp_lp_root(float p, float a) {
  if (p == 1.0f)
    return a;
  if (p == 2.0f)
    return sqrtf(a);
  return sp_powf(a, 1.0f / p);
}

/* y of one LP window, before NaN canonicalization (any rank:
 * sp_lp_window3; 2D: sp_lp_window). */
static inline float sp_lp_window3(const sp_geom *g, const void *x,
                                  simdpool_dtype t, sp_plane px, size_t od,
                                  size_t oy, size_t ox) {
  float acc = 0.0f;
  SP_FOR_EACH_TAP(g, od, oy, ox, flat, tap, {
    acc += sp_lp_term(g->p, fabsf(sp_elem(x, px.base + flat * px.step, t)));
  });
  return sp_lp_root(g->p, acc);
}

static inline float sp_lp_window(const sp_geom *g, const float *x, sp_plane px,
                                 size_t oy, size_t ox) {
  return sp_lp_window3(g, x, SIMDPOOL_F32, px, 0, oy, ox);
}

/* sign(x): +1, -1, +0 for ±0, NaN for NaN. */
static inline float sp_lp_sign(float v) {
  if (v > 0.0f)
    return 1.0f;
  if (v < 0.0f)
    return -1.0f;
  if (v == 0.0f)
    return 0.0f;
  return v;
}

/* MAX backward in output order (the NHWC kernels with row_range): undilated
 * windows at least as wide as their stride on both axes, so every pixel up
 * to the last window is covered and a pixel's first covering output is
 * known from its kernel row and column alone. Such kernels can write any
 * band of dx rows [row0, row1) by themselves, so the parallel split may
 * cut a plane into row bands even where windows overlap. */
static inline int sp_bwd_rows_ok(const sp_geom *g) {
  return g->dh == 1 && g->dw == 1 && g->sh <= g->kh && g->sw <= g->kw;
}

#endif /* SIMDPOOL_KERNEL_UTIL_H */
