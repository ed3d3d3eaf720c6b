/* SPDX-License-Identifier: MIT */
/* execute.c — the public forward/backward entry points: argument checks, then
 * the plan's kernel. */
#include <stdint.h>
#include <stdio.h>

#include "internal.h"
#include "kernel_util.h"

/* The baseline instantiation of the flat index check. */
#define SP_FN(name) name##_base
#include "index_check.h"
#undef SP_FN

/* Is flat position v (I32/I64) a valid tap of the window whose first valid
 * tap is at (row.first, col.first)? Rows of a window are dh*w apart and its
 * columns span less than w, so v decomposes uniquely by subtraction. */
static int flat_ok(const sp_geom *g, long long v, ic_taps row, ic_taps col) {
  if (v < 0)
    return 0;
  const size_t base = row.first * g->w + col.first;
  if ((unsigned long long)v < base)
    return 0;
  size_t rel = (size_t)v - base;
  const size_t row_step = g->dh * g->w;
  for (size_t a = 1; a < row.count && rel >= row_step; a++)
    rel -= row_step;
  return rel <= (col.count - 1) * g->dw && (g->dw == 1 || rel % g->dw == 0);
}

/* indices[i] of type t, as a signed value for messages and checks. */
static long long index_value(simdpool_index_type t, const void *indices,
                             size_t i) {
  switch (t) {
  case SIMDPOOL_INDEX_I32:
    return ((const int32_t *)indices)[i];
  case SIMDPOOL_INDEX_I64:
    return (long long)((const int64_t *)indices)[i];
  case SIMDPOOL_INDEX_U8:
    return ((const uint8_t *)indices)[i];
  case SIMDPOOL_INDEX_NONE:
    break;
  }
  return 0;
}

/* The bulk index checks of isa's width (the baseline ones for scalar). */
typedef int (*bulk_check_fn)(const sp_geom *, const void *);
typedef struct bulk_checks {
  bulk_check_fn flat, u8, box2; /* box2: 2x2x2/s2 plans' flat indices */
} bulk_checks;

static bulk_checks bulk_checks_for(simdpool_isa isa) {
  switch (isa) {
#if SIMDPOOL_HAVE_SSE41
  case SIMDPOOL_ISA_SSE41:
    return (bulk_checks){sp_flat_indices_ok_sse41, sp_u8_indices_ok_sse41,
                         sp_2x2x2_indices_ok_sse41};
#endif
#if SIMDPOOL_HAVE_AVX2
  case SIMDPOOL_ISA_AVX2:
    return (bulk_checks){sp_flat_indices_ok_avx2, sp_u8_indices_ok_avx2,
                         sp_2x2x2_indices_ok_avx2};
#endif
#if SIMDPOOL_HAVE_AVX512
  case SIMDPOOL_ISA_AVX512:
    return (bulk_checks){sp_flat_indices_ok_avx512, sp_u8_indices_ok_avx512,
                         sp_2x2x2_indices_ok_avx512};
#endif
#if SIMDPOOL_HAVE_NEON
  case SIMDPOOL_ISA_NEON:
    return (bulk_checks){sp_flat_indices_ok_neon, sp_u8_indices_ok_neon,
                         sp_2x2x2_indices_ok_neon};
#endif
  default:
    return (bulk_checks){sp_flat_indices_ok_base, sp_u8_indices_ok_base,
                         sp_2x2x2_indices_ok_base};
  }
}

/* Is v a valid tap of window axis a over an input of `in` positions? */
static int axis_tap_ok(sp_win a, size_t in, size_t v) {
  if (v >= in || (ptrdiff_t)v < a.start)
    return 0;
  const size_t rel = (size_t)((ptrdiff_t)v - a.start);
  return rel % a.dil == 0 && rel / a.dil < a.k;
}

/* flat_ok with a depth axis: slices of the window are dd*h*w apart and a
 * slice's rows and columns span less than h*w, so v decomposes uniquely by
 * subtraction too. */
static int flat3_ok(const sp_geom *g, long long v, ic_taps sl, ic_taps row,
                    ic_taps col) {
  if (v < 0)
    return 0;
  const size_t base = (sl.first * g->h + row.first) * g->w + col.first;
  if ((unsigned long long)v < base)
    return 0;
  size_t rel = (size_t)v - base;
  const size_t slice_step = g->dd * g->h * g->w;
  for (size_t a = 1; a < sl.count && rel >= slice_step; a++)
    rel -= slice_step;
  const size_t row_step = g->dh * g->w;
  for (size_t a = 1; a < row.count && rel >= row_step; a++)
    rel -= row_step;
  return rel <= (col.count - 1) * g->dw && (g->dw == 1 || rel % g->dw == 0);
}

/* Is flat index v a tap of the whole 2x2x2 window at flat position base? */
static inline int tap_of_2x2x2(long long v, long long base, long long w,
                               long long hw) {
  /* Unsigned: a corrupt v near LLONG_MIN must wrap, not overflow; the
   * equalities below hold exactly when they would in exact arithmetic. */
  const unsigned long long r = (unsigned long long)v - (unsigned long long)base;
  const unsigned long long uw = (unsigned long long)w,
                           uhw = (unsigned long long)hw;
  return (r == 0) | (r == 1) | (r == uw) | (r == uw + 1) | (r == uhw) |
         (r == uhw + 1) | (r == uhw + uw) | (r == uhw + uw + 1);
}

/* sp_find_bad_index for the 2x2x2/s2 class (every window whole): the bulk
 * pass of the plan's ISA first (kernels/index_check.h), then, only when it
 * does not show every index valid, a walk that finds the first bad one. */
static size_t find_bad_2x2x2(const sp_geom *g, const bulk_checks *bulk,
                             const void *indices, long long *value) {
  if (bulk->box2(g, indices))
    return SIZE_MAX;
  const size_t planes = g->layout == SIMDPOOL_NHWC ? g->n : g->n * g->c;
  const size_t lanes = g->layout == SIMDPOOL_NHWC ? g->c : 1;
  const long long w = (long long)g->w, hw = (long long)(g->h * g->w);
  size_t o = 0;
  for (size_t pl = 0; pl < planes; pl++)
    for (size_t od = 0; od < g->od; od++)
      for (size_t oy = 0; oy < g->oh; oy++)
        for (size_t ox = 0; ox < g->ow; ox++) {
          const long long base =
              (long long)((2 * od * g->h + 2 * oy) * g->w + 2 * ox);
          for (size_t l = 0; l < lanes; l++, o++) {
            *value = index_value(g->index_type, indices, o);
            if (!tap_of_2x2x2(*value, base, w, hw))
              return o;
          }
        }
  return SIZE_MAX;
}

/* sp_find_bad_index for plans with a depth axis or adaptive windows: each
 * index decomposed into its axes, one output at a time (flat indices of
 * fixed windows by flat3_ok, without a division). */
static size_t find_bad_index_nd(const sp_geom *g, simdpool_isa isa,
                                const void *indices, long long *value) {
  if (sp_shape_matches(SP_SHAPE_2X2X2S2, g)) {
    if (g->index_type != SIMDPOOL_INDEX_U8) {
      const bulk_checks bulk = bulk_checks_for(isa);
      return find_bad_2x2x2(g, &bulk, indices, value);
    }
    /* Every window whole: any tap number below 8 is valid. */
    if (ic_u8_below(indices, g->n * g->c * sp_out_plane(g), 8))
      return SIZE_MAX;
  }
  if (!g->adaptive && g->index_type != SIMDPOOL_INDEX_U8) {
    const size_t planes = g->layout == SIMDPOOL_NHWC ? g->n : g->n * g->c;
    const size_t lanes = g->layout == SIMDPOOL_NHWC ? g->c : 1;
    size_t o = 0;
    for (size_t pl = 0; pl < planes; pl++)
      for (size_t od = 0; od < g->od; od++) {
        const ic_taps sl = ic_taps_of(od, g->sd, g->pf, g->kd, g->dd, g->d);
        for (size_t oy = 0; oy < g->oh; oy++) {
          const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, g->dh, g->h);
          for (size_t ox = 0; ox < g->ow; ox++) {
            const ic_taps col =
                ic_taps_of(ox, g->sw, g->pl, g->kw, g->dw, g->w);
            for (size_t l = 0; l < lanes; l++, o++) {
              *value = index_value(g->index_type, indices, o);
              if (!flat3_ok(g, *value, sl, row, col))
                return o;
            }
          }
        }
      }
    return SIZE_MAX;
  }
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t planes = nhwc ? g->n : g->n * g->c;
  const size_t lanes = nhwc ? g->c : 1;
  const size_t plane = sp_in_plane(g), taps2 = g->kh * g->kw;
  size_t o = 0;
  for (size_t pl = 0; pl < planes; pl++)
    for (size_t od = 0; od < g->od; od++) {
      const sp_win wd = sp_win_d(g, od);
      for (size_t oy = 0; oy < g->oh; oy++) {
        const sp_win wh = sp_win_h(g, oy);
        for (size_t ox = 0; ox < g->ow; ox++) {
          const sp_win ww = sp_win_w(g, ox);
          for (size_t l = 0; l < lanes; l++, o++) {
            *value = index_value(g->index_type, indices, o);
            int ok;
            if (g->index_type == SIMDPOOL_INDEX_U8) {
              const size_t t = (size_t)*value;
              ok = t < g->kd * taps2 &&
                   sp_inside(sp_win_at(wd, t / taps2), g->d) &&
                   sp_inside(sp_win_at(wh, t % taps2 / g->kw), g->h) &&
                   sp_inside(sp_win_at(ww, t % g->kw), g->w);
            } else {
              const size_t v = (size_t)*value;
              ok = *value >= 0 && v < plane &&
                   axis_tap_ok(wd, g->d, v / (g->h * g->w)) &&
                   axis_tap_ok(wh, g->h, v / g->w % g->h) &&
                   axis_tap_ok(ww, g->w, v % g->w);
            }
            if (!ok)
              return o;
          }
        }
      }
    }
  return SIZE_MAX;
}

/* Checks that every index names a valid tap of its own window, so kernels
 * can trust them. Returns the first bad element or SIZE_MAX. */
size_t sp_find_bad_index(const sp_geom *g, simdpool_isa isa,
                         const void *indices, long long *value) {
  if (!sp_geom_2d(g))
    return find_bad_index_nd(g, isa, indices, value);
  /* U8 tap numbers -> (kernel row, kernel column), without divisions. */
  uint8_t tap_row[256], tap_col[256];
  const size_t ntaps = g->index_type == SIMDPOOL_INDEX_U8 ? g->kh * g->kw : 0;
  for (size_t t = 0, ki = 0, kj = 0; t < ntaps; t++) {
    tap_row[t] = (uint8_t)ki;
    tap_col[t] = (uint8_t)kj;
    if (++kj == g->kw) {
      kj = 0;
      ki++;
    }
  }
  const ic_span in = ic_interior(g);
  /* One tight pass for U8 when no window touches padding, else the bulk
   * passes of the plan's ISA (kernels/index_check.h: U8 with any padding,
   * flat indices of undilated windows). A failing pass falls through to the
   * general walk, which also finds the first bad element. */
  const size_t eh = g->dh * (g->kh - 1) + 1;
  const int no_padding = g->pt == 0 && (g->oh - 1) * g->sh + eh <= g->h &&
                         in.lo == 0 && in.hi == g->ow;
  if (no_padding && ntaps &&
      ic_u8_below((const uint8_t *)indices, g->n * g->c * g->oh * g->ow, ntaps))
    return SIZE_MAX;
  const bulk_checks bulk = bulk_checks_for(isa);
  if (ntaps ? bulk.u8(g, indices) : bulk.flat(g, indices))
    return SIZE_MAX;
  const int nhwc = g->layout == SIMDPOOL_NHWC;
  const size_t planes = nhwc ? g->n : g->n * g->c; /* outer loop */
  const size_t lanes = nhwc ? g->c : 1;            /* innermost run */
  size_t o = 0;
  for (size_t pl = 0; pl < planes; pl++) {
    for (size_t oy = 0; oy < g->oh; oy++) {
      const ic_taps row = ic_taps_of(oy, g->sh, g->pt, g->kh, g->dh, g->h);
      for (size_t ox = 0; ox < g->ow; ox++) {
        /* U8 over a full row's interior windows: every tap number below
         * kernel_h*kernel_w names a valid tap, one vectorisable pass. */
        if (ntaps && ox == in.lo && in.lo < in.hi && row.count == g->kh &&
            ic_u8_below((const uint8_t *)indices + o, (in.hi - in.lo) * lanes,
                        ntaps)) {
          o += (in.hi - in.lo) * lanes;
          ox = in.hi - 1;
          continue;
        }
        ic_taps col;
        if (ox >= in.lo && ox < in.hi) {
          col.first = ox * g->sw - g->pl;
          col.count = g->kw;
          col.k0 = 0;
        } else {
          col = ic_taps_of(ox, g->sw, g->pl, g->kw, g->dw, g->w);
        }
        for (size_t l = 0; l < lanes; l++, o++) {
          int ok;
          *value = index_value(g->index_type, indices, o);
          if (g->index_type == SIMDPOOL_INDEX_U8) {
            const size_t t = (size_t)*value;
            ok = t < ntaps && tap_row[t] >= row.k0 &&
                 tap_row[t] < row.k0 + row.count && tap_col[t] >= col.k0 &&
                 tap_col[t] < col.k0 + col.count;
          } else {
            ok = flat_ok(g, *value, row, col);
          }
          if (!ok)
            return o;
        }
      }
    }
  }
  return SIZE_MAX;
}

/* ------------------------------------------------------------ checks */

/* The bytes one tensor of the call spans. */
typedef struct span {
  uintptr_t lo, hi; /* [lo, hi); lo == hi for an absent tensor */
} span;

static span span_of(const void *p, size_t bytes) {
  span r = {(uintptr_t)p, (uintptr_t)p};
  if (p)
    r.hi += bytes;
  return r;
}

static int overlap(span a, span b) {
  return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

/* Two tensors of a call that must share no byte, and how a message names
 * them when they do. */
typedef struct clash {
  span a, b;
  const char *what;
} clash;

/* Fails with INVALID_ARGUMENT naming the first overlapping pair, if any. */
static simdpool_status check_distinct(const clash *c, size_t n,
                                      const char *fn) {
  for (size_t i = 0; i < n; i++)
    if (overlap(c[i].a, c[i].b))
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s: %s (the call reads and writes distinct buffers)", fn,
                     c[i].what);
  return SIMDPOOL_OK;
}

/* Dense element counts (indices); x, y, dy and dx span sp_x_elems() and
 * sp_y_elems() elements (pixel strides). Bounded at plan creation. */
static size_t out_elems(const sp_geom *g) {
  return g->n * g->c * sp_out_plane(g);
}

/* The checks of a forward call; on success the kernel may run. */
static simdpool_status check_forward(const simdpool_plan *plan, const void *x,
                                     const void *y, const void *indices,
                                     const char *fn) {
  if (!plan)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s: plan is NULL", fn);
  if (!x || !y)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                   !x ? "x" : "y");
  const sp_geom *g = &plan->geom;
  const int has_index = g->index_type != SIMDPOOL_INDEX_NONE;
  if (has_index && !indices)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s: indices is NULL but the plan writes indices "
                   "(index_type=%s)",
                   fn, sp_index_type_name(g->index_type));
  if (!has_index && indices)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s: indices given but the plan has index_type=NONE", fn);
  const span sx = span_of(x, sp_x_bytes(g));
  const span sy = span_of(y, sp_y_bytes(g));
  const span si = span_of(indices, out_elems(g) * sp_index_size(g->index_type));
  const clash c[] = {{sx, sy, "x and y overlap"},
                     {sx, si, "x and indices overlap"},
                     {sy, si, "y and indices overlap"}};
  return check_distinct(c, 3, fn);
}

/* The caller's parallel-for, for the checks that can use it. */
typedef struct par_for {
  simdpool_parallel_for_fn fn;
  void *pool;
} par_for;

/* The first index that names no valid tap of its own window, or SIZE_MAX
 * (*value: the bad index): chunk by chunk through the caller's parallel-for
 * when par is given, else at the width of the plan's ISA. */
static size_t first_bad_tap(const simdpool_plan *plan, const void *indices,
                            const par_for *par, long long *value) {
  if (!par)
    return sp_find_bad_index(&plan->geom, plan->isa, indices, value);
  const size_t bad = sp_find_bad_parallel(plan, indices, par->fn, par->pool);
  if (bad != SIZE_MAX)
    *value = index_value(plan->geom.index_type, indices, bad);
  return bad;
}

/* The checks of a backward call (index validation included); on success *op
 * is the kernel to run. */
static simdpool_status check_backward(const simdpool_plan *plan, const void *dy,
                                      const void *indices, const void *x,
                                      const void *dx, const char *fn, sp_op *op,
                                      const par_for *par) {
  if (!plan)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s: plan is NULL", fn);
  if (!dy || !dx)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                   !dy ? "dy" : "dx");
  const sp_geom *g = &plan->geom;
  if (sp_dtype_integer(g->dtype))
    return sp_fail(SIMDPOOL_UNSUPPORTED,
                   "%s: dtype=%s plans are forward only (backward exists "
                   "for F32, BF16 and F16)",
                   fn, sp_dtype_name(g->dtype));
  if (g->clamp) /* no floating-point work here: the bounds' text is ready */
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s: the plan has an output clamp (%s), which applies to "
                   "forward only: make a plan without one for backward",
                   fn, plan->clamp_text);
  *op = SP_OP_BWD;
  if (indices) {
    if (g->index_type == SIMDPOOL_INDEX_NONE)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s: indices given but the plan has no index type "
                     "(only MAX plans with index_type I32, I64 or U8 have "
                     "indices)",
                     fn);
    *op = SP_OP_BWD_IDX;
  } else if (g->method != SIMDPOOL_AVG && !x) {
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   g->method == SIMDPOOL_MAX
                       ? "%s: MAX needs indices or x, both are NULL"
                       : "%s: LP needs x, it is NULL",
                   fn);
  }
  /* Only the tensors the kernel reads count: AVG ignores x, and MAX from
   * indices ignores x too. */
  const int reads_x = *op == SP_OP_BWD && g->method != SIMDPOOL_AVG;
  const span sdx = span_of(dx, sp_x_bytes(g));
  const span sdy = span_of(dy, sp_y_bytes(g));
  const span sx = span_of(reads_x ? x : NULL, sp_x_bytes(g));
  const span si = span_of(indices, out_elems(g) * sp_index_size(g->index_type));
  const clash c[] = {{sdx, sdy, "dx overlaps dy"},
                     {sdx, sx, "dx overlaps x"},
                     {sdx, si, "dx overlaps indices"}};
  const simdpool_status st = check_distinct(c, 3, fn);
  if (st != SIMDPOOL_OK)
    return st;
  if (indices) {
    long long value = 0;
    const size_t bad = first_bad_tap(plan, indices, par, &value);
    if (bad != SIZE_MAX)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s: indices[%zu] = %lld names no valid tap of "
                     "its window",
                     fn, bad, value);
  }
  return SIMDPOOL_OK;
}

/* ------------------------------------------------------------ entry points */

/* A serial call: the plan's kernel on the whole call, or where it is an
 * f32 kernel of a plan that widens (plan->widen) chunk by chunk through its
 * f32 scratch. */
static void run_op(const simdpool_plan *plan, sp_op op, const sp_io *io) {
  if (!sp_kernel_takes(plan->kernel[op], plan->geom.dtype))
    sp_run_job(plan, op, io, 0, NULL, NULL, 0);
  else
    sp_call_kernel(plan->kernel[op]->fn, &plan->geom, io);
}

simdpool_status simdpool_forward(const simdpool_plan *plan, const void *x,
                                 void *y, void *indices) {
  const simdpool_status st = check_forward(plan, x, y, indices, "forward");
  if (st != SIMDPOOL_OK)
    return st;
  const sp_io io = {.xv = x, .yv = y, .indices = indices};
  run_op(plan, SP_OP_FWD, &io);
  return SIMDPOOL_OK;
}

simdpool_status simdpool_backward(const simdpool_plan *plan, const void *dy,
                                  const void *indices, const void *x,
                                  void *dx) {
  sp_op op = SP_OP_BWD;
  const simdpool_status st =
      check_backward(plan, dy, indices, x, dx, "backward", &op, NULL);
  if (st != SIMDPOOL_OK)
    return st;
  const sp_io io = {
      .xv = x, .indices = (void *)(uintptr_t)indices, .dyv = dy, .dxv = dx};
  run_op(plan, op, &io);
  return SIMDPOOL_OK;
}

simdpool_status simdpool_forward_parallel(const simdpool_plan *plan,
                                          const void *x, void *y, void *indices,
                                          simdpool_parallel_for_fn parallel_for,
                                          void *pool) {
  const simdpool_status st =
      check_forward(plan, x, y, indices, "forward_parallel");
  if (st != SIMDPOOL_OK)
    return st;
  const sp_io io = {.xv = x, .yv = y, .indices = indices};
  sp_run_parallel(plan, SP_OP_FWD, &io, parallel_for, pool);
  return SIMDPOOL_OK;
}

simdpool_status
simdpool_backward_parallel(const simdpool_plan *plan, const void *dy,
                           const void *indices, const void *x, void *dx,
                           simdpool_parallel_for_fn parallel_for, void *pool) {
  sp_op op = SP_OP_BWD;
  const par_for par = {parallel_for, pool};
  const simdpool_status st =
      check_backward(plan, dy, indices, x, dx, "backward_parallel", &op, &par);
  if (st != SIMDPOOL_OK)
    return st;
  const sp_io io = {
      .xv = x, .indices = (void *)(uintptr_t)indices, .dyv = dy, .dxv = dx};
  sp_run_parallel(plan, op, &io, parallel_for, pool);
  return SIMDPOOL_OK;
}

/* ------------------------------------------------------------ unpooling */

/* The first I32/I64 index outside its plane ([0, d*h*w)), or SIZE_MAX.
 * Blocks are scanned without an early exit (they vectorise), and only a
 * block that holds a bad index is walked again to find it. */
static size_t find_outside_plane(const sp_geom *g, const void *indices,
                                 long long *value) {
  const size_t count = out_elems(g), plane = sp_in_plane(g);
  const int i64 = g->index_type == SIMDPOOL_INDEX_I64;
  enum { BLOCK = 1024 };
  for (size_t b = 0; b < count; b += BLOCK) {
    const size_t e = count - b < BLOCK ? count : b + BLOCK;
    int bad = 0;
    if (i64) {
      const int64_t *ix = indices;
      for (size_t i = b; i < e; i++)
        bad |= (uint64_t)ix[i] >= (uint64_t)plane;
    } else {
      const int32_t *ix = indices;
      for (size_t i = b; i < e; i++)
        bad |= (uint64_t)(uint32_t)ix[i] >= (uint64_t)plane;
    }
    if (!bad)
      continue;
    for (size_t i = b; i < e; i++) {
      *value = index_value(g->index_type, indices, i);
      if (*value < 0 || (unsigned long long)*value >= plane)
        return i;
    }
  }
  return SIZE_MAX;
}

/* The checks of an unpooling call (bwd: its backward), index validation
 * included; on success *general tells whether some index is not a tap of
 * its own window, so that the plan's fast kernel (which relies on that)
 * must not run. */
static simdpool_status check_unpool(const simdpool_plan *plan, const void *src,
                                    const void *indices, const void *dst,
                                    int bwd, const char *fn, const par_for *par,
                                    int *general) {
  const char *src_name = bwd ? "dx" : "y", *dst_name = bwd ? "dy" : "x";
  if (!plan)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s: plan is NULL", fn);
  if (!src || !indices || !dst)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                   !src       ? src_name
                   : !indices ? "indices"
                              : dst_name);
  const sp_geom *g = &plan->geom;
  if (g->method != SIMDPOOL_MAX || g->index_type == SIMDPOOL_INDEX_NONE)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "%s: unpooling needs a MAX plan with an index type (I32, "
                   "I64 or U8); this plan has method=%s, index_type=%s",
                   fn, sp_method_name(g->method),
                   sp_index_type_name(g->index_type));
  /* dst is input-shaped for unpooling, output-shaped for its backward. */
  const size_t xb = sp_x_bytes(g), yb = sp_y_bytes(g);
  const span sd = span_of(dst, bwd ? yb : xb);
  const span ss = span_of(src, bwd ? xb : yb);
  const span si = span_of(indices, out_elems(g) * sp_index_size(g->index_type));
  char what_s[32], what_i[32];
  snprintf(what_s, sizeof what_s, "%s overlaps %s", dst_name, src_name);
  snprintf(what_i, sizeof what_i, "%s overlaps indices", dst_name);
  const clash c[] = {{sd, ss, what_s}, {sd, si, what_i}};
  simdpool_status st = check_distinct(c, 2, fn);
  if (st != SIMDPOOL_OK)
    return st;
  const sp_op op = bwd ? SP_OP_UNPOOL_BWD : SP_OP_UNPOOL;
  const int u8 = g->index_type == SIMDPOOL_INDEX_U8;
  *general = 1;
  long long value = 0;
  size_t bad = SIZE_MAX;
  /* U8 tap numbers must name valid taps; flat indices are checked as taps
   * of their windows only when the plan's kernel relies on it. */
  if (u8 || !sp_is_general(plan->kernel[op])) {
    bad = first_bad_tap(plan, indices, par, &value);
    if (bad == SIZE_MAX)
      *general = 0;
    else if (u8)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s: indices[%zu] = %lld names no valid tap of its "
                     "window",
                     fn, bad, value);
  }
  if (*general) {
    bad = find_outside_plane(g, indices, &value);
    if (bad != SIZE_MAX)
      return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                     "%s: indices[%zu] = %lld is outside its input plane "
                     "(0 <= index < d*h*w = %zu)",
                     fn, bad, value, sp_in_plane(g));
  }
  return SIMDPOOL_OK;
}

/* Unpooling reads y (as dy) and writes x (as dx); its backward reads dx
 * (as x) and writes dy (as y): see sp_io. */
static sp_io unpool_io(int bwd, const void *src, const void *indices,
                       void *dst) {
  sp_io io = {.indices = (void *)(uintptr_t)indices};
  if (bwd) {
    io.xv = src;
    io.yv = dst;
  } else {
    io.dyv = src;
    io.dxv = dst;
  }
  return io;
}

static simdpool_status unpool_call(const simdpool_plan *plan, const void *src,
                                   const void *indices, void *dst, int bwd,
                                   const char *fn, const par_for *par) {
  int general = 0;
  const simdpool_status st =
      check_unpool(plan, src, indices, dst, bwd, fn, par, &general);
  if (st != SIMDPOOL_OK)
    return st;
  const sp_op op = bwd ? SP_OP_UNPOOL_BWD : SP_OP_UNPOOL;
  const sp_io io = unpool_io(bwd, src, indices, dst);
  const sp_kernel_entry *k = general ? plan->any_index[op] : plan->kernel[op];
  if (par || !sp_kernel_takes(k, plan->geom.dtype))
    sp_run_job(plan, op, &io, general, par ? par->fn : NULL,
               par ? par->pool : NULL, 0);
  else
    sp_call_kernel(k->fn, &plan->geom, &io);
  return SIMDPOOL_OK;
}

simdpool_status simdpool_unpool(const simdpool_plan *plan, const void *y,
                                const void *indices, void *x) {
  return unpool_call(plan, y, indices, x, 0, "unpool", NULL);
}

simdpool_status simdpool_unpool_backward(const simdpool_plan *plan,
                                         const void *dx, const void *indices,
                                         void *dy) {
  return unpool_call(plan, dx, indices, dy, 1, "unpool_backward", NULL);
}

simdpool_status simdpool_unpool_parallel(const simdpool_plan *plan,
                                         const void *y, const void *indices,
                                         void *x,
                                         simdpool_parallel_for_fn parallel_for,
                                         void *pool) {
  const par_for par = {parallel_for, pool};
  return unpool_call(plan, y, indices, x, 0, "unpool_parallel", &par);
}

simdpool_status simdpool_unpool_backward_parallel(
    const simdpool_plan *plan, const void *dx, const void *indices, void *dy,
    simdpool_parallel_for_fn parallel_for, void *pool) {
  const par_for par = {parallel_for, pool};
  return unpool_call(plan, dx, indices, dy, 1, "unpool_backward_parallel",
                     &par);
}
