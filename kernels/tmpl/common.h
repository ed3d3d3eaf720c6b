/* SPDX-License-Identifier: MIT */
/* common.h — the pieces every SIMD kernel family is built from, written
 * once against the vector layer: lane helpers, the MAX step, LP terms, the
 * exact AVG division, whole-tensor passes, NHWC windows and the covering
 * outputs of an input row. Included by every part (the .c files under tmpl/)
 * after tmpl/vec.h.
 *
 * Every SIMD kernel body is written once, in the parts under tmpl/, against
 * the vector layer, and compiled once per ISA: kernels/meson.build builds
 * each part with the ISA's flags and -DSP_ISA_<name>, and tmpl/vec.h then
 * includes that ISA's vec-<isa>.h, which defines SP_VL, SP_FN(name), the types
 * vf (floats), vi (int32) and vm (lane masks) and their operations. Lanes run
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
#ifndef SP_TMPL_COMMON_H
#define SP_TMPL_COMMON_H

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
 * clamps after the kernel instead, with the same bits.
 * yclamp_t holds the clamp in registers: a loop that stores y through el_t
 * pointers would otherwise reload g's clamp fields (a float store may alias
 * them) for every vector it stores. */
typedef struct yclamp_t {
  int on;
  vf lo, hi;
} yclamp_t;

static inline yclamp_t yclamp_of(const sp_geom *g) {
  const yclamp_t c = {g->clamp, vf_set1(g->clamp_lo), vf_set1(g->clamp_hi)};
  return c;
}

/* lo > v ? lo : v is v < lo ? lo : v, and hi < v ? hi : v is v > hi ? hi :
 * v, NaN v kept: x86's maxps/minps (one instruction each), which return
 * their second operand, bits and all, when either is NaN. */
SP_HOT vf yclamp_v(const yclamp_t *c, vf v) {
  return c->on ? vf_min_x86(c->hi, vf_max_x86(c->lo, v)) : v;
}

/* yclamp_v with g's clamp, read per call. */
SP_HOT vf yclamp(const sp_geom *g, vf v) {
  const yclamp_t c = yclamp_of(g);
  return yclamp_v(&c, v);
}

SP_HOT vf load_lanes(const float *p, size_t n) {
  return n == SP_VL ? vf_load(p) : vf_load_n(p, n);
}

/* n lanes of p[0], p[s], ..., zero elsewhere (a strided load). */
SP_HOT vf gather_lanes(const float *p, size_t s, size_t n) {
  if (n == SP_VL)
    return vf_gather(p, s);
  float lane[SP_VL] = {0};
  for (size_t i = 0; i < n; i++)
    lane[i] = p[i * s];
  return vf_load(lane);
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
#ifdef SP_VI_LOAD_N
  if (t == SIMDPOOL_INDEX_I32)
    return vi_load_i32_n((const int32_t *)ind + o, n);
  if (t == SIMDPOOL_INDEX_I64)
    return vi_load_i64_n((const int64_t *)ind + o, n);
  return vi_load_u8_n((const uint8_t *)ind + o, n);
#endif
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
  int unit; /* every lane's d is 1 (known where it is made: div_axes) */
  /* Every lane's d is one power of two (2, 4, 8, ...): x / d is then
   * x * r, rounded once from the same real number, subnormals, zeros,
   * infinities and NaN operands alike. */
  int pow2;
} divisor;

static inline uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* Per call or per row, never per vector: it divides once. */
static inline divisor divisor_of(vf d) {
  divisor v = {d, d, 0, 0, 0};
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

/* Whether the count k is a power of two above 1. */
static inline int count_pow2(size_t k) {
  return k > 1 && (k & (k - 1)) == 0;
}

/* A compile-time integer d in [1, SP_DIV_FAST_MAX] (1/d folds). */
static inline divisor divisor_const(float d) {
  const divisor v = {vf_set1(d), vf_set1(1.0f / d), SP_DIV_EXACT, d == 1.0f,
                     count_pow2((size_t)d)};
  return v;
}

/* The divisor k (a count of taps, >= 0) without a vector division: the
 * bits of divisor_set1((float)k). */
static inline divisor divisor_count(size_t k) {
  const float d = (float)k;
  const divisor v = {vf_set1(d), vf_set1(1.0f / d),
                     SP_DIV_EXACT && k >= 1 && d <= SP_DIV_FAST_MAX, k == 1,
                     count_pow2(k)};
  return v;
}

/* A divisor for which div_lanes divides: where d changes too often for r. */
static inline divisor divisor_plain(vf d) {
  const divisor v = {d, d, 0, 0, 0};
  return v;
}

/* x / v->d per lane, exactly as vf_div. With `sum`, (+0 + x) / v->d and NaN
 * results canonical: the AVG output of a sum the reference starts from +0.
 * Both compile-time constants. */
SP_HOT vf div_lanes(vf x, const divisor *v, int sum) {
  if (v->pow2) {
    const vf z = vf_mul(sum ? vf_add(vf_zero(), x) : x, v->r);
    return sum ? vcanon(z) : z;
  }
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

/* Keeps vector v in a register: the compiler may then not fold the load
 * that made it into each of its uses (one load feeding several adds). */
#if defined(__aarch64__)
#define VF_PIN(v) __asm__("" : "+w"(v))
#else
#define VF_PIN(v) __asm__("" : "+v"(v))
#endif

/* div_lanes of the n (<= 8) vectors at x, in place: one test for the rare
 * lanes of all of them (kernels that divide many vectors by one divisor). */
SP_HOT void div_lanes_n(vf *x, int n, const divisor *v, int sum) {
#if SP_DIV_EXACT
  if (v->fast && !v->pow2) {
    vf q[8];
    vm other = vm_range(0, 0);
    for (int i = 0; i < n; i++) {
      q[i] = vf_div_exact(x[i], v->d, v->r, sum);
      const vf a = vf_abs(x[i]);
      other = vm_or(other, vm_and(vm_not_pzero(a),
                                  vm_bits_outside(a, f32_bits(SP_DIV_FAST_MIN),
                                                  f32_bits(FLT_MAX))));
    }
    if (!vm_any(other)) {
      for (int i = 0; i < n; i++)
        x[i] = q[i];
      return;
    }
  }
#endif
  for (int i = 0; i < n; i++)
    x[i] = div_lanes(x[i], v, sum);
}

/* x / d, exactly. */
SP_HOT vf div_by(vf x, const divisor *v) {
  return div_lanes(x, v, 0);
}

/* Adaptive AVG's division (DESIGN.md): ((x / dd) / dh) / dw, each step a
 * correctly rounded division by that axis' window extent. A step by an
 * extent of 1 (the depth of every 2D plan) is skipped: x / 1 is x, but for
 * the quiet bit of a signalling NaN, and every caller writes its NaN
 * results canonical. */
SP_HOT vf div_axes(vf x, const divisor *dd, const divisor *dh,
                   const divisor *dw) {
  if (!dd->unit)
    x = div_by(x, dd);
  if (!dh->unit)
    x = div_by(x, dh);
  return dw->unit ? x : div_by(x, dw);
}

/* div_axes of the n (<= 8) vectors at x, in place: div_lanes_n per axis,
 * one test for the rare lanes of all of them. */
SP_HOT void div_axes_n(vf *x, int n, const divisor *dd, const divisor *dh,
                       const divisor *dw) {
  if (!dd->unit)
    div_lanes_n(x, n, dd, 0);
  if (!dh->unit)
    div_lanes_n(x, n, dh, 0);
  if (!dw->unit)
    div_lanes_n(x, n, dw, 0);
}

/* y of an AVG output from its sum x: (+0 + x) / d, NaN canonical. The
 * leading +0 lets a kernel start a sum from its first term rather than from
 * +0 + first term as the reference does: the two differ only when every
 * term is -0 (-0 there, +0 in the reference; a sum from +0 is never -0). */
SP_HOT vf avg_result(vf x, const divisor *v) {
  return div_lanes(x, v, 1);
}

/* Every NaN in dx becomes canonical (arithmetic NaN rule). */
static inline void canonicalize(float *dx, size_t count) {
  size_t i = 0;
  for (; i + SP_VL <= count; i += SP_VL)
    vf_store(dx + i, vcanon(vf_load(dx + i)));
  if (i < count)
    vf_store_n(dx + i, vcanon(vf_load_n(dx + i, count - i)), count - i);
}

/* The lanes of v that are NaN or infinite. */
static inline vm vf_nonfinite(vf v) {
  return vm_or(vm_unord(v, v), vm_gt(vf_abs(v), vf_set1(FLT_MAX)));
}

/* Is every dy finite? Then MAX and AVG backward cannot make a NaN: they
 * only add finite values (dy, dy / divisor) to dx, and a running sum of
 * finite values can reach +inf or -inf but never both, so canonicalizing
 * dx afterwards can be skipped. */
static inline int all_finite(const float *p, size_t count) {
  vm bad = vm_range(0, 0);
  size_t i = 0;
  for (; i + SP_VL <= count; i += SP_VL)
    bad = vm_or(bad, vf_nonfinite(vf_load(p + i)));
  if (i < count)
    bad = vm_or(bad, vf_nonfinite(vf_load_n(p + i, count - i)));
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

/* All-zero bits (+0 in every element type) over `pixels` pixels of c
 * elements of es bytes, `stride` elements apart. */
static inline void zero_px_bytes(void *p, size_t pixels, size_t c,
                                 size_t stride, size_t es) {
  if (stride == c) {
    memset(p, 0, pixels * c * es);
    return;
  }
  for (size_t i = 0; i < pixels; i++)
    memset((char *)p + i * stride * es, 0, c * es);
}

/* zero_tensor, canonicalize and all_finite over `pixels` pixels of c
 * channels, `stride` elements apart (NHWC pixel strides): only the c
 * channels of each pixel are touched. */
static inline void zero_px(float *p, size_t pixels, size_t c, size_t stride) {
  zero_px_bytes(p, pixels, c, stride, sizeof *p);
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

/* ============================================================= windows
 * One output's window, for the kernels that walk windows one at a time:
 * the NHWC ones (tmpl/nhwc.c, and the NHWC 3x3/s1 average in
 * tmpl/nchw_3x3s1.c). */

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
  return divisor_count(sp_avg_taps_h(g, oy) * sp_avg_taps_w(g, ox));
}

/* Flat input position of tap (ki, kj) of a window. */
static inline size_t tap_flat(const sp_geom *g, const window *win, size_t ki,
                              size_t kj) {
  return (size_t)(win->iy + (ptrdiff_t)(ki * g->dh)) * g->w +
         (size_t)(win->ix + (ptrdiff_t)(kj * g->dw));
}

/* Covering outputs along an axis (the gathered backward kernels): o in
 * [lo, hi) with o*s in [i + pad - ext, i + pad] (ext the dilated extent less
 * one), and only those whose offset i + pad - o*s is a multiple of the
 * dilation. Both bounds only grow with i, so they advance without
 * divisions. */
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

/* Whether the gathered 3x3/s2 MAX backward (both layouts) also takes flat
 * I32/I64 keys, or leaves them to the scatter: a gathered key is read and
 * narrowed about twice, the scatter reads it once. On the stem (64x112x112,
 * alternating runs) the gather measured 1.33x (NHWC) and 1.0-1.06x (NCHW)
 * the scatter's speed from I64 with AVX-512, but 0.85-0.99x with AVX2 and
 * 0.6-0.7x with SSE4.1, whose I64 narrowing takes shuffles. */
#define SP_FLAT_GATHER (SP_VL >= 16)

/* The backward modes shared by the NCHW families. BWD_UNPOOL is max
 * unpooling: BWD_MAX_IDX's scatter with dy's bits stored as they are (no
 * 0 + dy). */
enum { BWD_MAX, BWD_MAX_IDX, BWD_AVG, BWD_LP, BWD_UNPOOL };

/* Kernels that one part calls from another (registry.inc lists them; each
 * is defined once, in the part named). */
void SP_FN(sp_maxpool_fwd_nhwc)(const sp_geom *g, const sp_io *io); /* nhwc.c */
void SP_FN(sp_maxpool_bwd_nhwc)(const sp_geom *g, const sp_io *io); /* nhwc.c */
void SP_FN(sp_maxpool_bwd_idx_nhwc)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_maxpool_fwd_nchw)(const sp_geom *g,
                                const sp_io *io); /* nchw_fwd.c */
void SP_FN(sp_avgpool_fwd_nchw)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_avgpool_fwd_nd_nchw)(const sp_geom *g,
                                   const sp_io *io); /* pool_nd.c */
void SP_FN(sp_avgpool_bwd_nd_nchw)(const sp_geom *g, const sp_io *io);
void SP_FN(sp_avgpool_bwd_nd_nhwc)(const sp_geom *g, const sp_io *io);
/* nchw_3x3s1.c, for the 3x3 MAX backward from x: MAX 3x3/s1 forward with U8
 * taps, for planes whose rows fit the pad row (g->w + SP_VL + 2 <= ZERO3). */
void SP_FN(sp_max3x3s1_taps_nchw)(const sp_geom *g, const sp_io *io);

/* The start of the vector after the one at i over [0, len), vl lanes a
 * vector; len when i was the last. Vectors lie vl apart, and with len >=
 * vl the last one is moved back to end at len (it overlaps the one before
 * and stores the same values again); a shorter run is one vector of len
 * lanes. */
SP_HOT size_t vec_next(size_t i, size_t len, size_t vl) {
  if (i + vl >= len)
    return len;
  return i + 2 * vl > len ? len - vl : i + vl;
}

/* The output columns of a 2D plan whose windows lie inside the row (no
 * padding, no column past the input): [lo, hi), lo <= hi <= ow. */
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

/* The first column from ox outside [lo, hi): the border columns of a row
 * in order are for (ox = border_next(0, lo, hi); ox < ow;
 * ox = border_next(ox + 1, lo, hi)). */
static inline size_t border_next(size_t ox, size_t lo, size_t hi) {
  return ox >= lo && ox < hi ? hi : ox;
}

/* The same as [*lo, *lo + count), the count returned. */
SP_HOT size_t inner_cols(const sp_geom *g, size_t *lo) {
  const row_span r = interior_cols(g);
  *lo = r.lo;
  return r.hi - r.lo;
}

/* The nine taps' sum of a 3x3 window from its three rows' taps, in the
 * reference's order (from the first tap on: +0 + t00 is t00 but for -0,
 * which the callers' division makes up for; see nchw_3x3s1.c). */
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

/* Output row oy of a 2D plan over a plane of 8-bit elements at x, rows
 * row bytes apart: the first valid row of its windows, *nr of them
 * (g->dh rows apart). */
SP_HOT const uint8_t *win_rows8(const sp_geom *g, const uint8_t *x, size_t row,
                                size_t oy, size_t *nr) {
  size_t ki0, ki1;
  sp_tap_range(oy, g->sh, g->pt, g->kh, g->dh, g->h, &ki0, &ki1);
  *nr = ki1 - ki0;
  return x + (oy * g->sh + ki0 * g->dh - g->pt) * row;
}

/* Output row r of the n*c*oh output rows of a 2D NCHW plan over planes
 * of 8-bit elements at x: its row *oy in the plane, and its windows'
 * first valid input row (*nr of them). */
SP_HOT const uint8_t *nchw_row8(const sp_geom *g, const uint8_t *x, size_t r,
                                size_t *oy, size_t *nr) {
  *oy = r % g->oh;
  return win_rows8(g, x + r / g->oh * g->h * g->w, g->w, *oy, nr);
}

/* S8/U8 MAX forward without indices in byte lanes (tmpl/bmax.c): runs
 * the plan and returns 1 where it applies, else returns 0 (then the
 * caller's own body runs). */
int SP_FN(sp_bmax_fwd)(const sp_geom *g, const sp_io *io);

#endif /* SP_TMPL_COMMON_H */
