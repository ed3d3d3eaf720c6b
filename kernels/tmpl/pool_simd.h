/* SPDX-License-Identifier: MIT */
/* pool_simd.h — every SIMD kernel body, written once against the vector layer
 * and instantiated per ISA.
 *
 * Include after a vec-<isa>.h, which defines SP_VL, SP_FN(name), the types vf
 * (floats), vi (int32) and vm (lane masks) and their operations. Lanes run
 * over channels in NHWC and over output columns in NCHW (over planes for NCHW
 * global pooling); each lane is one output element, or one dx element in the
 * gathered backward kernels, and sees exactly the scalar reference's
 * sequence of operations, so the bits match (docs/semantics.md: reorder across
 * outputs, never within one).
 *
 * Padding: NCHW forward kernels read rows copied into a stack scratch with
 * a pad value that changes no result (+0 for sums, -inf for MAX), so border
 * and interior lanes run the same code; the other NCHW paths load only the
 * valid lanes of a border tap (lane_range). NHWC windows are uniform across
 * lanes. Outputs whose contributions must keep the reference's order
 * (overlapping NCHW backward) add lane by lane.
 *
 * Indices are tracked in int32 lanes: the flat input position (I32, I64) or
 * the tap number (U8). Dispatch gives SIMD kernels only planes of at most
 * INT32_MAX elements (sp_simd_geom_ok). */

#include <float.h>
#include <string.h>

#include "kernel_util.h"

/* ================================================================ pieces */

/* Helpers called per tap or per row fold: GCC stops inlining them once the
 * file grows past its inline budget, and a call per tap (vectors passed
 * through the ABI) cost the NCHW average a third of its time. */
#if defined(__GNUC__)
#define SP_HOT static inline __attribute__((always_inline))
#else
#define SP_HOT static inline
#endif

/* NCHW row sweeps read two to five input rows at once, each in runs of one
 * row (a few hundred bytes when planes are small, as in VGG's 224-wide
 * layers), and the hardware prefetchers cover such interleaved short runs
 * poorly: the 2x2/s2 forward with indices spent most of its time on the
 * second row's loads. The sweep's reads are sequential overall (rows, then
 * the next plane), so a block asks for the columns SP_PREFETCH_AHEAD bytes
 * further on: data a later block of the sweep reads. A prefetch never
 * faults, so one past the tensor's end is harmless; the address is formed
 * as an integer, as it may lie outside the object. */
#define SP_PREFETCH_AHEAD 4096
SP_HOT void prefetch_ahead(const float *p, size_t n) {
  for (size_t k = 0; k < n; k += 64 / sizeof(float))
    __builtin_prefetch((const void *)((uintptr_t)(p + k) + SP_PREFETCH_AHEAD));
}

/* The MAX step: lanes where v replaces the running max m. */
static inline vm mx_replaces(vf v, vf m) {
  return vm_or(vm_gt(v, m), vm_nan(v));
}

/* One MAX step with its index: v, whose index value is val, replaces the
 * running max *m (and *idx, when track) where mx_replaces says so. Started
 * from -inf with index 0, a window's first tap takes over unless it is
 * -inf itself, which leaves the same bits; so that start is exact whenever
 * the first tap's index value is 0. */
SP_HOT void mx_step(vf v, int32_t val, int track, vf *m, vi *idx) {
  const vm r = mx_replaces(v, *m);
  *m = vf_select(r, *m, v);
  if (track)
    *idx = vi_select(r, *idx, vi_set1(val));
}

static inline vf vcanon(vf v) {
  return vf_select(vm_nan(v), v, vf_set1(sp_canonical(NAN)));
}

/* A forward result as it is stored: clamped to [clamp_lo, clamp_hi] when
 * the plan has an output clamp (v < lo gives lo, v > hi gives hi, anything
 * else, NaN included, stays: docs/semantics.md#output-clamp). Fused into
 * every SIMD forward kernel's stores of y; the scalar reference's dispatch
 * clamps after the kernel instead, with the same bits. */
SP_HOT vf yclamp(const sp_geom *g, vf v) {
  if (!g->clamp)
    return v;
  /* lo > v ? lo : v is v < lo ? lo : v, and hi < v ? hi : v is v > hi ?
   * hi : v, NaN v kept: x86's maxps/minps (one instruction each), which
   * return their second operand, bits and all, when either is NaN. */
  v = vf_max_x86(vf_set1(g->clamp_lo), v);
  return vf_min_x86(vf_set1(g->clamp_hi), v);
}

SP_HOT vf load_lanes(const float *p, size_t n) {
  return n == SP_VL ? vf_load(p) : vf_load_n(p, n);
}

SP_HOT void store_lanes(float *p, vf v, size_t n) {
  if (n == SP_VL)
    vf_store(p, v);
  else
    vf_store_n(p, v, n);
}

/* n lanes of v as the plan's index type at element o. */
SP_HOT void store_index(void *ind, simdpool_index_type t, size_t o, vi v,
                        size_t n) {
  if (n == SP_VL) {
    if (t == SIMDPOOL_INDEX_I32)
      vi_store_i32((int32_t *)ind + o, v);
    else if (t == SIMDPOOL_INDEX_I64)
      vi_store_i64((int64_t *)ind + o, v);
    else
      vi_store_u8((uint8_t *)ind + o, v);
    return;
  }
  int32_t lane[SP_VL];
  vi_store_i32(lane, v);
  for (size_t i = 0; i < n; i++) {
    if (t == SIMDPOOL_INDEX_I32)
      ((int32_t *)ind)[o + i] = lane[i];
    else if (t == SIMDPOOL_INDEX_I64)
      ((int64_t *)ind)[o + i] = lane[i];
    else
      ((uint8_t *)ind)[o + i] = (uint8_t)lane[i];
  }
}

/* n indices of the plan's type at element o, as int32 lanes. */
SP_HOT vi load_index(const void *ind, simdpool_index_type t, size_t o,
                     size_t n) {
  if (n == SP_VL) {
    if (t == SIMDPOOL_INDEX_I32)
      return vi_load_i32((const int32_t *)ind + o);
    if (t == SIMDPOOL_INDEX_I64)
      return vi_load_i64((const int64_t *)ind + o);
    return vi_load_u8((const uint8_t *)ind + o);
  }
  int32_t lane[SP_VL] = {0};
  for (size_t i = 0; i < n; i++) {
    if (t == SIMDPOOL_INDEX_I32)
      lane[i] = ((const int32_t *)ind)[o + i];
    else if (t == SIMDPOOL_INDEX_I64)
      lane[i] = (int32_t)((const int64_t *)ind)[o + i];
    else
      lane[i] = ((const uint8_t *)ind)[o + i];
  }
  return vi_load_i32(lane);
}

/* The value an index holds for a tap: its tap number for U8, else the flat
 * input position. */
static inline int32_t index_value(simdpool_index_type t, size_t tap,
                                  size_t flat) {
  return (int32_t)(t == SIMDPOOL_INDEX_U8 ? tap : flat);
}

/* pow(a, e) per lane with SLEEF's scalar no-FMA pow, the reference's own.
 * SLEEF's vector siblings (Sleef_powf4_u10sse4, ...) might be expected to
 * return the same bits, but on Debian 12's SLEEF 3.5.1 they do not for
 * every input: powf(0x1.fffffcp-2, 0.5) is 0x1.6a09e6p-1 from purec and
 * 0x1.6a09e4p-1 from sse4 (found by test_kernels). Bit-exactness wins, so
 * LP with p other than 1 and 2 computes its powers one lane at a time. */
static inline vf lp_pow_v(vf a, float e) {
  float lane[SP_VL];
  vf_store(lane, a);
  for (size_t i = 0; i < SP_VL; i++)
    lane[i] = sp_powf(lane[i], e);
  return vf_load(lane);
}

/* LP: which formula the plan's p selects. */
enum { LP_OTHER, LP_ONE, LP_TWO };
static inline int lp_kind(float p) {
  return p == 1.0f ? LP_ONE : p == 2.0f ? LP_TWO : LP_OTHER;
}

static inline vf lp_term_v(int kind, float p, vf x) {
  const vf a = vf_abs(x);
  return kind == LP_ONE ? a : kind == LP_TWO ? vf_mul(a, a) : lp_pow_v(a, p);
}

static inline vf lp_root_v(int kind, float inv_p, vf acc) {
  return kind == LP_ONE   ? acc
         : kind == LP_TWO ? vf_sqrt(acc)
                          : lp_pow_v(acc, inv_p);
}

/* sign(x): +1, -1, +0 for ±0, NaN for NaN. */
static inline vf lp_sign_v(vf x) {
  vf s = vf_select(vm_gt(x, vf_zero()), vf_zero(), vf_set1(1.0f));
  s = vf_select(vm_lt(x, vf_zero()), s, vf_set1(-1.0f));
  return vf_select(vm_nan(x), s, x);
}

/* LP backward: g from dy and the window's y (docs/semantics.md), per lane. */
static inline vf lp_grad_v(int kind, float p, vf dy, vf y) {
  if (kind == LP_ONE)
    return dy;
  const vf g =
      kind == LP_TWO ? vf_div(dy, y) : vf_mul(dy, lp_pow_v(y, 1.0f - p));
  return vf_select(vm_eq(y, vf_zero()), g, vf_zero());
}

/* LP backward: the tap's share q from g and x, per lane. */
static inline vf lp_share_v(int kind, float p, vf g, vf x) {
  if (kind == LP_ONE)
    return vf_mul(g, lp_sign_v(x));
  if (kind == LP_TWO)
    return vf_mul(g, x);
  return vf_mul(vf_mul(g, lp_sign_v(x)), lp_pow_v(vf_abs(x), p - 1.0f));
}

/* ---------------------------------------------------------- AVG division
 * AVG divides by an integer count d: IEEE x / d, correctly rounded. With
 * FMA (SP_DIV_EXACT) a divisor also holds r = RN(1/d), and div_lanes
 * returns Markstein's correction (vf_div_exact), which is exactly x / d (or
 * (+0 + x) / d) for every integer d in [1, SP_DIV_FAST_MAX] and every x that
 * is ±0 or has SP_DIV_FAST_MIN <= |x| <= FLT_MAX, as tests/test_divide.c
 * proves (its header gives the argument). Zeros stay on
 * the fast path: the unused lanes of short blocks and the windows of zeros
 * after a ReLU are common. The other lanes, found by integer compares that
 * leave the floating-point adders to the sums: x itself for ±inf and NaN
 * (x / d is x for d >= 1), and a real division where 0 < |x| <
 * SP_DIV_FAST_MIN, computed only when some lane of the vector needs it.
 * Divisors outside the range always divide. */
typedef struct divisor {
  vf d, r;  /* r = RN(1/d) when fast */
  int fast; /* every lane's d is an integer in [1, SP_DIV_FAST_MAX] */
} divisor;

static inline uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* Per call or per row, never per vector: it divides once. */
static inline divisor divisor_of(vf d) {
  divisor v = {d, d, 0};
#if SP_DIV_EXACT
  /* d is an integer iff (d + 2^23) - 2^23 == d, for 0 <= d < 2^23. */
  const vf big = vf_set1(0x1p23f);
  const vm frac =
      vm_andnot(vm_eq(vf_sub(vf_add(d, big), big), d), vm_range(0, SP_VL));
  v.fast = !vm_any(vm_or(
      frac, vm_bits_outside(d, f32_bits(1.0f), f32_bits(SP_DIV_FAST_MAX))));
  v.r = vf_div(vf_set1(1.0f), d);
#endif
  return v;
}

static inline divisor divisor_set1(float d) {
  return divisor_of(vf_set1(d));
}

/* A compile-time integer d in [1, SP_DIV_FAST_MAX] (1/d folds). */
static inline divisor divisor_const(float d) {
  const divisor v = {vf_set1(d), vf_set1(1.0f / d), SP_DIV_EXACT};
  return v;
}

/* A divisor for which div_lanes divides: where d changes too often for r. */
static inline divisor divisor_plain(vf d) {
  const divisor v = {d, d, 0};
  return v;
}

/* x / v->d per lane, exactly as vf_div. With `sum`, (+0 + x) / v->d and NaN
 * results canonical: the AVG output of a sum the reference starts from +0.
 * Both compile-time constants. */
SP_HOT vf div_lanes(vf x, const divisor *v, int sum) {
#if SP_DIV_EXACT
  if (v->fast) {
    const vf q = vf_div_exact(x, v->d, v->r, sum);
    const vf a = vf_abs(x);
    const vm other =
        vm_and(vm_not_pzero(a), vm_bits_outside(a, f32_bits(SP_DIV_FAST_MIN),
                                                f32_bits(FLT_MAX)));
    if (!vm_any(other))
      return q;                          /* finite: no NaN */
    const vf y = vf_select(other, q, x); /* ±inf, NaN */
    const vm tiny = vm_and(
        other, vm_bits_outside(a, f32_bits(FLT_MAX), 0x7fffffffu)); /* finite */
    const vf z = vm_any(tiny) ? vf_select(tiny, y, vf_div(x, v->d)) : y;
    return sum ? vcanon(z) : z;
  }
#endif
  const vf z = vf_div(sum ? vf_add(vf_zero(), x) : x, v->d);
  return sum ? vcanon(z) : z;
}

/* x / d, exactly. */
SP_HOT vf div_by(vf x, const divisor *v) {
  return div_lanes(x, v, 0);
}

/* y of an AVG output from its sum x: (+0 + x) / d, NaN canonical. The
 * leading +0 lets a kernel start a sum from its first term rather than from
 * +0 + first term as the reference does: the two differ only when every
 * term is -0 (-0 there, +0 in the reference; a sum from +0 is never -0). */
SP_HOT vf avg_result(vf x, const divisor *v) {
  return div_lanes(x, v, 1);
}

/* The division above over an array, for its proof (sp_divide_fn): one
 * divisor d[0] (d_stride 0), or one per element (d_stride 1), with the
 * unused lanes of a short last vector dividing by 1 as in the kernels;
 * avg_result with `sum`, else div_by. */
int SP_FN(sp_divide)(const float *x, const float *d, size_t d_stride, float *y,
                     size_t n, int sum) {
  divisor v = divisor_set1(d[0]);
  for (size_t i = 0; i < n; i += SP_VL) {
    const size_t cnt = n - i < SP_VL ? n - i : SP_VL;
    if (d_stride)
      v = divisor_of(
          vf_select(vm_range(0, cnt), vf_set1(1.0f), load_lanes(d + i, cnt)));
    const vf xv = load_lanes(x + i, cnt);
    store_lanes(y + i, sum ? avg_result(xv, &v) : div_by(xv, &v), cnt);
  }
  return SP_DIV_EXACT;
}

/* Every NaN in dx becomes canonical (arithmetic NaN rule). */
static inline void canonicalize(float *dx, size_t count) {
  size_t i = 0;
  for (; i + SP_VL <= count; i += SP_VL)
    vf_store(dx + i, vcanon(vf_load(dx + i)));
  if (i < count)
    vf_store_n(dx + i, vcanon(vf_load_n(dx + i, count - i)), count - i);
}

/* Is every dy finite? Then MAX and AVG backward cannot make a NaN: they
 * only add finite values (dy, dy / divisor) to dx, and a running sum of
 * finite values can reach +inf or -inf but never both, so canonicalizing
 * dx afterwards can be skipped. */
static inline int all_finite(const float *p, size_t count) {
  const vf big = vf_set1(FLT_MAX);
  vm bad = vm_range(0, 0);
  size_t i = 0;
  for (; i + SP_VL <= count; i += SP_VL) {
    const vf v = vf_load(p + i);
    bad = vm_or(bad, vm_or(vm_unord(v, v), vm_gt(vf_abs(v), big)));
  }
  if (i < count) {
    const vf v = vf_load_n(p + i, count - i);
    bad = vm_or(bad, vm_or(vm_unord(v, v), vm_gt(vf_abs(v), big)));
  }
  return !vm_any(bad);
}

static inline size_t out_count(const sp_geom *g) {
  return g->n * g->c * g->oh * g->ow;
}

static inline void zero_tensor(float *p, size_t count) {
  memset(p, 0, count * sizeof *p); /* all-zero bits: +0.0f */
}

static inline size_t round_up(size_t v, size_t m) {
  return (v + m - 1) / m * m;
}

static inline size_t in_count(const sp_geom *g) {
  return g->n * g->c * g->h * g->w;
}

/* zero_tensor, canonicalize and all_finite over `pixels` pixels of c
 * channels, `stride` elements apart (NHWC pixel strides): only the c
 * channels of each pixel are touched. */
static inline void zero_px(float *p, size_t pixels, size_t c, size_t stride) {
  if (stride == c) {
    zero_tensor(p, pixels * c);
    return;
  }
  for (size_t i = 0; i < pixels; i++)
    zero_tensor(p + i * stride, c);
}

static inline void canonicalize_px(float *p, size_t pixels, size_t c,
                                   size_t stride) {
  if (stride == c) {
    canonicalize(p, pixels * c);
    return;
  }
  for (size_t i = 0; i < pixels; i++)
    canonicalize(p + i * stride, c);
}

static inline int all_finite_px(const float *p, size_t pixels, size_t c,
                                size_t stride) {
  if (stride == c)
    return all_finite(p, pixels * c);
  int ok = 1;
  for (size_t i = 0; i < pixels; i++)
    ok &= all_finite(p + i * stride, c);
  return ok;
}

/* NHWC dx: the whole tensor zeroed or canonicalized. */
static inline void zero_dx_nhwc(const sp_geom *g, float *dx) {
  zero_px(dx, g->n * g->h * g->w, g->c, g->xs);
}

static inline void canonicalize_dx_nhwc(const sp_geom *g, float *dx) {
  canonicalize_px(dx, g->n * g->h * g->w, g->c, g->xs);
}

/* Forward's output clamp (sp_clamp_fn) at this ISA's width: v < lo gives
 * lo, v > hi gives hi, anything else (NaN included) stays, bit for bit. */
void SP_FN(sp_clamp)(float *y, size_t pixels, size_t c, size_t stride, float lo,
                     float hi) {
  if (stride == c) {
    c *= pixels;
    pixels = 1;
  }
  const vf vlo = vf_set1(lo), vhi = vf_set1(hi);
  for (size_t p = 0; p < pixels; p++) {
    float *row = y + p * stride;
    for (size_t i = 0; i < c; i += SP_VL) {
      const size_t cn = c - i < SP_VL ? c - i : SP_VL;
      vf v = load_lanes(row + i, cn);
      v = vf_select(vm_lt(v, vlo), v, vlo);
      v = vf_select(vm_gt(v, vhi), v, vhi);
      store_lanes(row + i, v, cn);
    }
  }
}

/* ================================================================ NHWC
 * Lanes over channels: every lane shares the window, so tap validity and
 * the AVG divisor are uniform and no lane ever needs a bounds check. */

/* The window of output (oy, ox): valid taps [ki0, ki1) x [kj0, kj1), and
 * its top-left input position (may be negative: padding). */
typedef struct window {
  size_t ki0, ki1, kj0, kj1;
  ptrdiff_t iy, ix;
} window;

static inline window window_at(const sp_geom *g, size_t oy, size_t ox) {
  window win;
  sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &win.ki0, &win.ki1);
  sp_tap_range(ox, g->sw, g->pl, g->kw, g->dw, g->w, &win.kj0, &win.kj1);
  win.iy = (ptrdiff_t)(oy * g->sh) - (ptrdiff_t)g->pt;
  win.ix = (ptrdiff_t)(ox * g->sw) - (ptrdiff_t)g->pl;
  return win;
}

/* AVG divisor of a window: a window with every tap inside the input has
 * kernel_h * kernel_w (*full) under either count_include_pad rule (the
 * padded range contains the input), so only border windows need counting. */
static inline divisor window_divisor(const sp_geom *g, const window *win,
                                     size_t oy, size_t ox,
                                     const divisor *full) {
  if (win->ki1 - win->ki0 == g->kh && win->kj1 - win->kj0 == g->kw)
    return *full;
  return divisor_set1(sp_avg_divisor(g, oy, ox));
}

/* Flat input position of tap (ki, kj) of a window. */
static inline size_t tap_flat(const sp_geom *g, const window *win, size_t ki,
                              size_t kj) {
  return (size_t)(win->iy + (ptrdiff_t)(ki * g->dh)) * g->w +
         (size_t)(win->ix + (ptrdiff_t)(kj * g->dw));
}

/* Running max of one channel block over a window; *t receives the winner's
 * index value (flat or tap number per index type `it`; tap numbers when
 * it == NONE and track is set). */
static inline vf max_block_nhwc(const sp_geom *g, const float *xn,
                                const window *win, size_t c, size_t cn,
                                int track, simdpool_index_type it, vi *t) {
  const size_t C = g->xs; /* the x pixel step */
  if (!track) {
    /* Without NaN after the first tap, max(v, m) is the MAX step exactly;
     * a lane that met one reruns the block with compare-and-select. */
    vf m = load_lanes(xn + tap_flat(g, win, win->ki0, win->kj0) * C + c, cn);
    vm bad = vm_unord(m, m);
    bad = vm_and(bad, vm_unord(vf_zero(), vf_zero())); /* first tap is fine */
    for (size_t ki = win->ki0; ki < win->ki1; ki++) {
      for (size_t kj = ki == win->ki0 ? win->kj0 + 1 : win->kj0; kj < win->kj1;
           kj++) {
        const vf v = load_lanes(xn + tap_flat(g, win, ki, kj) * C + c, cn);
        bad = vm_or(bad, vm_unord(v, v));
        m = vf_max_x86(v, m);
      }
    }
    if (!vm_any(bad)) {
      *t = vi_set1(0);
      return m;
    }
  } else {
    /* "Greater replaces" from the first tap, the index in the same select:
     * the MAX step exactly unless a later tap is NaN (a NaN first tap is
     * then never replaced, as in the reference). */
    const size_t f0 = tap_flat(g, win, win->ki0, win->kj0);
    vf m = load_lanes(xn + f0 * C + c, cn);
    vi idx = vi_set1(index_value(it, win->ki0 * g->kw + win->kj0, f0));
    vm bad = vm_range(0, 0);
    for (size_t ki = win->ki0; ki < win->ki1; ki++) {
      for (size_t kj = ki == win->ki0 ? win->kj0 + 1 : win->kj0; kj < win->kj1;
           kj++) {
        const size_t flat = tap_flat(g, win, ki, kj);
        const vf v = load_lanes(xn + flat * C + c, cn);
        bad = vm_or(bad, vm_unord(v, v));
        const vm r = vm_gt(v, m);
        m = vf_select(r, m, v);
        idx =
            vi_select(r, idx, vi_set1(index_value(it, ki * g->kw + kj, flat)));
      }
    }
    if (!vm_any(bad)) {
      *t = idx;
      return m;
    }
  }
  vf m = vf_zero();
  vi idx = vi_set1(0);
  int first = 1;
  for (size_t ki = win->ki0; ki < win->ki1; ki++) {
    for (size_t kj = win->kj0; kj < win->kj1; kj++) {
      const size_t flat = tap_flat(g, win, ki, kj);
      const vf v = load_lanes(xn + flat * C + c, cn);
      const int32_t val = track ? index_value(it, ki * g->kw + kj, flat) : 0;
      if (first) {
        m = v;
        idx = vi_set1(val);
        first = 0;
        continue;
      }
      mx_step(v, val, track, &m, &idx);
    }
  }
  *t = idx;
  return m;
}

/* Four full channel blocks of one window at once (C >= 4 * SP_VL): one
 * tap address feeds four loads, and four independent chains hide latency.
 * Each lane still sees its window's taps in row-major order. */
#define NHWC_UNROLL 4

/* MAX of four channel blocks, with the winners' index values when track
 * (written to ind at element o as the plan's index type). Without NaN,
 * "greater replaces" from the first tap is the MAX step exactly (every tap
 * of an NHWC window is valid); returns 0, having written nothing, when a
 * NaN needs the exact path. */
SP_HOT int max4_nhwc(const sp_geom *g, const float *xn, const window *win,
                     size_t c, float *y, int track, void *ind, size_t o,
                     int k3) {
  const size_t C = g->xs; /* the x pixel step */
  const simdpool_index_type it = g->index_type;
  vf m[NHWC_UNROLL];
  vi t[NHWC_UNROLL];
  for (size_t u = 0; u < NHWC_UNROLL; u++) { /* every window has a tap */
    m[u] = vf_zero();
    t[u] = vi_set1(0);
  }
  vm bad = vm_range(0, 0);
  int first = 1;
  /* k3 (a compile-time constant): a whole undilated 3x3 window, so the
   * nine taps unroll with constant offsets. */
  const size_t ki0 = k3 ? 0 : win->ki0, ki1 = k3 ? 3 : win->ki1;
  const size_t kj0 = k3 ? 0 : win->kj0, kj1 = k3 ? 3 : win->kj1;
  const size_t corner = k3 ? tap_flat(g, win, 0, 0) : 0;
  for (size_t ki = ki0; ki < ki1; ki++) {
    for (size_t kj = kj0; kj < kj1; kj++) {
      const size_t flat =
          k3 ? corner + ki * g->w + kj : tap_flat(g, win, ki, kj);
      const float *p = xn + flat * C + c;
      vf v[NHWC_UNROLL];
      for (size_t u = 0; u < NHWC_UNROLL; u++)
        v[u] = vf_load(p + u * SP_VL);
      bad = vm_or(bad, vm_or(vm_unord(v[0], v[1]), vm_unord(v[2], v[3])));
      const vi val =
          vi_set1(track ? index_value(it, ki * g->kw + kj, flat) : 0);
      for (size_t u = 0; u < NHWC_UNROLL; u++) {
        if (first) {
          m[u] = v[u];
          t[u] = val;
        } else if (track) {
          const vm r = vm_gt(v[u], m[u]);
          m[u] = vf_select(r, m[u], v[u]);
          t[u] = vi_select(r, t[u], val);
        } else {
          m[u] = vf_max_x86(v[u], m[u]);
        }
      }
      first = 0;
    }
  }
  if (vm_any(bad))
    return 0;
  for (size_t u = 0; u < NHWC_UNROLL; u++) {
    vf_store(y + u * SP_VL, yclamp(g, m[u]));
    if (track)
      store_index(ind, it, o + u * SP_VL, t[u], SP_VL);
  }
  return 1;
}

/* The sum of AVG (lp = 0) or of the LP terms of four channel blocks. */
static inline void sum4_nhwc(const sp_geom *g, const float *xn,
                             const window *win, size_t c, int lp, int kind,
                             vf acc[NHWC_UNROLL]) {
  const size_t C = g->xs; /* the x pixel step */
  vf a0 = vf_zero(), a1 = vf_zero(), a2 = vf_zero(), a3 = vf_zero();
  for (size_t ki = win->ki0; ki < win->ki1; ki++) {
    for (size_t kj = win->kj0; kj < win->kj1; kj++) {
      const float *p = xn + tap_flat(g, win, ki, kj) * C + c;
      vf v0 = vf_load(p), v1 = vf_load(p + SP_VL);
      vf v2 = vf_load(p + 2 * SP_VL), v3 = vf_load(p + 3 * SP_VL);
      if (lp) {
        v0 = lp_term_v(kind, g->p, v0);
        v1 = lp_term_v(kind, g->p, v1);
        v2 = lp_term_v(kind, g->p, v2);
        v3 = lp_term_v(kind, g->p, v3);
      }
      a0 = vf_add(a0, v0);
      a1 = vf_add(a1, v1);
      a2 = vf_add(a2, v2);
      a3 = vf_add(a3, v3);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

SP_HOT void maxpool_fwd_nhwc_body(const sp_geom *g, const sp_io *io,
                                  int track) {
  const size_t C = g->c;
  const int k3win = g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * g->xs;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        float *y = io->y + px * g->ys;
        const int k3 = k3win && win.ki0 == 0 && win.ki1 == 3 && win.kj0 == 0 &&
                       win.kj1 == 3;
        size_t c = 0;
        while (
            c + NHWC_UNROLL * SP_VL <= C &&
            (k3 ? max4_nhwc(g, xn, &win, c, y + c, track, io->indices, o + c, 1)
                : max4_nhwc(g, xn, &win, c, y + c, track, io->indices, o + c,
                            0)))
          c += NHWC_UNROLL * SP_VL;
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi t;
          const vf m =
              max_block_nhwc(g, xn, &win, c, cn, track, g->index_type, &t);
          store_lanes(y + c, yclamp(g, m), cn);
          if (track)
            store_index(io->indices, g->index_type, o + c, t, cn);
        }
      }
    }
  }
}

void SP_FN(sp_maxpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    maxpool_fwd_nhwc_body(g, io, 0);
  else
    maxpool_fwd_nhwc_body(g, io, 1);
}

/* The output rows whose windows reach dx rows [r0, r1): [*oy0, *oy1). */
static inline void rows_covering(const sp_geom *g, size_t r0, size_t r1,
                                 size_t *oy0, size_t *oy1) {
  *oy0 = r0 + g->pt >= g->kh ? (r0 + g->pt - g->kh) / g->sh + 1 : 0;
  const size_t e = (r1 + g->pt + g->sh - 1) / g->sh;
  *oy1 = e < g->oh ? e : g->oh;
}

/* NHWC: whether output row oy of batch n has only finite dy (a NaN in dx
 * can only come from a dy that is not finite: finite sums overflow to inf,
 * never to NaN). Tested as each row is first used, while it is in cache. */

static inline int dy_row_finite(const sp_geom *g, const sp_io *io, size_t n,
                                size_t oy) {
  return all_finite_px(io->dy + (n * g->oh + oy) * g->ow * g->ys, g->ow, g->c,
                       g->ys);
}

/* MAX backward, NHWC: outputs in order; each output adds dy to the tap its
 * lanes' winners name (adding +0.0f elsewhere changes nothing: dx is never
 * -0.0f). `from_indices` reads winners, else recomputes them from x. */
SP_HOT void maxpool_bwd_nhwc_body(const sp_geom *g, const sp_io *io,
                                  int from_indices) {
  const size_t C = g->c;
  /* Recomputed winners are tap numbers; read ones use the index type. */
  const simdpool_index_type it =
      from_indices ? g->index_type : SIMDPOOL_INDEX_U8;
  const size_t XS = g->xs;
  zero_dx_nhwc(g, io->dx);
  int finite = 1; /* every dy so far; tested a row at a time, in cache */
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = from_indices ? NULL : io->x + n * g->h * g->w * XS;
    float *dxn = io->dx + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      finite &= dy_row_finite(g, io, n, oy);
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const float *dyp = io->dy + px * g->ys;
        /* The window's taps, once for all channel blocks: where each one
         * is in dx and the index value that names it. */
        enum { MAX_TAPS = 64 };
        size_t off[MAX_TAPS];
        int32_t val[MAX_TAPS];
        size_t ntaps = 0;
        if ((win.ki1 - win.ki0) * (win.kj1 - win.kj0) <= MAX_TAPS) {
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            for (size_t kj = win.kj0; kj < win.kj1; kj++, ntaps++) {
              const size_t flat = tap_flat(g, &win, ki, kj);
              off[ntaps] = flat * XS;
              val[ntaps] = index_value(it, ki * g->kw + kj, flat);
            }
          }
        }
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi t;
          if (from_indices)
            t = load_index(io->indices, it, o + c, cn);
          else
            max_block_nhwc(g, xn, &win, c, cn, 1, it, &t);
          const vf dy = load_lanes(dyp + c, cn);
          if (ntaps) {
            float *base = dxn + c;
            for (size_t k = 0; k < ntaps; k++) {
              const vm hit = vm_eq_i(t, vi_set1(val[k]));
              float *p = base + off[k];
              store_lanes(
                  p, vf_add(load_lanes(p, cn), vf_select(hit, vf_zero(), dy)),
                  cn);
            }
            continue;
          }
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              const size_t flat = tap_flat(g, &win, ki, kj);
              const vm hit =
                  vm_eq_i(t, vi_set1(index_value(it, ki * g->kw + kj, flat)));
              float *p = dxn + flat * XS + c;
              store_lanes(
                  p, vf_add(load_lanes(p, cn), vf_select(hit, vf_zero(), dy)),
                  cn);
            }
          }
        }
      }
    }
  }
  if (!finite)
    canonicalize_dx_nhwc(g, io->dx);
}

/* MAX backward, NHWC, undilated windows at least as wide as their stride
 * in both axes (overlapping or tiling: every pixel up to the last window
 * is covered), from indices or from x: each output's winners are read (or
 * recomputed) once per channel block and its dy goes to the pixels of its
 * window, lanes over channels. Walking the outputs in order, a pixel's
 * covering outputs come in output order: the first of them (kernel row
 * ki >= kh - sh or output row 0, and likewise for columns: no earlier
 * output covers the pixel) stores +0.0f + its share, later ones add to
 * what is there while it is in cache. So every dx element is the
 * reference's sum in the reference's order, written without a zeroing pass
 * or a gather's repeated index reads; pixels past the last windows are
 * +0.0f. Writes only dx rows [row0, row1) (sp_geom; the parallel split's
 * row bands), visiting every output that covers them. k3: a compile-time
 * 3x3/stride-2 window (the ResNet stem). */
SP_HOT void maxpool_bwd_inorder_nhwc(const sp_geom *g, const sp_io *io,
                                     int from_x, int k3) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs;
  const size_t KH = k3 ? 3 : g->kh, KW = k3 ? 3 : g->kw;
  const size_t SH = k3 ? 2 : g->sh, SW = k3 ? 2 : g->sw;
  const simdpool_index_type it = from_x ? SIMDPOOL_INDEX_U8 : g->index_type;
  const int u8 = it == SIMDPOOL_INDEX_U8;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  size_t oy0, oy1; /* the output rows whose windows reach rows [R0, R1) */
  rows_covering(g, R0, R1, &oy0, &oy1);
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = from_x ? io->x + n * H * W * XS : NULL;
    float *dxn = io->dx + n * H * W * XS;
    for (size_t oy = oy0; oy < oy1; oy++) {
      finite &= dy_row_finite(g, io, n, oy);
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const float *dyp = io->dy + px * g->ys;
        const window win = window_at(g, oy, ox);
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi key;
          if (from_x)
            max_block_nhwc(g, xn, &win, c, cn, 1, it, &key);
          else
            key = load_index(io->indices, it, o + c, cn);
          const vf dy = load_lanes(dyp + c, cn);
          /* The window's valid rows inside the band. */
          const ptrdiff_t r0 = (ptrdiff_t)R0 - win.iy,
                          r1 = (ptrdiff_t)R1 - win.iy;
          const size_t ka = r0 > (ptrdiff_t)win.ki0 ? (size_t)r0 : win.ki0;
          const size_t kb = r1 < (ptrdiff_t)win.ki1 ? (size_t)r1 : win.ki1;
          for (size_t ki = ka; ki < kb; ki++) {
            const size_t iy = (size_t)(win.iy + (ptrdiff_t)ki);
            const int first_row = oy == 0 || ki + SH >= KH;
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              const size_t ix = (size_t)(win.ix + (ptrdiff_t)kj);
              const int32_t val = (int32_t)(u8 ? ki * KW + kj : iy * W + ix);
              const vf t = vf_select(vm_eq_i(key, vi_set1(val)), vf_zero(), dy);
              float *p = dxn + (iy * W + ix) * XS + c;
              const int first = first_row && (ox == 0 || kj + SW >= KW);
              store_lanes(p, vf_add(first ? vf_zero() : load_lanes(p, cn), t),
                          cn);
            }
          }
        }
      }
    }
    /* Rows and columns past the last windows, inside the band. */
    const size_t end_y = (g->oh - 1) * SH + KH - g->pt;
    const size_t end_x = (g->ow - 1) * SW + KW - g->pl;
    const size_t rows = end_y < R1 ? end_y : R1, cols = end_x < W ? end_x : W;
    for (size_t iy = R0; iy < rows && cols < W; iy++)
      zero_px(dxn + (iy * W + cols) * XS, W - cols, C, XS);
    if (rows < R1) {
      const size_t from = rows > R0 ? rows : R0;
      zero_px(dxn + from * W * XS, (R1 - from) * W, C, XS);
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* MAX backward from flat I32/I64 indices by scatter, NHWC, any window:
 * outputs in order, each channel's dy added to the pixel its index names,
 * the reference's loop (bwd_scatter_nchw's reasons: a few instructions per
 * element where the in-order kernel compares every lane against each tap).
 * dx rows are zeroed just before the first output row that reaches them.
 * Writes only dx rows [row0, row1) (row1 = 0: all): output rows whose
 * windows lie inside the band scatter unfiltered (dispatch checked every
 * index against its window), the few at its edges skip indices outside it.
 * i64: the index type, a compile-time constant. */
SP_HOT void bwd_scatter_nhwc(const sp_geom *g, const sp_io *io, int i64) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  size_t oy0 = 0, oy1 = g->oh; /* the output rows that reach the band */
  if (g->row1)
    rows_covering(g, R0, R1, &oy0, &oy1);
  const size_t lo = R0 * W, span = (R1 - R0) * W; /* the band's pixels */
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    float *dxn = io->dx + n * H * W * XS;
    size_t zeroed = R0; /* dx rows of the band zeroed so far */
    for (size_t oy = oy0; oy < oy1; oy++) {
      size_t ki0, ki1;
      sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
      const size_t top = oy * g->sh + ki0 * g->dh - g->pt;
      const size_t last = oy * g->sh + (ki1 - 1) * g->dh - g->pt + 1;
      const size_t lim = last < R1 ? last : R1;
      /* Rows [zeroed, lim) are new: zeroed pixel column by pixel column,
       * each just before the first output of this row that reaches it, so
       * its lines are in L1 when the adds come (a whole NHWC row of a
       * wide layer is bigger than L1). zc: columns of them zeroed so far. */
      const size_t nr = lim > zeroed ? lim - zeroed : 0;
      float *const fresh = dxn + zeroed * W * XS;
      size_t zc = 0;
      finite &= dy_row_finite(g, io, n, oy);
      const int inside = top >= R0 && last <= R1;
      for (size_t ox = 0; ox < g->ow; ox++) {
        if (nr) {
          /* One past the last input column of window ox. */
          const size_t ec = ox * g->sw + (g->kw - 1) * g->dw + 1;
          const size_t end = ec <= g->pl ? 0 : ec - g->pl < W ? ec - g->pl : W;
          if (end > zc) {
            for (size_t r = 0; r < nr; r++)
              zero_px(fresh + (r * W + zc) * XS, end - zc, C, XS);
            zc = end;
          }
        }
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const float *dyp = io->dy + px * g->ys;
        const int64_t *i8 = (const int64_t *)io->indices + px * C;
        const int32_t *i4 = (const int32_t *)io->indices + px * C;
        if (inside) {
          for (size_t c = 0; c < C; c++)
            dxn[(size_t)(i64 ? i8[c] : i4[c]) * XS + c] += dyp[c];
        } else {
          for (size_t c = 0; c < C; c++) {
            const size_t f = (size_t)(i64 ? i8[c] : i4[c]);
            if (f - lo < span)
              dxn[f * XS + c] += dyp[c];
          }
        }
      }
      if (nr && zc < W)
        for (size_t r = 0; r < nr; r++)
          zero_px(fresh + (r * W + zc) * XS, W - zc, C, XS);
      zeroed += nr;
    }
    if (zeroed < R1)
      zero_px(dxn + zeroed * W * XS, (R1 - zeroed) * W, C, XS);
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* bwd_scatter_nhwc on the plan's flat index type (I32 or I64). */
SP_HOT void bwd_scatter_nhwc_flat(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_I64)
    bwd_scatter_nhwc(g, io, 1);
  else
    bwd_scatter_nhwc(g, io, 0);
}

void SP_FN(sp_maxpool_bwd_nhwc)(const sp_geom *g, const sp_io *io) {
  if (sp_bwd_rows_ok(g))
    maxpool_bwd_inorder_nhwc(g, io, 1, 0);
  else
    maxpool_bwd_nhwc_body(g, io, 0);
}

/* MAX backward from indices, NHWC, gathered: each dx pixel sums, in output
 * order, the dy of the outputs whose windows cover it and whose indices name
 * it, so dx is written once, without the zeroing pass and the per-tap
 * read-modify-write of the scatter above. The sums are the reference's: it
 * adds those same dy, in output order, to a +0.0f, and a lane whose index
 * names another tap adds +0.0f, which changes no bits (dx is never -0.0f).
 *
 * Covering outputs along an axis: o in [lo, hi) with o*s in
 * [i + pad - ext, i + pad] (ext the dilated extent less one), and only
 * those whose offset i + pad - o*s is a multiple of the dilation. Both
 * bounds only grow with i, so they advance without divisions. */
typedef struct cover {
  size_t lo, hi;
} cover;

SP_HOT void cover_advance(cover *cv, size_t i, size_t pad, size_t s, size_t k,
                          size_t d, size_t on) {
  const size_t ext = (k - 1) * d;
  while (cv->lo < on && cv->lo * s + ext < i + pad)
    cv->lo++;
  while (cv->hi < on && cv->hi * s <= i + pad)
    cv->hi++;
}

#define GATHER_MAX 64 /* covering output rows per input row, at most */

/* Can every input row's covering output rows be listed? */
static inline int bwd_gather_fits(const sp_geom *g) {
  return ((g->kh - 1) * g->dh + g->sh) / g->sh <= GATHER_MAX;
}

/* dy of one channel block (dy element od, index element o) where the index
 * names `val`, else 0. */
SP_HOT vf gather_term(const sp_io *io, simdpool_index_type it, size_t o,
                      size_t od, vi val, size_t cn) {
  const vm hit = vm_eq_i(load_index(io->indices, it, o, cn), val);
  return vf_select(hit, vf_zero(), load_lanes(io->dy + od, cn));
}

/* The index value that names input pixel ix (flat: its position in the
 * plane) in the window of output column ox of a covering row whose kernel
 * row gives yk of the tap number; 0 when dilation makes the window skip the
 * pixel's column. */
SP_HOT int gather_value(const sp_geom *g, simdpool_index_type it, size_t yk,
                        size_t ix, size_t ox, size_t flat, vi *v) {
  const size_t rx = ix + g->pl - ox * g->sw;
  if (g->dw > 1 && rx % g->dw)
    return 0;
  *v = vi_set1(index_value(it, yk + (g->dw == 1 ? rx : rx / g->dw), flat));
  return 1;
}

static inline void maxpool_bwd_idx_nhwc_gather(const sp_geom *g,
                                               const sp_io *io) {
  const size_t C = g->c, XS = g->xs, YS = g->ys;
  const simdpool_index_type it = g->index_type;
  /* Every dy row tested so far; each output row covers an input row (its
   * window holds one, plan.c), so by the last input row all are. */
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    cover rv = {0, 0};
    size_t tested = 0; /* output rows [0, tested) of this batch */
    for (size_t iy = 0; iy < g->h; iy++) {
      cover_advance(&rv, iy, g->pt, g->sh, g->kh, g->dh, g->oh);
      for (; tested < rv.hi; tested++)
        finite &= dy_row_finite(g, io, n, tested);
      /* The covering output rows: where they start, and their kernel row's
       * part of the tap number. */
      size_t yo[GATHER_MAX], yk[GATHER_MAX], ny = 0;
      for (size_t oy = rv.lo; oy < rv.hi; oy++) {
        const size_t ry = iy + g->pt - oy * g->sh;
        if (g->dh > 1 && ry % g->dh)
          continue;
        yo[ny] = (n * g->oh + oy) * g->ow; /* its first pixel */
        yk[ny++] = (g->dh == 1 ? ry : ry / g->dh) * g->kw;
      }
      cover cv = {0, 0};
      float *drow = io->dx + (n * g->h + iy) * g->w * XS;
      for (size_t ix = 0; ix < g->w; ix++, drow += XS) {
        cover_advance(&cv, ix, g->pl, g->sw, g->kw, g->dw, g->ow);
        const size_t flat = iy * g->w + ix;
        size_t c = 0;
        for (; c + NHWC_UNROLL * SP_VL <= C; c += NHWC_UNROLL * SP_VL) {
          vf a0 = vf_zero(), a1 = a0, a2 = a0, a3 = a0;
          for (size_t k = 0; k < ny; k++) {
            for (size_t ox = cv.lo; ox < cv.hi; ox++) {
              vi v;
              if (!gather_value(g, it, yk[k], ix, ox, flat, &v))
                continue;
              const size_t o = (yo[k] + ox) * C + c;
              const size_t od = (yo[k] + ox) * YS + c;
              a0 = vf_add(a0, gather_term(io, it, o, od, v, SP_VL));
              a1 = vf_add(a1,
                          gather_term(io, it, o + SP_VL, od + SP_VL, v, SP_VL));
              a2 = vf_add(a2, gather_term(io, it, o + 2 * SP_VL, od + 2 * SP_VL,
                                          v, SP_VL));
              a3 = vf_add(a3, gather_term(io, it, o + 3 * SP_VL, od + 3 * SP_VL,
                                          v, SP_VL));
            }
          }
          vf_store(drow + c, a0);
          vf_store(drow + c + SP_VL, a1);
          vf_store(drow + c + 2 * SP_VL, a2);
          vf_store(drow + c + 3 * SP_VL, a3);
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vf a = vf_zero();
          for (size_t k = 0; k < ny; k++) {
            for (size_t ox = cv.lo; ox < cv.hi; ox++) {
              vi v;
              if (gather_value(g, it, yk[k], ix, ox, flat, &v))
                a = vf_add(a, gather_term(io, it, (yo[k] + ox) * C + c,
                                          (yo[k] + ox) * YS + c, v, cn));
            }
          }
          store_lanes(drow + c, a, cn);
        }
      }
    }
  }
  if (!finite)
    canonicalize_dx_nhwc(g, io->dx);
}

/* MAX backward from indices, NHWC, 3x3/s1/p1 with same-size planes
 * (GoogLeNet's and Inception's pools), gathered: dx pixel p = (iy, ix)
 * hears from the outputs (iy + a - 1, ix + b - 1) inside the plane, in
 * output order (a, then b, ascending), where its tap is 8 - (3a + b); a
 * lane adds that output's dy where its U8 index is that tap, else +0.0f,
 * which changes no bits (dx is never -0.0f). (Flat indices keep the
 * scatter: four or eight times the bytes, read nine times here, this
 * gather measured 1.2x (I32) and 1.4x (I64) slower than the scatter's
 * single read on GoogLeNet's 192x28x28, AVX-512.)
 * Each dx element is stored once, no zeroing pass. Channel blocks of up to
 * NHWC_UNROLL vectors run outermost, so the three output rows a dx row
 * hears from stay in L1 across the row's pixels. Writes only dx rows
 * [row0, row1) (the parallel split's row bands). */
static inline int nhwc3x3s1_fits(const sp_geom *g) {
  return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
         g->dw == 1 && g->pt == 1 && g->pl == 1 && g->oh == g->h &&
         g->ow == g->w;
}

/* Lanes [c, c + cn) of dx pixel p from its nv covering outputs o[] (pixel
 * numbers in the batch) with index values val[]. */
SP_HOT vf nhwc3_sum(const sp_io *io, size_t C, size_t YS, const size_t *o,
                    const int32_t *val, size_t nv, size_t c, size_t cn) {
  vf acc = vf_zero();
  for (size_t k = 0; k < nv; k++) {
    const vm hit =
        vm_eq_i(load_index(io->indices, SIMDPOOL_INDEX_U8, o[k] * C + c, cn),
                vi_set1(val[k]));
    acc = vf_add(
        acc, vf_select(hit, vf_zero(), load_lanes(io->dy + o[k] * YS + c, cn)));
  }
  return acc;
}

SP_HOT void max3x3s1_nhwc_gather(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs, YS = g->ys;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const size_t CB = NHWC_UNROLL * SP_VL;
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    /* The output rows that reach the band: their dy, tested once. */
    const size_t oy0 = R0 ? R0 - 1 : 0, oy1 = R1 < H ? R1 + 1 : H;
    for (size_t oy = oy0; oy < oy1; oy++)
      finite &= dy_row_finite(g, io, n, oy);
    for (size_t c0 = 0; c0 < C; c0 += CB) {
      const size_t cb = C - c0 < CB ? C - c0 : CB;
      for (size_t iy = R0; iy < R1; iy++) {
        for (size_t ix = 0; ix < W; ix++) {
          const size_t p = iy * W + ix;
          size_t o[9];
          int32_t val[9];
          size_t nv = 0;
          for (size_t a = 0; a < 3; a++) {
            if (iy + a < 1 || iy + a - 1 >= H)
              continue;
            for (size_t b = 0; b < 3; b++) {
              if (ix + b < 1 || ix + b - 1 >= W)
                continue;
              o[nv] = n * H * W + (iy + a - 1) * W + ix + b - 1;
              val[nv++] = (int32_t)(8 - (3 * a + b));
            }
          }
          float *d = io->dx + (n * H * W + p) * XS + c0;
          if (cb == CB) {
            for (size_t v = 0; v < NHWC_UNROLL; v++)
              vf_store(d + v * SP_VL,
                       nhwc3_sum(io, C, YS, o, val, nv, c0 + v * SP_VL, SP_VL));
          } else {
            for (size_t c = 0; c < cb; c += SP_VL) {
              const size_t cn = cb - c < SP_VL ? cb - c : SP_VL;
              store_lanes(d + c, nhwc3_sum(io, C, YS, o, val, nv, c0 + c, cn),
                          cn);
            }
          }
        }
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

void SP_FN(sp_maxpool_bwd_idx_nhwc)(const sp_geom *g, const sp_io *io) {
  if (nhwc3x3s1_fits(g) && g->index_type == SIMDPOOL_INDEX_U8) {
    max3x3s1_nhwc_gather(g, io);
    return;
  }
  if (g->index_type != SIMDPOOL_INDEX_U8)
    bwd_scatter_nhwc_flat(g, io);
  else if (sp_bwd_rows_ok(g))
    maxpool_bwd_inorder_nhwc(g, io, 0, 0);
  else if (bwd_gather_fits(g))
    maxpool_bwd_idx_nhwc_gather(g, io);
  else
    maxpool_bwd_nhwc_body(g, io, 1);
}

void SP_FN(sp_maxpool_bwd_3x3s2p1_nhwc)(const sp_geom *g, const sp_io *io) {
  maxpool_bwd_inorder_nhwc(g, io, 1, 1);
}

void SP_FN(sp_maxpool_bwd_idx_3x3s2p1_nhwc)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    maxpool_bwd_inorder_nhwc(g, io, 0, 1);
  else
    bwd_scatter_nhwc_flat(g, io);
}

void SP_FN(sp_avgpool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, XS = g->xs;
  const divisor full = divisor_set1((float)(g->kh * g->kw));
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const divisor div = window_divisor(g, &win, oy, ox, &full);
        float *y = io->y + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        size_t c = 0;
        for (; c + NHWC_UNROLL * SP_VL <= C; c += NHWC_UNROLL * SP_VL) {
          vf acc[NHWC_UNROLL];
          sum4_nhwc(g, xn, &win, c, 0, 0, acc);
          for (int u = 0; u < NHWC_UNROLL; u++)
            vf_store(y + c + (size_t)u * SP_VL,
                     yclamp(g, avg_result(acc[u], &div)));
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vf acc = vf_zero();
          for (size_t ki = win.ki0; ki < win.ki1; ki++)
            for (size_t kj = win.kj0; kj < win.kj1; kj++)
              acc = vf_add(
                  acc, load_lanes(xn + tap_flat(g, &win, ki, kj) * XS + c, cn));
          store_lanes(y + c, yclamp(g, avg_result(acc, &div)), cn);
        }
      }
    }
  }
}

/* AVG backward, NHWC. Writes only dx rows [row0, row1) (sp_geom; the
 * parallel split's row bands), reading every output that covers them.
 *
 * Undilated windows: gathered, lanes over channels, a slab of up to
 * NHWC_UNROLL channel blocks at a time. Each output row's shares dy /
 * divisor are computed once into a ring of the output rows covering the
 * current dx row; each dx pixel then sums, in output order, the shares of
 * the outputs whose windows cover it and is stored once: no zeroing pass
 * and no per-tap read-modify-write. The reference adds the same shares in
 * the same order to a +0.0f, as the sum here starts. */
#define AVG_NHWC_SCRATCH 8192 /* floats: 32 KiB of stack */

static inline size_t avg_nhwc_slab(const sp_geom *g) {
  const size_t rows = (g->kh - 1) / g->sh + 1;
  if (g->dh != 1 || g->dw != 1 || rows > GATHER_MAX)
    return 0;
  size_t cb = round_up(g->c, SP_VL);
  if (cb > NHWC_UNROLL * SP_VL)
    cb = NHWC_UNROLL * SP_VL;
  while (cb > SP_VL && rows * g->ow * cb > AVG_NHWC_SCRATCH)
    cb -= SP_VL;
  return rows * g->ow * cb <= AVG_NHWC_SCRATCH ? cb : 0;
}

SP_HOT void avgpool_bwd_nhwc_gather(const sp_geom *g, const sp_io *io,
                                    size_t cb) {
  _Alignas(64) float ring[AVG_NHWC_SCRATCH];
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs, YS = g->ys;
  const size_t rows = (g->kh - 1) / g->sh + 1, slot = g->ow * cb;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const divisor full = divisor_set1((float)(g->kh * g->kw));
  size_t oy0, oy1;
  rows_covering(g, R0, R1, &oy0, &oy1);
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t oy = oy0; oy < oy1; oy++)
      finite &= dy_row_finite(g, io, n, oy);
    float *dxn = io->dx + n * H * W * XS;
    for (size_t c0 = 0; c0 < C; c0 += cb) {
      const size_t cs = C - c0 < cb ? C - c0 : cb;
      const size_t nb = (cs + SP_VL - 1) / SP_VL;
      cover rv = {0, 0};
      size_t filled = 0; /* output rows [.., filled) have their shares */
      for (size_t iy = R0; iy < R1; iy++) {
        cover_advance(&rv, iy, g->pt, g->sh, g->kh, 1, g->oh);
        if (filled < rv.lo)
          filled = rv.lo;
        for (; filled < rv.hi; filled++) {
          float *s = ring + (filled % rows) * slot;
          const float *dy = io->dy + (n * g->oh + filled) * g->ow * YS + c0;
          for (size_t ox = 0; ox < g->ow; ox++, s += cb, dy += YS) {
            const window win = window_at(g, filled, ox);
            const divisor div = window_divisor(g, &win, filled, ox, &full);
            for (size_t b = 0; b < nb; b++) {
              const size_t cn = cs - b * SP_VL < SP_VL ? cs - b * SP_VL : SP_VL;
              vf_store(s + b * SP_VL,
                       div_by(load_lanes(dy + b * SP_VL, cn), &div));
            }
          }
        }
        const float *sl[GATHER_MAX];
        for (size_t oy = rv.lo; oy < rv.hi; oy++)
          sl[oy - rv.lo] = ring + (oy % rows) * slot;
        const size_t m = rv.hi - rv.lo;
        cover cv = {0, 0};
        float *d = dxn + iy * W * XS + c0;
        for (size_t ix = 0; ix < W; ix++, d += XS) {
          cover_advance(&cv, ix, g->pl, g->sw, g->kw, 1, g->ow);
          if (nb == NHWC_UNROLL && cs == nb * SP_VL) {
            vf acc[NHWC_UNROLL];
            for (int u = 0; u < NHWC_UNROLL; u++)
              acc[u] = vf_zero();
            for (size_t t = 0; t < m; t++)
              for (size_t ox = cv.lo; ox < cv.hi; ox++)
                for (int u = 0; u < NHWC_UNROLL; u++)
                  acc[u] = vf_add(acc[u],
                                  vf_load(sl[t] + ox * cb + (size_t)u * SP_VL));
            for (int u = 0; u < NHWC_UNROLL; u++)
              vf_store(d + (size_t)u * SP_VL, acc[u]);
          } else {
            for (size_t b = 0; b < nb; b++) {
              const size_t cn = cs - b * SP_VL < SP_VL ? cs - b * SP_VL : SP_VL;
              vf acc = vf_zero();
              for (size_t t = 0; t < m; t++)
                for (size_t ox = cv.lo; ox < cv.hi; ox++)
                  acc = vf_add(acc, vf_load(sl[t] + ox * cb + b * SP_VL));
              store_lanes(d + b * SP_VL, acc, cn);
            }
          }
        }
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

/* Dilated windows: outputs in order, each adding its share to its taps
 * inside the band, after the band is zeroed. */
SP_HOT void avgpool_bwd_nhwc_scatter(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, H = g->h, W = g->w, XS = g->xs;
  const size_t R0 = g->row0, R1 = g->row1 ? g->row1 : H;
  const divisor full = divisor_set1((float)(g->kh * g->kw));
  size_t oy0 = 0, oy1 = g->oh;
  if (g->dh == 1)
    rows_covering(g, R0, R1, &oy0, &oy1);
  int finite = 1;
  for (size_t n = 0; n < g->n; n++) {
    float *dxn = io->dx + n * H * W * XS;
    zero_px(dxn + R0 * W * XS, (R1 - R0) * W, C, XS);
    for (size_t oy = oy0; oy < oy1; oy++) {
      finite &= dy_row_finite(g, io, n, oy);
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const divisor div = window_divisor(g, &win, oy, ox, &full);
        const float *dyp = io->dy + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          const vf share = div_by(load_lanes(dyp + c, cn), &div);
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            const size_t iy = (size_t)(win.iy + (ptrdiff_t)(ki * g->dh));
            if (iy < R0 || iy >= R1)
              continue;
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              float *p = dxn + tap_flat(g, &win, ki, kj) * XS + c;
              store_lanes(p, vf_add(load_lanes(p, cn), share), cn);
            }
          }
        }
      }
    }
  }
  if (!finite)
    for (size_t n = 0; n < g->n; n++)
      canonicalize_px(io->dx + (n * H + R0) * W * XS, (R1 - R0) * W, C, XS);
}

void SP_FN(sp_avgpool_bwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t cb = avg_nhwc_slab(g);
  if (cb)
    avgpool_bwd_nhwc_gather(g, io, cb);
  else
    avgpool_bwd_nhwc_scatter(g, io);
}

/* y of one LP channel block, before canonicalization. */
static inline vf lp_block_nhwc(const sp_geom *g, const float *xn,
                               const window *win, size_t c, size_t cn,
                               int kind) {
  const float pv = g->p, inv_p = 1.0f / g->p;
  vf acc = vf_zero();
  for (size_t ki = win->ki0; ki < win->ki1; ki++)
    for (size_t kj = win->kj0; kj < win->kj1; kj++)
      acc = vf_add(
          acc,
          lp_term_v(kind, pv,
                    load_lanes(xn + tap_flat(g, win, ki, kj) * g->xs + c, cn)));
  return lp_root_v(kind, inv_p, acc);
}

void SP_FN(sp_lppool_fwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c;
  const int kind = lp_kind(g->p);
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * g->xs;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        float *y = io->y + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        size_t c = 0;
        for (; c + NHWC_UNROLL * SP_VL <= C; c += NHWC_UNROLL * SP_VL) {
          vf acc[NHWC_UNROLL];
          sum4_nhwc(g, xn, &win, c, 1, kind, acc);
          for (int u = 0; u < NHWC_UNROLL; u++)
            vf_store(y + c + (size_t)u * SP_VL,
                     yclamp(g, vcanon(lp_root_v(kind, 1.0f / g->p, acc[u]))));
        }
        for (; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          store_lanes(
              y + c, yclamp(g, vcanon(lp_block_nhwc(g, xn, &win, c, cn, kind))),
              cn);
        }
      }
    }
  }
}

void SP_FN(sp_lppool_bwd_nhwc)(const sp_geom *g, const sp_io *io) {
  const size_t C = g->c, XS = g->xs;
  const int kind = lp_kind(g->p);
  zero_dx_nhwc(g, io->dx);
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * XS;
    float *dxn = io->dx + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const window win = window_at(g, oy, ox);
        const float *dyp = io->dy + ((n * g->oh + oy) * g->ow + ox) * g->ys;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          const vf dy = load_lanes(dyp + c, cn);
          const vf gr =
              kind == LP_ONE
                  ? dy
                  : lp_grad_v(kind, g->p, dy,
                              lp_block_nhwc(g, xn, &win, c, cn, kind));
          for (size_t ki = win.ki0; ki < win.ki1; ki++) {
            for (size_t kj = win.kj0; kj < win.kj1; kj++) {
              const size_t e = tap_flat(g, &win, ki, kj) * XS + c;
              const vf q = lp_share_v(kind, g->p, gr, load_lanes(xn + e, cn));
              store_lanes(dxn + e, vf_add(load_lanes(dxn + e, cn), q), cn);
            }
          }
        }
      }
    }
  }
  canonicalize_dx_nhwc(g, io->dx);
}

/* ================================================================ NCHW
 * Lanes over output columns of one row. Columns [lo, hi) are the interior:
 * all kernel_w taps inside the input, so blocks of up to SP_VL of them run
 * without checks (a short block at the end of the interior too); border
 * columns use the scalar helpers, the reference's own per-output code. */

typedef struct row_span {
  size_t lo, hi; /* interior output columns */
} row_span;

static inline row_span interior_cols(const sp_geom *g) {
  row_span r;
  const size_t ew = g->dw * (g->kw - 1) + 1;
  r.lo = (g->pl + g->sw - 1) / g->sw; /* first ox with ox*sw >= pl */
  if (r.lo > g->ow)
    r.lo = g->ow;
  /* Last ox with ox*sw - pl + ew <= w. */
  r.hi = 0;
  if (g->w + g->pl >= ew) {
    r.hi = (g->w + g->pl - ew) / g->sw + 1;
    if (r.hi > g->ow)
      r.hi = g->ow;
  }
  if (r.hi < r.lo)
    r.hi = r.lo;
  return r;
}

/* A block: cnt (1..SP_VL) outputs of row oy starting at ox0, whose valid
 * kernel rows are [ki0, ki1). An interior block's lanes have every kernel
 * column inside the input; a border block's lanes may not, and each tap
 * then loads only the lanes where it is valid (lane_range). */
typedef struct block {
  size_t oy, ki0, ki1, ox0, cnt;
  int border;
  int pairs; /* stride 2 may read 2*SP_VL inputs per tap (see load_cols) */
} block;

SP_HOT block block_at(const sp_geom *g, const row_span *in, size_t oy,
                      size_t ki0, size_t ki1, size_t ox0, size_t cnt) {
  block b = {oy, ki0, ki1, ox0, cnt, 0, 0};
  b.border = ox0 < in->lo || ox0 + cnt > in->hi;
  /* Padded position just past the last lane's last tap must be inside. */
  const size_t last = (ox0 + SP_VL - 1) * g->sw + g->dw * (g->kw - 1) + 1;
  b.pairs = !b.border && cnt == SP_VL && last < g->w + g->pl;
  return b;
}

/* The length of the block starting at output column ox: blocks never mix
 * border and interior columns, so interior blocks stay check-free and the
 * per-lane border work covers only border columns. */
SP_HOT size_t block_len(const row_span *in, size_t ox, size_t ow) {
  const size_t end = ox < in->lo ? in->lo : ox < in->hi ? in->hi : ow;
  return end - ox < SP_VL ? end - ox : SP_VL;
}

/* Inputs p[0], p[s], ..., p[(cnt-1)*s], unused lanes zero. Reads nothing
 * else, except that stride 2 with `pairs` reads two whole vectors and
 * de-interleaves them. */
SP_HOT vf load_cols(const float *p, size_t s, size_t cnt, int pairs) {
  if (s == 1)
    return load_lanes(p, cnt);
  if (s == 2) {
    vf even, odd;
    if (pairs) {
      vf_deinterleave(vf_load(p), vf_load(p + SP_VL), &even, &odd);
    } else {
      const size_t m = 2 * cnt - 1;
      vf_deinterleave(load_lanes(p, m < SP_VL ? m : SP_VL),
                      m > SP_VL ? load_lanes(p + SP_VL, m - SP_VL) : vf_zero(),
                      &even, &odd);
    }
    return even;
  }
  if (cnt == SP_VL)
    return vf_gather(p, s);
  float lane[SP_VL] = {0};
  for (size_t i = 0; i < cnt; i++)
    lane[i] = p[i * s];
  return vf_load(lane);
}

/* Border blocks: the lanes [*l0, *l1) of a block of cnt whose tap lies in
 * [0, w), when lane 0's tap sits at input column col (may be negative) and
 * lanes step by s columns. */
SP_HOT void lane_range(ptrdiff_t col, size_t s, size_t w, size_t cnt,
                       size_t *l0, size_t *l1) {
  const ptrdiff_t ss = (ptrdiff_t)s, end = (ptrdiff_t)w - col;
  /* Strides 1 and 2 without a division: this runs per tap and row. */
  if (s <= 2) {
    *l0 = col < 0 ? (size_t)((-col + ss - 1) >> (s - 1)) : 0;
    *l1 = end <= 0 ? 0 : (size_t)((end + ss - 1) >> (s - 1));
  } else {
    *l0 = col < 0 ? (size_t)((-col + ss - 1) / ss) : 0;
    *l1 = end <= 0 ? 0 : (size_t)((end + ss - 1) / ss);
  }
  if (*l1 > cnt)
    *l1 = cnt;
  if (*l0 > *l1)
    *l0 = *l1;
}

/* Lanes [l0, l1) of row[col + l*s], the rest zero; touches nothing else. */
SP_HOT vf load_cols_range(const float *row, ptrdiff_t col, size_t s, size_t l0,
                          size_t l1) {
  if (s == 1)
    return vf_load_range(row + col, l0, l1);
  if (s == 2) {
    /* Elements [2*l0, 2*l1 - 1) of row + col, then the even ones. */
    const size_t e0 = 2 * l0, e1 = 2 * l1 - 1;
    vf even, odd;
    vf_deinterleave(vf_load_range(row + col, e0 < SP_VL ? e0 : SP_VL,
                                  e1 < SP_VL ? e1 : SP_VL),
                    vf_load_range(row + col + SP_VL,
                                  e0 > SP_VL ? e0 - SP_VL : 0,
                                  e1 > SP_VL ? e1 - SP_VL : 0),
                    &even, &odd);
    return even;
  }
  float lane[SP_VL] = {0};
  for (size_t i = l0; i < l1; i++)
    lane[i] = row[col + (ptrdiff_t)(i * s)];
  return vf_load(lane);
}

/* dx += v at p[0], p[s], ... for cnt lanes: distinct elements. */
SP_HOT void add_cols(float *p, size_t s, vf v, size_t cnt) {
  if (s == 1) {
    store_lanes(p, vf_add(load_lanes(p, cnt), v), cnt);
    return;
  }
  float lane[SP_VL];
  vf_store(lane, v);
  for (size_t i = 0; i < cnt; i++)
    p[i * s] += lane[i];
}

/* The input column of tap kj of the block's first lane (negative or past
 * the row in border blocks). */
SP_HOT ptrdiff_t block_col(const sp_geom *g, const block *b, size_t kj) {
  return (ptrdiff_t)(b->ox0 * g->sw + kj * g->dw) - (ptrdiff_t)g->pl;
}

/* One tap of a block: its values (zero in lanes where the tap is padding)
 * and the lanes where it is valid; returns 0 when no lane has it. */
SP_HOT int block_tap(const sp_geom *g, const block *b, const float *row,
                     size_t kj, vf *v, vm *valid) {
  const ptrdiff_t col = block_col(g, b, kj);
  if (!b->border) {
    *v = load_cols(row + col, g->sw, b->cnt, b->pairs);
    *valid = vm_range(0, SP_VL);
    return 1;
  }
  size_t l0, l1;
  lane_range(col, g->sw, g->w, b->cnt, &l0, &l1);
  if (l0 == l1)
    return 0;
  *v = load_cols_range(row, col, g->sw, l0, l1);
  *valid = vm_range(l0, l1);
  return 1;
}

/* The input row that kernel row ki of the block reads. */
SP_HOT const float *block_row(const sp_geom *g, const float *xp, const block *b,
                              size_t ki) {
  return xp + (b->oy * g->sh + ki * g->dh - g->pt) * g->w;
}

/* Runs the body (the last argument) for every valid tap of block b in row-major
 * order, with ki, kj, v (the tap's inputs, zero in padding lanes) and valid
 * (its lanes) in scope. Full interior blocks at stride 1, the common case, take
 * plain loads without the per-tap border machinery. */
#define FOR_EACH_BLOCK_TAP(g, xp, b, ...)                                      \
  do {                                                                         \
    const int plain_ = !(b)->border && (g)->sw == 1 && (b)->cnt == SP_VL;      \
    for (size_t ki = (b)->ki0; ki < (b)->ki1; ki++) {                          \
      const float *row_ = block_row(g, xp, b, ki);                             \
      for (size_t kj = 0; kj < (g)->kw; kj++) {                                \
        vf v;                                                                  \
        vm valid;                                                              \
        if (plain_) {                                                          \
          v = vf_load(row_ + block_col(g, b, kj));                             \
          valid = vm_range(0, SP_VL);                                          \
        } else if (!block_tap(g, b, row_, kj, &v, &valid)) {                   \
          continue;                                                            \
        }                                                                      \
        __VA_ARGS__                                                            \
      }                                                                        \
    }                                                                          \
  } while (0)

/* Running max of a block; *t receives the winners' index values (flat, or
 * tap number for U8) when track is set. */
static inline vf max_block_nchw(const sp_geom *g, const float *xp,
                                const block *b, int track,
                                simdpool_index_type it, vi *t) {
  const vf ninf = vf_set1(-INFINITY);
  if (!track) {
    /* Without NaN, max(v, m) from m = -inf is the MAX step exactly, and a
     * padding lane loaded as -inf never changes m's bits; a lane that met
     * a NaN reruns the block with compare-and-select. */
    vf m = ninf;
    vm bad = vm_range(0, 0);
    FOR_EACH_BLOCK_TAP(g, xp, b, {
      v = vf_select(valid, ninf, v);
      bad = vm_or(bad, vm_unord(v, v));
      m = vf_max_x86(v, m);
    });
    if (!vm_any(bad)) {
      *t = vi_set1(0);
      return m;
    }
  }
  /* Compare and select; `found` marks lanes that have met a valid tap (the
   * first one is taken as it is). */
  vf m = vf_zero();
  vi idx = vi_set1(0);
  vm found = vm_range(0, 0);
  FOR_EACH_BLOCK_TAP(g, xp, b, {
    const vm r =
        vm_or(vm_andnot(found, valid), vm_and(valid, mx_replaces(v, m)));
    found = vm_or(found, valid);
    m = vf_select(r, m, v);
    if (track) {
      const ptrdiff_t iy = (ptrdiff_t)(b->oy * g->sh + ki * g->dh - g->pt);
      const vi val =
          it == SIMDPOOL_INDEX_U8
              ? vi_set1((int32_t)(ki * g->kw + kj))
              : vi_ramp((int32_t)(iy * (ptrdiff_t)g->w + block_col(g, b, kj)),
                        (int32_t)g->sw);
      idx = vi_select(r, idx, val);
    }
  });
  *t = idx;
  return m;
}

/* Sum of a block (AVG) or of its LP terms, before the divisor or root.
 * Padding lanes load zero, and 0 adds nothing (acc is never -0.0f), as
 * t(0) = 0 adds nothing for LP. */
static inline vf sum_block_nchw(const sp_geom *g, const float *xp,
                                const block *b, int lp, int kind) {
  vf acc = vf_zero();
  FOR_EACH_BLOCK_TAP(g, xp, b, {
    (void)valid;
    acc = vf_add(acc, lp ? lp_term_v(kind, g->p, v) : v);
  });
  return acc;
}

/* AVG divisors of outputs ox0.. (cnt of them) of a row whose windows have ny
 * valid kernel rows: sp_avg_divisor's own factors, with the column's counted
 * per lane only outside the interior [in.lo, in.hi), where every column has
 * all kw taps under either count_include_pad rule. */
SP_HOT vf cols_divisor(const sp_geom *g, const row_span *in, size_t ny,
                       size_t ox0, size_t cnt) {
  if (ox0 >= in->lo && ox0 + cnt <= in->hi)
    return vf_set1((float)(ny * g->kw));
  float lane[SP_VL];
  size_t i = 0;
  for (; i < cnt && ox0 + i < in->lo; i++)
    lane[i] = (float)(ny * sp_avg_taps_w(g, ox0 + i));
  for (; i < cnt && ox0 + i < in->hi; i++)
    lane[i] = (float)(ny * g->kw);
  for (; i < cnt; i++)
    lane[i] = (float)(ny * sp_avg_taps_w(g, ox0 + i));
  for (; i < SP_VL; i++)
    lane[i] = 1.0f;
  return vf_load(lane);
}

/* The column factors of the AVG divisors of a row's vector-aligned blocks,
 * built once per call: (float)taps_w per lane in the few border blocks (the
 * row's first ones, before in.lo, and its last ones, from in.hi on), kw in
 * every interior block. Building a factor vector lane by lane costs a store
 * forwarding stall, far too much per block and row. */
#define COL_DIV_MAX 8

/* AVG also keeps the divisors (div_by) of rows with kh - j counted kernel
 * rows, j < COL_NY (interior rows and the usual border rows), for each
 * border block (slot k < COL_DIV_MAX) and for the interior blocks (slot
 * COL_DIV_MAX, col_slot). */
#define COL_NY 4

typedef struct col_divs {
  size_t left, right; /* blocks [0, left) and [right, nb) are border */
  int ok;             /* 0: too many border blocks, use cols_divisor */
  vf f[COL_DIV_MAX];
  divisor dv[COL_NY][COL_DIV_MAX + 1];
} col_divs;

static inline void col_divs_init(const sp_geom *g, const row_span *in,
                                 col_divs *cd) {
  const size_t nb = (g->ow + SP_VL - 1) / SP_VL;
  cd->left = (in->lo + SP_VL - 1) / SP_VL;
  cd->right = in->hi / SP_VL;
  if (cd->right < cd->left)
    cd->right = cd->left;
  if (cd->right > nb)
    cd->right = nb;
  /* ny * nx is exact in float when kh * kw < 2^24. */
  cd->ok =
      cd->left + (nb - cd->right) <= COL_DIV_MAX && g->kh <= (1u << 24) / g->kw;
  if (!cd->ok)
    return;
  size_t k = 0;
  for (size_t b = 0; b < nb; b = b + 1 == cd->left ? cd->right : b + 1) {
    if (b >= cd->left && b < cd->right)
      continue;
    float lane[SP_VL];
    for (size_t i = 0; i < SP_VL; i++) {
      const size_t ox = b * SP_VL + i;
      lane[i] = ox < g->ow ? (float)sp_avg_taps_w(g, ox) : 1.0f;
    }
    cd->f[k++] = vf_load(lane);
  }
  for (size_t j = 0; g->method == SIMDPOOL_AVG && j < COL_NY && j < g->kh;
       j++) {
    const vf ny = vf_set1((float)(g->kh - j));
    for (size_t i = 0; i <= COL_DIV_MAX; i++) {
      if (i < COL_DIV_MAX && i >= k)
        continue;
      cd->dv[j][i] = divisor_of(
          vf_mul(ny, i < COL_DIV_MAX ? cd->f[i] : vf_set1((float)g->kw)));
    }
  }
}

/* The column factors of block bi (outputs bi*SP_VL..); cd->ok. A row with
 * ny valid kernel rows divides by ny times them, exactly (col_divs_init). */
SP_HOT vf col_factor(const sp_geom *g, const col_divs *cd, size_t bi) {
  if (bi >= cd->left && bi < cd->right)
    return vf_set1((float)g->kw);
  return cd->f[bi < cd->left ? bi : cd->left + (bi - cd->right)];
}

/* The slot of block bi in cd->dv. */
SP_HOT size_t col_slot(const col_divs *cd, size_t bi) {
  return bi >= cd->left && bi < cd->right ? COL_DIV_MAX
         : bi < cd->left                  ? bi
                                          : cd->left + (bi - cd->right);
}

/* x / (ny * col_factor(bi)): the AVG division of block bi (in slot) of a
 * row with ny counted kernel rows, from the kept divisors where it has
 * them. */
SP_HOT vf col_div(const sp_geom *g, const col_divs *cd, size_t bi, size_t slot,
                  size_t ny, vf x) {
  if (g->kh - ny < COL_NY)
    return avg_result(x, &cd->dv[g->kh - ny][slot]);
  const divisor v =
      divisor_plain(vf_mul(vf_set1((float)ny), col_factor(g, cd, bi)));
  return avg_result(x, &v);
}

/* Runs the body (the last argument) for every output row of every plane, in
 * memory order, with in_ (the interior columns), px/py (the plane), oy, the
 * valid kernel rows [ki0, ki1) and orow (the row's first output element) in
 * scope. */
#define FOR_EACH_ROW(g, ...)                                                   \
  do {                                                                         \
    const row_span in_ = interior_cols(g);                                     \
    for (size_t n = 0; n < (g)->n; n++) {                                      \
      for (size_t c = 0; c < (g)->c; c++) {                                    \
        const sp_plane px = sp_plane_of(g, n, c, (g)->h, (g)->w);              \
        const sp_plane py = sp_plane_of(g, n, c, (g)->oh, (g)->ow);            \
        for (size_t oy = 0; oy < (g)->oh; oy++) {                              \
          size_t ki0, ki1;                                                     \
          sp_tap_range(oy, (g)->sh, (g)->pt, (g)->kh, (g)->dh, (g)->h, &ki0,   \
                       &ki1);                                                  \
          const size_t orow = py.base + oy * (g)->ow;                          \
          __VA_ARGS__                                                          \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* NCHW AVG/LP forward through padded scratch rows. A band of output rows of
 * one plane (and a tile of its columns, when a whole row is too wide) reads
 * a range of input rows; they are copied once to a stack scratch, with a pad
 * value (+0.0f) wherever a tap falls outside the input (padding, rows above
 * or below). Every tap is then a plain load, the same for border and
 * interior lanes, without per-tap lane ranges or masks, and PAD_ROWS output
 * rows at a time give independent chains that hide the latency. Exact: a
 * padding tap adds +0.0f (t(0) = +0.0f for LP) to a sum that starts at +0.0f
 * and so is never -0.0f, which changes no bits. (The 3x3/s2 MAX below reads
 * its input directly: a fold is cheap enough that the copy would double its
 * time.) */
#define PAD_ROWS 4
#define PAD_SCRATCH 4096 /* floats: 16 KiB of stack */

/* The scratch layout of a call: tiles of `tile` output columns (a multiple
 * of SP_VL), bands of `band` output rows (a multiple of PAD_ROWS), scratch
 * rows `rs` floats apart. */
typedef struct pad_plan {
  size_t tile, band, rs;
} pad_plan;

/* Scratch rows a band of b output rows reads. */
static inline size_t pad_rows(const sp_geom *g, size_t b) {
  return (b - 1) * g->sh + (g->kh - 1) * g->dh + 1;
}

/* Scratch columns a tile of t outputs reads (load_cols at stride 2 reads the
 * last lane's odd neighbour too). */
static inline size_t pad_cols(const sp_geom *g, size_t t) {
  return t * g->sw + (g->kw - 1) * g->dw;
}

/* 0 when not even PAD_ROWS rows of one vector fit the scratch. The widest
 * tile comes first (no column overlap), then the tallest band. */
static inline int pad_plan_of(const sp_geom *g, pad_plan *pp) {
  const size_t rows = pad_rows(g, PAD_ROWS), halo = (g->kw - 1) * g->dw;
  if (rows > PAD_SCRATCH / SP_VL)
    return 0;
  const size_t room = PAD_SCRATCH / rows / SP_VL * SP_VL; /* floats per row */
  if (room <= halo)
    return 0;
  size_t t = (room - halo) / g->sw / SP_VL * SP_VL;
  if (t == 0)
    return 0;
  if (t > round_up(g->ow, SP_VL))
    t = round_up(g->ow, SP_VL);
  pp->tile = t;
  pp->rs = round_up(pad_cols(g, t), SP_VL);
  /* (b - 1) * sh + (kh - 1) * dh + 1 <= PAD_SCRATCH / rs */
  const size_t cap = PAD_SCRATCH / pp->rs;
  size_t b = (cap - (rows - (PAD_ROWS - 1) * g->sh)) / g->sh + 1;
  b = b / PAD_ROWS * PAD_ROWS;
  if (b > round_up(g->oh, PAD_ROWS))
    b = round_up(g->oh, PAD_ROWS);
  pp->band = b;
  return 1;
}

/* The columns [*lo, *hi) of a tile's scratch rows that hold input: those c
 * in [0, cols) with 0 <= x0 + c < w. */
static inline void pad_span(ptrdiff_t x0, size_t w, size_t cols, size_t *lo,
                            size_t *hi) {
  const ptrdiff_t a = -x0, b = (ptrdiff_t)w - x0;
  *lo = a <= 0 ? 0 : (size_t)a < cols ? (size_t)a : cols;
  *hi = b <= (ptrdiff_t)*lo ? *lo : (size_t)b < cols ? (size_t)b : cols;
}

/* s[c] = row[x0 + c] for c in [lo, hi) (pad_span), pad elsewhere in
 * [0, cols) (everywhere when row is NULL). Writes up to SP_VL - 1 floats
 * past cols. */
SP_HOT void pad_fill(float *s, const float *row, ptrdiff_t x0, size_t lo,
                     size_t hi, size_t cols, vf pad) {
  if (!row)
    lo = hi = cols;
  size_t c = 0;
  for (; c < lo; c += SP_VL)
    vf_store(s + c, pad);
  for (c = lo; c + SP_VL <= hi; c += SP_VL)
    vf_store(s + c, vf_load(row + x0 + (ptrdiff_t)c));
  if (c < hi) {
    const size_t k = hi - c;
    vf_store(s + c, vf_select(vm_range(0, k), pad,
                              load_lanes(row + x0 + (ptrdiff_t)c, k)));
    c += SP_VL;
  }
  for (; c < cols; c += SP_VL)
    vf_store(s + c, pad);
}

/* What a scratch row holds under the current tile: not known, all pad, or
 * pad in every column outside [lo, hi). */
enum { PAD_STALE, PAD_BLANK, PAD_DATA };

/* pad_fill, skipping what the row already holds (*st): a row of the same
 * tile that held input has its pad columns in place, so only its input
 * columns are copied again (in whole vectors, the last one ending at hi),
 * and a row that is all pad stays as it is. Most calls have one tile per
 * band, so after the first band every row is a plain copy. */
SP_HOT void pad_row(float *s, unsigned char *st, const float *row, ptrdiff_t x0,
                    size_t lo, size_t hi, size_t cols, vf pad) {
  if (!row) {
    if (*st != PAD_BLANK)
      pad_fill(s, NULL, x0, lo, hi, cols, pad);
    *st = PAD_BLANK;
    return;
  }
  if (*st == PAD_DATA && hi - lo >= SP_VL) {
    for (size_t c = lo; c + SP_VL < hi; c += SP_VL)
      vf_store(s + c, vf_load(row + x0 + (ptrdiff_t)c));
    vf_store(s + hi - SP_VL, vf_load(row + x0 + (ptrdiff_t)(hi - SP_VL)));
    return;
  }
  pad_fill(s, row, x0, lo, hi, cols, pad);
  *st = PAD_DATA;
}

/* Runs the body (the last argument) for every band and tile of every plane
 * after copying the band's input rows into scratch (pad where a tap falls
 * outside the input), with xp, yp (the plane's input and output), oy0, by
 * (the band's first output row and its row count, a multiple of PAD_ROWS
 * that may pass oh), ox0 and tc (the tile's first output column and its
 * column count) in scope. */
#define FOR_EACH_PAD_TILE(g, io, pp, scratch, pad, ...)                        \
  do {                                                                         \
    unsigned char st_[PAD_SCRATCH / SP_VL]; /* pad_row's states */             \
    ptrdiff_t tx0_ = 0;                                                        \
    size_t tcols_ = 0; /* the tile st_ describes; none yet */                  \
    for (size_t n_ = 0; n_ < (g)->n; n_++) {                                   \
      for (size_t c_ = 0; c_ < (g)->c; c_++) {                                 \
        const float *xp =                                                      \
            (io)->x + sp_plane_of(g, n_, c_, (g)->h, (g)->w).base;             \
        float *yp = (io)->y + sp_plane_of(g, n_, c_, (g)->oh, (g)->ow).base;   \
        for (size_t oy0 = 0; oy0 < (g)->oh; oy0 += (pp)->band) {               \
          const size_t by = round_up(                                          \
              (g)->oh - oy0 < (pp)->band ? (g)->oh - oy0 : (pp)->band,         \
              PAD_ROWS);                                                       \
          for (size_t ox0 = 0; ox0 < (g)->ow; ox0 += (pp)->tile) {             \
            const size_t tc =                                                  \
                (g)->ow - ox0 < (pp)->tile ? (g)->ow - ox0 : (pp)->tile;       \
            const size_t cols_ = pad_cols(g, round_up(tc, SP_VL));             \
            const ptrdiff_t x0_ =                                              \
                (ptrdiff_t)(ox0 * (g)->sw) - (ptrdiff_t)(g)->pl;               \
            if (x0_ != tx0_ || cols_ != tcols_) {                              \
              memset(st_, PAD_STALE, sizeof st_);                              \
              tx0_ = x0_;                                                      \
              tcols_ = cols_;                                                  \
            }                                                                  \
            size_t lo_, hi_;                                                   \
            pad_span(x0_, (g)->w, cols_, &lo_, &hi_);                          \
            for (size_t r_ = 0; r_ < pad_rows(g, by); r_++) {                  \
              const ptrdiff_t iy_ =                                            \
                  (ptrdiff_t)(oy0 * (g)->sh + r_) - (ptrdiff_t)(g)->pt;        \
              const int in_ = iy_ >= 0 && (size_t)iy_ < (g)->h;                \
              pad_row((scratch) + r_ * (pp)->rs, &st_[r_],                     \
                      in_ ? xp + (size_t)iy_ * (g)->w : NULL, x0_, lo_, hi_,   \
                      cols_, pad);                                             \
            }                                                                  \
            __VA_ARGS__                                                        \
          }                                                                    \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* One output row oy (outputs at orow, valid kernel rows [ki0, ki1)) of MAX
 * forward, NCHW, plane xp: blocks of compare-and-select, border and
 * interior columns apart (block_len). */
SP_HOT void max_row_nchw(const sp_geom *g, const sp_io *io, const float *xp,
                         const row_span *in, size_t oy, size_t ki0, size_t ki1,
                         size_t orow, int track) {
  for (size_t ox = 0, cnt; ox < g->ow; ox += cnt) {
    cnt = block_len(in, ox, g->ow);
    const block b = block_at(g, in, oy, ki0, ki1, ox, cnt);
    vi t;
    const vf m = max_block_nchw(g, xp, &b, track, g->index_type, &t);
    store_lanes(io->y + orow + ox, yclamp(g, m), cnt);
    if (track)
      store_index(io->indices, g->index_type, orow + ox, t, cnt);
  }
}

/* 3x3/stride-2/pad-1 MAX without indices (the ResNet stem), straight from
 * the input. Lane l of the block at output column ox0 reads input columns
 * 2(ox0 + l) - 1 .. + 1. Each input row folds its three taps once (the
 * ordered max of columns 2ox - 1, 2ox, 2ox + 1), then rows 0, 1, 2 combine
 * in order (docs/semantics.md's ordered tree; a tie keeps the earlier row), and
 * output rows go in pairs that share their middle input row. A tap outside
 * the input is -inf, which never replaces a MAX and, where the first valid
 * tap is -inf itself, has its bits. _mm*_max_ps is exact only without NaNs:
 * a row pair whose inputs hold one is redone with compare-and-select
 * (max_block_nchw). */

/* How a fold reads its row: FOLD_IN, every column inside the input; FOLD_LEFT,
 * the row's first block with only column -1 outside; FOLD_RIGHT, a full
 * last block whose vectors 1 and 3 end in a column or two past the input;
 * FOLD_EDGE, any lanes outside (fold_lanes says which). */
enum { FOLD_IN, FOLD_LEFT, FOLD_RIGHT, FOLD_EDGE };

/* The four vectors a fold reads, at p + fold_off[i] (p at the block's first
 * column, 2ox0 - 1): its columns 0..2SP_VL - 1, then 1..2SP_VL, whose odd
 * lanes are each output's third tap. No vector reads past the last tap. */
static const size_t fold_off[4] = {0, SP_VL, 1, SP_VL + 1};

/* Lanes [l0[i], l1[i]) of vector i lie inside the input. */
typedef struct fold_lanes {
  size_t l0[4], l1[4];
} fold_lanes;

SP_HOT fold_lanes fold_lanes_of(size_t ox0, size_t w) {
  fold_lanes fl;
  for (size_t i = 0; i < 4; i++)
    lane_range(2 * (ptrdiff_t)ox0 - 1 + (ptrdiff_t)fold_off[i], 1, w, SP_VL,
               &fl.l0[i], &fl.l1[i]);
  return fl;
}

/* Lanes [l0, l1) from p, pad elsewhere; reads nothing else. */
SP_HOT vf load_range_or(const float *p, size_t l0, size_t l1, vf pad) {
  return vf_select(vm_range(l0, l1), pad, vf_load_range(p, l0, l1));
}

/* The three taps of every lane of a stride-2 row block from its four vectors
 * (fold_off): t[kj] holds columns 2l + kj. */
SP_HOT void taps3s2(const vf v[4], vf t[3]) {
  vf e2;
  vf_deinterleave(v[0], v[1], &t[0], &t[1]);
  vf_deinterleave(v[2], v[3], &e2, &t[2]);
  (void)e2;
}

/* The ordered MAX of a, b, c with their index values ia, ib, ic: a later
 * one wins only when greater (ties keep the earlier), which is the MAX step
 * exactly when none is NaN; *out receives the winner's index value. */
SP_HOT vf max3_track(vf a, vi ia, vf b, vi ib, vf c, vi ic, vi *out) {
  const vm rb = vm_gt(b, a);
  const vf m = vf_select(rb, a, b);
  const vi t = vi_select(rb, ia, ib);
  const vm rc = vm_gt(c, m);
  *out = vi_select(rc, t, ic);
  return vf_select(rc, m, c);
}

/* One input row's fold for the block at ox0 (-inf for a NULL row), read as
 * `mode` says (fl: for FOLD_RIGHT and FOLD_EDGE). *bad collects NaN tests: of
 * columns 0..2SP_VL - 1, and of 1..2SP_VL too in the row's last block (last); a
 * block's column 2SP_VL is the next block's column 0. With track, *kc gets
 * each lane's winning column 0, 1 or 2. */
SP_HOT vf fold3x3s2(const float *row, size_t ox0, int mode,
                    const fold_lanes *fl, int last, vm *bad, int track,
                    vi *kc) {
  const vf ninf = vf_set1(-INFINITY);
  if (track)
    *kc = vi_set1(0);
  if (!row)
    return ninf;
  const float *p = row + 2 * (ptrdiff_t)ox0 - 1;
  vf v[4];
  for (size_t i = 0; i < 4; i++) {
    if (mode == FOLD_EDGE)
      v[i] = load_range_or(p + fold_off[i], fl->l0[i], fl->l1[i], ninf);
    else if (mode == FOLD_LEFT && i == 0)
      v[i] = load_range_or(p, 1, SP_VL, ninf);
    else if (mode == FOLD_RIGHT && i % 2)
      v[i] = load_range_or(p + fold_off[i], 0, fl->l1[i], ninf);
    else
      v[i] = vf_load(p + fold_off[i]);
  }
  *bad = vm_or(*bad, vm_unord(v[0], v[1]));
  if (last)
    *bad = vm_or(*bad, vm_unord(v[2], v[3]));
  vf t[3];
  taps3s2(v, t);
  if (track)
    return max3_track(t[0], vi_set1(0), t[1], vi_set1(1), t[2], vi_set1(2), kc);
  return vf_max_x86(t[2], vf_max_x86(t[1], t[0]));
}

/* Where a 3x3/s2/p1 block writes: y at output element o (the second row's
 * at o + ow), and with track the indices of type it, the tap numbers (U8)
 * or the flat positions of the pair's first window row, iy0 * w (iy0 =
 * 2oy - 1 may be -1: only a valid tap can win). */
typedef struct out3x3s2 {
  const sp_geom *g; /* its output clamp */
  float *y;
  void *ind;
  simdpool_index_type it;
  size_t o;
  int32_t w, iy0w;
} out3x3s2;

/* One output row of a block from its three row folds, in order: the value,
 * and with track the winner's index (row steps kr: 3 taps or w elements).
 * A lane whose max is -inf may have taken a padding tap as its winner (it
 * is -inf too), so such lanes count as bad with track: the row pair is
 * redone with compare-and-select, which knows which taps are valid. */
SP_HOT void max3x3s2_out(const vf f[3], const vi kc[3], size_t ox0, size_t cnt,
                         const out3x3s2 *out, size_t o, int32_t rowbase,
                         int track, vm *bad) {
  if (!track) {
    store_lanes(out->y + o,
                yclamp(out->g, vf_max_x86(f[2], vf_max_x86(f[1], f[0]))), cnt);
    return;
  }
  const int u8 = out->it == SIMDPOOL_INDEX_U8;
  const int32_t kr = u8 ? 3 : out->w;
  vi tap;
  const vf m = max3_track(f[0], kc[0], f[1], vi_add(kc[1], vi_set1(kr)), f[2],
                          vi_add(kc[2], vi_set1(2 * kr)), &tap);
  *bad = vm_or(*bad, vm_and(vm_eq(m, vf_set1(-INFINITY)), vm_range(0, cnt)));
  store_lanes(out->y + o, yclamp(out->g, m), cnt);
  if (!u8) /* + the flat position of each lane's window corner */
    tap = vi_add(tap, vi_ramp(rowbase + 2 * (int32_t)ox0 - 1, 2));
  store_index(out->ind, out->it, o, tap, cnt);
}

/* One block of the row pair: outputs ox0 .. ox0 + cnt - 1 of output rows
 * oy and (two) oy + 1. */
SP_HOT void max3x3s2_block(const float *const row[5], size_t ox0, size_t cnt,
                           size_t w, size_t ow, int mode, int last, int two,
                           int track, vm *bad, const out3x3s2 *out) {
  const fold_lanes fl =
      mode >= FOLD_RIGHT ? fold_lanes_of(ox0, w) : (fold_lanes){{0}, {0}};
  vf f[5];
  vi kc[5];
  /* The first output row as soon as its three folds are there (fewer
   * vectors live at once), then the second. */
  for (size_t r = 0; r < 3; r++)
    f[r] = fold3x3s2(row[r], ox0, mode, &fl, last, bad, track, &kc[r]);
  max3x3s2_out(f, kc, ox0, cnt, out, out->o + ox0, out->iy0w, track, bad);
  if (two) {
    for (size_t r = 3; r < 5; r++)
      f[r] = fold3x3s2(row[r], ox0, mode, &fl, last, bad, track, &kc[r]);
    max3x3s2_out(f + 2, kc + 2, ox0, cnt, out, out->o + ow + ox0,
                 out->iy0w + 2 * out->w, track, bad);
  }
}

/* The blocks of a row pair: the first (FOLD_LEFT when its columns 0 ..
 * 2SP_VL lie inside), full blocks inside the input, and a last block that
 * ends at ow, overlapping its predecessor (writing the same values twice
 * is harmless; outputs are plain stores): FOLD_IN or FOLD_RIGHT. Rows of at
 * most SP_VL outputs use FOLD_EDGE blocks. */
SP_HOT void max3x3s2_nchw_direct(const sp_geom *g, const sp_io *io, int track) {
  const row_span in = interior_cols(g);
  const size_t ow = g->ow, w = g->w;
  /* A full block at ox0 reads columns 2ox0 - 1 .. 2ox0 + 2SP_VL - 1. Every
   * window holds an input column (plan.c), so 2(ow - 1) - 1 < w: a block
   * that ends before ow - 1 (ox0 + SP_VL < ow) ends inside the row, and
   * the first one does when ow > SP_VL. The last block, at ow - SP_VL, needs
   * column 2ow - 1: not there when the right padding holds it. */
  const int wide = ow > SP_VL;
  const int tail_in = 2 * ow - 1 < w;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const float *xp = io->x + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t ybase = sp_plane_of(g, n, c, g->oh, g->ow).base;
      for (size_t oy = 0; oy < g->oh; oy += 2) {
        const int two = oy + 1 < g->oh;
        const float *row[5]; /* input rows 2oy - 1 .. 2oy + 3, NULL outside */
        for (size_t r = 0; r < 5; r++) {
          const size_t iy1 = 2 * oy + r; /* the row plus one */
          row[r] = iy1 >= 1 && iy1 - 1 < g->h && (two || r < 3)
                       ? xp + (iy1 - 1) * g->w
                       : NULL;
        }
        const out3x3s2 out = {g,
                              io->y,
                              io->indices,
                              g->index_type,
                              ybase + oy * ow,
                              (int32_t)w,
                              (int32_t)(2 * oy * w) - (int32_t)w};
        vm bad = vm_range(0, 0);
        size_t ox0 = 0;
        if (wide) {
          max3x3s2_block(row, 0, SP_VL, w, ow, FOLD_LEFT, 0, two, track, &bad,
                         &out);
          for (ox0 = SP_VL; ox0 + SP_VL < ow; ox0 += SP_VL)
            max3x3s2_block(row, ox0, SP_VL, w, ow, FOLD_IN, 0, two, track, &bad,
                           &out);
          max3x3s2_block(row, ow - SP_VL, SP_VL, w, ow,
                         tail_in ? FOLD_IN : FOLD_RIGHT, 1, two, track, &bad,
                         &out);
        } else {
          for (; ox0 < ow; ox0 += SP_VL)
            max3x3s2_block(row, ox0, ow - ox0 < SP_VL ? ow - ox0 : SP_VL, w, ow,
                           FOLD_EDGE, 1, two, track, &bad, &out);
        }
        if (!vm_any(bad))
          continue;
        for (size_t r = 0; r <= (size_t)two; r++) {
          size_t ki0, ki1;
          sp_tap_range(oy + r, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
          max_row_nchw(g, io, xp, &in, oy + r, ki0, ki1, ybase + (oy + r) * ow,
                       track);
        }
      }
    }
  }
}

/* ================================================ NCHW small planes, lanes
 * over planes. Rows of a few outputs (7x7, 14x14 planes) leave most lanes
 * of an NCHW row block idle and every block a border block. A group of
 * SP_VL planes is instead transposed into a stack scratch laid out as one
 * NHWC image of SP_VL channels (lane l = plane p0 + l), the NHWC kernel
 * runs on it, and its results are transposed back. Each lane still sees
 * exactly its plane's taps in the reference's order, and flat indices and
 * U8 taps are the same in both layouts, so the bits are the NCHW ones. */
#define LOP_ELEMS 10240 /* floats of scratch: 40 KiB of stack */

/* Does a group fit: `big` arrays of plane size (h*w) and `small` of output
 * plane size (oh*ow), SP_VL lanes each? */
static inline int lop_fits(const sp_geom *g, size_t big, size_t small) {
  const size_t hw = g->h * g->w, ohw = g->oh * g->ow;
  return g->ow < 2 * SP_VL && hw <= LOP_ELEMS && ohw <= LOP_ELEMS &&
         (big * hw + small * ohw) * SP_VL <= LOP_ELEMS;
}

/* s[e * SP_VL + l] = src[l * plane + e] for e < ne, l < np (zero for the
 * lanes past np). */
SP_HOT void lop_gather(float *s, const float *src, size_t plane, size_t ne,
                       size_t np) {
  size_t e = 0;
  if (np == SP_VL)
    for (; e + SP_VL <= ne; e += SP_VL) {
      vf v[SP_VL];
      vf_load_transposed(src + e, plane, v);
      for (size_t j = 0; j < SP_VL; j++)
        vf_store(s + (e + j) * SP_VL, v[j]);
    }
  for (; e < ne; e++)
    for (size_t l = 0; l < SP_VL; l++)
      s[e * SP_VL + l] = l < np ? src[l * plane + e] : 0.0f;
}

/* The inverse: dst[l * plane + e] = s[e * SP_VL + l] for l < np. */
SP_HOT void lop_scatter(float *dst, const float *s, size_t plane, size_t ne,
                        size_t np) {
  size_t e = 0;
  if (np == SP_VL)
    for (; e + SP_VL <= ne; e += SP_VL) {
      vf v[SP_VL];
      vf_load_transposed(s + e * SP_VL, SP_VL, v);
      for (size_t j = 0; j < SP_VL; j++)
        vf_store(dst + j * plane + e, v[j]);
    }
  for (; e < ne; e++)
    for (size_t l = 0; l < np; l++)
      dst[l * plane + e] = s[e * SP_VL + l];
}

/* The group's scratch geometry: one NHWC image of SP_VL channels, indices
 * as int32 flat positions (I32, I64) or U8 taps. */
static inline sp_geom lop_geom(const sp_geom *g, int has_idx) {
  sp_geom gs = *g;
  gs.layout = SIMDPOOL_NHWC;
  gs.n = 1;
  gs.c = SP_VL;
  gs.xs = gs.ys = SP_VL; /* dense */
  if (has_idx && g->index_type != SIMDPOOL_INDEX_U8)
    gs.index_type = SIMDPOOL_INDEX_I32;
  return gs;
}

/* Indices between the scratch (is: int32 or U8 lanes) and the tensor, for
 * the np planes from p0. */
SP_HOT void lop_indices(const sp_geom *g, void *ind, void *is, size_t p0,
                        size_t np, int to_tensor) {
  const size_t ohw = g->oh * g->ow;
  const simdpool_index_type it = g->index_type;
  for (size_t l = 0; l < np; l++) {
    const size_t base = (p0 + l) * ohw;
    for (size_t o = 0; o < ohw; o++) {
      const size_t k = o * SP_VL + l;
      if (it == SIMDPOOL_INDEX_U8) {
        uint8_t *a = (uint8_t *)ind + base + o, *b = (uint8_t *)is + k;
        *(to_tensor ? a : b) = *(to_tensor ? b : a);
      } else if (to_tensor) {
        const int32_t v = ((const int32_t *)is)[k];
        if (it == SIMDPOOL_INDEX_I64)
          ((int64_t *)ind)[base + o] = v;
        else
          ((int32_t *)ind)[base + o] = v;
      } else {
        /* Checked before the kernel runs: valid positions fit in int32. */
        ((int32_t *)is)[k] = it == SIMDPOOL_INDEX_I64
                                 ? (int32_t)((const int64_t *)ind)[base + o]
                                 : ((const int32_t *)ind)[base + o];
      }
    }
  }
}

SP_HOT void maxpool_fwd_nchw_lop(const sp_geom *g, const sp_io *io, int track) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t hw = g->h * g->w, ohw = g->oh * g->ow, planes = g->n * g->c;
  float *xs = scratch, *ys = xs + hw * SP_VL;
  void *is = ys + ohw * SP_VL;
  const sp_geom gs = lop_geom(g, track);
  for (size_t p0 = 0; p0 < planes; p0 += SP_VL) {
    const size_t np = planes - p0 < SP_VL ? planes - p0 : SP_VL;
    lop_gather(xs, io->x + p0 * hw, hw, hw, np);
    const sp_io ios = {xs, ys, track ? is : NULL, NULL, NULL};
    maxpool_fwd_nhwc_body(&gs, &ios, track);
    lop_scatter(io->y + p0 * ohw, ys, ohw, ohw, np);
    if (track)
      lop_indices(g, io->indices, is, p0, np, 1);
  }
}

/* MAX backward from x (from_idx 0) or from indices. */
SP_HOT void maxpool_bwd_nchw_lop(const sp_geom *g, const sp_io *io,
                                 int from_idx) {
  _Alignas(64) float scratch[LOP_ELEMS];
  const size_t hw = g->h * g->w, ohw = g->oh * g->ow, planes = g->n * g->c;
  float *dxs = scratch, *dys = dxs + hw * SP_VL;
  float *xs = dys + ohw * SP_VL; /* from x; else the indices */
  const sp_geom gs = lop_geom(g, from_idx);
  for (size_t p0 = 0; p0 < planes; p0 += SP_VL) {
    const size_t np = planes - p0 < SP_VL ? planes - p0 : SP_VL;
    lop_gather(dys, io->dy + p0 * ohw, ohw, ohw, np);
    sp_io ios = {NULL, NULL, NULL, dys, dxs};
    if (from_idx) {
      /* Lanes past np keep index 0 with dy 0: a valid tap, adding +0. */
      memset(xs, 0, ohw * SP_VL * sizeof(int32_t));
      lop_indices(g, io->indices, xs, p0, np, 0);
      ios.indices = xs;
      SP_FN(sp_maxpool_bwd_idx_nhwc)(&gs, &ios);
    } else {
      lop_gather(xs, io->x + p0 * hw, hw, hw, np);
      ios.x = xs;
      SP_FN(sp_maxpool_bwd_nhwc)(&gs, &ios);
    }
    lop_scatter(io->dx + p0 * hw, dxs, hw, hw, np);
  }
}

SP_HOT void maxpool_fwd_nchw_body(const sp_geom *g, const sp_io *io,
                                  int track) {
  FOR_EACH_ROW(g, {
    max_row_nchw(g, io, io->x + px.base, &in_, oy, ki0, ki1, orow, track);
  });
}

void SP_FN(sp_maxpool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  const int track = g->index_type != SIMDPOOL_INDEX_NONE;
  if (lop_fits(g, 1, 2))
    maxpool_fwd_nchw_lop(g, io, track);
  else if (!track)
    maxpool_fwd_nchw_body(g, io, 0);
  else
    maxpool_fwd_nchw_body(g, io, 1);
}

/* SP_SHAPE_3X3S2P1 (the ResNet stem), every index type. */
void SP_FN(sp_maxpool_fwd_3x3s2p1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    max3x3s2_nchw_direct(g, io, 0);
  else
    max3x3s2_nchw_direct(g, io, 1);
}

/* sw_c: the column stride when it is a compile-time 1 or 2, else 0; k3: a
 * compile-time 3x3 kernel without dilation. cd: the AVG column factors
 * (cd->ok). */
SP_HOT void sumpool_fwd_nchw_padded(const sp_geom *g, const sp_io *io, int lp,
                                    const pad_plan *pp, const col_divs *cd,
                                    size_t sw_c, int k3) {
  const size_t sw = sw_c ? sw_c : g->sw;
  const size_t kh = k3 ? 3 : g->kh, kw = k3 ? 3 : g->kw;
  const size_t dh = k3 ? 1 : g->dh, dw = k3 ? 1 : g->dw;
  float scratch[PAD_SCRATCH + SP_VL] __attribute__((aligned(64)));
  const int kind = lp_kind(g->p);
  const float inv_p = lp ? 1.0f / g->p : 1.0f;
  const size_t rs = pp->rs, gs = g->sh * rs; /* between output rows */
  FOR_EACH_PAD_TILE(g, io, pp, scratch, vf_zero(), {
    for (size_t oy = oy0; oy < oy0 + by && oy < g->oh; oy += PAD_ROWS) {
      const size_t nr = g->oh - oy < PAD_ROWS ? g->oh - oy : PAD_ROWS;
      size_t ny[PAD_ROWS]; /* each row's counted kernel rows (AVG) */
      for (size_t r = 0; r < PAD_ROWS; r++)
        ny[r] = lp || r >= nr ? g->kh : sp_avg_taps_h(g, oy + r);
      const float *srow = scratch + (oy - oy0) * gs;
      for (size_t bx = 0; bx < tc; bx += SP_VL) {
        const size_t cnt = tc - bx < SP_VL ? tc - bx : SP_VL;
        vf acc[PAD_ROWS];
        for (size_t r = 0; r < PAD_ROWS; r++)
          acc[r] = vf_zero();
        for (size_t ki = 0; ki < kh; ki++) {
          const float *p = srow + ki * dh * rs + bx * sw;
          for (size_t kj = 0; kj < kw; kj++, p += dw) {
            for (size_t r = 0; r < PAD_ROWS; r++) {
              const vf v = load_cols(p + r * gs, sw, SP_VL, 1);
              acc[r] = vf_add(acc[r], lp ? lp_term_v(kind, g->p, v) : v);
            }
          }
        }
        const size_t bi = (ox0 + bx) / SP_VL, slot = lp ? 0 : col_slot(cd, bi);
        for (size_t r = 0; r < PAD_ROWS && r < nr; r++) {
          const vf y = lp ? lp_root_v(kind, inv_p, acc[r])
                          : col_div(g, cd, bi, slot, ny[r], acc[r]);
          store_lanes(yp + (oy + r) * g->ow + ox0 + bx,
                      yclamp(g, lp ? vcanon(y) : y), cnt);
        }
      }
    }
  });
}

/* AVG (lp = 0) and LP (lp = 1) forward, NCHW. */
SP_HOT void sumpool_fwd_nchw_body(const sp_geom *g, const sp_io *io, int lp) {
  pad_plan pp;
  col_divs cd;
  const row_span in = interior_cols(g);
  col_divs_init(g, &in, &cd);
  if (pad_plan_of(g, &pp) && (lp || cd.ok)) {
    const int k3 = g->kh == 3 && g->kw == 3 && g->dh == 1 && g->dw == 1;
    if (g->sw == 1 && k3)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 1, 1);
    else if (g->sw == 1)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 1, 0);
    else if (g->sw == 2 && k3)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 2, 1);
    else if (g->sw == 2)
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 2, 0);
    else
      sumpool_fwd_nchw_padded(g, io, lp, &pp, &cd, 0, 0);
    return;
  }
  /* Kernels too tall for the scratch, or (AVG) rows with too many border
   * blocks for col_divs: blocks read the input directly. */
  const int kind = lp_kind(g->p);
  const float inv_p = lp ? 1.0f / g->p : 1.0f;
  size_t row_ny = 0; /* the interior divisor's rows, 0: none yet */
  divisor inner = divisor_plain(vf_set1(1.0f));
  FOR_EACH_ROW(g, {
    const size_t ny = sp_avg_taps_h(g, oy);
    if (!lp && ny != row_ny) {
      inner = divisor_set1((float)(ny * g->kw));
      row_ny = ny;
    }
    for (size_t ox = 0, cnt; ox < g->ow; ox += cnt) {
      cnt = block_len(&in_, ox, g->ow);
      const block b = block_at(g, &in_, oy, ki0, ki1, ox, cnt);
      const vf acc = sum_block_nchw(g, io->x + px.base, &b, lp, kind);
      vf y;
      if (lp) {
        y = lp_root_v(kind, inv_p, acc);
      } else {
        /* Border blocks: per-lane divisors that change too often for r. */
        const divisor bd =
            b.border ? divisor_plain(cols_divisor(g, &in_, ny, ox, cnt))
                     : inner;
        y = avg_result(acc, &bd);
      }
      store_lanes(io->y + orow + ox, yclamp(g, lp ? vcanon(y) : y), cnt);
    }
  });
}

void SP_FN(sp_avgpool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  sumpool_fwd_nchw_body(g, io, 0);
}

void SP_FN(sp_lppool_fwd_nchw)(const sp_geom *g, const sp_io *io) {
  sumpool_fwd_nchw_body(g, io, 1);
}

/* ================================================================ 3x3/s1
 * AVG 3x3, stride 1 (Inception), any padding (SP_SHAPE_3X3S1). Each output
 * adds its nine taps in row-major order as the reference does, but from
 * the first tap on instead of from +0 (div_sum makes up for it), and
 * padding taps come in as +0, which changes no such sum. The divisors of a
 * call, d = ny * nx, are few: s3->dv[3 - ny][k] (k: the kind of block, NCHW;
 * 3 - nx, NHWC). */
typedef struct sums3 {
  const sp_geom *g; /* its output clamp */
  divisor dv[3][3];
  vm first[3], last[3]; /* NCHW: the lanes where tap kj is inside the row */
  /* NCHW MAX (nchw3x3s1): y and indices, the value of taps outside the
   * input (-inf; +0 for AVG), index tracking, the group's first output row
   * and the lanes to redo (NaN met, or with track a max of -inf). */
  float *y;
  void *ind;
  vf pad;
  int track;
  size_t oy;
  vm bad;
} sums3;

/* (float)nx per lane for the cnt outputs from ox0 (1 in the other lanes). */
static inline vf cols3_factor(const sp_geom *g, size_t ox0, size_t cnt) {
  float lane[SP_VL];
  for (size_t i = 0; i < SP_VL; i++)
    lane[i] = i < cnt ? (float)sp_avg_taps_w(g, ox0 + i) : 1.0f;
  return vf_load(lane);
}

/* The nine taps' sum of an output from its three rows' taps, in order. */
SP_HOT vf sum3x3(vf t00, vf t01, vf t02, vf t10, vf t11, vf t12, vf t20, vf t21,
                 vf t22) {
  vf a = vf_add(t00, t01);
  a = vf_add(a, t02);
  a = vf_add(a, t10);
  a = vf_add(a, t11);
  a = vf_add(a, t12);
  a = vf_add(a, t20);
  a = vf_add(a, t21);
  return vf_add(a, t22);
}

enum { P3_AVG, P3_MAX };

/* NCHW: output rows go in groups of ROWS3, lanes over output columns. A
 * group reads ROWS3 + 2 input rows; rows outside the input read a row of
 * the pad value (+0 for AVG, -inf for MAX). Blocks of SP_VL columns: the
 * first (kind 0) and the last, which ends at ow and overlaps its neighbour
 * (kind 2; outputs are stored, so twice is harmless), load only their taps
 * inside the row (masks made once per call), the others the pad value; the
 * ones between (kind 1) read inside it. AVG and MAX share all but the
 * block (nchw3x3s1_block). */
#define ROWS3 4
#define ZERO3 512 /* floats of the pad row: rows up to ZERO3 - SP_VL - 2 */

/* Taps kj = 0, 1, 2 of a block of input row p (at the block's first tap):
 * kind 0 and 2 masked (s3->first, s3->last; s3->pad elsewhere), kind 1
 * plain. */
SP_HOT void taps3_nchw(const sums3 *s3, const float *p, int kind, int method,
                       vf *t0, vf *t1, vf *t2) {
  if (kind == 1) {
    *t0 = vf_load(p);
    *t1 = vf_load(p + 1);
    *t2 = vf_load(p + 2);
  } else {
    const vm *m = kind == 0 ? s3->first : s3->last;
    *t0 = vf_load_mask(p, m[0]);
    *t1 = vf_load_mask(p + 1, m[1]);
    *t2 = vf_load_mask(p + 2, m[2]);
    if (method == P3_MAX) {
      *t0 = vf_select(m[0], s3->pad, *t0);
      *t1 = vf_select(m[1], s3->pad, *t1);
      *t2 = vf_select(m[2], s3->pad, *t2);
    }
  }
}

/* AVG: one block (outputs ox0 .. ox0 + cnt - 1, kind) of a group of nr
 * rows: p[i] is input row i of the group at the block's first tap, dv[r]
 * the divisors of row r's kind-0..2 blocks, y its first output. Each output
 * row reads one new input row; the other two come from the row above. */
SP_HOT void avg3x3s1_nchw_block(const sums3 *s3, const float *const p[],
                                const divisor *const dv[], size_t nr, int kind,
                                size_t cnt, size_t ow, float *y) {
  vf a0, a1, a2, b0, b1, b2, c0, c1, c2, sum[ROWS3];
  taps3_nchw(s3, p[0], kind, P3_AVG, &a0, &a1, &a2);
  taps3_nchw(s3, p[1], kind, P3_AVG, &b0, &b1, &b2);
  for (size_t r = 0; r < nr; r++) {
    taps3_nchw(s3, p[r + 2], kind, P3_AVG, &c0, &c1, &c2);
    sum[r] = sum3x3(a0, a1, a2, b0, b1, b2, c0, c1, c2);
    a0 = b0;
    a1 = b1;
    a2 = b2;
    b0 = c0;
    b1 = c1;
    b2 = c2;
  }
  /* All sums first: the rows' chains of additions overlap, and no
   * division waits in the middle of them. */
  for (size_t r = 0; r < nr; r++)
    store_lanes(y + r * ow, yclamp(s3->g, avg_result(sum[r], &dv[r][kind])),
                cnt);
}

/* MAX: the same block. The MAX step that keeps the first of equal maxima
 * is associative, so each input row's three taps fold once (value and
 * winning column) and an output row takes the first max of its three
 * rows' folds: the reference's bits, taps in scan order. Without NaN:
 * a lane that loads one is redone (s3->bad), as is with track a lane whose
 * max is -inf, whose winner may be a pad tap (a valid tap of -inf must
 * win). Index values: tap numbers (U8) or flat positions from the window
 * corner (oy + r - pt, ox - pl). */
SP_HOT void max3x3s1_nchw_block(sums3 *s3, const float *const p[], size_t nr,
                                int kind, size_t cnt, size_t ow, size_t o,
                                size_t ox0) {
  const sp_geom *g = s3->g;
  const int track = s3->track;
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  const int32_t kr = u8 ? 3 : (int32_t)g->w;
  vf f[ROWS3 + 2];
  vi kc[ROWS3 + 2];
  vm bad = s3->bad;
  for (size_t i = 0; i < nr + 2; i++) {
    vf t0, t1, t2;
    taps3_nchw(s3, p[i], kind, P3_MAX, &t0, &t1, &t2);
    bad = vm_or(bad, vm_or(vm_unord(t0, t1), vm_unord(t2, t2)));
    if (track)
      f[i] = max3_track(t0, vi_set1(0), t1, vi_set1(1), t2, vi_set1(2), &kc[i]);
    else
      f[i] = vf_max_x86(t2, vf_max_x86(t1, t0));
  }
  for (size_t r = 0; r < nr; r++) {
    const size_t orow = o + r * ow;
    if (!track) {
      store_lanes(s3->y + orow,
                  yclamp(g, vf_max_x86(f[r + 2], vf_max_x86(f[r + 1], f[r]))),
                  cnt);
      continue;
    }
    vi tap;
    const vf m =
        max3_track(f[r], kc[r], f[r + 1], vi_add(kc[r + 1], vi_set1(kr)),
                   f[r + 2], vi_add(kc[r + 2], vi_set1(2 * kr)), &tap);
    bad = vm_or(bad, vm_and(vm_eq(m, vf_set1(-INFINITY)), vm_range(0, cnt)));
    store_lanes(s3->y + orow, yclamp(g, m), cnt);
    if (!u8) /* + the flat position of each lane's window corner */
      tap = vi_add(tap, vi_ramp((int32_t)(s3->oy + r) * (int32_t)g->w -
                                    (int32_t)g->pt * (int32_t)g->w +
                                    (int32_t)ox0 - (int32_t)g->pl,
                                1));
    store_index(s3->ind, g->index_type, orow, tap, cnt);
  }
  s3->bad = bad;
}

/* One block of the method's. */
SP_HOT void nchw3x3s1_block(sums3 *s3, int method, const float *const p[],
                            const divisor *const dv[], size_t nr, int kind,
                            size_t cnt, size_t ow, size_t o, size_t ox0) {
  if (method == P3_AVG)
    avg3x3s1_nchw_block(s3, p, dv, nr, kind, cnt, ow, s3->y + o);
  else
    max3x3s1_nchw_block(s3, p, nr, kind, cnt, ow, o, ox0);
}

/* The blocks of a group of nr rows (p, dv as for the block; o the group's
 * first output). */
SP_HOT void nchw3x3s1_row(sums3 *s3, int method, const float *const p[],
                          const divisor *const dv[], size_t nr, size_t ow,
                          size_t mid_end, size_t extra, size_t o) {
  if (ow <= SP_VL) {
    nchw3x3s1_block(s3, method, p, dv, nr, 0, ow, ow, o, 0);
    return;
  }
  const float *q[ROWS3 + 2];
  nchw3x3s1_block(s3, method, p, dv, nr, 0, SP_VL, ow, o, 0);
  for (size_t ox0 = SP_VL; ox0 < mid_end; ox0 += SP_VL) {
    for (size_t i = 0; i < ROWS3 + 2; i++)
      q[i] = p[i] + ox0;
    nchw3x3s1_block(s3, method, q, dv, nr, 1, SP_VL, ow, o + ox0, ox0);
  }
  if (extra) {
    for (size_t i = 0; i < ROWS3 + 2; i++)
      q[i] = p[i] + extra;
    nchw3x3s1_block(s3, method, q, dv, nr, 1, SP_VL, ow, o + extra, extra);
  }
  for (size_t i = 0; i < ROWS3 + 2; i++)
    q[i] = p[i] + ow - SP_VL;
  nchw3x3s1_block(s3, method, q, dv, nr, 2, SP_VL, ow, o + ow - SP_VL,
                  ow - SP_VL);
}

/* method, track: compile-time constants (track: MAX with indices). */
SP_HOT void nchw3x3s1(const sp_geom *g, const sp_io *io, int method,
                      int track) {
  const row_span in = interior_cols(g);
  const size_t ow = g->ow, first = ow < SP_VL ? ow : SP_VL;
  const size_t olast = ow < SP_VL ? 0 : ow - SP_VL;
  sums3 s3;
  s3.g = g;
  s3.y = io->y;
  s3.ind = io->indices;
  s3.track = track;
  const float padv = method == P3_MAX ? -INFINITY : 0.0f;
  s3.pad = vf_set1(padv);
  for (size_t j = 0; j < 3 && method == P3_AVG; j++) {
    const vf ny = vf_set1((float)(3 - j));
    s3.dv[j][0] = divisor_of(vf_mul(ny, cols3_factor(g, 0, first)));
    s3.dv[j][1] = divisor_of(vf_mul(ny, vf_set1(3.0f)));
    s3.dv[j][2] = divisor_of(vf_mul(ny, cols3_factor(g, olast, first)));
  }
  for (size_t kj = 0; kj < 3; kj++) {
    size_t l0, l1;
    lane_range((ptrdiff_t)kj - (ptrdiff_t)g->pl, 1, g->w, first, &l0, &l1);
    s3.first[kj] = vm_range(l0, l1);
    lane_range((ptrdiff_t)(olast + kj) - (ptrdiff_t)g->pl, 1, g->w, first, &l0,
               &l1);
    s3.last[kj] = vm_range(l0, l1);
  }
  /* Middle blocks from SP_VL on are interior columns with their taps
   * inside the row (kind 1) up to mid_end. A right pad of 2 can leave a
   * column before the last block: the extra block, ending at in.hi, covers
   * it (ow <= 2 SP_VL needs none: the first and last blocks meet). */
  size_t mid_end = SP_VL;
  while (mid_end + SP_VL < ow && mid_end + SP_VL <= in.hi)
    mid_end += SP_VL;
  const size_t extra =
      ow > 2 * SP_VL && mid_end + SP_VL < ow ? in.hi - SP_VL : 0;
  float pad[ZERO3] __attribute__((aligned(64)));
  for (size_t i = 0; i < g->w + SP_VL + 2; i++)
    pad[i] = padv;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const float *xp = io->x + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t ybase = sp_plane_of(g, n, c, g->oh, g->ow).base;
      for (size_t oy = 0; oy < g->oh; oy += ROWS3) {
        const size_t nr = g->oh - oy < ROWS3 ? g->oh - oy : ROWS3;
        const float *p[ROWS3 + 2];
        for (size_t i = 0; i < ROWS3 + 2; i++) {
          const ptrdiff_t iy = (ptrdiff_t)(oy + i) - (ptrdiff_t)g->pt;
          p[i] = (iy >= 0 && (size_t)iy < g->h ? xp + (size_t)iy * g->w : pad) -
                 g->pl;
        }
        const divisor *dv[ROWS3];
        for (size_t r = 0; r < ROWS3; r++)
          dv[r] =
              s3.dv[r < nr && method == P3_AVG ? 3 - sp_avg_taps_h(g, oy + r)
                                               : 0];
        s3.oy = oy;
        s3.bad = vm_range(0, 0);
        const size_t o = ybase + oy * ow;
        if (nr == ROWS3)
          nchw3x3s1_row(&s3, method, p, dv, ROWS3, ow, mid_end, extra, o);
        else
          nchw3x3s1_row(&s3, method, p, dv, nr, ow, mid_end, extra, o);
        if (method != P3_MAX || !vm_any(s3.bad))
          continue;
        /* Some lane met a NaN or (track) a max of -inf: the general
         * compare-and-select redoes the group's rows. */
        for (size_t r = 0; r < nr; r++) {
          size_t ki0, ki1;
          sp_tap_range(oy + r, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
          max_row_nchw(g, io, xp, &in, oy + r, ki0, ki1, o + r * ow, track);
        }
      }
    }
  }
}

void SP_FN(sp_avgpool_fwd_3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->w + SP_VL + 2 <= ZERO3)
    nchw3x3s1(g, io, P3_AVG, 0);
  else
    sumpool_fwd_nchw_body(g, io, 0);
}

void SP_FN(sp_maxpool_fwd_3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  const int track = g->index_type != SIMDPOOL_INDEX_NONE;
  /* Rows of at most half a vector (7x7 planes on AVX-512) leave most lanes
   * idle: lanes over planes do better there (GoogLeNet's 832x7x7: 76 us
   * against 110). */
  if (g->w + SP_VL + 2 > ZERO3 || (2 * g->ow <= SP_VL && lop_fits(g, 1, 2)))
    SP_FN(sp_maxpool_fwd_nchw)(g, io);
  else if (track)
    nchw3x3s1(g, io, P3_MAX, 1);
  else
    nchw3x3s1(g, io, P3_MAX, 0);
}

/* NHWC: tap k of a window column at input column ix (+0 outside the input)
 * for the cn channels from c. */
SP_HOT vf tap3_nhwc(const sp_geom *g, const float *const r[3], size_t k,
                    ptrdiff_t ix, size_t c, size_t cn) {
  return r[k] && ix >= 0 && (size_t)ix < g->w
             ? load_lanes(r[k] + (size_t)ix * g->xs + c, cn)
             : vf_zero();
}

/* Output columns [ox, end) of row oy of one batch (input rows r[], NULL
 * outside) for the cn channels from c, with the window's first two columns
 * in a*, b*: windows slide along the row, each step loading one new column
 * of three taps. `in`: every window column inside the input and every row
 * there (then dv is the interior's divisor), a compile-time constant. */
SP_HOT void avg3x3s1_nhwc_run(const sp_geom *g, const divisor *dv,
                              const float *const r[3], size_t ox, size_t end,
                              size_t c, size_t cn, int in, vf *a0, vf *a1,
                              vf *a2, vf *b0, vf *b1, vf *b2, float *yrow) {
  const size_t C = g->xs, YS = g->ys; /* x and y pixel steps */
  if (in && ox < end) {
    /* Software-pipelined: each step sums its window, then divides the one
     * before, whose sum is ready, so divisions do not wait on additions. */
    const float *p0 =
        r[0] + ((size_t)((ptrdiff_t)ox - (ptrdiff_t)g->pl) + 2) * C + c;
    const float *p1 = p0 + (r[1] - r[0]), *p2 = p0 + (r[2] - r[0]);
    float *y = yrow + ox * YS + c;
    vf t0 = load_lanes(p0, cn), t1 = load_lanes(p1, cn),
       t2 = load_lanes(p2, cn);
    vf prev = sum3x3(*a0, *b0, t0, *a1, *b1, t1, *a2, *b2, t2);
    for (ox++; ox < end; ox++) {
      *a0 = *b0;
      *a1 = *b1;
      *a2 = *b2;
      *b0 = t0;
      *b1 = t1;
      *b2 = t2;
      p0 += C;
      p1 += C;
      p2 += C;
      t0 = load_lanes(p0, cn);
      t1 = load_lanes(p1, cn);
      t2 = load_lanes(p2, cn);
      const vf sum = sum3x3(*a0, *b0, t0, *a1, *b1, t1, *a2, *b2, t2);
      store_lanes(y, yclamp(g, avg_result(prev, dv)), cn);
      prev = sum;
      y += YS;
    }
    store_lanes(y, yclamp(g, avg_result(prev, dv)), cn);
    *a0 = *b0;
    *a1 = *b1;
    *a2 = *b2;
    *b0 = t0;
    *b1 = t1;
    *b2 = t2;
    return;
  }
  for (; ox < end; ox++) {
    const ptrdiff_t ix = (ptrdiff_t)ox - (ptrdiff_t)g->pl + 2;
    vf t0, t1, t2;
    if (in) {
      const size_t e = (size_t)ix * C + c;
      t0 = load_lanes(r[0] + e, cn);
      t1 = load_lanes(r[1] + e, cn);
      t2 = load_lanes(r[2] + e, cn);
    } else {
      t0 = tap3_nhwc(g, r, 0, ix, c, cn);
      t1 = tap3_nhwc(g, r, 1, ix, c, cn);
      t2 = tap3_nhwc(g, r, 2, ix, c, cn);
    }
    const vf sum = sum3x3(*a0, *b0, t0, *a1, *b1, t1, *a2, *b2, t2);
    const divisor *v = in ? dv : &dv[3 - sp_avg_taps_w(g, ox)];
    store_lanes(yrow + ox * YS + c, yclamp(g, avg_result(sum, v)), cn);
    *a0 = *b0;
    *a1 = *b1;
    *a2 = *b2;
    *b0 = t0;
    *b1 = t1;
    *b2 = t2;
  }
}

/* Output row oy (input rows r[], ny counted) for the cn channels from c. */
SP_HOT void avg3x3s1_nhwc_row(const sp_geom *g, const sums3 *s3,
                              const float *const r[3], size_t ny,
                              const row_span *in, size_t c, size_t cn,
                              float *yrow) {
  const ptrdiff_t pl = (ptrdiff_t)g->pl;
  vf a0 = tap3_nhwc(g, r, 0, -pl, c, cn),
     b0 = tap3_nhwc(g, r, 0, 1 - pl, c, cn);
  vf a1 = tap3_nhwc(g, r, 1, -pl, c, cn),
     b1 = tap3_nhwc(g, r, 1, 1 - pl, c, cn);
  vf a2 = tap3_nhwc(g, r, 2, -pl, c, cn),
     b2 = tap3_nhwc(g, r, 2, 1 - pl, c, cn);
  const divisor *dv = s3->dv[3 - ny];
  if (r[0] && r[1] && r[2]) {
    avg3x3s1_nhwc_run(g, dv, r, 0, in->lo, c, cn, 0, &a0, &a1, &a2, &b0, &b1,
                      &b2, yrow);
    avg3x3s1_nhwc_run(g, dv, r, in->lo, in->hi, c, cn, 1, &a0, &a1, &a2, &b0,
                      &b1, &b2, yrow);
    avg3x3s1_nhwc_run(g, dv, r, in->hi, g->ow, c, cn, 0, &a0, &a1, &a2, &b0,
                      &b1, &b2, yrow);
  } else {
    avg3x3s1_nhwc_run(g, dv, r, 0, g->ow, c, cn, 0, &a0, &a1, &a2, &b0, &b1,
                      &b2, yrow);
  }
}

static inline void avg3x3s1_nhwc(const sp_geom *g, const sp_io *io) {
  const row_span in = interior_cols(g);
  sums3 s3;
  s3.g = g;
  for (size_t j = 0; j < 3; j++)
    for (size_t k = 0; k < 3; k++)
      s3.dv[j][k] = divisor_set1((float)((3 - j) * (3 - k)));
  const size_t C = g->c, XS = g->xs;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      const float *r[3];
      for (size_t i = 0; i < 3; i++) {
        const ptrdiff_t iy = (ptrdiff_t)(oy + i) - (ptrdiff_t)g->pt;
        r[i] =
            iy >= 0 && (size_t)iy < g->h ? xn + (size_t)iy * g->w * XS : NULL;
      }
      const size_t ny = sp_avg_taps_h(g, oy);
      float *yrow = io->y + (n * g->oh + oy) * g->ow * g->ys;
      size_t c = 0;
      for (; c + SP_VL <= C; c += SP_VL)
        avg3x3s1_nhwc_row(g, &s3, r, ny, &in, c, SP_VL, yrow);
      if (c < C)
        avg3x3s1_nhwc_row(g, &s3, r, ny, &in, c, C - c, yrow);
    }
  }
}

void SP_FN(sp_avgpool_fwd_3x3s1_nhwc)(const sp_geom *g, const sp_io *io) {
  avg3x3s1_nhwc(g, io);
}

/* ---------------------------------------------------------- NCHW backward
 * Each dx element must receive its contributions in output order: rows go
 * in order, and within a row outputs left to right.
 * MAX: a block's winners come from one vector pass (or from the indices);
 * each lane then adds its dy to its one winner, lanes in order, so even
 * overlapping windows accumulate exactly as the reference does.
 * AVG, LP: when windows do not overlap along the row (stride_w >= dilated
 * kernel width) the lanes of a block touch disjoint dx and add as vectors;
 * overlapping rows go one output at a time. */

enum { BWD_MAX, BWD_MAX_IDX, BWD_AVG, BWD_LP };

/* The contribution of one output, scalar, in the reference's order. */
static inline void bwd_one_output(const sp_geom *g, const sp_io *io, int mode,
                                  sp_plane px, size_t o, size_t oy, size_t ox) {
  const float dy = io->dy[o];
  if (mode == BWD_MAX || mode == BWD_MAX_IDX) {
    size_t flat;
    if (mode == BWD_MAX) {
      flat = sp_max_window(g, io->x, px, oy, ox).flat;
    } else if (g->index_type == SIMDPOOL_INDEX_U8) {
      const size_t tap = ((const uint8_t *)io->indices)[o];
      flat = (size_t)sp_tap_pos(oy, g->sh, g->pt, tap / g->kw, g->dh) * g->w +
             (size_t)sp_tap_pos(ox, g->sw, g->pl, tap % g->kw, g->dw);
    } else {
      flat = sp_load_flat_index(io->indices, g->index_type, o);
    }
    io->dx[px.base + flat] += dy;
    return;
  }
  float gr = 0.0f;
  const int kind = lp_kind(g->p);
  if (mode == BWD_AVG) {
    gr = dy / sp_avg_divisor(g, oy, ox);
  } else if (kind == LP_ONE) {
    gr = dy;
  } else {
    const float y = sp_lp_window(g, io->x, px, oy, ox);
    gr = y == 0.0f        ? 0.0f
         : kind == LP_TWO ? dy / y
                          : dy * sp_powf(y, 1.0f - g->p);
  }
  size_t ki0, ki1, kj0, kj1;
  sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
  sp_tap_range(ox, g->sw, g->pl, g->kw, g->dw, g->w, &kj0, &kj1);
  for (size_t ki = ki0; ki < ki1; ki++) {
    for (size_t kj = kj0; kj < kj1; kj++) {
      const size_t e = px.base +
                       (size_t)sp_tap_pos(oy, g->sh, g->pt, ki, g->dh) * g->w +
                       (size_t)sp_tap_pos(ox, g->sw, g->pl, kj, g->dw);
      float q = gr;
      if (mode == BWD_LP) {
        const float v = io->x[e];
        q = kind == LP_ONE ? gr * sp_lp_sign(v)
            : kind == LP_TWO
                ? gr * v
                : (gr * sp_lp_sign(v)) * sp_powf(fabsf(v), g->p - 1.0f);
      }
      io->dx[e] += q;
    }
  }
}

/* MAX: winners of a block as flat positions, then one add per lane. */
/* U8 backward: a tap number's offset from its window's top-left position,
 * (t / kernel_w) * dilation_h * w + (t % kernel_w) * dilation_w, built once
 * per call so the lanes need no division. */
typedef struct tap_offsets {
  int32_t off[256];
} tap_offsets;

static inline void tap_offsets_init(const sp_geom *g, tap_offsets *t) {
  const size_t taps = g->index_type == SIMDPOOL_INDEX_U8 ? g->kh * g->kw : 0;
  for (size_t i = 0, ki = 0, kj = 0; i < taps; i++) {
    t->off[i] = (int32_t)(ki * g->dh * g->w + kj * g->dw);
    if (++kj == g->kw) {
      kj = 0;
      ki++;
    }
  }
}

/* MAX: winners of a block as flat positions, then one add per lane. */
static inline void bwd_max_block_nchw(const sp_geom *g, const sp_io *io,
                                      int mode, sp_plane px, size_t orow,
                                      const block *b, const tap_offsets *taps) {
  const float *dy = io->dy + orow + b->ox0;
  float *dxp = io->dx + px.base;
  const size_t o = orow + b->ox0;
  /* Indices straight from memory: a vector of positions stored to the stack
   * and reloaded lane by lane stalls on the store forwarding. */
  if (mode == BWD_MAX_IDX && g->index_type != SIMDPOOL_INDEX_U8) {
    for (size_t i = 0; i < b->cnt; i++)
      dxp[sp_load_flat_index(io->indices, g->index_type, o + i)] += dy[i];
  } else if (mode == BWD_MAX_IDX) {
    /* U8: lane i's tap offset from the top-left of its window (which may
     * lie in the padding). */
    const uint8_t *tap = (const uint8_t *)io->indices + o;
    const ptrdiff_t corner =
        ((ptrdiff_t)(b->oy * g->sh) - (ptrdiff_t)g->pt) * (ptrdiff_t)g->w +
        (ptrdiff_t)(b->ox0 * g->sw) - (ptrdiff_t)g->pl;
    for (size_t i = 0; i < b->cnt; i++)
      dxp[corner + (ptrdiff_t)(i * g->sw) + taps->off[tap[i]]] += dy[i];
  } else {
    int32_t flat[SP_VL];
    vi t;
    max_block_nchw(g, io->x + px.base, b, 1, SIMDPOOL_INDEX_I32, &t);
    vi_store_i32(flat, t);
    for (size_t i = 0; i < b->cnt; i++)
      dxp[flat[i]] += dy[i];
  }
}

/* AVG and LP: a block whose lanes touch disjoint dx (non-overlapping rows);
 * AVG divides by *dv, the divisor of the row's interior columns. */
static inline void bwd_sum_block_nchw(const sp_geom *g, const sp_io *io,
                                      int mode, sp_plane px, size_t orow,
                                      const block *b, const divisor *dv) {
  const float *xp = mode == BWD_LP ? io->x + px.base : NULL;
  float *dxp = io->dx + px.base;
  const vf dy = load_lanes(io->dy + orow + b->ox0, b->cnt);
  const int kind = lp_kind(g->p);
  vf gr = dy;
  if (mode == BWD_AVG) {
    gr = div_by(dy, dv);
  } else if (kind != LP_ONE) {
    const vf acc = sum_block_nchw(g, xp, b, 1, kind);
    gr = lp_grad_v(kind, g->p, dy, lp_root_v(kind, 1.0f / g->p, acc));
  }
  for (size_t ki = b->ki0; ki < b->ki1; ki++) {
    const size_t iy = b->oy * g->sh + ki * g->dh - g->pt;
    for (size_t kj = 0; kj < g->kw; kj++) {
      const size_t e = (size_t)((ptrdiff_t)(iy * g->w) + block_col(g, b, kj));
      vf q = gr;
      if (mode == BWD_LP)
        q = lp_share_v(kind, g->p, gr,
                       load_cols(xp + e, g->sw, b->cnt, b->pairs));
      add_cols(dxp + e, g->sw, q, b->cnt);
    }
  }
}

SP_HOT void bwd_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  /* dx rows are zeroed just before the first output row whose windows
   * reach them (and the rest at the plane's end), so the zeros are still
   * in cache when the adds come, instead of a separate pass over dx. */
  size_t zeroed = 0; /* rows of the current plane zeroed so far */
  tap_offsets taps;
  tap_offsets_init(g, &taps);
  const size_t ew = g->dw * (g->kw - 1) + 1;
  const int is_max = mode == BWD_MAX || mode == BWD_MAX_IDX;
  const int disjoint = g->sw >= ew; /* AVG/LP rows vectorise only then */
  size_t row_d = 0; /* AVG: the divisor of interior columns, 0: none yet */
  divisor inner = divisor_plain(vf_set1(1.0f));
  FOR_EACH_ROW(g, {
    if (oy == 0)
      zeroed = 0;
    const size_t last = oy * g->sh + (ki1 - 1) * g->dh - g->pt + 1;
    if (last > zeroed) {
      zero_tensor(io->dx + px.base + zeroed * g->w, (last - zeroed) * g->w);
      zeroed = last;
    }
    size_t ox = 0;
    while (ox < g->ow) {
      if (is_max) {
        const size_t cnt = block_len(&in_, ox, g->ow);
        const block b = block_at(g, &in_, oy, ki0, ki1, ox, cnt);
        bwd_max_block_nchw(g, io, mode, px, orow, &b, &taps);
        ox += cnt;
      } else if (disjoint && ox >= in_.lo && ox < in_.hi) {
        const size_t cnt = in_.hi - ox < SP_VL ? in_.hi - ox : SP_VL;
        const block b = block_at(g, &in_, oy, ki0, ki1, ox, cnt);
        const size_t d = mode == BWD_AVG ? sp_avg_taps_h(g, oy) * g->kw : 0;
        if (d != row_d) {
          inner = divisor_set1((float)d);
          row_d = d;
        }
        bwd_sum_block_nchw(g, io, mode, px, orow, &b, &inner);
        ox += cnt;
      } else {
        bwd_one_output(g, io, mode, px, orow + ox, oy, ox);
        ox++;
      }
    }
    if (oy + 1 == g->oh && zeroed < g->h)
      zero_tensor(io->dx + px.base + zeroed * g->w, (g->h - zeroed) * g->w);
  });
  /* LP can make a NaN from finite inputs (0 * inf); MAX and AVG cannot. */
  if (mode == BWD_LP || !all_finite(io->dy, out_count(g)))
    canonicalize(io->dx, in_count(g));
}

/* MAX backward from flat I32/I64 indices by scatter, NCHW, any window:
 * plane by plane, output row by output row, dx[winner] += dy in output
 * order, the reference's own loop. Each dx row is zeroed just before the
 * first output row whose windows reach it, so the zeros are in cache when
 * the adds come (no separate pass over dx), and a dx row hears from at most
 * kernel_h output rows, so the adds hit lines still in L1. One index load,
 * two loads and a store per output: faster than the vector compare-and-
 * select of the 3x3/s2 kernel (bwd3x3s2_row) by 1.2-1.35x for I64 and I32
 * (AVX2, Zen), where the U8 keys, cheaper to compare, keep it. The indices
 * were checked by dispatch. i64: the index type, a compile-time constant. */
SP_HOT void bwd_scatter_nchw(const sp_geom *g, const sp_io *io, int i64) {
  const size_t hw = g->h * g->w, ohw = g->oh * g->ow;
  for (size_t p = 0; p < g->n * g->c; p++) {
    float *d = io->dx + p * hw;
    const float *dy = io->dy + p * ohw;
    size_t zeroed = 0; /* dx rows of this plane zeroed so far */
    for (size_t oy = 0; oy < g->oh; oy++) {
      size_t ki0, ki1;
      sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
      const size_t last = oy * g->sh + (ki1 - 1) * g->dh - g->pt + 1;
      if (last > zeroed) {
        zero_tensor(d + zeroed * g->w, (last - zeroed) * g->w);
        zeroed = last;
      }
      const float *gr = dy + oy * g->ow;
      const size_t o = p * ohw + oy * g->ow;
      if (i64) {
        const int64_t *ir = (const int64_t *)io->indices + o;
        for (size_t ox = 0; ox < g->ow; ox++)
          d[ir[ox]] += gr[ox];
      } else {
        const int32_t *ir = (const int32_t *)io->indices + o;
        for (size_t ox = 0; ox < g->ow; ox++)
          d[ir[ox]] += gr[ox];
      }
    }
    if (zeroed < g->h)
      zero_tensor(d + zeroed * g->w, (g->h - zeroed) * g->w);
    if (!all_finite(dy, ohw))
      canonicalize(d, hw);
  }
}

/* bwd_scatter_nchw on the plan's flat index type (I32 or I64). */
SP_HOT void bwd_scatter_nchw_flat(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_I64)
    bwd_scatter_nchw(g, io, 1);
  else
    bwd_scatter_nchw(g, io, 0);
}

/* AVG backward, NCHW, overlapping rows with stride 1 along them (the
 * Inception 3x3/s1/pad 1), undilated: gathered. Each output row's shares
 * dy / divisor are computed once, as vectors, into a ring of the output rows
 * that cover the current input row (each row padded with +0.0f where an
 * output column falls outside [0, ow)); then each dx vector sums, in output
 * order, the shares of the outputs covering its lanes and is stored once: no
 * zeroing pass and no per-tap read-modify-write of dx. Lane ix of output row
 * oy adds the shares of columns ox = ix + pad_left - kj, kj from kernel_w - 1
 * down to 0 (ascending ox). The reference adds the same shares in the same
 * order to a +0.0f; a padding +0.0f changes no bits, the sum never being
 * -0.0f. The divisor of (oy, ox) is taps_h(oy) * taps_w(ox), exact in
 * float (at most kernel_h * kernel_w <= 2^24). */
#define AVG_GATHER_SCRATCH 8192 /* floats: 32 KiB of stack */
#define AVG_GATHER_ROWS 4

typedef struct gather_ring {
  size_t rows, lead, len; /* slots, padding before ox = 0, floats per slot */
} gather_ring;

/* The ring of a stride-1-along-rows gather (AVG and MAX backward): slots
 * of `len` elements for the output rows that cover AVG_GATHER_ROWS
 * consecutive input rows; `per` slots' worth of other scratch must fit
 * beside them in `cap` elements. */
static inline int gather_ring_of(const sp_geom *g, gather_ring *r, size_t per,
                                 size_t cap) {
  if (g->sw != 1 || g->dh != 1 || g->dw != 1 || g->kw < 2)
    return 0;
  r->rows = (g->kh + AVG_GATHER_ROWS - 2) / g->sh + 1;
  r->lead = g->kw - 1;
  /* Lane ix of a block starting below w reads slot index ix + pl - kj +
   * lead; the shares sit at [lead, lead + ow). */
  const size_t need = g->w + SP_VL + g->pl + r->lead;
  const size_t have = r->lead + g->ow + SP_VL;
  r->len = round_up(need > have ? need : have, SP_VL);
  return (r->rows + per) * r->len <= cap;
}

static inline int avg_ring_of(const sp_geom *g, gather_ring *r) {
  return g->kh * g->kw <= ((size_t)1 << 24) &&
         gather_ring_of(g, r, 1, AVG_GATHER_SCRATCH);
}

/* The next group of a ring gather: up to AVG_GATHER_ROWS input rows from iy
 * that have the same number m of covering output rows (the first of them
 * in lo[]), the cover *rv advanced to its last row. Returns its rows. */
SP_HOT size_t gather_group(const sp_geom *g, size_t iy, cover *rv, size_t *m,
                           size_t lo[AVG_GATHER_ROWS]) {
  size_t rows = 0;
  for (; rows < AVG_GATHER_ROWS && iy + rows < g->h; rows++) {
    cover cv = *rv;
    cover_advance(&cv, iy + rows, g->pt, g->sh, g->kh, 1, g->oh);
    if (rows && cv.hi - cv.lo != *m)
      break;
    *m = cv.hi - cv.lo;
    *rv = cv;
    lo[rows] = cv.lo;
  }
  return rows;
}

/* The shares of output row oy into slot s: dy / (taps_h(oy) * taps_w). */
SP_HOT void avg_share_row(const sp_geom *g, const float *dy, const float *tw,
                          float *s, size_t oy) {
  const vf th = vf_set1((float)sp_avg_taps_h(g, oy));
  for (size_t ox = 0; ox < g->ow; ox += SP_VL) {
    const size_t cnt = g->ow - ox < SP_VL ? g->ow - ox : SP_VL;
    const vf d = vf_mul(th, vf_load(tw + ox));
    store_lanes(s + ox, vf_div(load_lanes(dy + ox, cnt), d), cnt);
  }
}

/* Lanes [ix, ix + cnt) of R dx rows from D (row stride W), each the sum of
 * its m covering share rows S[r][0..m) (slot pointers), R independent chains
 * to hide the adds' latency. Full-width loads: the slots have SP_VL floats of
 * slack. */
#define AVG_GATHER_BLOCK(S, D, R)                                              \
  do {                                                                         \
    vf acc[R];                                                                 \
    for (int r_ = 0; r_ < (R); r_++)                                           \
      acc[r_] = vf_zero();                                                     \
    for (size_t t_ = 0; t_ < m; t_++)                                          \
      for (size_t kj = g->kw; kj-- > 0;)                                       \
        for (int r_ = 0; r_ < (R); r_++)                                       \
          acc[r_] = vf_add(acc[r_], vf_load((S)[r_][t_] + ix - kj));           \
    for (int r_ = 0; r_ < (R); r_++)                                           \
      store_lanes((D) + (size_t)r_ * W + ix, acc[r_], cnt);                    \
  } while (0)

SP_HOT void avgpool_bwd_nchw_gather(const sp_geom *g, const sp_io *io,
                                    const gather_ring *r) {
  _Alignas(64) float scratch[AVG_GATHER_SCRATCH];
  float *tw = scratch + r->rows * r->len;
  memset(scratch, 0, r->rows * r->len * sizeof *scratch);
  for (size_t i = 0; i < r->len; i++)
    tw[i] = i < g->ow ? (float)sp_avg_taps_w(g, i) : 1.0f;
  const size_t W = g->w;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      const float *dyp = io->dy + sp_plane_of(g, n, c, g->oh, g->ow).base;
      cover rv = {0, 0};
      size_t filled = 0; /* output rows [0, filled) have had their shares */
      size_t iy = 0;
      while (iy < g->h) {
        const float *s[AVG_GATHER_ROWS][GATHER_MAX];
        size_t lo[AVG_GATHER_ROWS], m = 0;
        const size_t rows = gather_group(g, iy, &rv, &m, lo);
        for (; filled < rv.hi; filled++)
          avg_share_row(g, dyp + filled * g->ow, tw,
                        scratch + (filled % r->rows) * r->len + r->lead,
                        filled);
        for (size_t r0 = 0; r0 < rows; r0++)
          for (size_t t = 0; t < m; t++)
            s[r0][t] =
                scratch + ((lo[r0] + t) % r->rows) * r->len + r->lead + g->pl;
        for (size_t ix = 0; ix < W; ix += SP_VL) {
          const size_t cnt = W - ix < SP_VL ? W - ix : SP_VL;
          if (rows == AVG_GATHER_ROWS) {
            AVG_GATHER_BLOCK(s, dxp, AVG_GATHER_ROWS);
          } else {
            for (size_t r0 = 0; r0 < rows; r0++)
              AVG_GATHER_BLOCK(s + r0, dxp + r0 * W, 1);
          }
        }
        dxp += rows * W;
        iy += rows;
      }
    }
  }
  if (!all_finite(io->dy, out_count(g)))
    canonicalize(io->dx, in_count(g));
}

void SP_FN(sp_avgpool_bwd_nchw)(const sp_geom *g, const sp_io *io) {
  gather_ring r;
  if (avg_ring_of(g, &r)) /* stride 1 along overlapping rows */
    avgpool_bwd_nchw_gather(g, io, &r);
  else
    bwd_nchw_body(g, io, BWD_AVG);
}
void SP_FN(sp_lppool_bwd_nchw)(const sp_geom *g, const sp_io *io) {
  bwd_nchw_body(g, io, BWD_LP);
}

/* MAX backward, NCHW, stride 1 along rows, undilated, gathered on the AVG
 * gather's ring: each output row's keys (its indices as int32 lanes: flat
 * positions, or U8 tap numbers; -1 outside [0, ow)) and its dy go into a
 * slot once; then each dx vector sums, in output order (covering rows
 * ascending, then columns ascending), the dy of the covering outputs whose
 * key names it, and is stored once: no zeroing pass, no read-modify-write,
 * every index type through the same body. A key names lane ix of dx row iy
 * when it is iy * w + ix (flat) or the tap (iy + pt - oy * sh) * kw + kj
 * that output's window has there (U8). A lane whose key names another
 * pixel adds +0.0f, which changes no bits (dx is never -0.0f), so each sum
 * is the reference's. */
#define MAX_GATHER_SCRATCH 4096 /* keys and dy each: 32 KiB of stack */

static inline int max_ring_of(const sp_geom *g, gather_ring *r) {
  /* Flat keys and lane positions (up to h * w + SP_VL) as int32. */
  return (g->index_type == SIMDPOOL_INDEX_U8 ||
          g->h * g->w <= (size_t)INT32_MAX - SP_VL) &&
         gather_ring_of(g, r, 0, MAX_GATHER_SCRATCH);
}

/* Output row orow's keys and dy (cnt-limited: the slot's padding stays). */
SP_HOT void max_key_row(const sp_geom *g, const sp_io *io,
                        simdpool_index_type it, size_t orow, int32_t *k,
                        float *d) {
  for (size_t ox = 0; ox < g->ow; ox += SP_VL) {
    const size_t cnt = g->ow - ox < SP_VL ? g->ow - ox : SP_VL;
    store_index(k, SIMDPOOL_INDEX_I32, ox,
                load_index(io->indices, it, orow + ox, cnt), cnt);
    store_lanes(d + ox, load_lanes(io->dy + orow + ox, cnt), cnt);
  }
}

/* Lanes [ix, ix + cnt) of R dx rows from row Y (dxp, row stride W): row r_
 * sums the m covering slots at offsets E[r_][0..m) (already shifted by
 * lead + pl) whose kernel rows are KY[r_][0..m); R independent chains. */
#define MAX_GATHER_BLOCK(E, KY, Y, R)                                          \
  do {                                                                         \
    vf acc[R];                                                                 \
    vi pos[R];                                                                 \
    for (int r_ = 0; r_ < (R); r_++) {                                         \
      acc[r_] = z;                                                             \
      pos[r_] = vi_ramp((int32_t)(((Y) + (size_t)r_) * W + ix), 1);            \
    }                                                                          \
    for (size_t t_ = 0; t_ < m; t_++)                                          \
      for (size_t kj = KW; kj-- > 0;)                                          \
        for (int r_ = 0; r_ < (R); r_++) {                                     \
          const size_t e_ = (E)[r_][t_] + ix - kj;                             \
          const vi tg_ =                                                       \
              u8 ? vi_set1((int32_t)((KY)[r_][t_] * KW + kj)) : pos[r_];       \
          acc[r_] =                                                            \
              vf_add(acc[r_], vf_select(vm_eq_i(vi_load_i32(keys + e_), tg_),  \
                                        z, vf_load(dys + e_)));                \
        }                                                                      \
    for (int r_ = 0; r_ < (R); r_++)                                           \
      store_lanes(dxp + ((Y) + (size_t)r_) * W + ix, acc[r_], cnt);            \
  } while (0)

/* it: the key type (U8 or flat), a compile-time constant. */
SP_HOT void maxpool_bwd_nchw_gather(const sp_geom *g, const sp_io *io,
                                    const gather_ring *r,
                                    simdpool_index_type it) {
  _Alignas(64) int32_t keys[MAX_GATHER_SCRATCH];
  _Alignas(64) float dys[MAX_GATHER_SCRATCH];
  for (size_t i = 0; i < r->rows * r->len; i++) {
    keys[i] = -1;
    dys[i] = 0.0f;
  }
  const size_t W = g->w, KW = g->kw;
  const int u8 = it == SIMDPOOL_INDEX_U8;
  const vf z = vf_zero();
  int finite = 1; /* every dy so far */
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t obase = sp_plane_of(g, n, c, g->oh, g->ow).base;
      cover rv = {0, 0};
      size_t filled = 0; /* output rows [0, filled) are in the ring */
      size_t iy = 0;
      while (iy < g->h) {
        size_t e[AVG_GATHER_ROWS][GATHER_MAX], ky[AVG_GATHER_ROWS][GATHER_MAX];
        size_t lo[AVG_GATHER_ROWS], m = 0;
        const size_t rows = gather_group(g, iy, &rv, &m, lo);
        for (; filled < rv.hi; filled++) {
          const size_t sl = (filled % r->rows) * r->len + r->lead;
          max_key_row(g, io, it, obase + filled * g->ow, keys + sl, dys + sl);
          finite &= all_finite(dys + sl, g->ow); /* in L1, not a second pass */
        }
        for (size_t r0 = 0; r0 < rows; r0++)
          for (size_t t = 0; t < m; t++) {
            const size_t oy = lo[r0] + t;
            e[r0][t] = (oy % r->rows) * r->len + r->lead + g->pl;
            ky[r0][t] = iy + r0 + g->pt - oy * g->sh;
          }
        for (size_t ix = 0; ix < W; ix += SP_VL) {
          const size_t cnt = W - ix < SP_VL ? W - ix : SP_VL;
          if (rows == AVG_GATHER_ROWS) {
            MAX_GATHER_BLOCK(e, ky, iy, AVG_GATHER_ROWS);
          } else {
            for (size_t r0 = 0; r0 < rows; r0++)
              MAX_GATHER_BLOCK(e + r0, ky + r0, iy + r0, 1);
          }
        }
        iy += rows;
      }
    }
  }
  if (!finite)
    canonicalize(io->dx, in_count(g));
}

/* The same gather for 3x3/s1/p1 with same-size planes (GoogLeNet's and
 * Inception's pools), a whole plane at a time: with ow == w, output o's
 * window is centred on input position o, so dx element p hears from
 * outputs p + d for the nine d of {-w, 0, w} + {-1, 0, 1}, ascending d
 * being output order, and the plane is one flat row without per-row work.
 * Keys are flat positions (U8 taps become o + (t/3 - 1) * w + t%3 - 1).
 * A d that wraps a row names an output whose window lies in the last (or
 * first) two columns, so its key can never name p's column 0 (w - 1) when
 * w >= 3; outputs before and after the plane read the padding: key -1. */
#define PLANE3_SCRATCH 4096 /* keys and dy each: 32 KiB of stack */

static inline size_t plane3_lead(const sp_geom *g) {
  return round_up(g->w + 1, SP_VL);
}

static inline int plane3_fits(const sp_geom *g) {
  return g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
         g->dw == 1 && g->pt == 1 && g->pl == 1 && g->oh == g->h &&
         g->ow == g->w && g->w >= 3 &&
         2 * plane3_lead(g) + g->h * g->w + SP_VL <= PLANE3_SCRATCH;
}

/* U8 tap numbers of a 3x3 window (validated: 0..8) as offsets from the
 * window's centre in a plane of width w. */
SP_HOT vi tap3_offset(vi t, int32_t w) {
  vi r = vi_set1(-w - 1);
  for (int32_t k = 1; k < 9; k++)
    r = vi_select(vm_eq_i(t, vi_set1(k)), r,
                  vi_set1((k / 3 - 1) * w + k % 3 - 1));
  return r;
}

/* it: the key type, a compile-time constant. */
SP_HOT void max3x3s1_plane_gather(const sp_geom *g, const sp_io *io,
                                  simdpool_index_type it) {
  _Alignas(64) int32_t keys[PLANE3_SCRATCH];
  _Alignas(64) float dys[PLANE3_SCRATCH];
  const size_t W = g->w, hw = g->h * W, lead = plane3_lead(g);
  const size_t end = 2 * lead + hw + SP_VL;
  for (size_t i = 0; i < end; i++) {
    keys[i] = -1;
    dys[i] = 0.0f;
  }
  const ptrdiff_t sw = (ptrdiff_t)W;
  const ptrdiff_t d[9] = {-sw - 1, -sw, -sw + 1, -1, 0, 1, sw - 1, sw, sw + 1};
  const vf z = vf_zero();
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      float *dxp = io->dx + sp_plane_of(g, n, c, g->h, g->w).base;
      const size_t ob = sp_plane_of(g, n, c, g->oh, g->ow).base;
      for (size_t o = 0; o < hw; o += SP_VL) {
        const size_t cnt = hw - o < SP_VL ? hw - o : SP_VL;
        vi k = load_index(io->indices, it, ob + o, cnt);
        if (it == SIMDPOOL_INDEX_U8)
          k = vi_add(vi_ramp((int32_t)o, 1), tap3_offset(k, (int32_t)W));
        store_index(keys + lead, SIMDPOOL_INDEX_I32, o, k, cnt);
        store_lanes(dys + lead + o, load_lanes(io->dy + ob + o, cnt), cnt);
      }
      /* Tested here, in L1, rather than in a second pass over dy. */
      const int finite = all_finite(dys + lead, hw);
      for (size_t p = 0; p < hw; p += SP_VL) {
        const size_t cnt = hw - p < SP_VL ? hw - p : SP_VL;
        const vi pos = vi_ramp((int32_t)p, 1);
        vf acc = z;
        for (int j = 0; j < 9; j++) {
          const size_t e = (size_t)((ptrdiff_t)(lead + p) + d[j]);
          acc = vf_add(acc, vf_select(vm_eq_i(vi_load_i32(keys + e), pos), z,
                                      vf_load(dys + e)));
        }
        store_lanes(dxp + p, acc, cnt);
      }
      if (!finite)
        canonicalize(dxp, hw);
    }
  }
}

/* The gather on the plan's index type. */
SP_HOT void maxpool_bwd_nchw_gather_idx(const sp_geom *g, const sp_io *io,
                                        const gather_ring *r) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    maxpool_bwd_nchw_gather(g, io, r, SIMDPOOL_INDEX_U8);
  else if (g->index_type == SIMDPOOL_INDEX_I64)
    maxpool_bwd_nchw_gather(g, io, r, SIMDPOOL_INDEX_I64);
  else
    maxpool_bwd_nchw_gather(g, io, r, SIMDPOOL_INDEX_I32);
}

/* The plane gather on the plan's index type. */
SP_HOT void maxpool_bwd_plane3_idx(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    max3x3s1_plane_gather(g, io, SIMDPOOL_INDEX_U8);
  else if (g->index_type == SIMDPOOL_INDEX_I64)
    max3x3s1_plane_gather(g, io, SIMDPOOL_INDEX_I64);
  else
    max3x3s1_plane_gather(g, io, SIMDPOOL_INDEX_I32);
}

void SP_FN(sp_maxpool_bwd_nchw)(const sp_geom *g, const sp_io *io) {
  if (lop_fits(g, 2, 1))
    maxpool_bwd_nchw_lop(g, io, 0);
  else
    bwd_nchw_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_idx_nchw)(const sp_geom *g, const sp_io *io) {
  gather_ring r;
  if (plane3_fits(g))
    maxpool_bwd_plane3_idx(g, io);
  else if (max_ring_of(g, &r)) /* stride 1 along overlapping rows */
    maxpool_bwd_nchw_gather_idx(g, io, &r);
  else if (g->index_type != SIMDPOOL_INDEX_U8)
    bwd_scatter_nchw_flat(g, io);
  else if (lop_fits(g, 1, 2))
    maxpool_bwd_nchw_lop(g, io, 1);
  else
    bwd_nchw_body(g, io, BWD_MAX_IDX);
}

/* ================================================================ 2x2/s2
 * The hot path: 2x2 windows, stride 2, no padding, every tap valid
 * (SP_SHAPE_2X2S2). MAX reduces each row's pair first, then row 0 with row
 * 1: a tree that keeps the taps in scan order, hence the reference's bits. */

/* MAX of one 2x2 block of lanes; *won gets the winner's label, l[t] for
 * tap t (tap numbers, or flat positions: the same selects either way). */
static inline vf max2x2_as(vf a00, vf a01, vf a10, vf a11, const vi l[4],
                           vi *won) {
  const vm rt = mx_replaces(a01, a00);
  const vm rb = mx_replaces(a11, a10);
  const vf top = vf_select(rt, a00, a01);
  const vf bottom = vf_select(rb, a10, a11);
  const vm rr = mx_replaces(bottom, top);
  *won = vi_select(rr, vi_select(rt, l[0], l[1]), vi_select(rb, l[2], l[3]));
  return vf_select(rr, top, bottom);
}

/* The same with the tap numbers 0..3. */
static inline vf max2x2(vf a00, vf a01, vf a10, vf a11, vi *tap) {
  const vi l[4] = {vi_set1(0), vi_set1(1), vi_set1(2), vi_set1(3)};
  return max2x2_as(a00, a01, a10, a11, l, tap);
}

/* acc = (((0 + a00) + a01) + a10) + a11 of AVG or of the LP terms. */
static inline vf sum2x2(vf a00, vf a01, vf a10, vf a11) {
  return vf_add(vf_add(vf_add(vf_add(vf_zero(), a00), a01), a10), a11);
}

/* Backward from indices: the tap number of each lane (index idx of the
 * window at flat position base). */
static inline vi index_to_tap(const sp_geom *g, vi idx, vi base) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    return idx;
  const int32_t w = (int32_t)g->w;
  /* idx - base is 0, 1, w or w+1 (dispatch validated the indices). */
  const vm is0 = vm_eq_i(idx, base);
  const vm is1 = vm_eq_i(idx, vi_add(base, vi_set1(1)));
  const vm is2 = vm_eq_i(idx, vi_add(base, vi_set1(w)));
  return vi_select(
      is0, vi_select(is1, vi_select(is2, vi_set1(3), vi_set1(2)), vi_set1(1)),
      vi_set1(0));
}

/* m consecutive floats from p as their even and odd elements, and back;
 * the rest of 2*SP_VL is zero on load and untouched on store. */
static inline void load_elems(const float *p, size_t m, vf *even, vf *odd) {
  const vf a = load_lanes(p, m < SP_VL ? m : SP_VL);
  const vf b = m > SP_VL ? load_lanes(p + SP_VL, m - SP_VL) : vf_zero();
  vf_deinterleave(a, b, even, odd);
}
static inline void store_elems(float *p, size_t m, vf even, vf odd) {
  vf lo, hi;
  vf_interleave(even, odd, &lo, &hi);
  store_lanes(p, lo, m < SP_VL ? m : SP_VL);
  if (m > SP_VL)
    store_lanes(p + SP_VL, hi, m - SP_VL);
}

/* NCHW: SP_VL outputs need 2*SP_VL inputs of each row; n < SP_VL outputs
 * (a row tail) read exactly 2n. */
static inline void load_pairs(const float *p, size_t n, vf *even, vf *odd) {
  load_elems(p, 2 * n, even, odd);
}
static inline void store_pairs(float *p, size_t n, vf even, vf odd) {
  store_elems(p, 2 * n, even, odd);
}

enum { P2_MAX, P2_AVG, P2_LP };

/* Forward 2x2/s2 of any method on one block of lanes; MAX with track puts
 * in *tap the winner's entry of labels (the four taps' index values). */
static inline vf fwd2x2(int method, int kind, int track, float pv, float inv_p,
                        vf a00, vf a01, vf a10, vf a11, const vi *labels,
                        vi *tap) {
  if (method == P2_MAX) {
    /* Without NaNs, max(b, a) = b > a ? b : a is the MAX step exactly (ties
     * keep a); a block holding a NaN takes the full compare-and-select. */
    if (!track && !vm_any(vm_or(vm_unord(a00, a01), vm_unord(a10, a11))))
      return vf_max_x86(vf_max_x86(a11, a10), vf_max_x86(a01, a00));
    return max2x2_as(a00, a01, a10, a11, labels, tap);
  }
  if (method == P2_AVG) {
    const divisor four = divisor_const(4.0f);
    return avg_result(sum2x2(a00, a01, a10, a11), &four);
  }
  return vcanon(
      lp_root_v(kind, inv_p,
                sum2x2(lp_term_v(kind, pv, a00), lp_term_v(kind, pv, a01),
                       lp_term_v(kind, pv, a10), lp_term_v(kind, pv, a11))));
}

/* Runs the body (the last argument) for the blocks of a row of ow outputs,
 * with ox (the block's first output) and cnt in scope: one short block when
 * ow < SP_VL, else full blocks (cnt a compile-time SP_VL, so they load and
 * store whole vectors), the last of them ending at ow and overlapping its
 * neighbour instead of a masked short block. Only for outputs that are
 * stored, not accumulated: an overlapped one is stored twice, same value. */
#define FOR_EACH_ROW_BLOCK(ow, ...)                                            \
  do {                                                                         \
    if ((ow) < SP_VL) {                                                        \
      const size_t ox = 0, cnt = (ow);                                         \
      __VA_ARGS__                                                              \
    } else {                                                                   \
      for (size_t ox = 0; ox + SP_VL < (ow); ox += SP_VL) {                    \
        const size_t cnt = SP_VL;                                              \
        __VA_ARGS__                                                            \
      }                                                                        \
      const size_t ox = (ow)-SP_VL, cnt = SP_VL;                               \
      __VA_ARGS__                                                              \
    }                                                                          \
  } while (0)

/* One block of cnt outputs at (oy, ox) from input rows r0, r1 (at ox's
 * first input); cnt == SP_VL is a compile-time constant in the row loop, so
 * full blocks load and store whole vectors. */
SP_HOT void fwd2x2_nchw_block(const sp_geom *g, const sp_io *io, int method,
                              int track, int pf, int kind, float pv,
                              float inv_p, const float *r0, const float *r1,
                              size_t o, size_t oy, size_t ox, size_t cnt) {
  vf a00, a01, a10, a11;
  if (pf) {
    prefetch_ahead(r0, 2 * cnt);
    prefetch_ahead(r1, 2 * cnt);
  }
  load_pairs(r0, cnt, &a00, &a01);
  load_pairs(r1, cnt, &a10, &a11);
  /* The winner's index value straight from the select tree: I32/I64 the
   * flat positions of each lane's four taps, U8 the tap numbers. */
  vi l[4] = {vi_set1(0), vi_set1(1), vi_set1(2), vi_set1(3)}, won;
  if (method == P2_MAX && track && g->index_type != SIMDPOOL_INDEX_U8) {
    l[0] = vi_ramp((int32_t)(2 * oy * g->w + 2 * ox), 2);
    l[1] = vi_add(l[0], vi_set1(1));
    l[2] = vi_add(l[0], vi_set1((int32_t)g->w));
    l[3] = vi_add(l[2], vi_set1(1));
  }
  const vf y =
      fwd2x2(method, kind, track, pv, inv_p, a00, a01, a10, a11, l, &won);
  store_lanes(io->y + o, yclamp(g, y), cnt);
  if (method == P2_MAX && track)
    store_index(io->indices, g->index_type, o, won, cnt);
}

/* method, track, pf (g->beyond_l2): compile-time constants. */
SP_HOT void fwd2x2_nchw_rows(const sp_geom *g, const sp_io *io, int method,
                             int track, int pf) {
  const int kind = lp_kind(g->p);
  const float pv = g->p, inv_p = 1.0f / g->p;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->oh, g->ow);
      for (size_t oy = 0; oy < g->oh; oy++) {
        const float *r0 = io->x + px.base + 2 * oy * g->w;
        const float *r1 = r0 + g->w;
        const size_t orow = py.base + oy * g->ow;
        FOR_EACH_ROW_BLOCK(g->ow, {
          fwd2x2_nchw_block(g, io, method, track, pf, kind, pv, inv_p,
                            r0 + 2 * ox, r1 + 2 * ox, orow + ox, oy, ox, cnt);
        });
      }
    }
  }
}

SP_HOT void fwd2x2_nchw_body(const sp_geom *g, const sp_io *io, int method,
                             int track) {
  if (g->beyond_l2)
    fwd2x2_nchw_rows(g, io, method, track, 1);
  else
    fwd2x2_nchw_rows(g, io, method, track, 0);
}

SP_HOT void fwd2x2_nhwc_body(const sp_geom *g, const sp_io *io, int method) {
  const size_t C = g->c, XS = g->xs;
  const int kind = lp_kind(g->p);
  const float pv = g->p, inv_p = 1.0f / g->p;
  const int track = g->index_type != SIMDPOOL_INDEX_NONE;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t f00 = 2 * oy * g->w + 2 * ox;
        const float *p00 = xn + f00 * XS, *p10 = p00 + g->w * XS;
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        float *yp = io->y + px * g->ys;
        /* The pixel's four taps as index values (U8: tap numbers). */
        const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
        const int32_t b = u8 ? 0 : (int32_t)f00, w1 = u8 ? 2 : (int32_t)g->w;
        const vi l[4] = {vi_set1(b), vi_set1(b + 1), vi_set1(b + w1),
                         vi_set1(b + w1 + 1)};
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi won = vi_set1(0); /* set by MAX with track */
          const vf y =
              fwd2x2(method, kind, track, pv, inv_p, load_lanes(p00 + c, cn),
                     load_lanes(p00 + XS + c, cn), load_lanes(p10 + c, cn),
                     load_lanes(p10 + XS + c, cn), l, &won);
          store_lanes(yp + c, yclamp(g, y), cn);
          if (method == P2_MAX && track)
            store_index(io->indices, g->index_type, o + c, won, cn);
        }
      }
    }
  }
}

void SP_FN(sp_maxpool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    fwd2x2_nchw_body(g, io, P2_MAX, 0);
  else
    fwd2x2_nchw_body(g, io, P2_MAX, 1);
}
void SP_FN(sp_maxpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_MAX);
}
void SP_FN(sp_avgpool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw_body(g, io, P2_AVG, 0);
}
void SP_FN(sp_avgpool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_AVG);
}
void SP_FN(sp_lppool_fwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nchw_body(g, io, P2_LP, 0);
}
void SP_FN(sp_lppool_fwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  fwd2x2_nhwc_body(g, io, P2_LP);
}

/* Backward 2x2/s2: windows do not overlap, so every covered dx element gets
 * exactly one write: 0 + share (canonical) where the gradient goes, +0.0f
 * elsewhere; uncovered elements (an odd last row or column) get +0.0f.
 * `mode`: BWD_MAX (recompute), BWD_MAX_IDX or BWD_AVG. The per-tap masks
 * come from the winners' tap numbers; AVG sends the share to all four. */
static inline void bwd2x2_masks(int mode, vi tap, vm *m00, vm *m01, vm *m10,
                                vm *m11) {
  if (mode == BWD_AVG) {
    *m00 = *m01 = *m10 = *m11 = vm_eq_i(tap, tap);
    return;
  }
  *m00 = vm_eq_i(tap, vi_set1(0));
  *m01 = vm_eq_i(tap, vi_set1(1));
  *m10 = vm_eq_i(tap, vi_set1(2));
  *m11 = vm_eq_i(tap, vi_set1(3));
}

static inline vf bwd2x2_share(int mode, vf dy) {
  const divisor four = divisor_const(4.0f);
  const vf s = mode == BWD_AVG ? div_by(dy, &four) : dy;
  return vcanon(vf_add(vf_zero(), s));
}

/* One block of cnt outputs at (oy, ox): r0 is x's row 2oy (BWD_MAX), d0 and
 * d1 dx's rows 2oy and 2oy + 1, o the block's first output. */
SP_HOT void bwd2x2_nchw_block(const sp_geom *g, const sp_io *io, int mode,
                              const float *r0, float *d0, float *d1, size_t o,
                              size_t oy, size_t ox, size_t cnt, int rows) {
  vi tap = vi_set1(0);
  if (mode == BWD_MAX) {
    vf a00, a01, a10, a11;
    load_pairs(r0 + 2 * ox, cnt, &a00, &a01);
    load_pairs(r0 + g->w + 2 * ox, cnt, &a10, &a11);
    max2x2(a00, a01, a10, a11, &tap);
  } else if (mode == BWD_MAX_IDX) {
    const vi base = vi_ramp((int32_t)(2 * oy * g->w + 2 * ox), 2);
    tap = index_to_tap(g, load_index(io->indices, g->index_type, o, cnt), base);
  }
  const vf share = bwd2x2_share(mode, load_lanes(io->dy + o, cnt));
  vm m00, m01, m10, m11;
  bwd2x2_masks(mode, tap, &m00, &m01, &m10, &m11);
  const vf z = vf_zero();
  if (rows & 1)
    store_pairs(d0 + 2 * ox, cnt, vf_select(m00, z, share),
                vf_select(m01, z, share));
  if (rows & 2)
    store_pairs(d1 + 2 * ox, cnt, vf_select(m10, z, share),
                vf_select(m11, z, share));
}

SP_HOT void bwd2x2_nchw_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const sp_plane px = sp_plane_of(g, n, c, g->h, g->w);
      const sp_plane py = sp_plane_of(g, n, c, g->oh, g->ow);
      float *dxp = io->dx + px.base;
      for (size_t oy = 0; oy < g->oh; oy++) {
        const float *r0 =
            mode == BWD_MAX ? io->x + px.base + 2 * oy * g->w : NULL;
        float *d0 = dxp + 2 * oy * g->w, *d1 = d0 + g->w;
        const size_t orow = py.base + oy * g->ow;
        /* dx elements are stored here, not added to. */
        /* Beyond L2, dx row 2oy first, then row 2oy + 1 (each block done
         * twice, the second time from L1): one sequential store stream,
         * where two interleaved runs of a row each (VGG: 896 bytes) left
         * the stores waiting. In L2 the redone work costs more. */
        if (g->beyond_l2) {
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2_nchw_block(g, io, mode, r0, d0, d1, orow + ox, oy, ox, cnt,
                              1);
          });
          if (cov_w < g->w)
            zero_tensor(d0 + cov_w, g->w - cov_w);
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2_nchw_block(g, io, mode, r0, d0, d1, orow + ox, oy, ox, cnt,
                              2);
          });
        } else {
          FOR_EACH_ROW_BLOCK(g->ow, {
            bwd2x2_nchw_block(g, io, mode, r0, d0, d1, orow + ox, oy, ox, cnt,
                              3);
          });
          if (cov_w < g->w)
            zero_tensor(d0 + cov_w, g->w - cov_w);
        }
        if (cov_w < g->w) /* (a memset call per row costs) */
          zero_tensor(d1 + cov_w, g->w - cov_w);
      }
      zero_tensor(dxp + cov_h * g->w, (g->h - cov_h) * g->w);
    }
  }
}

SP_HOT void bwd2x2_nhwc_body(const sp_geom *g, const sp_io *io, int mode) {
  const size_t C = g->c, XS = g->xs, cov_w = 2 * g->ow, cov_h = 2 * g->oh;
  for (size_t n = 0; n < g->n; n++) {
    const float *xn = io->x ? io->x + n * g->h * g->w * XS : NULL;
    float *dxn = io->dx + n * g->h * g->w * XS;
    for (size_t oy = 0; oy < g->oh; oy++) {
      for (size_t ox = 0; ox < g->ow; ox++) {
        const size_t f00 = 2 * oy * g->w + 2 * ox;
        const size_t px = (n * g->oh + oy) * g->ow + ox;
        const size_t o = px * C; /* indices: dense */
        const float *dyp = io->dy + px * g->ys;
        const vi base = vi_set1((int32_t)f00);
        float *d00 = dxn + f00 * XS, *d10 = d00 + g->w * XS;
        for (size_t c = 0; c < C; c += SP_VL) {
          const size_t cn = C - c < SP_VL ? C - c : SP_VL;
          vi tap = vi_set1(0);
          if (mode == BWD_MAX) {
            const float *p00 = xn + f00 * XS + c, *p10 = p00 + g->w * XS;
            max2x2(load_lanes(p00, cn), load_lanes(p00 + XS, cn),
                   load_lanes(p10, cn), load_lanes(p10 + XS, cn), &tap);
          } else if (mode == BWD_MAX_IDX) {
            tap = index_to_tap(
                g, load_index(io->indices, g->index_type, o + c, cn), base);
          }
          const vf share = bwd2x2_share(mode, load_lanes(dyp + c, cn));
          vm m00, m01, m10, m11;
          bwd2x2_masks(mode, tap, &m00, &m01, &m10, &m11);
          const vf z = vf_zero();
          store_lanes(d00 + c, vf_select(m00, z, share), cn);
          store_lanes(d00 + XS + c, vf_select(m01, z, share), cn);
          store_lanes(d10 + c, vf_select(m10, z, share), cn);
          store_lanes(d10 + XS + c, vf_select(m11, z, share), cn);
        }
      }
      if (cov_w < g->w) {
        zero_px(dxn + (2 * oy * g->w + cov_w) * XS, g->w - cov_w, C, XS);
        zero_px(dxn + ((2 * oy + 1) * g->w + cov_w) * XS, g->w - cov_w, C, XS);
      }
    }
    zero_px(dxn + cov_h * g->w * XS, (g->h - cov_h) * g->w, C, XS);
  }
}

void SP_FN(sp_maxpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_MAX);
}
void SP_FN(sp_maxpool_bwd_idx_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw_body(g, io, BWD_MAX_IDX);
}
void SP_FN(sp_maxpool_bwd_idx_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_MAX_IDX);
}
void SP_FN(sp_avgpool_bwd_2x2s2_nchw)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nchw_body(g, io, BWD_AVG);
}
void SP_FN(sp_avgpool_bwd_2x2s2_nhwc)(const sp_geom *g, const sp_io *io) {
  bwd2x2_nhwc_body(g, io, BWD_AVG);
}

/* ------------------------------------------- 3x3/stride-2/pad-1 backward
 * NCHW MAX backward, from indices or recomputing the winners from x (one
 * block of compare-and-select, max_block_nchw). Output (oy, ox) covers dx rows
 * 2oy-1, 2oy, 2oy+1 and columns 2ox-1, 2ox, 2ox+1, so in one kernel row an even
 * dx column hears from one output (its kj = 1 tap) and an odd one from two (kj
 * = 2 of ox, then kj = 0 of ox + 1: output order). Lanes run over output
 * columns: per kernel row, a block's three contributions (dy where that tap
 * won, else +0) give the even columns and, with the next block's first lane
 * shifted in (vf_shift1), the odd ones. Rows 2oy and 2oy+1 are written
 * fresh (+0 + ...), row 2oy-1 adds to what output row oy-1 left there, so
 * every dx element receives its dy in output order, and no element is
 * written twice per output row. The +0 of a tap that did not win changes
 * no bits: dx is never -0 (+0 + -0 is +0). NaNs are stored canonical, as
 * every MAX backward writes them. */

/* What lane i's winner is in its window: the tap number (U8, and without
 * indices, from the block's max over x, plane xp). Flat I32/I64 indices
 * take the scatter (bwd_scatter_nchw). */
SP_HOT vi bwd3x3s2_key(const sp_geom *g, const sp_io *io,
                       simdpool_index_type it, const float *xp,
                       const row_span *in, size_t o, size_t oy, size_t ox0,
                       size_t cnt) {
  if (it == SIMDPOOL_INDEX_NONE) {
    /* A full block whose three rows and 2*SP_VL + 1 columns lie inside
     * reads them directly as the forward's fold does (the scan of
     * max_block_nchw, tap by tap in row-major order); the others go
     * through max_block_nchw. */
    if (cnt == SP_VL && oy >= 1 && 2 * oy + 1 < g->h && ox0 >= 1 &&
        2 * ox0 + 2 * SP_VL <= g->w) {
      const float *p = xp + (2 * oy - 1) * g->w + 2 * ox0 - 1;
      vf m = vf_set1(-INFINITY);
      vi t = vi_set1(0);
      for (int ki = 0; ki < 3; ki++, p += g->w) {
        vf v[4], tap[3];
        for (size_t i = 0; i < 4; i++)
          v[i] = vf_load(p + fold_off[i]);
        taps3s2(v, tap);
        for (int kj = 0; kj < 3; kj++)
          mx_step(tap[kj], 3 * ki + kj, 1, &m, &t);
      }
      return t;
    }
    size_t ki0, ki1;
    sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
    const block b = block_at(g, in, oy, ki0, ki1, ox0, cnt);
    vi t;
    max_block_nchw(g, xp, &b, 1, SIMDPOOL_INDEX_U8, &t);
    return t;
  }
  return load_index(io->indices, SIMDPOOL_INDEX_U8, o, cnt);
}

/* The blocks of output row oy (its outputs at orow) into the dx rows of
 * its kernel rows (NULL outside the input). it: the index type; canon: NaNs
 * may arise (a dy that is not finite); both compile-time constants. */
SP_HOT void bwd3x3s2_row(const sp_geom *g, const sp_io *io,
                         simdpool_index_type it, const float *xp,
                         const row_span *in, float *const row[3], size_t orow,
                         size_t oy, const vi tg[3][3], int canon) {
  const vf z = vf_zero();
  size_t cnt = g->ow < SP_VL ? g->ow : SP_VL;
  vi key_n = bwd3x3s2_key(g, io, it, xp, in, orow, oy, 0, cnt);
  vf dy_n = load_lanes(io->dy + orow, cnt);
  for (size_t ox0 = 0; ox0 < g->ow; ox0 += SP_VL) {
    const vi key = key_n;
    const vf dy = dy_n;
    /* dx columns [2ox0, 2ox0 + m) of this block (2ox0 <= w). */
    const size_t m = 2 * cnt < g->w - 2 * ox0 ? 2 * cnt : g->w - 2 * ox0;
    if (ox0 + SP_VL < g->ow) {
      cnt = g->ow - ox0 - SP_VL < SP_VL ? g->ow - ox0 - SP_VL : SP_VL;
      key_n = bwd3x3s2_key(g, io, it, xp, in, orow + ox0 + SP_VL, oy,
                           ox0 + SP_VL, cnt);
      dy_n = load_lanes(io->dy + orow + ox0 + SP_VL, cnt);
    } else {
      dy_n = z; /* no next block: nothing shifts in */
    }
    for (size_t ki = 0; ki < 3 && m > 0; ki++) {
      if (!row[ki])
        continue;
      float *d = row[ki] + 2 * ox0;
      vf even = z, odd = z;
      if (ki == 0)
        load_elems(d, m, &even, &odd);
      const vf c0 = vf_select(vm_eq_i(key, tg[ki][0]), z, dy);
      const vf c1 = vf_select(vm_eq_i(key, tg[ki][1]), z, dy);
      const vf c2 = vf_select(vm_eq_i(key, tg[ki][2]), z, dy);
      const vf c0n = vf_select(vm_eq_i(key_n, tg[ki][0]), z, dy_n);
      even = vf_add(even, c1);
      odd = vf_add(vf_add(odd, c2), vf_shift1(c0, c0n));
      if (canon) {
        even = vcanon(even);
        odd = vcanon(odd);
      }
      store_elems(d, m, even, odd);
    }
  }
}

/* it: U8 or NONE (winners recomputed from x), a compile-time constant. */
SP_HOT void bwd3x3s2_nchw_body(const sp_geom *g, const sp_io *io,
                               simdpool_index_type it) {
  const row_span in = interior_cols(g);
  vi tg[3][3]; /* each tap's key */
  for (size_t ki = 0; ki < 3; ki++)
    for (size_t kj = 0; kj < 3; kj++)
      tg[ki][kj] = vi_set1((int32_t)(3 * ki + kj));
  const size_t cov_w = 2 * g->ow < g->w ? 2 * g->ow : g->w;
  const size_t cov_h = 2 * g->oh < g->h ? 2 * g->oh : g->h;
  for (size_t n = 0; n < g->n; n++) {
    for (size_t c = 0; c < g->c; c++) {
      const size_t xbase = sp_plane_of(g, n, c, g->h, g->w).base;
      float *dxp = io->dx + xbase;
      const float *xp = io->x ? io->x + xbase : NULL;
      const size_t obase = sp_plane_of(g, n, c, g->oh, g->ow).base;
      for (size_t oy = 0; oy < g->oh; oy++) {
        float *row[3];
        for (size_t ki = 0; ki < 3; ki++) {
          const size_t iy1 = 2 * oy + ki; /* the row plus one */
          row[ki] = iy1 >= 1 && iy1 - 1 < g->h ? dxp + (iy1 - 1) * g->w : NULL;
        }
        const size_t orow = obase + oy * g->ow;
        /* Finite dy cannot make a NaN: a sum that overflows stays inf. */
        if (all_finite(io->dy + orow, g->ow))
          bwd3x3s2_row(g, io, it, xp, &in, row, orow, oy, tg, 0);
        else
          bwd3x3s2_row(g, io, it, xp, &in, row, orow, oy, tg, 1);
        for (size_t ki = 1; ki < 3; ki++)
          if (row[ki] && cov_w < g->w)
            zero_tensor(row[ki] + cov_w, g->w - cov_w);
      }
      zero_tensor(dxp + cov_h * g->w, (g->h - cov_h) * g->w);
    }
  }
}

/* From x, planes of at most BWD3_PLANE outputs: each plane's winners come
 * from the forward's direct kernel (U8 taps, the folds with tracking) into
 * a stack scratch, then the from-U8 kernel runs on them; recomputing each
 * window per dx row (bwd3x3s2_key) costs three times as much. */
#define BWD3_PLANE 3328 /* outputs: 16.25 KiB of y and taps */

/* MAX backward from x, plane by plane: the 3x3 forward's U8 taps (s2: the
 * 3x3/s2/p1 direct kernel, else 3x3/s1) into a stack scratch, then the
 * backward from U8. The caller checked ohw <= BWD3_PLANE; s2 a
 * compile-time constant. */
SP_HOT void bwd3x3_from_x_planes(const sp_geom *g, const sp_io *io, int s2) {
  const size_t ohw = g->oh * g->ow, hw = g->h * g->w;
  _Alignas(64) float ys[BWD3_PLANE];
  uint8_t taps[BWD3_PLANE];
  sp_geom g1 = *g;
  g1.n = g1.c = 1;
  g1.index_type = SIMDPOOL_INDEX_U8;
  for (size_t p = 0; p < g->n * g->c; p++) {
    const sp_io fwd = {io->x + p * hw, ys, taps, NULL, NULL};
    const sp_io bwd = {NULL, NULL, taps, io->dy + p * ohw, io->dx + p * hw};
    if (s2) {
      max3x3s2_nchw_direct(&g1, &fwd, 1);
      bwd3x3s2_nchw_body(&g1, &bwd, SIMDPOOL_INDEX_U8);
    } else {
      nchw3x3s1(&g1, &fwd, P3_MAX, 1);
      gather_ring r;
      if (plane3_fits(&g1))
        max3x3s1_plane_gather(&g1, &bwd, SIMDPOOL_INDEX_U8);
      else if (max_ring_of(&g1, &r))
        maxpool_bwd_nchw_gather(&g1, &bwd, &r, SIMDPOOL_INDEX_U8);
      else
        bwd_nchw_body(&g1, &bwd, BWD_MAX_IDX);
    }
  }
}

/* 3x3/s1: where the general kernel would recompute each window per dx
 * row. Small planes keep lanes over planes; rows too wide for the
 * forward's pad row, the general kernel. */
void SP_FN(sp_maxpool_bwd_3x3s1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->oh * g->ow > BWD3_PLANE || g->w + SP_VL + 2 > ZERO3 ||
      lop_fits(g, 2, 1))
    SP_FN(sp_maxpool_bwd_nchw)(g, io);
  else
    bwd3x3_from_x_planes(g, io, 0);
}

void SP_FN(sp_maxpool_bwd_3x3s2p1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->oh * g->ow > BWD3_PLANE)
    bwd3x3s2_nchw_body(g, io, SIMDPOOL_INDEX_NONE);
  else
    bwd3x3_from_x_planes(g, io, 1);
}
void SP_FN(sp_maxpool_bwd_idx_3x3s2p1_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_U8)
    bwd3x3s2_nchw_body(g, io, SIMDPOOL_INDEX_U8);
  else
    bwd_scatter_nchw_flat(g, io);
}

/* ================================================================ global
 * NCHW global pooling (one window per plane, no padding): a row has one
 * output, so lanes run over planes instead. A full group of SP_VL planes
 * reads SP_VL taps of each at once and transposes them (vf_load_transposed),
 * so each tap is one vector; the last taps, and a group of fewer planes,
 * read tap t of every plane at stride h*w. Each lane still scans its plane
 * in row-major order. */

enum { G_MAX, G_AVG, G_LP };
#define GLOBAL_GROUPS 4

/* Tap t (values v) of every lane's plane into the running result; MAX
 * starts from -inf with index 0 (mx_step). */
SP_HOT void global_step(int method, int track, int kind, float pv, size_t t,
                        vf v, vf *acc, vi *idx) {
  if (method == G_MAX) {
    mx_step(v, (int32_t)t, track, acc, idx);
  } else {
    *acc = vf_add(*acc, method == G_LP ? lp_term_v(kind, pv, v) : v);
  }
}

/* ng groups of SP_VL planes from plane p0 (ng == 1 when fewer remain): ng
 * independent chains of h*w steps hide the latency of each. */
SP_HOT void global_nchw_groups(const sp_geom *g, const sp_io *io, int method,
                               int track, size_t p0, size_t ng) {
  const size_t hw = g->h * g->w, planes = g->n * g->c;
  const int kind = lp_kind(g->p);
  const float pv = g->p;
  const size_t cnt = planes - p0 < SP_VL ? planes - p0 : SP_VL;
  const float *xp = io->x + p0 * hw;
  vf acc[GLOBAL_GROUPS];
  vi idx[GLOBAL_GROUPS];
  for (size_t k = 0; k < ng; k++) {
    acc[k] = method == G_MAX ? vf_set1(-INFINITY) : vf_zero();
    idx[k] = vi_set1(0);
  }
  const size_t tb = cnt == SP_VL ? hw / SP_VL * SP_VL : 0;
  for (size_t t0 = 0; t0 < tb; t0 += SP_VL) {
    for (size_t k = 0; k < ng; k++) {
      vf v[SP_VL];
      vf_load_transposed(xp + k * SP_VL * hw + t0, hw, v);
      for (size_t j = 0; j < SP_VL; j++)
        global_step(method, track, kind, pv, t0 + j, v[j], &acc[k], &idx[k]);
    }
  }
  for (size_t t = tb; t < hw; t++)
    for (size_t k = 0; k < ng; k++)
      global_step(method, track, kind, pv, t,
                  load_cols(xp + k * SP_VL * hw + t, hw, cnt, 0), &acc[k],
                  &idx[k]);
  for (size_t k = 0; k < ng; k++) {
    const size_t o = p0 + k * SP_VL;
    if (method == G_MAX) {
      store_lanes(io->y + o, yclamp(g, acc[k]), cnt);
      /* The window is the plane: tap number and flat position coincide. */
      if (track)
        store_index(io->indices, g->index_type, o, idx[k], cnt);
    } else {
      const divisor dv = divisor_set1((float)hw);
      const vf y = method == G_LP ? lp_root_v(kind, 1.0f / g->p, acc[k])
                                  : avg_result(acc[k], &dv);
      store_lanes(io->y + o, yclamp(g, method == G_LP ? vcanon(y) : y), cnt);
    }
  }
}

SP_HOT void global_nchw_body(const sp_geom *g, const sp_io *io, int method,
                             int track) {
  const size_t planes = g->n * g->c;
  size_t p0 = 0;
  for (; planes - p0 >= GLOBAL_GROUPS * SP_VL; p0 += GLOBAL_GROUPS * SP_VL)
    global_nchw_groups(g, io, method, track, p0, GLOBAL_GROUPS);
  for (; p0 < planes; p0 += SP_VL)
    global_nchw_groups(g, io, method, track, p0, 1);
}

void SP_FN(sp_maxpool_fwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  if (g->index_type == SIMDPOOL_INDEX_NONE)
    global_nchw_body(g, io, G_MAX, 0);
  else
    global_nchw_body(g, io, G_MAX, 1);
}
void SP_FN(sp_avgpool_fwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  global_nchw_body(g, io, G_AVG, 0);
}
void SP_FN(sp_lppool_fwd_global_nchw)(const sp_geom *g, const sp_io *io) {
  global_nchw_body(g, io, G_LP, 0);
}
