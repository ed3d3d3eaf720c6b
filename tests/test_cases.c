/* SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
/* test_cases.c — hand-computed golden cases, rejection rules and API basics
 * of simdpool's public API, run on every ISA this machine supports.
 *
 * Where the numbers come from: every expected value below was computed by
 * hand from the rules of docs/semantics.md or taken from the
 * two seed texts (001: the worked 4x4 example; 000: the NCHW reference with
 * np.argmax ties), or is an obvious formula written next to it (S / 9.0f,
 * sqrtf(2.0f), ...). None was copied from the library's output.
 *
 * Every comparison is bit for bit (uint32 compare of f32 bits, exact integer
 * compare of indices). Golden cases are written once, in NCHW, and each runs
 * in four variants built by plain data movement: as written; converted to
 * NHWC; NHWC with every channel copied 37 times (so SIMD lanes over channels
 * and their tails see it); and, where windows tile the row exactly, NCHW with
 * every row repeated 37 times side by side (lanes over output columns). Each
 * variant runs with every index type that applies (MAX: none, i32, i64, u8),
 * backward from indices and recomputed from x. */

#include "check_quiet.h"
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool.h"

#ifndef EXPECT_SLEEF
#error "EXPECT_SLEEF must be 0 or 1 (tests/meson.build sets it)"
#endif

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define N_ISAS 5  /* SCALAR, SSE41, AVX2, AVX512, NEON: loop tests' _i */
#define T_REPL 37 /* channel copies / row tiles of the widened variants */
#define CANON_NAN 0x7fc00000u

static int g_forked; /* Check runs each test in a fresh child process */

/* ---- small helpers ---------------------------------------------------- */

static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* Builds a float from its bits. On x86-64 (SSE) and aarch64 a float moves
 * through registers unchanged, so signalling NaNs keep their bits. */
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    ck_abort_msg("out of memory (%zu bytes)", n);
  return p;
}

static void fill_sentinel(void *p, size_t bytes) {
  memset(p, 0xa5, bytes);
}

static int is_sentinel(const void *p, size_t bytes) {
  const unsigned char *b = p;
  for (size_t i = 0; i < bytes; ++i)
    if (b[i] != 0xa5)
      return 0;
  return 1;
}

/* Compares f32 bits; reports the first difference in hex. */
static void check_f32(const float *got, const float *want, size_t n,
                      const char *ctx, const char *what) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t g, w;
    memcpy(&g, got + i, sizeof g);
    memcpy(&w, want + i, sizeof w);
    if (g != w)
      ck_abort_msg("%s: %s[%zu] = 0x%08x (%.9g), expected 0x%08x (%.9g)", ctx,
                   what, i, (unsigned)g, (double)u2f(g), (unsigned)w,
                   (double)u2f(w));
  }
}

static const char *it_name(simdpool_index_type it) {
  switch (it) {
  case SIMDPOOL_INDEX_NONE:
    return "none";
  case SIMDPOOL_INDEX_I32:
    return "i32";
  case SIMDPOOL_INDEX_I64:
    return "i64";
  case SIMDPOOL_INDEX_U8:
    return "u8";
  }
  return "?";
}

/* A desc built field by field (the golden cases do not depend on
 * simdpool_desc_init, which has its own test): NCHW, the given shape, window
 * and stride; dilation 1, no padding, floor mode, count_include_pad 1, p 2,
 * no indices, ISA AUTO. */
static simdpool_desc mk(simdpool_method m, size_t n, size_t c, size_t h,
                        size_t w, size_t kh, size_t kw, size_t sh, size_t sw) {
  simdpool_desc d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d; /* what simdpool_desc_init records */
  d.method = m;
  d.layout = SIMDPOOL_NCHW;
  d.n = n;
  d.c = c;
  d.h = h;
  d.w = w;
  d.kernel_h = kh;
  d.kernel_w = kw;
  d.stride_h = sh;
  d.stride_w = sw;
  d.dilation_h = 1;
  d.dilation_w = 1;
  d.padding = SIMDPOOL_PAD_EXPLICIT;
  d.ceil_mode = 0;
  d.count_include_pad = 1;
  d.p = 2.0f;
  d.index_type = SIMDPOOL_INDEX_NONE;
  d.isa = SIMDPOOL_ISA_AUTO;
  d.d = d.kernel_d = d.stride_d = d.dilation_d = 1; /* 2D: a depth of 1 */
  return d;
}

static simdpool_desc with_pads(simdpool_desc d, size_t top, size_t left,
                               size_t bottom, size_t right) {
  d.pad_top = top;
  d.pad_left = left;
  d.pad_bottom = bottom;
  d.pad_right = right;
  return d;
}

static simdpool_desc with_cip(simdpool_desc d, int cip) {
  d.count_include_pad = cip;
  return d;
}

/* Loop tests run once per ISA: _i = 0..4 is SCALAR..NEON. Prints whether the
 * ISA runs here and returns 0 (skip) when this build or CPU lacks it. */
static int loop_isa(int i, const char *test, simdpool_isa *isa) {
  *isa = (simdpool_isa)(SIMDPOOL_ISA_SCALAR + i);
  if (!simdpool_isa_supported(*isa)) {
    printf("  %-28s isa %-7s skipped: simdpool_isa_supported() == 0 "
           "(not in this build or not on this CPU)\n",
           test, simdpool_isa_name(*isa));
    return 0;
  }
  printf("  %-28s isa %-7s runs (forced via desc.isa)\n", test,
         simdpool_isa_name(*isa));
  return 1;
}

/* ---- golden runner ---------------------------------------------------- */

/* One hand-computed case, NCHW. */
typedef struct golden {
  const char *name;
  simdpool_desc d;     /* NCHW; the runner sets layout, isa, index_type */
  size_t out_h, out_w; /* hand-computed */
  const float *x;      /* (n, c, h, w) */
  const float *y;      /* (n, c, out_h, out_w) */
  const int64_t *idx;  /* MAX: ih * w + iw of each winner, or NULL */
  const uint8_t *tap;  /* MAX: kh_i * kernel_w + kw_i of each winner */
  const float *dy;     /* NULL: forward only */
  const float *dx;     /* NULL for MAX: scattered from idx and dy */
} golden;

/* One variant of a golden case, owning its arrays. */
typedef struct tens {
  const char *variant;
  simdpool_desc d;
  size_t oh, ow;
  float *x, *y, *dy, *dx;
  int64_t *idx;
  uint8_t *tap;
} tens;

/* MAX backward by its definition (docs/semantics.md#max-backward): dx = +0.0f,
 * then for each output in order dx[winner] += dy. Used where a case lists its
 * winners (by hand) but not dx; all such cases use small integers, so sums are
 * exact. */
static float *scatter_dx(const golden *g) {
  size_t planes = g->d.n * g->d.c, hw = g->d.h * g->d.w;
  size_t ohw = g->out_h * g->out_w;
  float *dx = xmalloc(planes * hw * sizeof *dx);
  for (size_t i = 0; i < planes * hw; ++i)
    dx[i] = 0.0f;
  for (size_t p = 0; p < planes; ++p)
    for (size_t k = 0; k < ohw; ++k)
      dx[p * hw + (size_t)g->idx[p * ohw + k]] += g->dy[p * ohw + k];
  return dx;
}

/* Moves an NCHW tensor (n, c, hw), rows of width w, into variant `kind`:
 * 0 copy; 1 NHWC; 2 NHWC with channel k a copy of source channel k % c,
 * c * T_REPL channels; 3 each row repeated T_REPL times side by side. */
static void *remap(const void *src, size_t esz, int kind, size_t n, size_t c,
                   size_t hw, size_t w) {
  const unsigned char *s = src;
  unsigned char *dst;
  if (!src)
    return NULL;
  if (kind == 0) {
    dst = xmalloc(n * c * hw * esz);
    memcpy(dst, s, n * c * hw * esz);
  } else if (kind == 1 || kind == 2) {
    size_t cr = c * (kind == 1 ? 1 : T_REPL);
    dst = xmalloc(n * hw * cr * esz);
    for (size_t b = 0; b < n; ++b)
      for (size_t i = 0; i < hw; ++i)
        for (size_t k = 0; k < cr; ++k)
          memcpy(dst + ((b * hw + i) * cr + k) * esz,
                 s + ((b * c + k % c) * hw + i) * esz, esz);
  } else {
    size_t rows = n * c * hw / w;
    dst = xmalloc(rows * w * T_REPL * esz);
    for (size_t r = 0; r < rows; ++r)
      for (size_t t = 0; t < T_REPL; ++t)
        memcpy(dst + (r * T_REPL + t) * w * esz, s + r * w * esz, w * esz);
  }
  return dst;
}

static int make_variant(const golden *g, const float *dx, int kind, tens *t) {
  const simdpool_desc *d = &g->d;
  size_t n = d->n, c = d->c, hw = d->h * d->w, w = d->w;
  size_t ohw = g->out_h * g->out_w, ow = g->out_w;
  memset(t, 0, sizeof *t);
  t->d = *d;
  t->oh = g->out_h;
  t->ow = g->out_w;
  switch (kind) {
  case 0:
    t->variant = "nchw";
    break;
  case 1:
    t->variant = "nhwc";
    t->d.layout = SIMDPOOL_NHWC;
    break;
  case 2:
    t->variant = "nhwc, channels x37";
    t->d.layout = SIMDPOOL_NHWC;
    t->d.c *= T_REPL;
    break;
  default:
    /* Tiling rows keeps every window inside one copy only when the windows
     * cover each row exactly, side by side, without horizontal padding. */
    if (d->dilation_w != 1 || d->stride_w != d->kernel_w || d->pad_left ||
        d->pad_right || g->out_w * d->kernel_w != d->w)
      return 0;
    t->variant = "nchw, rows tiled x37";
    t->d.w *= T_REPL;
    t->ow *= T_REPL;
    break;
  }
  t->x = remap(g->x, sizeof(float), kind, n, c, hw, w);
  t->dx = remap(dx, sizeof(float), kind, n, c, hw, w);
  t->y = remap(g->y, sizeof(float), kind, n, c, ohw, ow);
  t->dy = remap(g->dy, sizeof(float), kind, n, c, ohw, ow);
  t->idx = remap(g->idx, sizeof(int64_t), kind, n, c, ohw, ow);
  t->tap = remap(g->tap, sizeof(uint8_t), kind, n, c, ohw, ow);
  if (kind == 3 && t->idx) {
    /* Copy j of a row holds input column iw at j * w + iw of a row that is
     * w * T_REPL wide: ih * w + iw becomes ih * w * T + j * w + iw. */
    size_t rows = n * c * g->out_h;
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < T_REPL; ++j)
        for (size_t o = 0; o < ow; ++o) {
          int64_t *v = &t->idx[(r * T_REPL + j) * ow + o];
          int64_t ih = *v / (int64_t)w, iw = *v % (int64_t)w;
          *v = ih * (int64_t)(w * T_REPL) + (int64_t)(j * w) + iw;
        }
  }
  return 1;
}

static void free_tens(tens *t) {
  free(t->x);
  free(t->y);
  free(t->dy);
  free(t->dx);
  free(t->idx);
  free(t->tap);
}

/* The expected indices of a variant as the index type's C type. */
static void *typed_indices(const tens *t, simdpool_index_type it, size_t ny) {
  unsigned char *b = xmalloc(ny * 8);
  for (size_t k = 0; k < ny; ++k) {
    if (it == SIMDPOOL_INDEX_I32) {
      int32_t v = (int32_t)t->idx[k];
      memcpy(b + k * 4, &v, 4);
    } else if (it == SIMDPOOL_INDEX_I64) {
      memcpy(b + k * 8, &t->idx[k], 8);
    } else {
      b[k] = t->tap[k];
    }
  }
  return b;
}

static void check_indices(const void *got, simdpool_index_type it,
                          const tens *t, size_t ny, const char *ctx) {
  const unsigned char *b = got;
  for (size_t k = 0; k < ny; ++k) {
    long long g, w;
    if (it == SIMDPOOL_INDEX_I32) {
      int32_t v;
      memcpy(&v, b + k * 4, 4);
      g = v;
      w = t->idx[k];
    } else if (it == SIMDPOOL_INDEX_I64) {
      int64_t v;
      memcpy(&v, b + k * 8, 8);
      g = v;
      w = t->idx[k];
    } else {
      g = b[k];
      w = t->tap[k];
    }
    if (g != w)
      ck_abort_msg("%s: indices[%zu] = %lld, expected %lld", ctx, k, g, w);
  }
}

static void expect_ok(simdpool_status st, const char *ctx, const char *call) {
  if (st != SIMDPOOL_OK)
    ck_abort_msg("%s: %s returned %d: %s", ctx, call, (int)st,
                 simdpool_last_error());
}

static void run_backward(const simdpool_plan *plan, const tens *t,
                         simdpool_index_type it, size_t nx, size_t ny,
                         const char *ctx) {
  float *dx = xmalloc(nx * sizeof *dx);
  if (t->d.method == SIMDPOOL_MAX) {
    if (it != SIMDPOOL_INDEX_NONE) {
      /* From the expected indices (not forward's), so backward is checked
       * on its own; then again with an x of zeros that would pick other
       * winners: with indices given, x must not matter. */
      void *ib = typed_indices(t, it, ny);
      float *zx = xmalloc(nx * sizeof *zx);
      for (size_t i = 0; i < nx; ++i)
        zx[i] = 0.0f;
      fill_sentinel(dx, nx * sizeof *dx);
      expect_ok(simdpool_backward(plan, t->dy, ib, NULL, dx), ctx,
                "backward(indices)");
      check_f32(dx, t->dx, nx, ctx, "dx from indices");
      fill_sentinel(dx, nx * sizeof *dx);
      expect_ok(simdpool_backward(plan, t->dy, ib, zx, dx), ctx,
                "backward(indices, zero x)");
      check_f32(dx, t->dx, nx, ctx, "dx from indices (x of zeros given)");
      free(zx);
      free(ib);
    }
    fill_sentinel(dx, nx * sizeof *dx);
    expect_ok(simdpool_backward(plan, t->dy, NULL, t->x, dx), ctx,
              "backward(x)");
    check_f32(dx, t->dx, nx, ctx, "dx recomputed from x");
  } else if (t->d.method == SIMDPOOL_AVG) {
    fill_sentinel(dx, nx * sizeof *dx);
    expect_ok(simdpool_backward(plan, t->dy, NULL, NULL, dx), ctx,
              "backward(avg)");
    check_f32(dx, t->dx, nx, ctx, "dx");
    fill_sentinel(dx, nx * sizeof *dx);
    expect_ok(simdpool_backward(plan, t->dy, NULL, t->x, dx), ctx,
              "backward(avg, x)");
    check_f32(dx, t->dx, nx, ctx, "dx (x given, ignored)");
  } else {
    fill_sentinel(dx, nx * sizeof *dx);
    expect_ok(simdpool_backward(plan, t->dy, NULL, t->x, dx), ctx,
              "backward(lp)");
    check_f32(dx, t->dx, nx, ctx, "dx");
  }
  free(dx);
}

static void run_tens(const tens *t, simdpool_isa isa, const char *name) {
  simdpool_index_type its[4];
  size_t nits = 0;
  size_t nx = t->d.n * t->d.c * t->d.h * t->d.w;
  size_t ny = t->d.n * t->d.c * t->oh * t->ow;
  its[nits++] = SIMDPOOL_INDEX_NONE;
  if (t->d.method == SIMDPOOL_MAX) {
    if (t->idx) {
      its[nits++] = SIMDPOOL_INDEX_I32;
      its[nits++] = SIMDPOOL_INDEX_I64;
    }
    if (t->tap)
      its[nits++] = SIMDPOOL_INDEX_U8;
  }
  for (size_t k = 0; k < nits; ++k) {
    simdpool_index_type it = its[k];
    simdpool_desc d = t->d;
    simdpool_plan *plan = NULL;
    size_t oh = 0, ow = 0;
    unsigned char *ib = NULL;
    float *y;
    char ctx[192];
    snprintf(ctx, sizeof ctx, "%s [%s, isa %s, index %s]", name, t->variant,
             simdpool_isa_name(isa), it_name(it));
    d.isa = isa;
    d.index_type = it;
    expect_ok(simdpool_plan_create(&d, &plan), ctx, "plan_create");
    ck_assert_msg(plan != NULL, "%s: NULL plan", ctx);
    if (simdpool_plan_isa(plan) != isa)
      ck_abort_msg("%s: plan runs isa %s, forced %s", ctx,
                   simdpool_isa_name(simdpool_plan_isa(plan)),
                   simdpool_isa_name(isa));
    simdpool_plan_output_shape(plan, &oh, &ow);
    if (oh != t->oh || ow != t->ow)
      ck_abort_msg("%s: output shape %zux%zu, expected %zux%zu", ctx, oh, ow,
                   t->oh, t->ow);
    y = xmalloc(ny * sizeof *y);
    fill_sentinel(y, ny * sizeof *y);
    if (it != SIMDPOOL_INDEX_NONE) {
      ib = xmalloc(ny * 8);
      fill_sentinel(ib, ny * 8);
    }
    expect_ok(simdpool_forward(plan, t->x, y, ib), ctx, "forward");
    check_f32(y, t->y, ny, ctx, "y");
    if (ib)
      check_indices(ib, it, t, ny, ctx);
    if (t->dy)
      run_backward(plan, t, it, nx, ny, ctx);
    free(y);
    free(ib);
    simdpool_plan_destroy(plan);
  }
}

/* A golden case; arguments in the struct's order. */
static golden gold(const char *name, simdpool_desc d, size_t out_h,
                   size_t out_w, const float *x, const float *y,
                   const int64_t *idx, const uint8_t *tap, const float *dy,
                   const float *dx) {
  golden g = {name, d, out_h, out_w, x, y, idx, tap, dy, dx};
  return g;
}

static void run_golden(const golden *g, simdpool_isa isa) {
  float *scattered = NULL;
  const float *dx = g->dx;
  if (!dx && g->dy && g->idx)
    dx = scattered = scatter_dx(g);
  ck_assert_msg(!g->dy || dx, "%s: the case lists no dx", g->name);
  for (int kind = 0; kind < 4; ++kind) {
    tens t;
    if (!make_variant(g, dx, kind, &t))
      continue;
    run_tens(&t, isa, g->name);
    free_tens(&t);
  }
  free(scattered);
}

/* ---- 1. Seed 001: the worked 4x4 example ------------------------------ */

/* Seed 001's A_prev. */
// clang-format off
static const float kSeedX[16] = {1, 3, 2, 4, 5, 6, 1, 2,
                                 3, 2, 8, 1, 0, 1, 4, 5};
// clang-format on

START_TEST(test_seed001_max) {
  simdpool_isa isa;
  if (!loop_isa(_i, "seed001 max", &isa))
    return;
  /* As printed in the seed: A = [[6,4],[3,8]]; the winners are (1,1), (0,3),
   * (2,0), (2,2), so ih*4+iw = 5, 3, 8, 10 and the taps kh*2+kw inside each
   * 2x2 window are 3, 1, 0, 0. dA = [[1,2],[3,4]] gives the seed's
   * dA_prev. */
  static const float y1[4] = {6, 4, 3, 8};
  static const int64_t i1[4] = {5, 3, 8, 10};
  static const uint8_t t1[4] = {3, 1, 0, 0};
  static const float dy1[4] = {1, 2, 3, 4};
  // clang-format off
  static const float dx1[16] = {0, 0, 0, 2, 0, 1, 0, 0,
                                3, 0, 4, 0, 0, 0, 0, 0};
  // clang-format on
  golden g1 = gold("seed001 max", mk(SIMDPOOL_MAX, 1, 1, 4, 4, 2, 2, 2, 2), 2,
                   2, kSeedX, y1, i1, t1, dy1, dx1);
  run_golden(&g1, isa);

  /* Three channels: c0 = x, c1 = -x (so 0 becomes -0.0f), c2 = x + 10.
   * c1 windows: {-1,-3,-5,-6} -> -1 at (0,0): 0, tap 0;
   * {-2,-4,-1,-2} -> -1 at (1,2): 6, tap (1,0) = 2;
   * {-3,-2,-0,-1} -> -0.0 at (3,0) (-0 > -2 replaces, -1 > -0 does not):
   * 12, tap (1,0) = 2; {-8,-1,-4,-5} -> -1 at (2,3): 11, tap (0,1) = 1.
   * c2 has c0's winners, values + 10. dy per channel: c0 1..4, c1 10..40,
   * c2 -1..-4; dx puts each dy at its winner. */
  // clang-format off
  static const float x3[48] = {
      1,  3,  2,  4,  5,  6,  1,  2,  3,  2,  8,  1,  0,     1,  4,  5,
      -1, -3, -2, -4, -5, -6, -1, -2, -3, -2, -8, -1, -0.0f, -1, -4, -5,
      11, 13, 12, 14, 15, 16, 11, 12, 13, 12, 18, 11, 10,    11, 14, 15};
  // clang-format on
  static const float y3[12] = {6, 4, 3, 8, -1, -1, -0.0f, -1, 16, 14, 13, 18};
  static const int64_t i3[12] = {5, 3, 8, 10, 0, 6, 12, 11, 5, 3, 8, 10};
  static const uint8_t t3[12] = {3, 1, 0, 0, 0, 2, 2, 1, 3, 1, 0, 0};
  static const float dy3[12] = {1, 2, 3, 4, 10, 20, 30, 40, -1, -2, -3, -4};
  // clang-format off
  static const float dx3[48] = {
      0,  0, 0, 2,  0, 1,  0,  0, 3,  0, 4,  0,  0, 0, 0, 0,
      10, 0, 0, 0,  0, 0,  20, 0, 0,  0, 0,  40, 30, 0, 0, 0,
      0,  0, 0, -2, 0, -1, 0,  0, -3, 0, -4, 0,  0, 0, 0, 0};
  // clang-format on
  golden g3 = gold("seed001 max c=3", mk(SIMDPOOL_MAX, 1, 3, 4, 4, 2, 2, 2, 2),
                   2, 2, x3, y3, i3, t3, dy3, dx3);
  run_golden(&g3, isa);
}
END_TEST

START_TEST(test_seed001_avg) {
  simdpool_isa isa;
  if (!loop_isa(_i, "seed001 avg", &isa))
    return;
  /* The seed's 'avg' mode on the same input: window sums 1+3+5+6 = 15,
   * 2+4+1+2 = 9, 3+2+0+1 = 6, 8+1+4+5 = 18, over 4: 3.75, 2.25, 1.5, 4.5.
   * Backward: each window's four cells get dA / 4 = 0.25, 0.5, 0.75, 1. */
  static const float y1[4] = {3.75f, 2.25f, 1.5f, 4.5f};
  static const float dy1[4] = {1, 2, 3, 4};
  // clang-format off
  static const float dx1[16] = {.25f, .25f, .5f, .5f, .25f, .25f, .5f, .5f,
                                .75f, .75f, 1,   1,   .75f, .75f, 1,   1};
  // clang-format on
  golden g1 = gold("seed001 avg", mk(SIMDPOOL_AVG, 1, 1, 4, 4, 2, 2, 2, 2), 2,
                   2, kSeedX, y1, NULL, NULL, dy1, dx1);
  run_golden(&g1, isa);

  /* c1 = -x: the means negate (-3.75, ...; acc 0 + -3 + -2 + -0 + -1 = -6
   * gives -1.5). c2 = x + 10: sums 55, 49, 46, 58 over 4 = 13.75, 12.25,
   * 11.5, 14.5. dy c0 1..4, c1 10..40, c2 -1..-4: each cell gets dy / 4. */
  // clang-format off
  static const float x3[48] = {
      1,  3,  2,  4,  5,  6,  1,  2,  3,  2,  8,  1,  0,     1,  4,  5,
      -1, -3, -2, -4, -5, -6, -1, -2, -3, -2, -8, -1, -0.0f, -1, -4, -5,
      11, 13, 12, 14, 15, 16, 11, 12, 13, 12, 18, 11, 10,    11, 14, 15};
  static const float y3[12] = {3.75f,  2.25f,  1.5f,  4.5f,
                               -3.75f, -2.25f, -1.5f, -4.5f,
                               13.75f, 12.25f, 11.5f, 14.5f};
  // clang-format on
  static const float dy3[12] = {1, 2, 3, 4, 10, 20, 30, 40, -1, -2, -3, -4};
  // clang-format off
  static const float dx3[48] = {
      .25f,  .25f,  .5f,  .5f,  .25f,  .25f,  .5f,  .5f,
      .75f,  .75f,  1,    1,    .75f,  .75f,  1,    1,
      2.5f,  2.5f,  5,    5,    2.5f,  2.5f,  5,    5,
      7.5f,  7.5f,  10,   10,   7.5f,  7.5f,  10,   10,
      -.25f, -.25f, -.5f, -.5f, -.25f, -.25f, -.5f, -.5f,
      -.75f, -.75f, -1,   -1,   -.75f, -.75f, -1,   -1};
  // clang-format on
  golden g3 = gold("seed001 avg c=3", mk(SIMDPOOL_AVG, 1, 3, 4, 4, 2, 2, 2, 2),
                   2, 2, x3, y3, NULL, NULL, dy3, dx3);
  run_golden(&g3, isa);
}
END_TEST

/* ---- 2. Seed 000: NCHW, per-window argmax, first max wins ------------- */

START_TEST(test_seed000_2x2) {
  simdpool_isa isa;
  if (!loop_isa(_i, "seed000 2x2/s2", &isa))
    return;
  /* N=2, C=2, 4x4 planes, kernel (2,2), stride (2,2), as seed 000's
   * MaxPooling: out = floor((4-2)/2)+1 = 2. Planes:
   * q0 (n0,c0) = seed 001's x: 6,4,3,8 at 5,3,8,10 (taps 3,1,0,0).
   * q1 (n0,c1) = all 7: np.argmax gives the first tap: 0,2,8,10, taps 0.
   * q2 (n1,c0): {1,2,2,0} -> first 2 at (0,1): 1, tap 1;
   *   {2,1,0,2} -> (0,2): 2, tap 0; {5,5,5,5} -> (2,0): 8, tap 0;
   *   {-3,-1,-2,-1} -> first -1 at (2,3): 11, tap 1.
   * q3 (n1,c1) = 0..15 ascending: bottom-right wins: 5,7,13,15, taps 3.
   * dy = 1..16 in NCHW order; each goes to its winner. */
  // clang-format off
  static const float x[64] = {
      1, 3, 2, 4, 5, 6, 1, 2, 3, 2, 8, 1, 0,  1,  4,  5,
      7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  7,  7,  7,
      1, 2, 2, 1, 2, 0, 0, 2, 5, 5, -3, -1, 5, 5, -2, -1,
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  static const float y[16] = {6, 4, 3, 8, 7, 7, 7, 7,
                              2, 2, 5, -1, 5, 7, 13, 15};
  static const int64_t idx[16] = {5, 3, 8, 10, 0, 2, 8, 10,
                                  1, 2, 8, 11, 5, 7, 13, 15};
  static const uint8_t tap[16] = {3, 1, 0, 0, 0, 0, 0, 0,
                                  1, 0, 0, 1, 3, 3, 3, 3};
  static const float dy[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                               9, 10, 11, 12, 13, 14, 15, 16};
  static const float dx[64] = {
      0, 0, 0,  2, 0, 1,  0, 0,  3,  0, 4, 0,  0, 0,  0, 0,
      5, 0, 6,  0, 0, 0,  0, 0,  7,  0, 8, 0,  0, 0,  0, 0,
      0, 9, 10, 0, 0, 0,  0, 0,  11, 0, 0, 12, 0, 0,  0, 0,
      0, 0, 0,  0, 0, 13, 0, 14, 0,  0, 0, 0,  0, 15, 0, 16};
  // clang-format on
  golden g = gold("seed000 2x2/s2", mk(SIMDPOOL_MAX, 2, 2, 4, 4, 2, 2, 2, 2), 2,
                  2, x, y, idx, tap, dy, dx);
  run_golden(&g, isa);
}
END_TEST

START_TEST(test_seed000_2x3) {
  simdpool_isa isa;
  if (!loop_isa(_i, "seed000 k2x3/s1x2", &isa))
    return;
  /* N=2, C=2, 4x7 planes, kernel (2,3), stride (1,2): out_h = (4-2)/1+1 = 3,
   * out_w = (7-3)/2+1 = 3. Window (oh,ow) = rows oh..oh+1, cols
   * 2ow..2ow+2; rows and columns overlap (stride < kernel). Inputs:
   * q0[i][j] = 7i+j (ascending): winner (oh+1, 2ow+2), value = index =
   *   7oh+2ow+9, tap (1,2) = 5.
   * q1[i][j] = 100-(7i+j): winner (oh, 2ow), index 7oh+2ow, value 100-that,
   *   tap 0.
   * q2[i][j] = 1 for even j, 2 for odd j: winner (oh, 2ow+1), value 2,
   *   index 7oh+2ow+1, tap 1.
   * q3 = zeros but (1,2) = 9 and (2,4) = 8: windows (0,0),(0,1),(1,0),(1,1)
   *   hold (1,2) -> 9 at index 9, taps 5,3,2,0; (1,2),(2,1),(2,2) hold
   *   (2,4) -> 8 at 18, taps 3,2,0; (0,2) and (2,0) hold only zeros -> +0
   *   at their first tap (0,4) = 4 and (2,0) = 14, tap 0.
   * dy of plane q, output k = 10q + k + 1; dx scatters dy to the winners, so
   * q3's (1,2) gets 31+32+34+35 = 132 and (2,4) gets 36+38+39 = 113. */
  float x[4 * 28];
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 7; ++j) {
      x[0 * 28 + i * 7 + j] = (float)(7 * i + j);
      x[1 * 28 + i * 7 + j] = (float)(100 - (7 * i + j));
      x[2 * 28 + i * 7 + j] = j % 2 == 0 ? 1.0f : 2.0f;
      x[3 * 28 + i * 7 + j] = 0.0f;
    }
  x[3 * 28 + 1 * 7 + 2] = 9;
  x[3 * 28 + 2 * 7 + 4] = 8;
  // clang-format off
  static const float y[36] = {
      9,   11, 13, 16, 18, 20, 23, 25, 27, /* q0 */
      100, 98, 96, 93, 91, 89, 86, 84, 82, /* q1 */
      2,   2,  2,  2,  2,  2,  2,  2,  2,  /* q2 */
      9,   9,  0,  9,  9,  8,  0,  8,  8}; /* q3 */
  static const int64_t idx[36] = {9, 11, 13, 16, 18, 20, 23, 25, 27,
                                  0, 2,  4,  7,  9,  11, 14, 16, 18,
                                  1, 3,  5,  8,  10, 12, 15, 17, 19,
                                  9, 9,  4,  9,  9,  18, 14, 18, 18};
  static const uint8_t tap[36] = {5, 5, 5, 5, 5, 5, 5, 5, 5,
                                  0, 0, 0, 0, 0, 0, 0, 0, 0,
                                  1, 1, 1, 1, 1, 1, 1, 1, 1,
                                  5, 3, 0, 2, 0, 3, 0, 2, 0};
  // clang-format on
  float dy[36];
  for (size_t q = 0; q < 4; ++q)
    for (size_t k = 0; k < 9; ++k)
      dy[q * 9 + k] = (float)(10 * q + k + 1);
  golden g = gold("seed000 k2x3/s1x2", mk(SIMDPOOL_MAX, 2, 2, 4, 7, 2, 3, 1, 2),
                  3, 3, x, y, idx, tap, dy, NULL);
  /* Spot-check the scatter against the hand sums above. */
  float *dx = scatter_dx(&g);
  ck_assert(f2u(dx[3 * 28 + 9]) == f2u(132.0f));
  ck_assert(f2u(dx[3 * 28 + 18]) == f2u(113.0f));
  free(dx);
  run_golden(&g, isa);
}
END_TEST

/* ---- 3. Hand-computed cases ------------------------------------------ */

START_TEST(test_ties_nan_zero) {
  simdpool_isa isa;
  if (!loop_isa(_i, "ties, NaN, signed zero", &isa))
    return;
  /* Ties, 2x4, 2x2/s2: window 0 = {1,5,5,5}: first 5 at (0,1): index 1,
   * tap 1; window 1 = {1,2,5,5}: first 5 at (1,2): index 1*4+2 = 6, tap 2.
   * dy {7,8} lands on those two cells. */
  static const float tx[8] = {1, 5, 1, 2, 5, 5, 5, 5};
  static const float ty[2] = {5, 5};
  static const int64_t ti[2] = {1, 6};
  static const uint8_t tt[2] = {1, 2};
  static const float tdy[2] = {7, 8};
  static const float tdx[8] = {0, 7, 0, 0, 0, 0, 8, 0};
  golden ties = gold("ties", mk(SIMDPOOL_MAX, 1, 1, 2, 4, 2, 2, 2, 2), 1, 2, tx,
                     ty, ti, tt, tdy, tdx);
  run_golden(&ties, isa);

  /* NaN wins, the last NaN in scan order, with its exact bits. 2x6, 2x2/s2.
   * A = 0x7fc00001 (qNaN, payload 1), B = 0xffc00002 (negative qNaN),
   * C = 0x7f800003 (sNaN), D = 0x7fa00000 (sNaN).
   * Window 0 = {1, A, B, 2}: A replaces 1, B replaces A, 2 > B is false:
   *   B at (1,0): index 6, tap 2. (Reducing columns first would give A.)
   * Window 1 = {C, 5, inf, 3}: nothing is > NaN and none is NaN: C stays,
   *   at (0,2): index 2, tap 0.
   * Window 2 = {1, 2, 3, D}: D, the last tap, wins: (1,5): 11, tap 3.
   * dy {1.5, -2, 4}: 0 + dy at each winner. */
  const float A = u2f(0x7fc00001u), B = u2f(0xffc00002u);
  const float C = u2f(0x7f800003u), D = u2f(0x7fa00000u);
  // clang-format off
  const float nx[12] = {1, A, C,        5, 1, 2,
                        B, 2, INFINITY, 3, 3, D};
  // clang-format on
  const float ny[3] = {B, C, D};
  static const int64_t ni[3] = {6, 2, 11};
  static const uint8_t nt[3] = {2, 0, 3};
  static const float ndy[3] = {1.5f, -2, 4};
  static const float ndx[12] = {0, 0, -2, 0, 0, 0, 1.5f, 0, 0, 0, 0, 4};
  golden nan = gold("NaN wins", mk(SIMDPOOL_MAX, 1, 1, 2, 6, 2, 2, 2, 2), 1, 3,
                    nx, ny, ni, nt, ndy, ndx);
  run_golden(&nan, isa);

  /* MAX backward with NaN dy: x 2x4 = {1,2,4,3 / 3,4,2,1}: window 0 =
   * {1,2,3,4} -> 4 at (1,1): 5, tap 3; window 1 = {4,3,2,1} -> 4 at (0,2):
   * 2, tap 0. dy = {0x7fc01234, 0xff812345 (negative sNaN)}: 0 + NaN is
   * NaN, written as the canonical 0x7fc00000 (semantics 1). */
  static const float dnx[8] = {1, 2, 4, 3, 3, 4, 2, 1};
  static const float dy_y[2] = {4, 4};
  static const int64_t di[2] = {5, 2};
  static const uint8_t dt[2] = {3, 0};
  const float ddy[2] = {u2f(0x7fc01234u), u2f(0xff812345u)};
  const float cn = u2f(CANON_NAN);
  const float ddx[8] = {0, 0, cn, 0, 0, cn, 0, 0};
  golden nandy =
      gold("MAX backward NaN dy", mk(SIMDPOOL_MAX, 1, 1, 2, 4, 2, 2, 2, 2), 1,
           2, dnx, dy_y, di, dt, ddy, ddx);
  run_golden(&nandy, isa);

  /* Signed zeros, 2x4: window 0 = {-0, +0, -1, +0}: +0 > -0 is false, so
   * -0.0 at (0,0) wins: bits 0x80000000, index 0, tap 0. Window 1 =
   * {-5, +0, -0, -0}: +0 replaces -5, then nothing is > +0: +0 at (0,3):
   * index 3, tap 1. (Columns first would give -0.) dy = {-0.0, 2}: dx at
   * (0,0) is 0.0f + -0.0f = +0.0f; dx at (0,3) = 2; the rest +0. */
  static const float zx[8] = {-0.0f, 0.0f, -5, 0.0f, -1, 0.0f, -0.0f, -0.0f};
  static const float zy[2] = {-0.0f, 0.0f};
  static const int64_t zi[2] = {0, 3};
  static const uint8_t zt[2] = {0, 1};
  static const float zdy[2] = {-0.0f, 2};
  static const float zdx[8] = {0, 0, 0, 2, 0, 0, 0, 0};
  golden sz = gold("signed zero", mk(SIMDPOOL_MAX, 1, 1, 2, 4, 2, 2, 2, 2), 1,
                   2, zx, zy, zi, zt, zdy, zdx);
  run_golden(&sz, isa);
}
END_TEST

/* Padding on one side of a 3x3 plane of negatives, kernel 2x2, stride 2.
 * x = [[-1,-2,-3],[-4,-5,-6],[-7,-8,-9]]; padding acts as -inf for MAX (a
 * zero pad would win), counts in the AVG divisor only with
 * count_include_pad. MAX dy = {1,2} scatters to the winners; AVG dy = {1,2}
 * gives each counted cell dy / divisor. */
typedef struct pad_case {
  const char *name;
  size_t top, left, bottom, right, oh, ow;
  float ymax[2];
  int64_t idx[2];
  uint8_t tap[2];
  float yin[2], dxin[9]; /* AVG, count_include_pad 1 */
  float yex[2], dxex[9]; /* AVG, count_include_pad 0 */
} pad_case;

static const pad_case kPadCases[4] = {
    /* top: out_h = (3+1-2)/2+1 = 2, out_w = (3-2)/2+1 = 1 (col 2 unused).
     * oh0 = rows -1..0: valid -1,-2 -> -1 at 0, tap (1,0) = 2; incl
     * (-1-2)/4 = -0.75, excl -3/2 = -1.5. oh1 = rows 1..2: -4,-5,-7,-8 ->
     * -4 at 3, tap 0; -24/4 = -6 either way. */
    {.name = "pad_top",
     .top = 1,
     .oh = 2,
     .ow = 1,
     .ymax = {-1, -4},
     .idx = {0, 3},
     .tap = {2, 0},
     .yin = {-0.75f, -6},
     .dxin = {.25f, .25f, 0, .5f, .5f, 0, .5f, .5f, 0},
     .yex = {-1.5f, -6},
     .dxex = {.5f, .5f, 0, .5f, .5f, 0, .5f, .5f, 0}},
    /* left: out 1x2. ow0 = cols -1..0: -1,-4 -> -1 at 0, tap (0,1) = 1;
     * incl -5/4 = -1.25, excl -5/2 = -2.5. ow1 = cols 1..2: -2,-3,-5,-6 ->
     * -2 at 1, tap 0; -16/4 = -4. */
    {.name = "pad_left",
     .left = 1,
     .oh = 1,
     .ow = 2,
     .ymax = {-1, -2},
     .idx = {0, 1},
     .tap = {1, 0},
     .yin = {-1.25f, -4},
     .dxin = {.25f, .5f, .5f, .25f, .5f, .5f, 0, 0, 0},
     .yex = {-2.5f, -4},
     .dxex = {.5f, .5f, .5f, .5f, .5f, .5f, 0, 0, 0}},
    /* bottom: out 2x1. oh0 = rows 0..1: -1,-2,-4,-5 -> -1 at 0, tap 0;
     * -12/4 = -3. oh1 = rows 2..3: -7,-8 -> -7 at 6, tap 0; incl -15/4 =
     * -3.75, excl -15/2 = -7.5. */
    {.name = "pad_bottom",
     .bottom = 1,
     .oh = 2,
     .ow = 1,
     .ymax = {-1, -7},
     .idx = {0, 6},
     .tap = {0, 0},
     .yin = {-3, -3.75f},
     .dxin = {.25f, .25f, 0, .25f, .25f, 0, .5f, .5f, 0},
     .yex = {-3, -7.5f},
     .dxex = {.25f, .25f, 0, .25f, .25f, 0, 1, 1, 0}},
    /* right: out 1x2. ow0 = cols 0..1 -> -1 at 0; -3. ow1 = cols 2..3:
     * -3,-6 -> -3 at 2, tap 0; incl -9/4 = -2.25, excl -9/2 = -4.5. */
    {.name = "pad_right",
     .right = 1,
     .oh = 1,
     .ow = 2,
     .ymax = {-1, -3},
     .idx = {0, 2},
     .tap = {0, 0},
     .yin = {-3, -2.25f},
     .dxin = {.25f, .25f, .5f, .25f, .25f, .5f, 0, 0, 0},
     .yex = {-3, -4.5f},
     .dxex = {.25f, .25f, 1, .25f, .25f, 1, 0, 0, 0}},
};

START_TEST(test_pad_sides) {
  simdpool_isa isa;
  if (!loop_isa(_i, "padding per side", &isa))
    return;
  static const float x[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
  static const float dy[2] = {1, 2};
  for (size_t k = 0; k < NELEM(kPadCases); ++k) {
    const pad_case *pc = &kPadCases[k];
    char nm[3][48];
    simdpool_desc dm = with_pads(mk(SIMDPOOL_MAX, 1, 1, 3, 3, 2, 2, 2, 2),
                                 pc->top, pc->left, pc->bottom, pc->right);
    simdpool_desc da = dm;
    da.method = SIMDPOOL_AVG;
    snprintf(nm[0], sizeof nm[0], "%s max", pc->name);
    snprintf(nm[1], sizeof nm[1], "%s avg include_pad", pc->name);
    snprintf(nm[2], sizeof nm[2], "%s avg exclude_pad", pc->name);
    golden gm = gold(nm[0], dm, pc->oh, pc->ow, x, pc->ymax, pc->idx, pc->tap,
                     dy, NULL);
    golden gi = gold(nm[1], with_cip(da, 1), pc->oh, pc->ow, x, pc->yin, NULL,
                     NULL, dy, pc->dxin);
    golden ge = gold(nm[2], with_cip(da, 0), pc->oh, pc->ow, x, pc->yex, NULL,
                     NULL, dy, pc->dxex);
    run_golden(&gm, isa);
    run_golden(&gi, isa);
    run_golden(&ge, isa);
  }
}
END_TEST

/* One-dimensional cases, each run along w (h = 1, kernel (1,k)) and along h
 * (w = 1, kernel (k,1)); the two share every expected array, since a 1xN
 * and an Nx1 plane have the same memory, ih*w+iw is the position either
 * way, and so is kh_i*kernel_w+kw_i. Window ow covers taps
 * ow*s - pb + i*d, i = 0..k-1. */
typedef struct case1d {
  const char *name;
  simdpool_method m;
  simdpool_padding padding;
  int ceil, excl; /* excl: count_include_pad 0 */
  float p;        /* LP only; 0 means the default 2 */
  size_t in, k, s, d, pb, pe, out;
  float x[8], y[8];
  int64_t idx[8];
  uint8_t tap[8];
  float dy[8], dx[8];
} case1d;

// clang-format off
static const case1d kCases1d[] = {
    /* EXPLICIT ceil, pads 1/1, in 6, k 3, s 2: out = ceil((6+2-3)/2)+1 = 4;
     * (4-1)*2 = 6 < 6+1, kept. Windows start at -1, 1, 3, 5; the last
     * covers 5, 6 (end padding), 7 (overhang). x = 1..6. MAX: {1,2} -> 2 at
     * 1, tap 2; 4 at 3; 6 at 5; {6} -> 6 at 5, tap 0. dx[5] = 3 + 2. */
    {.name = "ceil pads1 max",
     .m = SIMDPOOL_MAX,
     .ceil = 1,
     .in = 6, .k = 3, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 4,
     .x = {1, 2, 3, 4, 5, 6},
     .y = {2, 4, 6, 6},
     .idx = {1, 3, 5, 5},
     .tap = {2, 2, 2, 0},
     .dy = {3, 6, 3, 2},
     .dx = {0, 3, 0, 6, 0, 5}},
    /* AVG include_pad: divisors count taps in [-1, 7): 3, 3, 3, and 2 for
     * the last (5, 6; 7 is overhang). y = 3/3, 9/3, 15/3, 6/2 = 1, 3, 5, 3.
     * dy {3,6,3,2} / divisor = 1, 2, 1, 1 to the valid cells: cols 0,1 +1;
     * 1,2,3 +2; 3,4,5 +1; 5 +1. */
    {.name = "ceil pads1 avg include_pad",
     .m = SIMDPOOL_AVG,
     .ceil = 1,
     .in = 6, .k = 3, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 4,
     .x = {1, 2, 3, 4, 5, 6},
     .y = {1, 3, 5, 3},
     .dy = {3, 6, 3, 2},
     .dx = {1, 3, 2, 3, 1, 2}},
    /* exclude_pad: divisors 2, 3, 3, 1: y = 1.5, 3, 5, 6; dy / divisor =
     * 1.5, 2, 1, 2. */
    {.name = "ceil pads1 avg exclude_pad",
     .m = SIMDPOOL_AVG,
     .ceil = 1,
     .excl = 1,
     .in = 6, .k = 3, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 4,
     .x = {1, 2, 3, 4, 5, 6},
     .y = {1.5f, 3, 5, 6},
     .dy = {3, 6, 3, 2},
     .dx = {1.5f, 3.5f, 2, 3, 1, 3}},
    /* The same in floor mode: out = floor(5/2)+1 = 3, the 4th is gone. */
    {.name = "floor pads1 avg include_pad",
     .m = SIMDPOOL_AVG,
     .in = 6, .k = 3, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 3,
     .x = {1, 2, 3, 4, 5, 6},
     .y = {1, 3, 5},
     .dy = {3, 6, 3},
     .dx = {1, 3, 2, 3, 1, 1}},
    /* PyTorch's ceil rule drops a window starting in the end padding:
     * in 5, k 2, s 2, pads 1/1: ceil((5+2-2)/2)+1 = 4, but (4-1)*2 = 6 >=
     * 5+1, so out = 3. Windows [-1,0], [1,2], [3,4]; x = -1..-5. */
    {.name = "ceil drops last max",
     .m = SIMDPOOL_MAX,
     .ceil = 1,
     .in = 5, .k = 2, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 3,
     .x = {-1, -2, -3, -4, -5},
     .y = {-1, -2, -4},
     .idx = {0, 1, 3},
     .tap = {1, 0, 0},
     .dy = {1, 2, 3},
     .dx = {1, 2, 0, 3, 0}},
    /* AVG include_pad: -1/2, -5/2, -9/2; dy/2 = .5, 1, 1.5 per cell. */
    {.name = "ceil drops last avg include_pad",
     .m = SIMDPOOL_AVG,
     .ceil = 1,
     .in = 5, .k = 2, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 3,
     .x = {-1, -2, -3, -4, -5},
     .y = {-0.5f, -2.5f, -4.5f},
     .dy = {1, 2, 3},
     .dx = {0.5f, 1, 1, 1.5f, 1.5f}},
    /* exclude_pad: the first divisor is 1: -1; dx[0] = 1/1. */
    {.name = "ceil drops last avg exclude_pad",
     .m = SIMDPOOL_AVG,
     .ceil = 1,
     .excl = 1,
     .in = 5, .k = 2, .s = 2, .d = 1, .pb = 1, .pe = 1, .out = 3,
     .x = {-1, -2, -3, -4, -5},
     .y = {-1, -2.5f, -4.5f},
     .dy = {1, 2, 3},
     .dx = {1, 1, 1, 1.5f, 1.5f}},
    /* SAME, in 5, k 2, s 2: out = ceil(5/2) = 3, total = (3-1)*2+2-5 = 1.
     * SAME_UPPER pads the end: windows [0,1], [2,3], [4,5]. x = 1..5:
     * MAX 2, 4, 5 at 1, 3, 4, taps 1, 1, 0. */
    {.name = "same_upper max",
     .m = SIMDPOOL_MAX,
     .padding = SIMDPOOL_PAD_SAME_UPPER,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 3,
     .x = {1, 2, 3, 4, 5},
     .y = {2, 4, 5},
     .idx = {1, 3, 4},
     .tap = {1, 1, 0},
     .dy = {1, 2, 3},
     .dx = {0, 1, 0, 2, 3}},
    /* SAME_LOWER pads the begin: windows [-1,0], [1,2], [3,4]: 1, 3, 5 at
     * 0, 2, 4, taps 1, 1, 1. */
    {.name = "same_lower max",
     .m = SIMDPOOL_MAX,
     .padding = SIMDPOOL_PAD_SAME_LOWER,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 3,
     .x = {1, 2, 3, 4, 5},
     .y = {1, 3, 5},
     .idx = {0, 2, 4},
     .tap = {1, 1, 1},
     .dy = {1, 2, 3},
     .dx = {1, 0, 2, 0, 3}},
    /* SAME_UPPER AVG include_pad: 3/2, 7/2, 5/2 (pad 5 counted); dy {2,4,6}
     * / 2 = 1, 2, 3. */
    {.name = "same_upper avg include_pad",
     .m = SIMDPOOL_AVG,
     .padding = SIMDPOOL_PAD_SAME_UPPER,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 3,
     .x = {1, 2, 3, 4, 5},
     .y = {1.5f, 3.5f, 2.5f},
     .dy = {2, 4, 6},
     .dx = {1, 1, 2, 2, 3}},
    /* exclude_pad: the last divisor is 1: 5; dx[4] = 6. */
    {.name = "same_upper avg exclude_pad",
     .m = SIMDPOOL_AVG,
     .padding = SIMDPOOL_PAD_SAME_UPPER,
     .excl = 1,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 3,
     .x = {1, 2, 3, 4, 5},
     .y = {1.5f, 3.5f, 5},
     .dy = {2, 4, 6},
     .dx = {1, 1, 2, 2, 6}},
    /* SAME_LOWER AVG include_pad: 1/2, 5/2, 9/2; dy/2 = 1, 2, 3. */
    {.name = "same_lower avg include_pad",
     .m = SIMDPOOL_AVG,
     .padding = SIMDPOOL_PAD_SAME_LOWER,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 3,
     .x = {1, 2, 3, 4, 5},
     .y = {0.5f, 2.5f, 4.5f},
     .dy = {2, 4, 6},
     .dx = {1, 2, 2, 3, 3}},
    /* exclude_pad: first divisor 1: 1; dx[0] = 2. */
    {.name = "same_lower avg exclude_pad",
     .m = SIMDPOOL_AVG,
     .padding = SIMDPOOL_PAD_SAME_LOWER,
     .excl = 1,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 3,
     .x = {1, 2, 3, 4, 5},
     .y = {1, 2.5f, 4.5f},
     .dy = {2, 4, 6},
     .dx = {2, 2, 2, 3, 3}},
    /* VALID, in 5, k 2, s 2: floor(3/2)+1 = 2; element 4 is ignored. */
    {.name = "valid max",
     .m = SIMDPOOL_MAX,
     .padding = SIMDPOOL_PAD_VALID,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 2,
     .x = {1, 2, 3, 4, 5},
     .y = {2, 4},
     .idx = {1, 3},
     .tap = {1, 1},
     .dy = {1, 2},
     .dx = {0, 1, 0, 2, 0}},
    {.name = "valid avg",
     .m = SIMDPOOL_AVG,
     .padding = SIMDPOOL_PAD_VALID,
     .in = 5, .k = 2, .s = 2, .d = 1, .out = 2,
     .x = {1, 2, 3, 4, 5},
     .y = {1.5f, 3.5f},
     .dy = {2, 4},
     .dx = {1, 1, 2, 2, 0}},
    /* Dilation 3, k 2, s 1, in 5: extent 4, out = 5-4+1 = 2; taps {0,3},
     * {1,4}. x = 3,1,4,1,5: {3,1} -> 3 at 0, tap 0; {1,5} -> 5 at 4,
     * tap 1. AVG 4/2 = 2, 6/2 = 3. */
    {.name = "dilation 3 max",
     .m = SIMDPOOL_MAX,
     .in = 5, .k = 2, .s = 1, .d = 3, .out = 2,
     .x = {3, 1, 4, 1, 5},
     .y = {3, 5},
     .idx = {0, 4},
     .tap = {0, 1},
     .dy = {1, 2},
     .dx = {1, 0, 0, 0, 2}},
    {.name = "dilation 3 avg",
     .m = SIMDPOOL_AVG,
     .in = 5, .k = 2, .s = 1, .d = 3, .out = 2,
     .x = {3, 1, 4, 1, 5},
     .y = {2, 3},
     .dy = {2, 4},
     .dx = {1, 2, 0, 1, 2}},
    /* Overlap, k 3, s 1, in 4: windows {1,5,0}, {5,0,1}: both pick 5 at 1
     * (taps 1, 0); dx[1] = 3 + 6. AVG 6/3 = 2 twice; dy/3 = 1, 2: cols
     * 0..2 +1, 1..3 +2. */
    {.name = "overlap max",
     .m = SIMDPOOL_MAX,
     .in = 4, .k = 3, .s = 1, .d = 1, .out = 2,
     .x = {1, 5, 0, 1},
     .y = {5, 5},
     .idx = {1, 1},
     .tap = {1, 0},
     .dy = {3, 6},
     .dx = {0, 9, 0, 0}},
    {.name = "overlap avg",
     .m = SIMDPOOL_AVG,
     .in = 4, .k = 3, .s = 1, .d = 1, .out = 2,
     .x = {1, 5, 0, 1},
     .y = {2, 2},
     .dy = {3, 6},
     .dx = {1, 3, 3, 2}},
    /* Stride 3 > kernel 2, in 7: floor(5/3)+1 = 2, windows {0,1}, {3,4};
     * cells 2, 5, 6 are in no window and get +0. */
    {.name = "gaps max",
     .m = SIMDPOOL_MAX,
     .in = 7, .k = 2, .s = 3, .d = 1, .out = 2,
     .x = {1, 2, 3, 4, 5, 6, 7},
     .y = {2, 5},
     .idx = {1, 4},
     .tap = {1, 1},
     .dy = {1, 2},
     .dx = {0, 1, 0, 0, 2, 0, 0}},
    {.name = "gaps avg",
     .m = SIMDPOOL_AVG,
     .in = 7, .k = 2, .s = 3, .d = 1, .out = 2,
     .x = {1, 2, 3, 4, 5, 6, 7},
     .y = {1.5f, 4.5f},
     .dy = {2, 4},
     .dx = {1, 1, 0, 2, 2, 0, 0}},
    /* -inf inputs next to padding: k 2, s 1, pb 1, in 2, out 2. Window 0 =
     * {pad, -inf}: the valid tap wins, not the padding: index 0, tap 1;
     * window 1 = {-inf, -inf}: first, index 0, tap 0. dx[0] = 1 + 2. */
    {.name = "-inf beside padding max",
     .m = SIMDPOOL_MAX,
     .in = 2, .k = 2, .s = 1, .d = 1, .pb = 1, .out = 2,
     .x = {-INFINITY, -INFINITY},
     .y = {-INFINITY, -INFINITY},
     .idx = {0, 0},
     .tap = {1, 0},
     .dy = {1, 2},
     .dx = {3, 0}},
    /* LP with end padding (only valid taps count): in 3, k 2, s 2, pe 1:
     * out 2, windows {0,1}, {2,pad}. p=1, x = -1,2,-3: y = 3, 3; dy {1,2}:
     * dx = dy * sign(x) = -1, 1, -2. */
    {.name = "lp p=1 end padding",
     .m = SIMDPOOL_LP,
     .p = 1,
     .in = 3, .k = 2, .s = 2, .d = 1, .pe = 1, .out = 2,
     .x = {-1, 2, -3},
     .y = {3, 3},
     .dy = {1, 2},
     .dx = {-1, 1, -2}},
    /* p=2, x = 3,4,-5: y = sqrtf(25) = 5 twice; dy {10,5}: g = 2, 1:
     * dx = g * x = 6, 8, -5. */
    {.name = "lp p=2 end padding",
     .m = SIMDPOOL_LP,
     .p = 2,
     .in = 3, .k = 2, .s = 2, .d = 1, .pe = 1, .out = 2,
     .x = {3, 4, -5},
     .y = {5, 5},
     .dy = {10, 5},
     .dx = {6, 8, -5}},
};
// clang-format on

START_TEST(test_cases_1d) {
  simdpool_isa isa;
  if (!loop_isa(_i, "1-D cases (along h and w)", &isa))
    return;
  for (size_t k = 0; k < NELEM(kCases1d); ++k) {
    const case1d *c = &kCases1d[k];
    for (int along_h = 0; along_h < 2; ++along_h) {
      simdpool_desc d;
      char nm[80];
      snprintf(nm, sizeof nm, "%s, along %s", c->name, along_h ? "h" : "w");
      if (along_h) {
        d = mk(c->m, 1, 1, c->in, 1, c->k, 1, c->s, 1);
        d.dilation_h = c->d;
        d.pad_top = c->pb;
        d.pad_bottom = c->pe;
      } else {
        d = mk(c->m, 1, 1, 1, c->in, 1, c->k, 1, c->s);
        d.dilation_w = c->d;
        d.pad_left = c->pb;
        d.pad_right = c->pe;
      }
      d.padding = c->padding;
      d.ceil_mode = c->ceil;
      d.count_include_pad = !c->excl;
      if (c->p != 0.0f)
        d.p = c->p;
      golden g = gold(nm, d, along_h ? c->out : 1, along_h ? 1 : c->out, c->x,
                      c->y, c->m == SIMDPOOL_MAX ? c->idx : NULL,
                      c->m == SIMDPOOL_MAX ? c->tap : NULL, c->dy, c->dx);
      run_golden(&g, isa);
    }
  }
}
END_TEST

/* 1..25 row-major: x[i][j] = 5i + j + 1. */
// clang-format off
static const float kSeq25[25] = {1,  2,  3,  4,  5,  6,  7,  8,  9,
                                 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                 19, 20, 21, 22, 23, 24, 25};
// clang-format on

START_TEST(test_5x5_ceil_valid_same) {
  simdpool_isa isa;
  if (!loop_isa(_i, "5x5 ceil/VALID/SAME", &isa))
    return;
  static const float dy9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

  /* Ceil mode, 5x5 = 1..25, k 2, s 2, no padding: out = ceil(3/2)+1 = 3
   * ((3-1)*2 = 4 < 5 keeps it). Row/col 5 of the last windows is beyond
   * h + pad_bottom = 5, so it is counted by neither divisor rule: the last
   * row of windows holds 1 valid row (divisor 2), the corner 1 cell
   * (divisor 1), with count_include_pad 1 and 0 alike.
   * MAX (ascending input: bottom-right valid cell): 7, 9, 10 / 17, 19, 20 /
   * 22, 24, 25 at 6, 8, 9 / 16, 18, 19 / 21, 23, 24; taps 3, 3, (1,0) = 2 /
   * 3, 3, 2 / (0,1) = 1, 1, 0. dy 1..9 to the winners.
   * AVG: (1+2+6+7)/4 = 4, 24/4 = 6, (5+10)/2 = 7.5 / 56/4 = 14, 64/4 = 16,
   * (15+20)/2 = 17.5 / (21+22)/2 = 21.5, 47/2 = 23.5, 25/1 = 25.
   * AVG dy = divisor * k (4, 8, 6, 16, 20, 12, 14, 16, 9) so each cell of
   * window k gets exactly k. */
  static const float cy[9] = {7, 9, 10, 17, 19, 20, 22, 24, 25};
  static const int64_t ci[9] = {6, 8, 9, 16, 18, 19, 21, 23, 24};
  static const uint8_t ct[9] = {3, 3, 2, 3, 3, 2, 1, 1, 0};
  // clang-format off
  static const float cdx[25] = {0, 0, 0, 0, 0, 0, 1, 0, 2, 3, 0, 0, 0,
                                0, 0, 0, 4, 0, 5, 6, 0, 7, 0, 8, 9};
  // clang-format on
  static const float cay[9] = {4, 6, 7.5f, 14, 16, 17.5f, 21.5f, 23.5f, 25};
  static const float cady[9] = {4, 8, 6, 16, 20, 12, 14, 16, 9};
  // clang-format off
  static const float cadx[25] = {1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5,
                                 5, 6, 4, 4, 5, 5, 6, 7, 7, 8, 8, 9};
  // clang-format on
  simdpool_desc dc = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  dc.ceil_mode = 1;
  golden cm = gold("5x5 ceil max", dc, 3, 3, kSeq25, cy, ci, ct, dy9, cdx);
  run_golden(&cm, isa);
  dc.method = SIMDPOOL_AVG;
  golden ca1 = gold("5x5 ceil avg include_pad", with_cip(dc, 1), 3, 3, kSeq25,
                    cay, NULL, NULL, cady, cadx);
  golden ca0 = gold("5x5 ceil avg exclude_pad", with_cip(dc, 0), 3, 3, kSeq25,
                    cay, NULL, NULL, cady, cadx);
  run_golden(&ca1, isa);
  run_golden(&ca0, isa);

  /* VALID, same input: out 2x2, row 4 and col 4 ignored. MAX 7, 9, 17, 19
   * at 6, 8, 16, 18, taps 3. AVG 4, 6, 14, 16; dy 4, 8, 12, 16 -> 1..4 per
   * cell of each window, zeros in row 4 and col 4. */
  static const float vy[4] = {7, 9, 17, 19};
  static const int64_t vi[4] = {6, 8, 16, 18};
  static const uint8_t vt[4] = {3, 3, 3, 3};
  static const float vdy[4] = {1, 2, 3, 4};
  static const float vay[4] = {4, 6, 14, 16};
  static const float vady[4] = {4, 8, 12, 16};
  // clang-format off
  static const float vadx[25] = {1, 1, 2, 2, 0, 1, 1, 2, 2, 0, 3, 3, 4,
                                 4, 0, 3, 3, 4, 4, 0, 0, 0, 0, 0, 0};
  // clang-format on
  simdpool_desc dv = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  dv.padding = SIMDPOOL_PAD_VALID;
  golden vm = gold("5x5 valid max", dv, 2, 2, kSeq25, vy, vi, vt, vdy, NULL);
  run_golden(&vm, isa);
  dv.method = SIMDPOOL_AVG;
  golden va =
      gold("5x5 valid avg", dv, 2, 2, kSeq25, vay, NULL, NULL, vady, vadx);
  run_golden(&va, isa);

  /* SAME_UPPER, same input: out 3, total 1, pads 0 begin / 1 end on both
   * axes: MAX equals the ceil case. AVG include_pad counts the end padding
   * (taps in [0, 6)): every divisor is 4: 4, 6, 15/4 = 3.75 / 14, 16,
   * 35/4 = 8.75 / 43/4 = 10.75, 47/4 = 11.75, 25/4 = 6.25. Exclude_pad
   * equals the ceil case. */
  // clang-format off
  static const float suy[9] = {4,      6,      3.75f, 14,   16,
                               8.75f, 10.75f, 11.75f, 6.25f};
  // clang-format on
  simdpool_desc du = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  du.padding = SIMDPOOL_PAD_SAME_UPPER;
  golden um =
      gold("5x5 same_upper max", du, 3, 3, kSeq25, cy, ci, ct, dy9, cdx);
  run_golden(&um, isa);
  du.method = SIMDPOOL_AVG;
  golden ua1 = gold("5x5 same_upper avg include_pad", with_cip(du, 1), 3, 3,
                    kSeq25, suy, NULL, NULL, NULL, NULL);
  golden ua0 = gold("5x5 same_upper avg exclude_pad", with_cip(du, 0), 3, 3,
                    kSeq25, cay, NULL, NULL, cady, cadx);
  run_golden(&ua1, isa);
  run_golden(&ua0, isa);

  /* SAME_LOWER: pads 1 begin / 0 end: windows rows {-1,0}, {1,2}, {3,4},
   * same for columns. MAX (bottom-right cell, always tap 3): 1, 3, 5 /
   * 11, 13, 15 / 21, 23, 25 at 0, 2, 4 / 10, 12, 14 / 20, 22, 24.
   * AVG include_pad (divisor 4 everywhere): 1/4, (2+3)/4, (4+5)/4 /
   * (6+11)/4, (7+8+12+13)/4, (9+10+14+15)/4 / (16+21)/4, 80/4, 88/4 =
   * .25, 1.25, 2.25 / 4.25, 10, 12 / 9.25, 20, 22. Exclude_pad: divisors
   * 1, 2, 2 / 2, 4, 4 / 2, 4, 4: 1, 2.5, 4.5 / 8.5, 10, 12 / 18.5, 20, 22.
   * Backward, dy = divisor * k: each cell of window k gets k. */
  static const float ly[9] = {1, 3, 5, 11, 13, 15, 21, 23, 25};
  static const int64_t li[9] = {0, 2, 4, 10, 12, 14, 20, 22, 24};
  static const uint8_t lt[9] = {3, 3, 3, 3, 3, 3, 3, 3, 3};
  // clang-format off
  static const float lay1[9] = {.25f, 1.25f, 2.25f, 4.25f, 10,
                                12,   9.25f, 20,    22};
  // clang-format on
  static const float lay0[9] = {1, 2.5f, 4.5f, 8.5f, 10, 12, 18.5f, 20, 22};
  static const float ldy1[9] = {4, 8, 12, 16, 20, 24, 28, 32, 36};
  static const float ldy0[9] = {1, 4, 6, 8, 20, 24, 14, 32, 36};
  // clang-format off
  static const float ladx[25] = {1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 4, 5, 5,
                                 6, 6, 7, 8, 8, 9, 9, 7, 8, 8, 9, 9};
  // clang-format on
  simdpool_desc dl = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  dl.padding = SIMDPOOL_PAD_SAME_LOWER;
  golden lm =
      gold("5x5 same_lower max", dl, 3, 3, kSeq25, ly, li, lt, dy9, NULL);
  run_golden(&lm, isa);
  dl.method = SIMDPOOL_AVG;
  golden la1 = gold("5x5 same_lower avg include_pad", with_cip(dl, 1), 3, 3,
                    kSeq25, lay1, NULL, NULL, ldy1, ladx);
  golden la0 = gold("5x5 same_lower avg exclude_pad", with_cip(dl, 0), 3, 3,
                    kSeq25, lay0, NULL, NULL, ldy0, ladx);
  run_golden(&la1, isa);
  run_golden(&la0, isa);
}
END_TEST

/* The first 25 decimal digits of pi (3.141592653589793238462643) as a 5x5
 * plane:
 *   3 1 4 1 5
 *   9 2 6 5 3
 *   5 8 9 7 9
 *   3 2 3 8 4
 *   6 2 6 4 3 */
// clang-format off
static const float kPi25[25] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9,
                                7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3};
// clang-format on

START_TEST(test_5x5_dilation_3x3) {
  simdpool_isa isa;
  if (!loop_isa(_i, "5x5 dilation, 3x3 s2 p1, s1", &isa))
    return;
  static const float dy9[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

  /* Dilation 2, k 2x2, s 2 on pi: extent 3, out = floor(2/2)+1 = 2. Taps
   * rows {2oh, 2oh+2} x cols {2ow, 2ow+2}:
   * (0,0) {3,4,5,9}: 9 at (2,2) = 12, tap 3; sum 21 -> 5.25.
   * (0,1) {4,5,9,9}: first 9 at (2,2), tap 2; 27 -> 6.75.
   * (1,0) {5,9,6,6}: 9 at (2,2), tap 1; 26 -> 6.5.
   * (1,1) {9,9,6,3}: 9 at (2,2), tap 0; 27 -> 6.75.
   * MAX backward: dx[12] = 1+2+3+4 = 10. AVG dy 4, 8, 12, 16 -> 1..4 per
   * tap: (0,0) 1, (0,2) 1+2, (0,4) 2, (2,0) 1+3, (2,2) 10, (2,4) 2+4,
   * (4,0) 3, (4,2) 3+4, (4,4) 4; cells in no window 0. */
  static const float dly[4] = {9, 9, 9, 9};
  static const int64_t dli[4] = {12, 12, 12, 12};
  static const uint8_t dlt[4] = {3, 2, 1, 0};
  static const float dldy[4] = {1, 2, 3, 4};
  // clang-format off
  static const float dldx[25] = {0, 0, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 10,
                                 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  // clang-format on
  static const float dlay[4] = {5.25f, 6.75f, 6.5f, 6.75f};
  static const float dlady[4] = {4, 8, 12, 16};
  // clang-format off
  static const float dladx[25] = {1, 0, 3, 0, 2, 0, 0, 0, 0, 0, 4, 0, 10,
                                  0, 6, 0, 0, 0, 0, 0, 3, 0, 7, 0, 4};
  // clang-format on
  simdpool_desc dd = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  dd.dilation_h = dd.dilation_w = 2;
  golden dm =
      gold("5x5 dilation 2 max", dd, 2, 2, kPi25, dly, dli, dlt, dldy, dldx);
  run_golden(&dm, isa);
  dd.method = SIMDPOOL_AVG;
  golden da = gold("5x5 dilation 2 avg", dd, 2, 2, kPi25, dlay, NULL, NULL,
                   dlady, dladx);
  run_golden(&da, isa);

  /* 3x3, s 2, pads 1 (ResNet stem) on pi: out = floor((5+2-3)/2)+1 = 3.
   * Window (oh,ow) = rows 2oh-1..2oh+1, cols 2ow-1..2ow+1.
   * MAX: (0,0) {3,1,9,2} -> 9 at (1,0) = 5, tap (2,1) = 7;
   * (0,1) {1,4,1,2,6,5} -> 6 at (1,2) = 7, tap 7;
   * (0,2) {1,5,5,3} -> first 5 at (0,4) = 4, tap (1,1) = 4;
   * (1,0) {9,2,5,8,3,2} -> 9 at (1,0) = 5, tap (0,1) = 1;
   * (1,1) {2,6,5,8,9,7,2,3,8} -> 9 at (2,2) = 12, tap 4;
   * (1,2) {5,3,7,9,8,4} -> 9 at (2,4) = 14, tap 4;
   * (2,0) {3,2,6,2} -> 6 at (4,0) = 20, tap 4;
   * (2,1) {2,3,8,2,6,4} -> 8 at (3,3) = 18, tap (0,2) = 2;
   * (2,2) {8,4,4,3} -> 8 at (3,3) = 18, tap 0.
   * dy 1..9: dx[4] = 3, dx[5] = 1+4, dx[7] = 2, dx[12] = 5, dx[14] = 6,
   * dx[18] = 8+9, dx[20] = 7.
   * AVG sums S = 15, 19, 14 / 29, 50, 36 / 13, 25, 19. include_pad: every
   * tap lies in [-1, 6), divisor 9: y = S / 9.0f. exclude_pad: divisors
   * D = 4, 6, 4 / 6, 9, 6 / 4, 6, 4: y = S / D.
   * AVG backward with dy = divisor * k gives each valid cell of window k
   * exactly k; cell (i,j) is in windows oh in R(i), ow in R(j), R(0) = {0},
   * R(1) = {0,1}, R(2) = {1}, R(3) = {1,2}, R(4) = {2}, so dx(i,j) =
   * sum over those of 3oh+ow+1 (e.g. (1,1): 1+2+4+5 = 12; total 245 =
   * sum of k * valid taps). */
  static const float sy[9] = {9, 6, 5, 9, 9, 9, 6, 8, 8};
  static const int64_t si[9] = {5, 7, 4, 5, 12, 14, 20, 18, 18};
  static const uint8_t st[9] = {7, 7, 4, 1, 4, 4, 4, 2, 0};
  // clang-format off
  static const float sdx[25] = {0, 0, 0, 0,  3, 5, 0, 2, 0, 0, 0, 0, 5,
                                0, 6, 0, 0, 0, 17, 0, 7, 0, 0, 0, 0};
  const float say1[9] = {15.0f / 9.0f, 19.0f / 9.0f, 14.0f / 9.0f,
                         29.0f / 9.0f, 50.0f / 9.0f, 36.0f / 9.0f,
                         13.0f / 9.0f, 25.0f / 9.0f, 19.0f / 9.0f};
  const float say0[9] = {15.0f / 4.0f, 19.0f / 6.0f, 14.0f / 4.0f,
                         29.0f / 6.0f, 50.0f / 9.0f, 36.0f / 6.0f,
                         13.0f / 4.0f, 25.0f / 6.0f, 19.0f / 4.0f};
  // clang-format on
  static const float sady1[9] = {9, 18, 27, 36, 45, 54, 63, 72, 81};
  static const float sady0[9] = {4, 12, 12, 24, 45, 36, 28, 48, 36};
  // clang-format off
  static const float sadx[25] = {1,  3,  2,  5,  3,  5,  12, 7,  16,
                                 9,  4,  9,  5,  11, 6,  11, 24, 13,
                                 28, 15, 7,  15, 8,  17, 9};
  // clang-format on
  simdpool_desc ds =
      with_pads(mk(SIMDPOOL_MAX, 1, 1, 5, 5, 3, 3, 2, 2), 1, 1, 1, 1);
  golden sm = gold("5x5 k3 s2 p1 max", ds, 3, 3, kPi25, sy, si, st, dy9, sdx);
  run_golden(&sm, isa);
  ds.method = SIMDPOOL_AVG;
  golden sa1 = gold("5x5 k3 s2 p1 avg include_pad", with_cip(ds, 1), 3, 3,
                    kPi25, say1, NULL, NULL, sady1, sadx);
  golden sa0 = gold("5x5 k3 s2 p1 avg exclude_pad", with_cip(ds, 0), 3, 3,
                    kPi25, say0, NULL, NULL, sady0, sadx);
  run_golden(&sa1, isa);
  run_golden(&sa0, isa);

  /* 3x3, s 1, no padding, on pi: out 3x3, window = rows oh..oh+2, cols
   * ow..ow+2. Every window's max is 9: the first 9 in scan order is (1,0)
   * for windows (0,0) and (1,0) (taps (1,0) = 3 and 0), else (2,2) = 12
   * with taps (2,1) = 7, (2,0) = 6, -, (1,1) = 4, (1,0) = 3, (0,2) = 2,
   * (0,1) = 1, 0. dy 1..9: dx[5] = 1+4 = 5, dx[12] = 2+3+5+6+7+8+9 = 40.
   * AVG: 3-column row sums (cols 0-2, 1-3, 2-4) are r0 8,6,10; r1 17,13,14;
   * r2 22,24,25; r3 8,13,15; r4 14,12,13, so S = 47, 43, 49 / 47, 50, 54 /
   * 44, 49, 53 and y = S / 9.0f. dy = 9k: dx(i,j) = sum of k = 3oh+ow+1
   * over oh in R(i), ow in R(j), R(0) = {0}, R(1) = {0,1}, R(2) = {0,1,2},
   * R(3) = {1,2}, R(4) = {2} (total 45 * 9 = 405). */
  static const float ty[9] = {9, 9, 9, 9, 9, 9, 9, 9, 9};
  static const int64_t ti[9] = {5, 12, 12, 5, 12, 12, 12, 12, 12};
  static const uint8_t tt[9] = {3, 7, 6, 0, 4, 3, 2, 1, 0};
  // clang-format off
  static const float tdx[25] = {0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 40,
                                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const float tay[9] = {47.0f / 9.0f, 43.0f / 9.0f, 49.0f / 9.0f,
                        47.0f / 9.0f, 50.0f / 9.0f, 54.0f / 9.0f,
                        44.0f / 9.0f, 49.0f / 9.0f, 53.0f / 9.0f};
  // clang-format on
  static const float tady[9] = {9, 18, 27, 36, 45, 54, 63, 72, 81};
  // clang-format off
  static const float tadx[25] = {1,  3,  6,  5,  3,  5,  12, 21, 16,
                                 9,  12, 27, 45, 33, 18, 11, 24, 39,
                                 28, 15, 7,  15, 24, 17, 9};
  // clang-format on
  simdpool_desc d1 = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 3, 3, 1, 1);
  golden tm = gold("5x5 k3 s1 max", d1, 3, 3, kPi25, ty, ti, tt, dy9, tdx);
  run_golden(&tm, isa);
  d1.method = SIMDPOOL_AVG;
  golden ta =
      gold("5x5 k3 s1 avg", d1, 3, 3, kPi25, tay, NULL, NULL, tady, tadx);
  run_golden(&ta, isa);
}
END_TEST

START_TEST(test_global) {
  simdpool_isa isa;
  if (!loop_isa(_i, "global 3x3, C=2", &isa))
    return;
  /* Global pooling, C = 2, 3x3 -> 1x1. c0 = pi digits 1-9 {3,1,4,1,5,9,2,6,
   * 5}, c1 = digits 10-18 {3,5,8,9,7,9,3,2,3}.
   * MAX: c0 9 at 5 (tap 5); c1 first 9 at 3 (tap 3; another 9 at 5).
   * AVG: sums 36 and 49: 36/9 = 4, 49.0f / 9.0f; dy 9, 18 -> 1 and 2 per
   * cell.
   * LP p=1: 36, 49; dy {1,-1} -> dx = dy * sign(x) = +1 / -1 everywhere.
   * LP p=2: squares sum 9+1+16+1+25+81+4+36+25 = 198 and 9+25+64+81+49+81+
   * 9+4+9 = 331: y = sqrtf(198.0f), sqrtf(331.0f); with dy = y, g = dy / y
   * = 1 exactly, so dx = x. */
  // clang-format off
  static const float x[18] = {3, 1, 4, 1, 5, 9, 2, 6, 5,
                              3, 5, 8, 9, 7, 9, 3, 2, 3};
  // clang-format on
  static const float my[2] = {9, 9};
  static const int64_t mi[2] = {5, 3};
  static const uint8_t mt[2] = {5, 3};
  static const float mdy[2] = {1, 2};
  // clang-format off
  static const float mdx[18] = {0, 0, 0, 0, 0, 1, 0, 0, 0,
                                0, 0, 0, 2, 0, 0, 0, 0, 0};
  // clang-format on
  const float ay[2] = {4, 49.0f / 9.0f};
  static const float ady[2] = {9, 18};
  // clang-format off
  static const float adx[18] = {1, 1, 1, 1, 1, 1, 1, 1, 1,
                                2, 2, 2, 2, 2, 2, 2, 2, 2};
  // clang-format on
  static const float l1y[2] = {36, 49};
  static const float l1dy[2] = {1, -1};
  // clang-format off
  static const float l1dx[18] = {1,  1,  1,  1,  1,  1,  1,  1,  1,
                                 -1, -1, -1, -1, -1, -1, -1, -1, -1};
  // clang-format on
  const float l2y[2] = {sqrtf(198.0f), sqrtf(331.0f)};
  simdpool_desc d = mk(SIMDPOOL_MAX, 1, 2, 3, 3, 3, 3, 3, 3);
  golden gm = gold("global max", d, 1, 1, x, my, mi, mt, mdy, mdx);
  run_golden(&gm, isa);
  d.method = SIMDPOOL_AVG;
  golden ga = gold("global avg", d, 1, 1, x, ay, NULL, NULL, ady, adx);
  run_golden(&ga, isa);
  d.method = SIMDPOOL_LP;
  d.p = 1.0f;
  golden g1 = gold("global lp p=1", d, 1, 1, x, l1y, NULL, NULL, l1dy, l1dx);
  run_golden(&g1, isa);
  d.p = 2.0f;
  golden g2 = gold("global lp p=2", d, 1, 1, x, l2y, NULL, NULL, l2y, x);
  run_golden(&g2, isa);
}
END_TEST

START_TEST(test_zeros_and_negzero_dy) {
  simdpool_isa isa;
  if (!loop_isa(_i, "zeros, dy = -0.0", &isa))
    return;
  static const float ndy[2] = {-0.0f, -0.0f};
  static const float zero8[8] = {0, 0, 0, 0, 0, 0, 0, 0};

  /* All-zero windows, 2x4 = {-0,-0,+0,-0 / -0,-0,-0,-0}, 2x2/s2.
   * MAX: window 0 all -0: the first, -0.0 at 0 (tap 0); window 1 = {+0,-0,
   * -0,-0}: +0 at 2 (tap 0). AVG: acc starts at +0.0f and 0 + -0 = +0, so
   * y = +0 / 4 = +0 for both. LP p=1: sum of fabsf = +0; p=2: sqrtf(+0) =
   * +0. dy = -0.0 everywhere: MAX 0 + -0 = +0; AVG -0/4 = -0, 0 + -0 = +0;
   * LP p=1 g = -0, q = -0 * sign(±0) = -0 * 0 -> +0 after the add; p=2
   * y == 0 gives g = 0. Every dx is +0.0 (never -0.0, semantics 2). */
  // clang-format off
  static const float zx[8] = {-0.0f, -0.0f, 0.0f,  -0.0f,
                              -0.0f, -0.0f, -0.0f, -0.0f};
  // clang-format on
  static const float zmy[2] = {-0.0f, 0.0f};
  static const int64_t zmi[2] = {0, 2};
  static const uint8_t zmt[2] = {0, 0};
  static const float zy[2] = {0.0f, 0.0f};
  simdpool_desc d = mk(SIMDPOOL_MAX, 1, 1, 2, 4, 2, 2, 2, 2);
  golden zm = gold("zeros max", d, 1, 2, zx, zmy, zmi, zmt, ndy, zero8);
  run_golden(&zm, isa);
  d.method = SIMDPOOL_AVG;
  golden za = gold("zeros avg", d, 1, 2, zx, zy, NULL, NULL, ndy, zero8);
  run_golden(&za, isa);
  d.method = SIMDPOOL_LP;
  d.p = 1.0f;
  golden z1 = gold("zeros lp p=1", d, 1, 2, zx, zy, NULL, NULL, ndy, zero8);
  run_golden(&z1, isa);
  d.p = 2.0f;
  golden z2 = gold("zeros lp p=2", d, 1, 2, zx, zy, NULL, NULL, ndy, zero8);
  run_golden(&z2, isa);

  /* Positive x with dy = -0.0: x = {1,2,3,4 / 5,6,7,8}, windows {1,2,5,6},
   * {3,4,7,8}. MAX 6 at 5, 8 at 7 (taps 3); AVG 14/4 = 3.5, 22/4 = 5.5;
   * LP p=1 14, 22; p=2 sqrtf(1+4+25+36 = 66), sqrtf(9+16+49+64 = 138).
   * Backward: every q is -0.0 (dy, dy/4, -0 * 1, (-0/y) * x) and every
   * dx = 0.0f + -0.0f = +0.0. */
  static const float px[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  static const float pmy[2] = {6, 8};
  static const int64_t pmi[2] = {5, 7};
  static const uint8_t pmt[2] = {3, 3};
  static const float pay[2] = {3.5f, 5.5f};
  static const float p1y[2] = {14, 22};
  const float p2y[2] = {sqrtf(66.0f), sqrtf(138.0f)};
  d = mk(SIMDPOOL_MAX, 1, 1, 2, 4, 2, 2, 2, 2);
  golden pm = gold("dy -0 max", d, 1, 2, px, pmy, pmi, pmt, ndy, zero8);
  run_golden(&pm, isa);
  d.method = SIMDPOOL_AVG;
  golden pa = gold("dy -0 avg", d, 1, 2, px, pay, NULL, NULL, ndy, zero8);
  run_golden(&pa, isa);
  d.method = SIMDPOOL_LP;
  d.p = 1.0f;
  golden p1 = gold("dy -0 lp p=1", d, 1, 2, px, p1y, NULL, NULL, ndy, zero8);
  run_golden(&p1, isa);
  d.p = 2.0f;
  golden p2 = gold("dy -0 lp p=2", d, 1, 2, px, p2y, NULL, NULL, ndy, zero8);
  run_golden(&p2, isa);

  /* AVG 3x3/s1/pad 1 on a 4x5 plane (Inception's pool, where every dx
   * element hears from up to nine outputs): x = 9 everywhere, dy = -0.0
   * everywhere. Pad not counted: each y = 9k / k = 9. Pad counted: y = 9k
   * / 9 = k, the valid taps: 4 at the corners, 6 along the edges, 9
   * inside. Every share is -0 / k = -0 and every dx = 0.0f + -0.0f + ...
   * = +0.0, never -0.0. */
  float nx20[20], ndy20[20], zero20[20], y9[20], yk[20];
  for (size_t i = 0; i < 20; i++) {
    const size_t r = i / 5, c = i % 5;
    nx20[i] = 9.0f;
    ndy20[i] = -0.0f;
    zero20[i] = 0.0f;
    y9[i] = 9.0f;
    yk[i] = (float)((r == 0 || r == 3 ? 2 : 3) * (c == 0 || c == 4 ? 2 : 3));
  }
  d = with_pads(mk(SIMDPOOL_AVG, 1, 1, 4, 5, 3, 3, 1, 1), 1, 1, 1, 1);
  golden a3 = gold("3x3/s1 avg, dy -0, pad not counted", with_cip(d, 0), 4, 5,
                   nx20, y9, NULL, NULL, ndy20, zero20);
  run_golden(&a3, isa);
  golden a3c = gold("3x3/s1 avg, dy -0, pad counted", d, 4, 5, nx20, yk, NULL,
                    NULL, ndy20, zero20);
  run_golden(&a3c, isa);
}
END_TEST

START_TEST(test_lp) {
  simdpool_isa isa;
  if (!loop_isa(_i, "LP p=1, p=2", &isa))
    return;
  /* p=1, 2x4, 2x2/s2: window 0 = {1,-2,3,-4}: |.| sum 10; window 1 =
   * {-0.5, 0, -0.0, 0.25}: 0.5 + 0 + 0 + 0.25 = 0.75.
   * Backward dy {2,-4}: q = dy * sign(x): 2, -2, 2, -2; -4 * -1 = 4,
   * -4 * 0 = -0 -> +0, -4 * 0 (sign(-0) = +0) -> +0, -4 * 1 = -4. */
  static const float x1[8] = {1, -2, -0.5f, 0, 3, -4, -0.0f, 0.25f};
  static const float y1[2] = {10, 0.75f};
  static const float dy1[2] = {2, -4};
  static const float dx1[8] = {2, -2, 4, 0, 2, -2, 0, -4};
  simdpool_desc d = mk(SIMDPOOL_LP, 1, 1, 2, 4, 2, 2, 2, 2);
  d.p = 1.0f;
  golden g1 = gold("lp p=1", d, 1, 2, x1, y1, NULL, NULL, dy1, dx1);
  run_golden(&g1, isa);

  /* p=2, 2x8, 2x2/s2: window 0 = {3,-4,0,0}: sqrtf(9+16) = 5;
   * window 1 = {-1,2,-2,4}: sqrtf(1+4+4+16) = 5; window 2 = {1,0,0,-1}:
   * sqrtf(2.0f) (exactly rounded); window 3 = {0,-0,-0,0}: sqrtf(0) = +0.
   * Backward dy {5, 10, sqrtf(2), 7}: g = dy / y = 1, 2, 1, and 0 for
   * y == 0; q = g * x: {3,-4,0,0}, {-2,4,-4,8}, {1,0,0,-1}, zeros. */
  // clang-format off
  static const float x2[16] = {3, -4, -1, 2, 1, 0,  0,     -0.0f,
                               0, 0,  -2, 4, 0, -1, -0.0f, 0};
  // clang-format on
  const float y2[4] = {5, 5, sqrtf(2.0f), 0};
  const float dy2[4] = {5, 10, sqrtf(2.0f), 7};
  // clang-format off
  static const float dx2[16] = {3, -4, -2, 4, 1, 0,  0, 0,
                                0, 0,  -4, 8, 0, -1, 0, 0};
  // clang-format on
  d.p = 2.0f;
  golden g2 = gold("lp p=2", d, 1, 4, x2, y2, NULL, NULL, dy2, dx2);
  g2.d.w = 8;
  run_golden(&g2, isa);
}
END_TEST

START_TEST(test_canonical_nan) {
  simdpool_isa isa;
  if (!loop_isa(_i, "canonical NaN (avg, lp)", &isa))
    return;
  const float cn = u2f(CANON_NAN);
  /* AVG, 2x6, 2x2/s2: window 0 = {inf, 1, -inf, 2}: inf + -inf is NaN ->
   * 0x7fc00000 (x86's default NaN would be 0xffc00000); window 1 =
   * {1, NaN 0xffc01234, 2, 3} -> 0x7fc00000, not the payload; window 2 =
   * {inf, 1, 2, 3} -> inf / 4 = inf. Backward dy {NaN 0xffc00001, 1, 4}:
   * window 0 cells get canonical NaN, window 1 cells 1/4, window 2 cells
   * 4/4 (AVG backward never looks at x). */
  // clang-format off
  const float ax[12] = {INFINITY,  1, 1, u2f(0xffc01234u), INFINITY, 1,
                        -INFINITY, 2, 2, 3,                2,        3};
  // clang-format on
  const float ay[3] = {cn, cn, INFINITY};
  const float ady[3] = {u2f(0xffc00001u), 1, 4};
  // clang-format off
  const float adx[12] = {cn, cn, .25f, .25f, 1, 1,
                         cn, cn, .25f, .25f, 1, 1};
  // clang-format on
  golden ga =
      gold("avg canonical NaN", mk(SIMDPOOL_AVG, 1, 1, 2, 6, 2, 2, 2, 2), 1, 3,
           ax, ay, NULL, NULL, ady, adx);
  run_golden(&ga, isa);

  /* LP p=1, 2x4: window 0 = {1, NaN 0xffc01234, -2, 0}: y canonical NaN;
   * window 1 = {3, 0, 4, 0}: 7. dy {3, 2}: window 0: 3*1, NaN -> canonical,
   * 3*-1, 3*0; window 1: 2, 0, 2, 0. */
  const float l1x[8] = {1, u2f(0xffc01234u), 3, 0, -2, 0, 4, 0};
  const float l1y[2] = {cn, 7};
  static const float l1dy[2] = {3, 2};
  const float l1dx[8] = {3, cn, 2, 0, -3, 0, 2, 0};
  simdpool_desc d = mk(SIMDPOOL_LP, 1, 1, 2, 4, 2, 2, 2, 2);
  d.p = 1.0f;
  golden g1 = gold("lp p=1 NaN", d, 1, 2, l1x, l1y, NULL, NULL, l1dy, l1dx);
  run_golden(&g1, isa);

  /* LP p=2 with a signalling NaN 0x7f800001 in window 0: y canonical NaN;
   * window 1 = {3,0,4,0}: 5. dy {3, 10}: window 0: g = 3 / NaN = NaN, so
   * every q is NaN -> canonical; window 1: g = 2: 6, 0, 8, 0. */
  const float l2x[8] = {1, u2f(0x7f800001u), 3, 0, -2, 0, 4, 0};
  const float l2y[2] = {cn, 5};
  static const float l2dy[2] = {3, 10};
  const float l2dx[8] = {cn, cn, 6, 0, cn, cn, 8, 0};
  d.p = 2.0f;
  golden g2 = gold("lp p=2 NaN", d, 1, 2, l2x, l2y, NULL, NULL, l2dy, l2dx);
  run_golden(&g2, isa);
}
END_TEST

/* Output shapes by the formulas of docs/semantics.md#shapes, per axis; each row
 * runs along h and along w, for MAX and AVG. */
typedef struct shape_case {
  simdpool_padding padding;
  size_t in, k, s, d, pb, pe;
  int ceil;
  size_t out;
} shape_case;

static const shape_case kShapes[] = {
    /* floor((5-2)/2)+1 = 2; ceil: ceil(1.5)+1 = 3, (3-1)*2 = 4 < 5 kept */
    {SIMDPOOL_PAD_EXPLICIT, 5, 2, 2, 1, 0, 0, 0, 2},
    {SIMDPOOL_PAD_EXPLICIT, 5, 2, 2, 1, 0, 0, 1, 3},
    /* in 4, pads 1/1: (4+2-2)/2 = 2 exactly, so floor and ceil give 3 */
    {SIMDPOOL_PAD_EXPLICIT, 4, 2, 2, 1, 1, 1, 0, 3},
    {SIMDPOOL_PAD_EXPLICIT, 4, 2, 2, 1, 1, 1, 1, 3},
    /* in 5, pads 1/1: ceil(5/2)+1 = 4, (4-1)*2 = 6 >= 5+1: dropped -> 3 */
    {SIMDPOOL_PAD_EXPLICIT, 5, 2, 2, 1, 1, 1, 1, 3},
    {SIMDPOOL_PAD_EXPLICIT, 5, 2, 2, 1, 1, 1, 0, 3},
    /* in 6, k 3, pads 1/1: ceil(5/2)+1 = 4, 6 < 7 kept; floor 3 */
    {SIMDPOOL_PAD_EXPLICIT, 6, 3, 2, 1, 1, 1, 1, 4},
    {SIMDPOOL_PAD_EXPLICIT, 6, 3, 2, 1, 1, 1, 0, 3},
    /* dilation 2: extent 3: floor((5-3)/2)+1 = 2 */
    {SIMDPOOL_PAD_EXPLICIT, 5, 2, 2, 2, 0, 0, 0, 2},
    /* in 10, k 3, d 2 (extent 5), s 3: floor(5/3)+1 = 2; ceil(5/3)+1 = 3,
     * (3-1)*3 = 6 < 10 kept */
    {SIMDPOOL_PAD_EXPLICIT, 10, 3, 3, 2, 0, 0, 0, 2},
    {SIMDPOOL_PAD_EXPLICIT, 10, 3, 3, 2, 0, 0, 1, 3},
    /* ResNet stem: 112, k 3, s 2, pads 1: floor(111/2)+1 = 56; ceil:
     * ceil(55.5)+1 = 57, (57-1)*2 = 112 < 113 kept */
    {SIMDPOOL_PAD_EXPLICIT, 112, 3, 2, 1, 1, 1, 0, 56},
    {SIMDPOOL_PAD_EXPLICIT, 112, 3, 2, 1, 1, 1, 1, 57},
    /* 7, k 3, s 2, pads 1: floor(6/2)+1 = 4 */
    {SIMDPOOL_PAD_EXPLICIT, 7, 3, 2, 1, 1, 1, 0, 4},
    /* output larger than input: 3, k 2, s 1, pads 1: floor(3/1)+1 = 4 */
    {SIMDPOOL_PAD_EXPLICIT, 3, 2, 1, 1, 1, 1, 0, 4},
    {SIMDPOOL_PAD_EXPLICIT, 1, 1, 1, 1, 0, 0, 0, 1},
    /* VALID: floor((in-e)/s)+1 */
    {SIMDPOOL_PAD_VALID, 5, 2, 2, 1, 0, 0, 0, 2},
    {SIMDPOOL_PAD_VALID, 7, 3, 2, 1, 0, 0, 0, 3},
    {SIMDPOOL_PAD_VALID, 5, 2, 2, 2, 0, 0, 0, 2},
    /* SAME: ceil(in/s) */
    {SIMDPOOL_PAD_SAME_UPPER, 5, 2, 2, 1, 0, 0, 0, 3},
    {SIMDPOOL_PAD_SAME_LOWER, 5, 2, 2, 1, 0, 0, 0, 3},
    {SIMDPOOL_PAD_SAME_UPPER, 4, 3, 1, 1, 0, 0, 0, 4},
    {SIMDPOOL_PAD_SAME_LOWER, 1, 3, 2, 1, 0, 0, 0, 1},
    {SIMDPOOL_PAD_SAME_UPPER, 5, 3, 1, 2, 0, 0, 0, 5},
    {SIMDPOOL_PAD_SAME_LOWER, 7, 3, 2, 1, 0, 0, 0, 4},
    {SIMDPOOL_PAD_SAME_UPPER, 112, 3, 2, 1, 0, 0, 0, 56},
    {SIMDPOOL_PAD_SAME_UPPER, 5, 1, 3, 1, 0, 0, 0, 2},
};

START_TEST(test_shapes) {
  for (size_t k = 0; k < NELEM(kShapes); ++k) {
    const shape_case *sc = &kShapes[k];
    for (int along_h = 0; along_h < 2; ++along_h)
      for (int m = SIMDPOOL_MAX; m <= SIMDPOOL_AVG; ++m) {
        simdpool_desc d;
        simdpool_plan *plan = NULL;
        size_t oh = 0, ow = 0;
        simdpool_status st;
        if (along_h) {
          d = mk((simdpool_method)m, 1, 1, sc->in, 1, sc->k, 1, sc->s, 1);
          d.dilation_h = sc->d;
          d.pad_top = sc->pb;
          d.pad_bottom = sc->pe;
        } else {
          d = mk((simdpool_method)m, 1, 1, 1, sc->in, 1, sc->k, 1, sc->s);
          d.dilation_w = sc->d;
          d.pad_left = sc->pb;
          d.pad_right = sc->pe;
        }
        d.padding = sc->padding;
        d.ceil_mode = sc->ceil;
        st = simdpool_plan_create(&d, &plan);
        if (st != SIMDPOOL_OK)
          ck_abort_msg("shape row %zu along %s: plan_create %d: %s", k,
                       along_h ? "h" : "w", (int)st, simdpool_last_error());
        simdpool_plan_output_shape(plan, &oh, &ow);
        if ((along_h ? oh : ow) != sc->out || (along_h ? ow : oh) != 1)
          ck_abort_msg("shape row %zu (in %zu k %zu s %zu d %zu pads %zu/%zu"
                       " ceil %d padding %d) along %s: got %zux%zu, "
                       "expected %zu",
                       k, sc->in, sc->k, sc->s, sc->d, sc->pb, sc->pe, sc->ceil,
                       (int)sc->padding, along_h ? "h" : "w", oh, ow, sc->out);
        simdpool_plan_destroy(plan);
      }
  }
}
END_TEST

/* ---- 4. Rejections at plan creation ----------------------------------- */

static int is_ident(char ch) {
  return isalnum((unsigned char)ch) || ch == '_';
}

/* `word` occurs in s with no identifier character on either side (so "h"
 * does not match inside "kernel_h", nor "p" inside "pad_top"). */
static int has_word(const char *s, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
    if ((p == s || !is_ident(p[-1])) && !is_ident(p[n]))
      return 1;
  return 0;
}

/* Creates a plan from d and checks the outcome. For a failure: the status,
 * *out == NULL, a non-empty simdpool_last_error() that differs from the
 * previous failure's (set just before by a NULL-desc call) and names `word`
 * as a whole word and contains `sub` (each when not NULL). */
static void expect_create(const simdpool_desc *d, simdpool_status want,
                          const char *word, const char *sub, const char *what) {
  static int dummy;
  char before[512];
  simdpool_plan *p = (simdpool_plan *)(void *)&dummy;
  simdpool_plan *q = NULL;
  simdpool_status st;
  const char *e;
  st = simdpool_plan_create(NULL, &q);
  ck_assert_msg(st == SIMDPOOL_INVALID_ARGUMENT && q == NULL,
                "plan_create(NULL desc) = %d", (int)st);
  snprintf(before, sizeof before, "%s", simdpool_last_error());
  st = simdpool_plan_create(d, &p);
  e = simdpool_last_error();
  if (want == SIMDPOOL_OK) {
    if (st != SIMDPOOL_OK || p == NULL)
      ck_abort_msg("%s: expected OK, got %d: %s", what, (int)st, e);
    simdpool_plan_destroy(p);
    return;
  }
  if (st != want)
    ck_abort_msg("%s: status %d (%s), expected %d (%s); last_error: %s", what,
                 (int)st, simdpool_status_string(st), (int)want,
                 simdpool_status_string(want), e);
  ck_assert_msg(p == NULL, "%s: *out is not NULL after a failure", what);
  ck_assert_msg(e != NULL && e[0] != '\0', "%s: empty last_error", what);
  ck_assert_msg(strcmp(e, before) != 0,
                "%s: last_error not updated (still \"%s\")", what, e);
  if (word && !has_word(e, word))
    ck_abort_msg("%s: last_error \"%s\" does not name field '%s'", what, e,
                 word);
  if (sub && !strstr(e, sub))
    ck_abort_msg("%s: last_error \"%s\" does not contain \"%s\"", what, e, sub);
}

#define INV SIMDPOOL_INVALID_ARGUMENT
#define UNS SIMDPOOL_UNSUPPORTED
#define OK_ SIMDPOOL_OK

/* Runs STMT on a copy of BASE (named d) and checks plan creation. */
#define EXPECT_CREATE(BASE, STMT, WANT, WORD, SUB)                             \
  do {                                                                         \
    simdpool_desc d = (BASE);                                                  \
    STMT;                                                                      \
    expect_create(&d, (WANT), (WORD), (SUB), #STMT);                           \
  } while (0)

/* MAX / AVG / LP, NCHW 1x1x4x4, 2x2 kernel and stride: all valid. */
#define BMAX mk(SIMDPOOL_MAX, 1, 1, 4, 4, 2, 2, 2, 2)
#define BAVG mk(SIMDPOOL_AVG, 1, 1, 4, 4, 2, 2, 2, 2)
#define BLP mk(SIMDPOOL_LP, 1, 1, 4, 4, 2, 2, 2, 2)

START_TEST(test_reject_sizes) {
  EXPECT_CREATE(BMAX, (void)0, OK_, NULL, NULL);
  EXPECT_CREATE(BAVG, (void)0, OK_, NULL, NULL);
  EXPECT_CREATE(BLP, (void)0, OK_, NULL, NULL);
  /* Each zero size, stride, dilation: INVALID, naming the field. */
  EXPECT_CREATE(BMAX, d.n = 0, INV, "n", NULL);
  EXPECT_CREATE(BMAX, d.c = 0, INV, "c", NULL);
  EXPECT_CREATE(BMAX, d.h = 0, INV, "h", NULL);
  EXPECT_CREATE(BMAX, d.w = 0, INV, "w", NULL);
  EXPECT_CREATE(BMAX, d.kernel_h = 0, INV, "kernel_h", NULL);
  EXPECT_CREATE(BMAX, d.kernel_w = 0, INV, "kernel_w", NULL);
  EXPECT_CREATE(BMAX, d.stride_h = 0, INV, "stride_h", NULL);
  EXPECT_CREATE(BMAX, d.stride_w = 0, INV, "stride_w", NULL);
  EXPECT_CREATE(BMAX, d.dilation_h = 0, INV, "dilation_h", NULL);
  EXPECT_CREATE(BMAX, d.dilation_w = 0, INV, "dilation_w", NULL);
  EXPECT_CREATE(BAVG, d.kernel_w = 0, INV, "kernel_w", NULL);
  EXPECT_CREATE(BLP, d.stride_h = 0, INV, "stride_h", NULL);
  /* out < 1: h 2 < kernel 3: floor((2-3)/1)+1 = 0. w 1, kernel 2: 0.
   * dilation 4, k 2: extent 5 > 4. h 1, k 3, pad_top 1: 1+1-3 < 0. */
  EXPECT_CREATE(BMAX, (d.h = 2, d.kernel_h = 3, d.stride_h = 1), INV, NULL,
                NULL);
  EXPECT_CREATE(BMAX, (d.w = 1, d.kernel_w = 2), INV, NULL, NULL);
  EXPECT_CREATE(BMAX, d.dilation_w = 4, INV, NULL, NULL);
  EXPECT_CREATE(BMAX, (d.h = 1, d.kernel_h = 3, d.pad_top = 1), INV, NULL,
                NULL);
  /* h 1, kernel 2, dilation 3, pad_top 2: extent 4, 1+2+0-4 = -1 < 0, so
   * out < 1 (rejected either as out < 1 or as an empty window). */
  EXPECT_CREATE(BMAX, (d.h = 1, d.dilation_h = 3, d.pad_top = 2), INV, NULL,
                NULL);
  /* Windows holding no input element while out >= 1:
   * h 1, k 2, d 3, pads 2/1 (< extent 4): out = floor((1+3-4)/2)+1 = 1;
   * the one window's taps are -2 and 1, both outside [0,1).
   * w 1, k 2, d 2, pads 1/1 (< extent 3): out = floor(0/2)+1 = 1; taps
   * -1 and 1. */
  EXPECT_CREATE(BMAX,
                (d.h = 1, d.dilation_h = 3, d.pad_top = 2, d.pad_bottom = 1),
                INV, NULL, "window");
  EXPECT_CREATE(BAVG,
                (d.w = 1, d.dilation_w = 2, d.pad_left = 1, d.pad_right = 1),
                INV, NULL, "window");
  /* pad >= extent: kernel 2 (extent 2), each pad 2 alone. */
  EXPECT_CREATE(BMAX, d.pad_top = 2, INV, "pad_top", NULL);
  EXPECT_CREATE(BMAX, d.pad_left = 2, INV, "pad_left", NULL);
  EXPECT_CREATE(BMAX, d.pad_bottom = 2, INV, "pad_bottom", NULL);
  EXPECT_CREATE(BMAX, d.pad_right = 2, INV, "pad_right", NULL);
  EXPECT_CREATE(BAVG, d.pad_top = 3, INV, "pad_top", NULL);
  /* ... but against the dilated extent: k 2, d 2 (extent 3), pad 2 is
   * fine: out = floor((4+2+2-3)/2)+1 = 3, windows' taps {-2,0}, {0,2},
   * {2,4}: each holds an input row. */
  EXPECT_CREATE(BMAX, (d.dilation_h = 2, d.pad_top = 2, d.pad_bottom = 2), OK_,
                NULL, NULL);
  EXPECT_CREATE(
      BMAX, (d.pad_top = 1, d.pad_left = 1, d.pad_bottom = 1, d.pad_right = 1),
      OK_, NULL, NULL);
}
END_TEST

START_TEST(test_reject_modes) {
  /* Pads with a non-EXPLICIT padding mode name the pad. */
  EXPECT_CREATE(BMAX, (d.padding = SIMDPOOL_PAD_VALID, d.pad_top = 1), INV,
                "pad_top", NULL);
  EXPECT_CREATE(BMAX, (d.padding = SIMDPOOL_PAD_SAME_UPPER, d.pad_left = 1),
                INV, "pad_left", NULL);
  EXPECT_CREATE(BMAX, (d.padding = SIMDPOOL_PAD_SAME_LOWER, d.pad_bottom = 1),
                INV, "pad_bottom", NULL);
  EXPECT_CREATE(BAVG, (d.padding = SIMDPOOL_PAD_VALID, d.pad_right = 1), INV,
                "pad_right", NULL);
  EXPECT_CREATE(BMAX, d.padding = SIMDPOOL_PAD_VALID, OK_, NULL, NULL);
  EXPECT_CREATE(BMAX, d.padding = SIMDPOOL_PAD_SAME_UPPER, OK_, NULL, NULL);
  EXPECT_CREATE(BMAX, d.padding = SIMDPOOL_PAD_SAME_LOWER, OK_, NULL, NULL);
  /* ceil_mode: only 0/1, and 1 only with EXPLICIT. */
  EXPECT_CREATE(BMAX, (d.padding = SIMDPOOL_PAD_VALID, d.ceil_mode = 1), INV,
                "ceil_mode", NULL);
  EXPECT_CREATE(BMAX, (d.padding = SIMDPOOL_PAD_SAME_UPPER, d.ceil_mode = 1),
                INV, "ceil_mode", NULL);
  EXPECT_CREATE(BAVG, (d.padding = SIMDPOOL_PAD_SAME_LOWER, d.ceil_mode = 1),
                INV, "ceil_mode", NULL);
  EXPECT_CREATE(BMAX, d.ceil_mode = 2, INV, "ceil_mode", NULL);
  EXPECT_CREATE(BMAX, d.ceil_mode = -1, INV, "ceil_mode", NULL);
  EXPECT_CREATE(BMAX, d.ceil_mode = 1, OK_, NULL, NULL);
  /* count_include_pad: 0/1 for AVG, ignored by MAX and LP. */
  EXPECT_CREATE(BAVG, d.count_include_pad = 2, INV, "count_include_pad", NULL);
  EXPECT_CREATE(BAVG, d.count_include_pad = -1, INV, "count_include_pad", NULL);
  EXPECT_CREATE(BAVG, d.count_include_pad = 0, OK_, NULL, NULL);
  EXPECT_CREATE(BMAX, d.count_include_pad = 2, OK_, NULL, NULL);
  EXPECT_CREATE(BLP, d.count_include_pad = 2, OK_, NULL, NULL);
  /* index_type only with MAX; the message names both values. */
  EXPECT_CREATE(BAVG, d.index_type = SIMDPOOL_INDEX_I32, INV, "index_type",
                "index_type=I32 with method=AVG");
  EXPECT_CREATE(BAVG, d.index_type = SIMDPOOL_INDEX_I64, INV, "index_type",
                "index_type=I64 with method=AVG");
  EXPECT_CREATE(BAVG, d.index_type = SIMDPOOL_INDEX_U8, INV, "index_type",
                "index_type=U8 with method=AVG");
  EXPECT_CREATE(BLP, d.index_type = SIMDPOOL_INDEX_I32, INV, "index_type",
                "index_type=I32 with method=LP");
  EXPECT_CREATE(BLP, d.index_type = SIMDPOOL_INDEX_I64, INV, "index_type",
                "index_type=I64 with method=LP");
  EXPECT_CREATE(BLP, d.index_type = SIMDPOOL_INDEX_U8, INV, "index_type",
                "index_type=U8 with method=LP");
  /* p: finite and > 0, checked only for LP. */
  EXPECT_CREATE(BLP, d.p = 0.0f, INV, "p", NULL);
  EXPECT_CREATE(BLP, d.p = -0.0f, INV, "p", NULL);
  EXPECT_CREATE(BLP, d.p = -1.0f, INV, "p", NULL);
  EXPECT_CREATE(BLP, d.p = NAN, INV, "p", NULL);
  EXPECT_CREATE(BLP, d.p = INFINITY, INV, "p", NULL);
  EXPECT_CREATE(BLP, d.p = -INFINITY, INV, "p", NULL);
  /* Other p need SLEEF's pow (tests/test_no_sleef.c has the whole rule). */
  EXPECT_CREATE(BLP, d.p = 0.5f, EXPECT_SLEEF ? OK_ : UNS, NULL, NULL);
  EXPECT_CREATE(BLP, d.p = 3.0f, EXPECT_SLEEF ? OK_ : UNS, NULL, NULL);
  EXPECT_CREATE(BLP, d.p = 1.0f, OK_, NULL, NULL);
  EXPECT_CREATE(BLP, d.p = 2.0f, OK_, NULL, NULL);
  EXPECT_CREATE(BMAX, d.p = NAN, OK_, NULL, NULL);
  EXPECT_CREATE(BAVG, d.p = -1.0f, OK_, NULL, NULL);
  /* Enum values out of range name their field. */
  EXPECT_CREATE(BMAX, d.method = (simdpool_method)7, INV, "method", NULL);
  EXPECT_CREATE(BMAX, d.layout = (simdpool_layout)5, INV, "layout", NULL);
  EXPECT_CREATE(BMAX, d.padding = (simdpool_padding)9, INV, "padding", NULL);
  EXPECT_CREATE(BMAX, d.index_type = (simdpool_index_type)9, INV, "index_type",
                NULL);
  EXPECT_CREATE(BMAX, d.isa = (simdpool_isa)42, INV, "isa", NULL);
}
END_TEST

START_TEST(test_reject_overflow) {
#if SIZE_MAX > 0xffffffffu
  const size_t K = 1;
  /* 2^20 each: 2^80 elements, far beyond size_t (a wrapping product would
   * be 0). 2^16 each: 2^64 elements, which wraps to exactly 0. */
  EXPECT_CREATE(BMAX,
                (d.n = d.c = d.h = d.w = K << 20, d.kernel_h = d.kernel_w = 1,
                 d.stride_h = d.stride_w = 1),
                INV, NULL, "overflow");
  EXPECT_CREATE(BMAX,
                (d.n = d.c = d.h = d.w = K << 16, d.kernel_h = d.kernel_w = 1,
                 d.stride_h = d.stride_w = 1),
                INV, NULL, "overflow");
  /* n 2^31, h = w = 2^15, kernel 1: 2^61 elements, x is 2^63 bytes >
   * PTRDIFF_MAX = 2^63-1 though it fits in size_t. */
  EXPECT_CREATE(BMAX,
                (d.n = K << 31, d.h = d.w = K << 15,
                 d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = 1),
                INV, NULL, "overflow");
  /* n 2^30: 2^60 elements, x and y 2^62 bytes: fine without indices and
   * with I32 (2^62 bytes; h*w = 2^30 <= INT32_MAX); I64 indices need
   * 2^63 bytes: overflow. (Plan creation allocates no tensors.) */
  EXPECT_CREATE(BMAX,
                (d.n = K << 30, d.h = d.w = K << 15,
                 d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = 1),
                OK_, NULL, NULL);
  EXPECT_CREATE(BMAX,
                (d.n = K << 30, d.h = d.w = K << 15,
                 d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = 1,
                 d.index_type = SIMDPOOL_INDEX_I32),
                OK_, NULL, NULL);
  EXPECT_CREATE(BMAX,
                (d.n = K << 30, d.h = d.w = K << 15,
                 d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = 1,
                 d.index_type = SIMDPOOL_INDEX_I64),
                INV, NULL, "overflow");
  /* y larger than x: n 2^31, h = w = 32767, k 2, s 1, pads 1: x has
   * 2^31 * 32767^2 = 2^61 - 2^47 + 2^31 elements (bytes < 2^63-1), y has
   * 2^31 * 32768^2 = 2^61 elements = 2^63 bytes: overflow. Without the
   * pads y is 32766^2 per plane: fine. */
  EXPECT_CREATE(BMAX,
                (d.n = K << 31, d.h = d.w = 32767, d.stride_h = d.stride_w = 1,
                 d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1),
                INV, NULL, "overflow");
  EXPECT_CREATE(BMAX,
                (d.n = K << 31, d.h = d.w = 32767, d.stride_h = d.stride_w = 1),
                OK_, NULL, NULL);
  /* Strides, dilations and extents are capped at 2^40 (the fuzzer found
   * strides of 2^63 wrapping in the span check and dilations of 2^63
   * turning negative in the kernels). 2^40 itself is accepted: a 1x1
   * kernel with stride 2^40 on a 4x4 input gives one output per axis. */
  EXPECT_CREATE(BMAX, (d.kernel_w = 1, d.stride_w = (K << 40) + 1), INV,
                "stride_w", "2^40");
  EXPECT_CREATE(BMAX, d.stride_h = K << 63, INV, "stride_h", "2^40");
  EXPECT_CREATE(BMAX, d.stride_h = (size_t)PTRDIFF_MAX, INV, "stride_h",
                "2^40");
  EXPECT_CREATE(BAVG, (d.kernel_w = 1, d.dilation_w = K << 63), INV,
                "dilation_w", "2^40");
  EXPECT_CREATE(BMAX, (d.kernel_h = 3, d.dilation_h = K << 39), INV, "extent",
                "2^40");
  EXPECT_CREATE(BMAX,
                (d.kernel_h = d.kernel_w = 1, d.stride_h = d.stride_w = K << 40,
                 d.dilation_h = K << 40),
                OK_, NULL, NULL);
#endif
}
END_TEST

START_TEST(test_reject_index_width_null) {
#if SIZE_MAX > 0xffffffffu
  const size_t K = 1;
  /* I32 needs h*w <= INT32_MAX = 2147483647: 65536 * 32768 = 2^31 is one
   * too many (UNSUPPORTED), 65535 * 32768 = 2147450880 fits, and so does
   * anything with I64. */
  EXPECT_CREATE(BMAX,
                (d.h = d.w = K << 16, d.kernel_h = d.kernel_w = 1,
                 d.stride_h = d.stride_w = 1,
                 d.index_type = SIMDPOOL_INDEX_I32),
                UNS, "index_type", NULL);
  EXPECT_CREATE(BMAX,
                (d.h = 65536, d.w = 32768, d.kernel_h = d.kernel_w = 1,
                 d.stride_h = d.stride_w = 1,
                 d.index_type = SIMDPOOL_INDEX_I32),
                UNS, "index_type", NULL);
  EXPECT_CREATE(BMAX,
                (d.h = 65535, d.w = 32768, d.kernel_h = d.kernel_w = 1,
                 d.stride_h = d.stride_w = 1,
                 d.index_type = SIMDPOOL_INDEX_I32),
                OK_, NULL, NULL);
  EXPECT_CREATE(BMAX,
                (d.h = d.w = K << 16, d.kernel_h = d.kernel_w = 1,
                 d.stride_h = d.stride_w = 1,
                 d.index_type = SIMDPOOL_INDEX_I64),
                OK_, NULL, NULL);
  /* SIMD kernels count in 32-bit lanes: a plane of 2^31 elements is
   * UNSUPPORTED on a forced SIMD ISA, with a message saying why; AUTO
   * takes the scalar kernels. */
  for (int i = SIMDPOOL_ISA_SSE41; i <= SIMDPOOL_ISA_NEON; ++i) {
    if (!simdpool_isa_supported((simdpool_isa)i))
      continue;
    EXPECT_CREATE(BMAX,
                  (d.h = 65536, d.w = 32768, d.kernel_h = d.kernel_w = 1,
                   d.stride_h = d.stride_w = 1, d.isa = (simdpool_isa)i),
                  UNS, "isa", "32-bit lanes");
  }
  {
    simdpool_desc d = BMAX;
    simdpool_plan *p = NULL;
    d.h = 65536;
    d.w = 32768;
    d.kernel_h = d.kernel_w = d.stride_h = d.stride_w = 1;
    ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
    ck_assert_int_eq(simdpool_plan_isa(p), SIMDPOOL_ISA_SCALAR);
    simdpool_plan_destroy(p);
  }
#endif
  /* U8 needs kernel_h * kernel_w <= 256: 17*16 = 272 and 1*257 are too
   * many (UNSUPPORTED); 16*16 = 256 and 1*256 fit. */
  EXPECT_CREATE(BMAX,
                (d.h = 17, d.w = 16, d.kernel_h = 17, d.kernel_w = 16,
                 d.index_type = SIMDPOOL_INDEX_U8),
                UNS, "index_type", NULL);
  EXPECT_CREATE(BMAX,
                (d.h = 1, d.w = 257, d.kernel_h = 1, d.kernel_w = 257,
                 d.index_type = SIMDPOOL_INDEX_U8),
                UNS, "index_type", NULL);
  EXPECT_CREATE(BMAX,
                (d.h = 16, d.w = 16, d.kernel_h = 16, d.kernel_w = 16,
                 d.index_type = SIMDPOOL_INDEX_U8),
                OK_, NULL, NULL);
  EXPECT_CREATE(BMAX,
                (d.h = 1, d.w = 256, d.kernel_h = 1, d.kernel_w = 256,
                 d.index_type = SIMDPOOL_INDEX_U8),
                OK_, NULL, NULL);
  /* NULL desc and NULL out. */
  {
    static int dummy;
    simdpool_plan *p = (simdpool_plan *)(void *)&dummy;
    simdpool_desc d = BMAX;
    ck_assert_int_eq(simdpool_plan_create(NULL, &p), INV);
    ck_assert_ptr_null(p);
    ck_assert_str_ne(simdpool_last_error(), "");
    ck_assert_int_eq(simdpool_plan_create(&d, NULL), INV);
    ck_assert_str_ne(simdpool_last_error(), "");
  }
}
END_TEST

START_TEST(test_forced_isa) {
  /* Forcing each ISA through desc.isa: a supported one runs (plan_isa says
   * so), an unsupported one is UNSUPPORTED with a message, never a silent
   * fallback. */
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; ++i) {
    simdpool_isa isa = (simdpool_isa)i;
    simdpool_desc d = BMAX;
    simdpool_plan *p = NULL;
    simdpool_status st;
    d.isa = isa;
    st = simdpool_plan_create(&d, &p);
    if (simdpool_isa_supported(isa)) {
      ck_assert_msg(st == SIMDPOOL_OK, "forced %s: %d: %s",
                    simdpool_isa_name(isa), (int)st, simdpool_last_error());
      ck_assert_int_eq(simdpool_plan_isa(p), isa);
      printf("  forced isa %-7s supported: plan runs %s\n",
             simdpool_isa_name(isa), simdpool_isa_name(simdpool_plan_isa(p)));
      simdpool_plan_destroy(p);
    } else {
      const char *e = simdpool_last_error();
      ck_assert_msg(st == SIMDPOOL_UNSUPPORTED, "forced %s: %d, expected %d",
                    simdpool_isa_name(isa), (int)st, (int)UNS);
      ck_assert_ptr_null(p);
      ck_assert_msg(e && e[0], "forced %s: empty last_error",
                    simdpool_isa_name(isa));
      printf("  forced isa %-7s unsupported here: SIMDPOOL_UNSUPPORTED "
             "(\"%s\")\n",
             simdpool_isa_name(isa), e);
    }
  }
}
END_TEST

static simdpool_isa auto_plan_isa(simdpool_status want, const char *what) {
  simdpool_desc d = BMAX;
  simdpool_plan *p = NULL;
  simdpool_status st = simdpool_plan_create(&d, &p);
  simdpool_isa isa;
  ck_assert_msg(st == want, "%s: plan_create %d, expected %d: %s", what,
                (int)st, (int)want, simdpool_last_error());
  if (st != SIMDPOOL_OK) {
    ck_assert_ptr_null(p);
    return SIMDPOOL_ISA_AUTO;
  }
  isa = simdpool_plan_isa(p);
  simdpool_plan_destroy(p);
  return isa;
}

START_TEST(test_env_isa) {
  const char *e;
  simdpool_isa isa;
  /* Unset: AUTO picks a supported ISA, never AUTO. */
  unsetenv("SIMDPOOL_ISA");
  isa = auto_plan_isa(OK_, "SIMDPOOL_ISA unset");
  ck_assert_int_ne(isa, SIMDPOOL_ISA_AUTO);
  ck_assert(simdpool_isa_supported(isa));
  printf("  SIMDPOOL_ISA unset: AUTO plans run %s\n", simdpool_isa_name(isa));
  /* Unknown name: INVALID at plan creation, the message names the var. */
  setenv("SIMDPOOL_ISA", "doesnotexist", 1);
  auto_plan_isa(INV, "SIMDPOOL_ISA=doesnotexist");
  e = simdpool_last_error();
  ck_assert_msg(strstr(e, "SIMDPOOL_ISA") != NULL,
                "last_error \"%s\" does not mention SIMDPOOL_ISA", e);
  /* A forced desc.isa ignores the variable. */
  {
    simdpool_desc d = BMAX;
    simdpool_plan *p = NULL;
    d.isa = SIMDPOOL_ISA_SCALAR;
    ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
    ck_assert_int_eq(simdpool_plan_isa(p), SIMDPOOL_ISA_SCALAR);
    simdpool_plan_destroy(p);
  }
  /* Each known name: a supported ISA is what AUTO plans run; one this
   * build or CPU lacks is UNSUPPORTED (with a message naming the var). */
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; ++i) {
    simdpool_isa want = (simdpool_isa)i;
    char what[64];
    setenv("SIMDPOOL_ISA", simdpool_isa_name(want), 1);
    snprintf(what, sizeof what, "SIMDPOOL_ISA=%s", simdpool_isa_name(want));
    if (simdpool_isa_supported(want)) {
      isa = auto_plan_isa(OK_, what);
      ck_assert_msg(isa == want, "%s: AUTO plan runs %s", what,
                    simdpool_isa_name(isa));
      printf("  %-20s AUTO plans run %s\n", what, simdpool_isa_name(isa));
    } else {
      auto_plan_isa(UNS, what);
      e = simdpool_last_error();
      ck_assert_msg(e[0] && strstr(e, "SIMDPOOL_ISA") != NULL,
                    "%s: last_error \"%s\" does not mention SIMDPOOL_ISA", what,
                    e);
      printf("  %-20s SIMDPOOL_UNSUPPORTED here (\"%s\")\n", what, e);
    }
  }
  /* With SIMDPOOL_ISA=scalar, a forced desc.isa still wins. */
  setenv("SIMDPOOL_ISA", "scalar", 1);
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; ++i) {
    simdpool_desc d = BMAX;
    simdpool_plan *p = NULL;
    if (!simdpool_isa_supported((simdpool_isa)i))
      continue;
    d.isa = (simdpool_isa)i;
    ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
    ck_assert_int_eq(simdpool_plan_isa(p), i);
    simdpool_plan_destroy(p);
  }
  /* Names in any letter case: "AVX2" and "Avx2" are avx2 (UNSUPPORTED where
   * avx2 is); near misses stay unknown. */
  for (int i = SIMDPOOL_ISA_AUTO; i <= SIMDPOOL_ISA_NEON; ++i) {
    const simdpool_isa want = (simdpool_isa)i;
    const char *name = simdpool_isa_name(want);
    char upper[16], mixed[16], what[64];
    size_t k = 0;
    for (; name[k] && k + 1 < sizeof upper; ++k) {
      upper[k] = (char)toupper((unsigned char)name[k]);
      mixed[k] = k == 0 ? upper[k] : name[k];
    }
    upper[k] = mixed[k] = '\0';
    for (int v = 0; v < 2; ++v) {
      setenv("SIMDPOOL_ISA", v ? mixed : upper, 1);
      snprintf(what, sizeof what, "SIMDPOOL_ISA=%s", v ? mixed : upper);
      if (!simdpool_isa_supported(want)) {
        auto_plan_isa(UNS, what);
        continue;
      }
      isa = auto_plan_isa(OK_, what);
      ck_assert_msg(want == SIMDPOOL_ISA_AUTO ? isa != SIMDPOOL_ISA_AUTO
                                              : isa == want,
                    "%s: AUTO plan runs %s", what, simdpool_isa_name(isa));
    }
  }
  static const char *const near_misses[] = {"avx-2", "SSE4.1", "avx512f",
                                            " avx2", "avx2 ",  "scalar\n"};
  for (size_t k = 0; k < NELEM(near_misses); ++k) {
    char what[64];
    setenv("SIMDPOOL_ISA", near_misses[k], 1);
    snprintf(what, sizeof what, "SIMDPOOL_ISA='%s'", near_misses[k]);
    auto_plan_isa(INV, what);
    e = simdpool_last_error();
    ck_assert_msg(strstr(e, "SIMDPOOL_ISA") != NULL && strstr(e, "any letter"),
                  "%s: last_error \"%s\"", what, e);
  }
  /* "auto" and "" mean AUTO. */
  setenv("SIMDPOOL_ISA", "auto", 1);
  isa = auto_plan_isa(OK_, "SIMDPOOL_ISA=auto");
  ck_assert_int_ne(isa, SIMDPOOL_ISA_AUTO);
  setenv("SIMDPOOL_ISA", "", 1);
  isa = auto_plan_isa(OK_, "SIMDPOOL_ISA=\"\"");
  ck_assert_int_ne(isa, SIMDPOOL_ISA_AUTO);
  unsetenv("SIMDPOOL_ISA");
}
END_TEST

/* ---- 5. Rejections at execution --------------------------------------- */

static simdpool_plan *plan_or_die(simdpool_desc d, simdpool_isa isa) {
  simdpool_plan *p = NULL;
  simdpool_status st;
  d.isa = isa;
  st = simdpool_plan_create(&d, &p);
  if (st != SIMDPOOL_OK || !p)
    ck_abort_msg("plan_create %d: %s", (int)st, simdpool_last_error());
  return p;
}

/* A rejected call: INVALID, a message, and every output byte untouched. */
static void expect_rejected(simdpool_status st, const void *out, size_t bytes,
                            const void *out2, size_t bytes2, const char *what) {
  const char *e = simdpool_last_error();
  if (st != SIMDPOOL_INVALID_ARGUMENT)
    ck_abort_msg("%s: status %d, expected INVALID_ARGUMENT", what, (int)st);
  ck_assert_msg(e && e[0], "%s: empty last_error", what);
  if (out && !is_sentinel(out, bytes))
    ck_abort_msg("%s: rejected call wrote to its output", what);
  if (out2 && !is_sentinel(out2, bytes2))
    ck_abort_msg("%s: rejected call wrote to its indices", what);
}

START_TEST(test_exec_forward) {
  simdpool_isa isa;
  if (!loop_isa(_i, "forward rejections", &isa))
    return;
  simdpool_plan *p0 = plan_or_die(BMAX, isa); /* no index type */
  simdpool_desc di = BMAX;
  di.index_type = SIMDPOOL_INDEX_I32;
  simdpool_plan *p1 = plan_or_die(di, isa);
  float y[4];
  unsigned char ib[32];
#define RESET() (fill_sentinel(y, sizeof y), fill_sentinel(ib, sizeof ib))
  RESET();
  expect_rejected(simdpool_forward(p0, kSeedX, y, ib), y, sizeof y, ib,
                  sizeof ib, "forward: indices on a plan without index type");
  RESET();
  expect_rejected(simdpool_forward(p1, kSeedX, y, NULL), y, sizeof y, NULL, 0,
                  "forward: NULL indices on an I32 plan");
  ck_assert_msg(strstr(simdpool_last_error(), "(index_type=I32)"),
                "the index type is named, not numbered: %s",
                simdpool_last_error());
  RESET();
  expect_rejected(simdpool_forward(NULL, kSeedX, y, NULL), y, sizeof y, NULL, 0,
                  "forward: NULL plan");
  RESET();
  expect_rejected(simdpool_forward(p0, NULL, y, NULL), y, sizeof y, NULL, 0,
                  "forward: NULL x");
  RESET();
  expect_rejected(simdpool_forward(p1, NULL, y, ib), y, sizeof y, ib, sizeof ib,
                  "forward: NULL x (I32 plan)");
  RESET();
  expect_rejected(simdpool_forward(p0, kSeedX, NULL, NULL), NULL, 0, NULL, 0,
                  "forward: NULL y");
  RESET();
  expect_rejected(simdpool_forward(p1, kSeedX, NULL, ib), NULL, 0, ib,
                  sizeof ib, "forward: NULL y (I32 plan)");
  /* The same plans accept well-formed calls: 6, 4, 3, 8 (seed 001). */
  RESET();
  ck_assert_int_eq(simdpool_forward(p0, kSeedX, y, NULL), OK_);
  ck_assert(f2u(y[0]) == f2u(6.0f) && f2u(y[3]) == f2u(8.0f));
  ck_assert_int_eq(simdpool_forward(p1, kSeedX, y, ib), OK_);
#undef RESET
  simdpool_plan_destroy(p0);
  simdpool_plan_destroy(p1);
}
END_TEST

START_TEST(test_exec_backward) {
  simdpool_isa isa;
  if (!loop_isa(_i, "backward rejections", &isa))
    return;
  static const float dy[4] = {1, 2, 3, 4};
  // clang-format off
  static const int32_t good[4] = {5, 3, 8, 10}; /* seed 001's winners */
  simdpool_desc di = BMAX;
  di.index_type = SIMDPOOL_INDEX_I32;
  simdpool_plan *p0 = plan_or_die(BMAX, isa);
  simdpool_plan *p1 = plan_or_die(di, isa);
  simdpool_plan *pa = plan_or_die(BAVG, isa);
  simdpool_plan *pl = plan_or_die(BLP, isa);
  float dx[16];
#define BW(CALL, WHAT)                                                         \
  (fill_sentinel(dx, sizeof dx),                                               \
   expect_rejected((CALL), dx, sizeof dx, NULL, 0, (WHAT)))
  BW(simdpool_backward(p0, dy, NULL, NULL, dx), "max: neither indices nor x");
  BW(simdpool_backward(p1, dy, NULL, NULL, dx),
     "max (I32 plan): neither indices nor x");
  BW(simdpool_backward(p0, dy, good, kSeedX, dx),
     "max: indices on a plan without index type");
  BW(simdpool_backward(p0, dy, good, NULL, dx),
     "max: indices on a plan without index type, no x");
  BW(simdpool_backward(NULL, dy, NULL, kSeedX, dx), "NULL plan");
  BW(simdpool_backward(p0, NULL, NULL, kSeedX, dx), "max: NULL dy");
  BW(simdpool_backward(p1, NULL, good, NULL, dx), "max (I32): NULL dy");
  BW(simdpool_backward(pa, NULL, NULL, NULL, dx), "avg: NULL dy");
  BW(simdpool_backward(pa, dy, good, NULL, dx), "avg: indices given");
  BW(simdpool_backward(pa, dy, good, kSeedX, dx), "avg: indices and x");
  BW(simdpool_backward(pl, dy, NULL, NULL, dx), "lp: no x");
  BW(simdpool_backward(pl, dy, good, kSeedX, dx), "lp: indices given");
  BW(simdpool_backward(pl, NULL, NULL, kSeedX, dx), "lp: NULL dy");
#undef BW
  ck_assert_int_eq(simdpool_backward(p0, dy, NULL, kSeedX, NULL), INV);
  ck_assert_int_eq(simdpool_backward(p1, dy, good, NULL, NULL), INV);
  ck_assert_int_eq(simdpool_backward(pa, dy, NULL, NULL, NULL), INV);
  ck_assert_int_eq(simdpool_backward(pl, dy, NULL, kSeedX, NULL), INV);
  /* Well-formed calls on the same plans succeed. */
  ck_assert_int_eq(simdpool_backward(p0, dy, NULL, kSeedX, dx), OK_);
  ck_assert_int_eq(simdpool_backward(p1, dy, good, NULL, dx), OK_);
  ck_assert_int_eq(simdpool_backward(pa, dy, NULL, NULL, dx), OK_);
  ck_assert_int_eq(simdpool_backward(pl, dy, NULL, kSeedX, dx), OK_);
  simdpool_plan_destroy(p0);
  simdpool_plan_destroy(p1);
  simdpool_plan_destroy(pa);
  simdpool_plan_destroy(pl);
}
END_TEST

/* Backward from `ib` on plan d must be rejected, dx (n floats) untouched. */
static void expect_bad_indices(simdpool_desc d, simdpool_isa isa,
                               const void *ib, size_t n, const char *what) {
  simdpool_plan *p = plan_or_die(d, isa);
  float *dx = xmalloc(n * sizeof *dx);
  static const float dy[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  // clang-format on
  fill_sentinel(dx, n * sizeof *dx);
  expect_rejected(simdpool_backward(p, dy, ib, NULL, dx), dx, n * sizeof *dx,
                  NULL, 0, what);
  free(dx);
  simdpool_plan_destroy(p);
}

/* Backward from `ib` succeeds and gives `want` (n floats). */
static void expect_good_indices(simdpool_desc d, simdpool_isa isa,
                                const void *ib, const float *want, size_t n,
                                const char *what) {
  simdpool_plan *p = plan_or_die(d, isa);
  float *dx = xmalloc(n * sizeof *dx);
  static const float dy[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  fill_sentinel(dx, n * sizeof *dx);
  expect_ok(simdpool_backward(p, dy, ib, NULL, dx), what, "backward");
  if (want)
    check_f32(dx, want, n, what, "dx");
  free(dx);
  simdpool_plan_destroy(p);
}

START_TEST(test_exec_bad_indices) {
  simdpool_isa isa;
  if (!loop_isa(_i, "out-of-window indices", &isa))
    return;
  simdpool_desc d32 = BMAX, d64 = BMAX, du8 = BMAX;
  d32.index_type = SIMDPOOL_INDEX_I32;
  d64.index_type = SIMDPOOL_INDEX_I64;
  du8.index_type = SIMDPOOL_INDEX_U8;
  /* Seed 001 geometry (4x4, 2x2/s2): window 0 = {0,1,4,5}, 1 = {2,3,6,7},
   * 2 = {8,9,12,13}, 3 = {10,11,14,15}. Any valid tap of its own window is
   * accepted, not only the max: {0, 2, 12, 15} with dy 1..4 gives
   * dx[0] = 1, dx[2] = 2, dx[12] = 3, dx[15] = 4. */
  static const int32_t ok32[4] = {0, 2, 12, 15};
  // clang-format off
  static const float okdx[16] = {1, 0, 2, 0, 0, 0, 0, 0,
                                 0, 0, 0, 0, 3, 0, 0, 4};
  // clang-format on
  expect_good_indices(d32, isa, ok32, okdx, 16, "i32 other valid taps");
  // clang-format off
  static const int32_t b1[4] = {2, 3, 8, 10};  /* 2 is window 1's */
  static const int32_t b2[4] = {-1, 3, 8, 10}; /* negative */
  static const int32_t b3[4] = {5, 3, 8, 16};  /* past the plane */
  static const int32_t b4[4] = {5, 3, 8, 9};   /* 9 is window 2's */
  expect_bad_indices(d32, isa, b1, 16, "i32 index 2 in window 0");
  expect_bad_indices(d32, isa, b2, 16, "i32 index -1");
  expect_bad_indices(d32, isa, b3, 16, "i32 index 16");
  expect_bad_indices(d32, isa, b4, 16, "i32 index 9 in window 3");
  static const int64_t g64[4] = {5, 3, 8, 10};
  const int64_t c64[4] = {5, 3, 8, ((int64_t)1 << 32) + 10}; /* 10 if cut */
  static const int64_t n64[4] = {5, -6, 8, 10};
  // clang-format on
  expect_good_indices(d64, isa, g64, NULL, 16, "i64 seed winners");
  expect_bad_indices(d64, isa, c64, 16, "i64 index 2^32 + 10");
  expect_bad_indices(d64, isa, n64, 16, "i64 index -6");
  /* U8: a tap >= kernel_h * kernel_w = 4. */
  static const uint8_t g8[4] = {3, 1, 0, 0};
  static const uint8_t u4[4] = {3, 1, 0, 4};
  static const uint8_t u255[4] = {255, 1, 0, 0};
  expect_good_indices(du8, isa, g8, NULL, 16, "u8 seed winners");
  expect_bad_indices(du8, isa, u4, 16, "u8 tap 4 of a 2x2 window");
  expect_bad_indices(du8, isa, u255, 16, "u8 tap 255");

  /* pad_top 1 on 3x3 (2x2/s2, out 2x1): window 0 = rows -1..0, cols 0..1:
   * taps 0 and 1 are padding, 2 = (0,0), 3 = (0,1); window 1 = rows 1..2:
   * taps 0..3 = (1,0), (1,1), (2,0), (2,1) = 3, 4, 6, 7. */
  simdpool_desc pt =
      with_pads(mk(SIMDPOOL_MAX, 1, 1, 3, 3, 2, 2, 2, 2), 1, 0, 0, 0);
  pt.index_type = SIMDPOOL_INDEX_U8;
  // clang-format off
  static const uint8_t pg[2] = {3, 3}; /* (0,1) and (2,1): dx[1] = 1, [7] = 2 */
  static const float pgdx[9] = {0, 1, 0, 0, 0, 0, 0, 2, 0};
  static const uint8_t pb0[2] = {0, 0}; /* padding tap */
  static const uint8_t pb1[2] = {2, 1}; /* fine, then window 1 tap 1 ok */
  static const uint8_t pb2[2] = {1, 0}; /* padding tap */
  expect_good_indices(pt, isa, pg, pgdx, 9, "u8 valid taps beside padding");
  expect_good_indices(pt, isa, pb1, NULL, 9, "u8 taps 2, 1 beside padding");
  expect_bad_indices(pt, isa, pb0, 9, "u8 tap 0 names top padding");
  expect_bad_indices(pt, isa, pb2, 9, "u8 tap 1 names top padding");
  pt.index_type = SIMDPOOL_INDEX_I32;
  static const int32_t pi_ok[2] = {1, 7};
  static const int32_t pi_bad[2] = {3, 3}; /* (1,0) is not in window 0 */
  expect_good_indices(pt, isa, pi_ok, NULL, 9, "i32 valid beside padding");
  expect_bad_indices(pt, isa, pi_bad, 9, "i32 index 3 outside window 0");

  /* Ceil overhang: 5x5, 2x2/s2, ceil, out 3x3: window (2,2) = rows 4..5,
   * cols 4..5 holds only tap 0 = (4,4); window (0,2) = rows 0..1, cols
   * 4..5 holds taps 0 and 2. */
  simdpool_desc cm = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  cm.ceil_mode = 1;
  cm.index_type = SIMDPOOL_INDEX_U8;
  static const uint8_t cg[9] = {3, 3, 2, 3, 3, 2, 1, 1, 0};
  // clang-format on
  static const uint8_t cb1[9] = {3, 3, 2, 3, 3, 2, 1, 1, 1};
  static const uint8_t cb2[9] = {3, 3, 3, 3, 3, 2, 1, 1, 0};
  expect_good_indices(cm, isa, cg, NULL, 25, "u8 ceil winners");
  expect_bad_indices(cm, isa, cb1, 25, "u8 tap 1 in the ceil overhang");
  expect_bad_indices(cm, isa, cb2, 25, "u8 tap 3 in the ceil overhang");

  /* Dilation 2, 5x5, 2x2/s2: window 0's taps are 0, 2, 10, 12; index 1 is
   * inside its bounding box but no tap. */
  simdpool_desc dm = mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2);
  dm.dilation_h = dm.dilation_w = 2;
  dm.index_type = SIMDPOOL_INDEX_I32;
  static const int32_t dg[4] = {12, 12, 12, 12};
  static const int32_t db[4] = {1, 12, 12, 12};
  expect_good_indices(dm, isa, dg, NULL, 25, "i32 dilated winners");
  expect_bad_indices(dm, isa, db, 25, "i32 index 1 between dilated taps");

  /* NHWC, C = 2, seed geometry: indices (n, oh, ow, c) order. Both
   * channels hold the seed's winners {5,3,8,10}; moving channel 1's last
   * one to 9 (window 2's) is rejected. */
  simdpool_desc nh = BMAX;
  nh.layout = SIMDPOOL_NHWC;
  nh.c = 2;
  nh.index_type = SIMDPOOL_INDEX_I32;
  static const int32_t ng[8] = {5, 5, 3, 3, 8, 8, 10, 10};
  static const int32_t nb[8] = {5, 5, 3, 3, 8, 8, 10, 9};
  expect_good_indices(nh, isa, ng, NULL, 32, "nhwc i32 winners");
  expect_bad_indices(nh, isa, nb, 32, "nhwc i32 channel 1 index 9");
}
END_TEST

/* ---- 6. API basics ---------------------------------------------------- */

START_TEST(test_desc_init) {
  simdpool_desc d;
  memset(&d, 0x5a, sizeof d);
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, 2, 3, 7, 9, 3, 2);
  ck_assert_int_eq(d.method, SIMDPOOL_AVG);
  ck_assert_int_eq(d.layout, SIMDPOOL_NHWC);
  ck_assert_uint_eq(d.n, 2);
  ck_assert_uint_eq(d.c, 3);
  ck_assert_uint_eq(d.h, 7);
  ck_assert_uint_eq(d.w, 9);
  ck_assert_uint_eq(d.kernel_h, 3);
  ck_assert_uint_eq(d.kernel_w, 2);
  ck_assert_uint_eq(d.stride_h, 3); /* stride = kernel */
  ck_assert_uint_eq(d.stride_w, 2);
  ck_assert_uint_eq(d.dilation_h, 1);
  ck_assert_uint_eq(d.dilation_w, 1);
  ck_assert_int_eq(d.padding, SIMDPOOL_PAD_EXPLICIT);
  ck_assert_uint_eq(d.pad_top, 0);
  ck_assert_uint_eq(d.pad_left, 0);
  ck_assert_uint_eq(d.pad_bottom, 0);
  ck_assert_uint_eq(d.pad_right, 0);
  ck_assert_int_eq(d.ceil_mode, 0);
  ck_assert_int_eq(d.count_include_pad, 1);
  ck_assert(f2u(d.p) == f2u(2.0f));
  ck_assert_int_eq(d.index_type, SIMDPOOL_INDEX_NONE);
  ck_assert_int_eq(d.isa, SIMDPOOL_ISA_AUTO);
  ck_assert_int_eq(d.dtype, SIMDPOOL_F32);
  ck_assert(f2u(d.quant.x_scale) == f2u(1.0f));
  ck_assert(f2u(d.quant.y_scale) == f2u(1.0f));
  ck_assert_int_eq(d.quant.x_zero_point, 0);
  ck_assert_int_eq(d.quant.y_zero_point, 0);
  ck_assert_int_eq(d.quant.y_min, INT32_MIN);
  ck_assert_int_eq(d.quant.y_max, INT32_MAX);
  ck_assert_uint_eq(d.struct_size, sizeof d);
  /* The defaults make a valid plan: 7x9, kernel 3x2, stride 3x2 ->
   * floor(4/3)+1 = 2 by floor(7/2)+1 = 4. */
  {
    simdpool_plan *p = NULL;
    size_t oh = 0, ow = 0;
    ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
    simdpool_plan_output_shape(p, &oh, &ow);
    ck_assert_uint_eq(oh, 2);
    ck_assert_uint_eq(ow, 4);
    simdpool_plan_destroy(p);
  }
  simdpool_desc_init(&d, SIMDPOOL_LP, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  ck_assert(f2u(d.p) == f2u(2.0f));
  ck_assert_int_eq(d.method, SIMDPOOL_LP);
  simdpool_desc_init(NULL, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
}
END_TEST

/* The descriptor's ABI guard: struct_size is what simdpool_desc_init records,
 * desc_init_sized never writes past the size it is given, and a size the
 * library does not know is a loud INVALID_ARGUMENT at plan creation. */
START_TEST(test_desc_abi) {
  enum { GUARD = 64 };
  union {
    simdpool_desc desc; /* followed by GUARD bytes of sentinel */
    unsigned char bytes[sizeof(simdpool_desc) + GUARD];
  } u;
  unsigned char *buf = u.bytes;
  simdpool_desc *d = &u.desc;
  simdpool_plan *p = NULL;
  /* The macro and the exported function both record this layout's size. */
  memset(buf, 0xa5, sizeof u);
  simdpool_desc_init(d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  ck_assert_uint_eq(d->struct_size, sizeof(simdpool_desc));
  ck_assert(is_sentinel(buf + sizeof(simdpool_desc), GUARD));
  ck_assert_int_eq(simdpool_plan_create(d, &p), OK_);
  simdpool_plan_destroy(p);
  memset(buf, 0xa5, sizeof u);
  (simdpool_desc_init)(d, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  ck_assert_uint_eq(d->struct_size, sizeof(simdpool_desc));
  ck_assert_uint_eq(d->kernel_w, 2);
  ck_assert(is_sentinel(buf + sizeof(simdpool_desc), GUARD));
  /* Shorter than its own size field: nothing is written. */
  memset(buf, 0xa5, sizeof u);
  simdpool_desc_init_sized(d, sizeof(size_t) - 1, SIMDPOOL_MAX, SIMDPOOL_NCHW,
                           1, 1, 4, 4, 2, 2);
  ck_assert(is_sentinel(buf, sizeof u));
  /* Any size: exactly that many bytes (up to this library's layout). */
  for (size_t size = sizeof(size_t); size <= sizeof(simdpool_desc) + GUARD;
       size += 4) {
    memset(buf, 0xa5, sizeof u);
    simdpool_desc_init_sized(d, size, SIMDPOOL_AVG, SIMDPOOL_NHWC, 1, 2, 3, 3,
                             2, 2);
    const size_t written =
        size < sizeof(simdpool_desc) ? size : sizeof(simdpool_desc);
    ck_assert_msg(is_sentinel(buf + written, sizeof u - written),
                  "desc_init_sized(size %zu) wrote past %zu bytes", size,
                  written);
    ck_assert_uint_eq(d->struct_size, size);
  }
  /* A caller built against a newer header: its fields past this layout are
   * left alone and plan creation says what happened. */
  memset(buf, 0xa5, sizeof u);
  simdpool_desc_init_sized(d, sizeof(simdpool_desc) + 16, SIMDPOOL_MAX,
                           SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  ck_assert(is_sentinel(buf + sizeof(simdpool_desc), GUARD));
  expect_create(d, INV, "struct_size", "newer simdpool.h", "newer caller");
  /* Not filled by desc_init: zero, or a size no layout has. */
  simdpool_desc z = BMAX;
  z.struct_size = 0;
  expect_create(&z, INV, "struct_size", "simdpool_desc_init", "size 0");
  z.struct_size = sizeof z - sizeof(size_t);
  expect_create(&z, INV, "struct_size", "not the size", "a shorter size");
  z.struct_size = 7;
  expect_create(&z, INV, "struct_size", "not the size", "size 7");
  z.struct_size = (size_t)-1;
  expect_create(&z, INV, "struct_size", "newer simdpool.h", "size SIZE_MAX");
  /* A copy of an initialised descriptor is as good as the original. */
  simdpool_desc copy = BMAX;
  z = copy;
  expect_create(&z, OK_, NULL, NULL, "copied descriptor");
  /* A 0.1 descriptor ends before the pixel strides: desc_init_sized leaves
   * the bytes past it alone, and plan creation gives the new fields their
   * defaults (dense, no clamp) whatever those bytes hold. */
  const size_t old = offsetof(simdpool_desc, x_pixel_stride);
  memset(buf, 0xa5, sizeof u);
  simdpool_desc_init_sized(d, old, SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 2, 4, 4, 2,
                           2);
  ck_assert(is_sentinel(buf + old, sizeof u - old));
  ck_assert_int_eq(simdpool_plan_create(d, &p), OK_);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_X),
                    2 * 16 * sizeof(float));
  float x[32], y[8];
  for (int i = 0; i < 32; i++)
    x[i] = (float)(i * 100); /* a clamp from the sentinel would show */
  ck_assert_int_eq(simdpool_forward(p, x, y, NULL), OK_);
  ck_assert(y[7] == 3100.0f); /* channel 1 of window (1,1): x[(3*4+3)*2+1] */
  simdpool_plan_destroy(p);
  /* And the defaults of the current layout. */
  simdpool_desc_init(d, SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 2, 4, 4, 2, 2);
  ck_assert_uint_eq(d->x_pixel_stride, 0);
  ck_assert_uint_eq(d->y_pixel_stride, 0);
  ck_assert_int_eq(d->clamp, 0);
  ck_assert(d->clamp_min == -INFINITY && d->clamp_max == INFINITY);
}
END_TEST

/* The element type's rules at plan creation (docs/semantics.md#element-types).
 * Every dtype is checked by every rule and runs on every ISA; quant is
 * read only by S8/U8 AVG plans; the largest window that bounds the multiplier,
 * by hand: adaptive 5 -> 3 has windows [0,2) [1,4) [3,5) (3 taps), 10 -> 4
 * [0,3) [2,5) [5,8) [7,10) (3), 14 -> 7 two each, 3 -> 5 at most 2; so 3D
 * adaptive 5x10x3
 * -> 3x4x5 has at most 3*3*2 = 18 taps, shown by a multiplier that underflows.
 */
START_TEST(test_dtype_rules) {
  simdpool_desc base; /* BMAX with desc_init's neutral quantization */
  simdpool_desc_init(&base, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  const simdpool_dtype types[] = {SIMDPOOL_BF16, SIMDPOOL_F16, SIMDPOOL_S8,
                                  SIMDPOOL_U8};
  for (size_t t = 0; t < 4; t++) {
    const simdpool_dtype dt = types[t];
    const int integer = dt == SIMDPOOL_S8 || dt == SIMDPOOL_U8;
    EXPECT_CREATE(base, d.dtype = dt, OK_, NULL, NULL);
    /* Every ISA computes every dtype: MAX and the float AVG through their
     * f32 kernels on widened copies, the quantized average with kernels of
     * its own. */
    for (int isa = SIMDPOOL_ISA_SSE41; isa <= SIMDPOOL_ISA_NEON; isa++)
      if (simdpool_isa_supported((simdpool_isa)isa)) {
        EXPECT_CREATE(base, (d.dtype = dt, d.isa = (simdpool_isa)isa), OK_,
                      NULL, NULL);
        EXPECT_CREATE(
            base,
            (d.dtype = dt, d.isa = (simdpool_isa)isa, d.method = SIMDPOOL_AVG),
            OK_, NULL, NULL);
      }
    /* The shape rules come first. */
    EXPECT_CREATE(base, (d.dtype = dt, d.h = 1), INV, NULL, "output height");
    /* quant is ignored by MAX (and by every float dtype) */
    EXPECT_CREATE(base,
                  (d.dtype = dt, d.quant.x_scale = -1.0f, d.quant.y_min = 7,
                   d.quant.y_max = 6),
                  OK_, NULL, NULL);
    simdpool_desc avg = base;
    avg.method = SIMDPOOL_AVG;
    avg.dtype = dt;
    EXPECT_CREATE(avg, d.quant.x_scale = NAN, integer ? INV : OK_,
                  integer ? "quant.x_scale" : NULL, NULL);
    EXPECT_CREATE(avg, (d.method = SIMDPOOL_LP, d.p = 1.0f),
                  integer ? UNS : OK_, integer ? "method" : NULL, NULL);
    EXPECT_CREATE(avg, d.clamp = 1, integer ? UNS : OK_,
                  integer ? "clamp" : NULL, NULL);
  }
  simdpool_desc q = base;
  q.method = SIMDPOOL_AVG;
  q.dtype = SIMDPOOL_S8;
  /* The sentinels stand for the range's ends; explicit ends are in range. */
  EXPECT_CREATE(q, (d.quant.y_min = -128, d.quant.y_max = 127), OK_, NULL,
                NULL);
  EXPECT_CREATE(q, (d.quant.y_min = INT32_MIN, d.quant.y_max = -128), OK_, NULL,
                NULL);
  EXPECT_CREATE(q, (d.quant.y_min = 127), OK_, NULL, NULL);
  EXPECT_CREATE(q, (d.quant.y_min = -129), INV, "quant.y_min", "[-128, 127]");
  EXPECT_CREATE(q, (d.quant.y_max = INT32_MIN), INV, "quant.y_max",
                "[-128, 127]");
  EXPECT_CREATE(q, (d.quant.y_min = INT32_MAX), INV, "quant.y_min",
                "[-128, 127]");
  EXPECT_CREATE(q, (d.quant.x_zero_point = -128, d.quant.y_zero_point = 127),
                OK_, NULL, NULL);
  EXPECT_CREATE(q, d.quant.y_zero_point = 128, INV, "quant.y_zero_point", NULL);
  EXPECT_CREATE(q, d.quant.x_scale = -0.0f, INV, "quant.x_scale", NULL);
  EXPECT_CREATE(q, d.quant.y_scale = 0x1p-149f, INV, "quant.x_scale",
                "it is inf for 1"); /* 1 / 2^-149 overflows */
  /* Window sizes: 2^23 taps pass (4096 x 2048), 2^23 + 4096 do not. */
  EXPECT_CREATE(q,
                (d.h = 4096, d.w = 2048, d.kernel_h = 4096, d.kernel_w = 2048,
                 d.stride_h = d.stride_w = 1),
                OK_, NULL, NULL);
  EXPECT_CREATE(q,
                (d.h = 4097, d.w = 2048, d.kernel_h = 4097, d.kernel_w = 2048),
                UNS, "dtype", "up to 1x4097x2048 taps");
  /* The largest adaptive window, through the multiplier's message: with
   * x_scale 2^-122, m = 2^-122 / 18 = 2^-126 * 16/18 is subnormal (with 16
   * taps or fewer it would be normal), and the message names the count. */
  simdpool_desc a;
  simdpool_desc_init_adaptive(&a, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 5, 10, 3,
                              3, 4, 5);
  a.dtype = SIMDPOOL_U8;
  a.quant.x_scale = 0x1p-122f;
  EXPECT_CREATE(a, (void)0, INV, "quant.x_scale", "divisors 1 to 18,");
  /* Uniform windows: 14 -> 7 in 1D holds 2 taps. */
  simdpool_desc_init_adaptive(&a, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 1, 1, 14,
                              1, 1, 7);
  a.dtype = SIMDPOOL_U8;
  a.quant.x_scale = 0x1p-126f;
  EXPECT_CREATE(a, (void)0, INV, "quant.x_scale", "divisors 1 to 2,");
  /* Adaptive 3 -> 5 (more outputs than inputs): at most 2 taps. */
  simdpool_desc_init_adaptive(&a, SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 1, 1, 1, 3, 1,
                              1, 5);
  a.dtype = SIMDPOOL_U8;
  a.quant.x_scale = 0x1p-126f;
  EXPECT_CREATE(a, (void)0, INV, "quant.x_scale", "divisors 1 to 2,");
  /* The out-of-range dtype. */
  EXPECT_CREATE(base, d.dtype = (simdpool_dtype)5, INV, "dtype",
                "not a simdpool_dtype");
}
END_TEST

/* Pixel strides and the clamp by hand: NHWC AVG, c=2, 1x4 input, kernel
 * 1x2: x pixels (1,10) (3,20) (5,-6) (7,NaN) three floats apart (gaps inf),
 * y pixels four apart. Sums (4,30) (12,NaN), halved: (2,15) (6,NaN); with
 * the clamp [0, 12]: (2,12) (6,NaN) (the NaN canonical, untouched by the
 * clamp). Backward of dy (2,4) (6,8): every input pixel gets its window's
 * dy / 2: (1,2) (1,2) (3,4) (3,4). On every ISA. */
START_TEST(test_strides_clamp_by_hand) {
  const float inf = INFINITY;
  const float x[11] = {1, 10, inf, 3, 20, inf, 5, -6, inf, 7, NAN};
  const float dy[6] = {2, 4, inf, inf, 6, 8};
  const uint32_t want_y[2][6] = {{0x40000000u, 0x41700000u, 0xa5a5a5a5u,
                                  0xa5a5a5a5u, 0x40c00000u, 0x7fc00000u},
                                 {0x40000000u, 0x41400000u, 0xa5a5a5a5u,
                                  0xa5a5a5a5u, 0x40c00000u, 0x7fc00000u}};
  const float want_dx[8] = {1, 2, 1, 2, 3, 4, 3, 4};
  for (int isa = SIMDPOOL_ISA_SCALAR; isa <= SIMDPOOL_ISA_NEON; isa++) {
    if (!simdpool_isa_supported((simdpool_isa)isa))
      continue;
    for (int clamp = 0; clamp < 2; clamp++) {
      simdpool_desc d;
      simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, 1, 2, 1, 4, 1, 2);
      d.x_pixel_stride = 3;
      d.y_pixel_stride = 4;
      d.clamp = clamp;
      d.clamp_min = 0.0f;
      d.clamp_max = 12.0f;
      d.isa = (simdpool_isa)isa;
      simdpool_plan *p = NULL;
      ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
      /* (4 - 1) * 3 + 2 and (2 - 1) * 4 + 2 floats. */
      ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_X), 44);
      ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_DX), 44);
      ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_Y), 24);
      ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_DY), 24);
      float y[6], dx[11];
      memset(y, 0xa5, sizeof y);
      ck_assert_int_eq(simdpool_forward(p, x, y, NULL), OK_);
      for (int i = 0; i < 6; i++)
        ck_assert_msg(f2u(y[i]) == want_y[clamp][i],
                      "isa %s clamp %d: y[%d] = 0x%08x, want 0x%08x",
                      simdpool_isa_name((simdpool_isa)isa), clamp, i,
                      (unsigned)f2u(y[i]), (unsigned)want_y[clamp][i]);
      memset(dx, 0xa5, sizeof dx);
      if (clamp) {
        ck_assert_int_eq(simdpool_backward(p, dy, NULL, NULL, dx), INV);
        ck_assert(strstr(simdpool_last_error(), "output clamp") != NULL);
        ck_assert(is_sentinel(dx, sizeof dx));
      } else {
        ck_assert_int_eq(simdpool_backward(p, dy, NULL, NULL, dx), OK_);
        for (int q = 0; q < 4; q++) {
          ck_assert(dx[3 * q] == want_dx[2 * q]);
          ck_assert(dx[3 * q + 1] == want_dx[2 * q + 1]);
          if (q < 3)
            ck_assert(is_sentinel(&dx[3 * q + 2], sizeof(float)));
        }
      }
      simdpool_plan_destroy(p);
    }
  }
}
END_TEST

START_TEST(test_strings) {
  static const simdpool_status all[4] = {SIMDPOOL_OK, SIMDPOOL_INVALID_ARGUMENT,
                                         SIMDPOOL_UNSUPPORTED,
                                         SIMDPOOL_OUT_OF_MEMORY};
  for (size_t i = 0; i < 4; ++i) {
    const char *s = simdpool_status_string(all[i]);
    ck_assert_ptr_nonnull(s);
    ck_assert_msg(s[0] != '\0', "status_string(%d) is empty", (int)all[i]);
    for (size_t j = 0; j < i; ++j)
      ck_assert_str_ne(s, simdpool_status_string(all[j]));
  }
  ck_assert_str_eq(simdpool_isa_name(SIMDPOOL_ISA_AUTO), "auto");
  ck_assert_str_eq(simdpool_isa_name(SIMDPOOL_ISA_SCALAR), "scalar");
  ck_assert_str_eq(simdpool_isa_name(SIMDPOOL_ISA_SSE41), "sse41");
  ck_assert_str_eq(simdpool_isa_name(SIMDPOOL_ISA_AVX2), "avx2");
  ck_assert_str_eq(simdpool_isa_name(SIMDPOOL_ISA_AVX512), "avx512");
  ck_assert_str_eq(simdpool_isa_name(SIMDPOOL_ISA_NEON), "neon");
  ck_assert_str_eq(simdpool_isa_name((simdpool_isa)42), "unknown");
  ck_assert_str_eq(simdpool_version(), SIMDPOOL_VERSION_STRING);
  ck_assert_int_eq(SIMDPOOL_VERSION, 200); /* 0*10000 + 2*100 + 0 */
}
END_TEST

START_TEST(test_plan_queries) {
  simdpool_plan *p = NULL;
  size_t oh = 7, ow = 7;
  ck_assert_int_eq(simdpool_isa_supported(SIMDPOOL_ISA_SCALAR), 1);
  ck_assert_int_ne(simdpool_isa_supported(SIMDPOOL_ISA_AUTO), 0);
  ck_assert_int_eq(simdpool_isa_supported((simdpool_isa)42), 0);
  unsetenv("SIMDPOOL_ISA");
  simdpool_desc d = BMAX;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
  ck_assert_int_ne(simdpool_plan_isa(p), SIMDPOOL_ISA_AUTO);
  ck_assert(simdpool_isa_supported(simdpool_plan_isa(p)));
  simdpool_plan_output_shape(p, &oh, &ow);
  ck_assert_uint_eq(oh, 2);
  ck_assert_uint_eq(ow, 2);
  simdpool_plan_output_shape(p, NULL, &ow);
  simdpool_plan_output_shape(p, &oh, NULL);
  simdpool_plan_output_shape(p, NULL, NULL);
  simdpool_plan_destroy(p);
  simdpool_plan_destroy(NULL);
  ck_assert_int_eq(simdpool_plan_isa(NULL), SIMDPOOL_ISA_AUTO);
  /* Every forced supported ISA reports itself, never AUTO. */
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; ++i) {
    if (!simdpool_isa_supported((simdpool_isa)i))
      continue;
    d.isa = (simdpool_isa)i;
    ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
    ck_assert_int_eq(simdpool_plan_isa(p), i);
    simdpool_plan_destroy(p);
  }
}
END_TEST

START_TEST(test_plan_kernel_name) {
  simdpool_isa isa;
  if (!loop_isa(_i, "kernel names", &isa))
    return;
  /* 1x1x4x4 max 2x2/s2: every ISA has a 2x2/s2 forward kernel, named with
   * its ISA; backward without indices exists, from indices only with an
   * index type. */
  simdpool_desc d = BMAX;
  simdpool_plan *p = NULL;
  d.isa = isa;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
  const char *fwd = simdpool_plan_kernel_name(p, SIMDPOOL_OP_FORWARD);
  const char *bwd = simdpool_plan_kernel_name(p, SIMDPOOL_OP_BACKWARD);
  ck_assert_ptr_nonnull(fwd);
  ck_assert_ptr_nonnull(bwd);
  ck_assert_msg(strstr(fwd, "2x2s2") && strstr(fwd, simdpool_isa_name(isa)),
                "forward kernel of a 2x2/s2 %s plan: %s",
                simdpool_isa_name(isa), fwd);
  ck_assert_msg(
      strstr(bwd, "maxpool_bwd") && strstr(bwd, simdpool_isa_name(isa)),
      "backward kernel of a max %s plan: %s", simdpool_isa_name(isa), bwd);
  ck_assert_ptr_null(
      simdpool_plan_kernel_name(p, SIMDPOOL_OP_BACKWARD_INDICES));
  ck_assert_ptr_null(simdpool_plan_kernel_name(p, (simdpool_op)3));
  ck_assert_ptr_null(simdpool_plan_kernel_name(p, (simdpool_op)-1));
  printf("  %-7s max 2x2/s2 NCHW: forward %s, backward %s\n",
         simdpool_isa_name(isa), fwd, bwd);
  simdpool_plan_destroy(p);
  d.index_type = SIMDPOOL_INDEX_I64;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
  const char *bidx = simdpool_plan_kernel_name(p, SIMDPOOL_OP_BACKWARD_INDICES);
  ck_assert_msg(bidx && strstr(bidx, "bwd_idx"), "backward from indices: %s",
                bidx ? bidx : "NULL");
  simdpool_plan_destroy(p);
  /* AVG 3x3/s1 with padding on every side takes a general kernel. */
  d = BAVG;
  d.isa = isa;
  d.kernel_h = d.kernel_w = 3;
  d.stride_h = d.stride_w = 1;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.dilation_w = 2;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
  fwd = simdpool_plan_kernel_name(p, SIMDPOOL_OP_FORWARD);
  ck_assert_msg(fwd && strstr(fwd, "avgpool_fwd") && !strstr(fwd, "3x3"),
                "dilated avg 3x3: %s", fwd ? fwd : "NULL");
  simdpool_plan_destroy(p);
  ck_assert_ptr_null(simdpool_plan_kernel_name(NULL, SIMDPOOL_OP_FORWARD));
}
END_TEST

START_TEST(test_plan_tensor_bytes) {
  simdpool_plan *p = NULL;
  /* 1x1x4x4 -> 2x2: 16 and 4 floats, 4 indices of 1, 4 or 8 bytes. */
  static const struct {
    simdpool_index_type it;
    size_t bytes;
  } per_index[] = {{SIMDPOOL_INDEX_NONE, 0},
                   {SIMDPOOL_INDEX_U8, 4},
                   {SIMDPOOL_INDEX_I32, 16},
                   {SIMDPOOL_INDEX_I64, 32}};
  for (size_t i = 0; i < NELEM(per_index); ++i) {
    simdpool_desc d = BMAX;
    d.index_type = per_index[i].it;
    ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_X), 64);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_DX), 64);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_Y), 16);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_DY), 16);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_INDICES),
                      per_index[i].bytes);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, (simdpool_tensor)5), 0);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, (simdpool_tensor)-1), 0);
    simdpool_plan_destroy(p);
  }
  /* NHWC 2x3x5x7, 2x2 ceil mode: out 3x4 (ceil(3/2)+1, ceil(5/2)+1). */
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, 2, 3, 5, 7, 2, 2);
  d.ceil_mode = 1;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_X),
                    2 * 3 * 5 * 7 * sizeof(float));
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_Y),
                    2 * 3 * 3 * 4 * sizeof(float));
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_INDICES), 0);
  simdpool_plan_destroy(p);
  ck_assert_uint_eq(simdpool_plan_tensor_bytes(NULL, SIMDPOOL_TENSOR_X), 0);
}
END_TEST

START_TEST(test_last_error) {
  simdpool_desc d = BMAX;
  simdpool_plan *p = NULL;
  char first[512];
  /* In a fresh process (Check's fork mode) no call has failed yet on this
   * thread: the text is empty. */
  if (g_forked)
    ck_assert_str_eq(simdpool_last_error(), "");
  d.stride_w = 0;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), INV);
  ck_assert_str_ne(simdpool_last_error(), "");
  ck_assert(has_word(simdpool_last_error(), "stride_w"));
  snprintf(first, sizeof first, "%s", simdpool_last_error());
  /* A later success does not make it dangle; a later failure replaces it. */
  d = BMAX;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), OK_);
  simdpool_plan_destroy(p);
  ck_assert_str_ne(simdpool_last_error(), "");
  d.dilation_h = 0;
  ck_assert_int_eq(simdpool_plan_create(&d, &p), INV);
  ck_assert(has_word(simdpool_last_error(), "dilation_h"));
  ck_assert_str_ne(simdpool_last_error(), first);
}
END_TEST

/* ---- 3D and adaptive windows, by hand ---------------------------------- */

/* Creates the plan of *d (every ISA has 3D and adaptive kernels). */
static void plan_nd(const simdpool_desc *d, simdpool_plan **p,
                    const char *ctx) {
  const simdpool_status st = simdpool_plan_create(d, p);
  ck_assert_msg(st == SIMDPOOL_OK, "%s: plan_create returned %d: %s", ctx,
                (int)st, simdpool_last_error());
}

/* Forward (y, and indices of type it) and backward (from indices and from
 * x) of plan d against hand-computed values: y, flat winners (MAX, or
 * NULL), U8 taps (or NULL), dy and dx. ny outputs, nx inputs. */
static void run_nd(const simdpool_desc *dp, const char *ctx, const float *x,
                   size_t nx, const float *y, const int64_t *flat,
                   const uint8_t *tap, size_t ny, const float *dy,
                   const float *dx) {
  static const simdpool_index_type its[] = {
      SIMDPOOL_INDEX_NONE, SIMDPOOL_INDEX_I32, SIMDPOOL_INDEX_I64,
      SIMDPOOL_INDEX_U8};
  for (size_t k = 0; k < 4; k++) {
    simdpool_desc d = *dp;
    d.index_type = its[k];
    if (d.method != SIMDPOOL_MAX && its[k] != SIMDPOOL_INDEX_NONE)
      continue;
    if (d.adaptive && its[k] == SIMDPOOL_INDEX_U8)
      continue;
    char c2[160];
    snprintf(c2, sizeof c2, "%s [%s, %s, index %s]", ctx,
             d.layout == SIMDPOOL_NCHW ? "channels-first" : "channels-last",
             simdpool_isa_name(d.isa), it_name(its[k]));
    simdpool_plan *p;
    plan_nd(&d, &p, c2);
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_X),
                      nx * sizeof(float));
    ck_assert_uint_eq(simdpool_plan_tensor_bytes(p, SIMDPOOL_TENSOR_Y),
                      ny * sizeof(float));
    float *yg = xmalloc(ny * sizeof *yg), *dxg = xmalloc(nx * sizeof *dxg);
    int64_t idx8[16];
    void *ind = k ? (void *)idx8 : NULL;
    ck_assert_int_eq(simdpool_forward(p, x, yg, ind), SIMDPOOL_OK);
    check_f32(yg, y, ny, c2, "y");
    for (size_t i = 0; k && i < ny; i++) {
      const long long v = its[k] == SIMDPOOL_INDEX_I32 ? ((int32_t *)ind)[i]
                          : its[k] == SIMDPOOL_INDEX_I64
                              ? (long long)((int64_t *)ind)[i]
                              : ((uint8_t *)ind)[i];
      const long long want = its[k] == SIMDPOOL_INDEX_U8 ? tap[i] : flat[i];
      ck_assert_msg(v == want, "%s: indices[%zu] = %lld, expected %lld", c2, i,
                    v, want);
    }
    if (dy) {
      /* MAX: from x (k == 0) and from the indices just written. */
      ck_assert_int_eq(simdpool_backward(p, dy, ind, x, dxg), SIMDPOOL_OK);
      check_f32(dxg, dx, nx, c2, "dx");
    }
    free(yg);
    free(dxg);
    simdpool_plan_destroy(p);
  }
}

/* 2x2x2 MAX (and AVG) windows with ties across the depth slices: c = 1, d =
 * 2, h = 2, w = 6, kernel 2x2x2 stride 2: windows at columns 0-1, 2-3 and
 * 4-5. Scan order is depth, row, column; flat = (depth*2 + row)*6 + column,
 * tap = (depth*2 + row)*2 + column - 2*window.
 *   Window 0 holds 5 four times, in slice 0 at (0,0,1) and (0,1,0) and in
 *   slice 1 at (1,0,0) and (1,1,1): the first, flat 1, tap 1, wins.
 *   Window 1 holds -0 in slice 0 and +0 in slice 1, and a NaN last: the NaN
 *   wins (flat (1*2+1)*6 + 3 = 21, tap 7, payload kept); without it the
 *   first -0 (flat 2, tap 0) does.
 *   Window 2: slice 0 is 3 1 / 2 0, slice 1 all 7: the first 7, (1,0,0),
 *   flat 16, tap 4.
 * AVG: (1+5+5+2+5+3-0+5)/8 = 3.25; window 1 sums to +0 (or NaN, canonical);
 * (3+1+2+0+28)/8 = 4.25. Backward of dy = 2 3 4 puts each dy at its
 * winner (AVG: dy/8 on each tap of its window). With c = 1 both layouts
 * share the memory order. */
START_TEST(test_3d_max_depth_ties) {
  simdpool_isa isa;
  if (!loop_isa(_i, "3d depth ties", &isa))
    return;
  const float nz = -0.0f, nan1 = u2f(0x7fa00001u);
  for (int with_nan = 0; with_nan < 2; with_nan++) {
    const float x[24] = {
        1, 5, nz, nz, 3, 1, 5, 2,  nz, nz, 2,
        0, 5, 3,  0,  0, 7, 7, nz, 5,  0,  with_nan ? nan1 : 0.0f,
        7, 7};
    const float ymax[3] = {5, with_nan ? nan1 : nz, 7};
    const int64_t flat[3] = {1, with_nan ? 21 : 2, 16};
    const uint8_t tap[3] = {1, with_nan ? 7 : 0, 4};
    const float dy[3] = {2, 3, 4};
    float dxmax[24] = {0};
    dxmax[1] = 2;
    dxmax[with_nan ? 21 : 2] = 3;
    dxmax[16] = 4;
    const float yavg[3] = {3.25f, with_nan ? u2f(0x7fc00000u) : 0.0f, 4.25f};
    float dxavg[24];
    for (int i = 0; i < 24; i++)
      dxavg[i] = dy[i % 6 / 2] / 8;
    for (int l = 0; l < 2; l++) {
      simdpool_desc d;
      simdpool_desc_init_3d(&d, SIMDPOOL_MAX, (simdpool_layout)l, 1, 1, 2, 2, 6,
                            2, 2, 2);
      d.isa = isa;
      run_nd(&d, with_nan ? "3d max, NaN last" : "3d max, zeros", x, 24, ymax,
             flat, tap, 3, dy, dxmax);
      d.method = SIMDPOOL_AVG;
      run_nd(&d, "3d avg", x, 24, yavg, NULL, NULL, 3, dy, dxavg);
    }
  }
}
END_TEST

/* Adaptive windows, 1D: 5 -> 3 gives [0,2) [1,4) [3,5). x = 1 2 4 8 16:
 * MAX 2 8 16 at 1 3 4; AVG 3/2 = 1.5, 14/3 = 0x40955555, 24/2 = 12. Backward
 * of dy = 2 6 4 (AVG shares 1, 2, 2): dx = 1, 1+2, 2, 2+2, 2; MAX dx puts
 * each dy at its winner. */
START_TEST(test_adaptive_5_to_3) {
  simdpool_isa isa;
  if (!loop_isa(_i, "adaptive 5->3", &isa))
    return;
  const float x[5] = {1, 2, 4, 8, 16};
  const float ymax[3] = {2, 8, 16}, yavg[3] = {1.5f, u2f(0x40955555u), 12};
  const int64_t flat[3] = {1, 3, 4};
  const float dy[3] = {2, 6, 4};
  const float dxmax[5] = {0, 2, 0, 6, 4}, dxavg[5] = {1, 3, 2, 4, 2};
  for (int l = 0; l < 2; l++) {
    simdpool_desc d;
    simdpool_desc_init_adaptive(&d, SIMDPOOL_MAX, (simdpool_layout)l, 1, 1, 1,
                                1, 5, 1, 1, 3);
    d.isa = isa;
    run_nd(&d, "adaptive 1d max", x, 5, ymax, flat, NULL, 3, dy, dxmax);
    d.method = SIMDPOOL_AVG;
    run_nd(&d, "adaptive 1d avg", x, 5, yavg, NULL, NULL, 3, dy, dxavg);
  }
}
END_TEST

/* Adaptive AVG, channels-last with many channels and wide windows (the
 * kernels that sum windows of 16 taps or more in the output row): 1 x 300
 * channels x 47 columns -> 3, windows [0,16) [15,32) [31,47) (not uniform,
 * so not rewritten as fixed ones). Channel 0 is -0 everywhere: its sums
 * start from +0 (+0 + -0 = +0), so y = +0 / 16 = +0, not -0. Channel 1 is
 * 1 at every tap (16 / 16 = 17 / 17 = 1); channel 299 (the last vector's
 * tail) is -0 but for 16 at column 0 and 8 at column 46: 1, +0 and 0.5.
 * Every other channel is +0. Backward, dy of channels 1 and 299 is 16, 34
 * and 8 (shares 1, 2 and 0.5), of channel 0 -0 (shares -0), 0 elsewhere:
 * dx is 1 in columns 0-14, 1 + 2 = 3 in 15, 2 in 16-30, 2 + 0.5 = 2.5 in
 * 31 and 0.5 in 32-46 for those two channels, +0 everywhere else (+0 and
 * then -0 shares: +0). */
START_TEST(test_adaptive_wide_rows) {
  simdpool_isa isa;
  if (!loop_isa(_i, "adaptive wide rows", &isa))
    return;
  enum { C = 300, W = 47 };
  static float x[W * C], y[3 * C], want[3 * C];
  memset(x, 0, sizeof x);
  memset(want, 0, sizeof want);
  for (size_t i = 0; i < W; i++) {
    x[i * C] = -0.0f;
    x[i * C + 1] = 1;
    x[i * C + 299] = i == 0 ? 16.0f : i == W - 1 ? 8.0f : -0.0f;
  }
  want[1] = want[C + 1] = want[2 * C + 1] = 1;
  want[299] = 1;
  want[2 * C + 299] = 0.5f;
  simdpool_desc d;
  simdpool_desc_init_adaptive(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, 1, C, 1, 1, W, 1,
                              1, 3);
  d.isa = isa;
  simdpool_plan *plan = NULL;
  ck_assert_int_eq(simdpool_plan_create(&d, &plan), SIMDPOOL_OK);
  memset(y, 0x55, sizeof y);
  ck_assert_int_eq(simdpool_forward(plan, x, y, NULL), SIMDPOOL_OK);
  ck_assert_msg(memcmp(y, want, sizeof y) == 0,
                "adaptive wide rows (%s): y[0] %a y[1] %a y[299] %a y[%d] %a",
                simdpool_plan_kernel_name(plan, SIMDPOOL_OP_FORWARD), y[0],
                y[1], y[299], 2 * C + 299, y[2 * C + 299]);
  static float dy[3 * C], dx[W * C], wantdx[W * C];
  static const float share[3] = {1, 2, 0.5f}, dyv[3] = {16, 34, 8};
  memset(dy, 0, sizeof dy);
  memset(wantdx, 0, sizeof wantdx);
  for (size_t o = 0; o < 3; o++) {
    dy[o * C] = -0.0f;
    dy[o * C + 1] = dy[o * C + 299] = dyv[o];
  }
  for (size_t i = 0; i < W; i++) {
    const float v = i < 15    ? share[0]
                    : i == 15 ? share[0] + share[1]
                    : i < 31  ? share[1]
                    : i == 31 ? share[1] + share[2]
                              : share[2];
    wantdx[i * C + 1] = wantdx[i * C + 299] = v;
  }
  memset(dx, 0x55, sizeof dx);
  ck_assert_int_eq(simdpool_backward(plan, dy, NULL, NULL, dx), SIMDPOOL_OK);
  ck_assert_msg(memcmp(dx, wantdx, sizeof dx) == 0,
                "adaptive wide rows backward (%s): dx[0] %a dx[15][1] %a "
                "dx[31][299] %a",
                simdpool_plan_kernel_name(plan, SIMDPOOL_OP_BACKWARD), dx[0],
                dx[15 * C + 1], dx[31 * C + 299]);
  simdpool_plan_destroy(plan);
}
END_TEST

/* Adaptive windows, 2D: 5x5 -> 3x3, windows [0,2) [1,4) [3,5) on both axes.
 * x is 0 but for x(0,0) = 1, x(0,1) = -0, x(2,2) = 1, x(3,3) = 13 and
 * x(4,4) = 7. AVG divides one axis at a time, ((acc / kh) / kw):
 *   (0,0): 1 over 2x2 -> (1/2)/2 = 0.25; (0,1): -0 and zeros -> +0;
 *   (1,1): 1 + 13 = 14 over 3x3 -> (14/3)/3 = 0x3fc71c71 (one division
 *          by 9 would give 0x3fc71c72);
 *   (1,2) and (2,1): 13 over 3x2 / 2x3 -> 0x400aaaab either way;
 *   (2,2): 13 + 7 = 20 over 2x2 -> 5; every other window 0.
 * MAX: (0,0) 1 at 0; (0,1) the first tap, -0 at 1; (0,2) 0 at 3; (1,0) 0 at
 * 5; (2,0) 0 at 15; the four windows holding (3,3) 13 at 18.
 * AVG backward of dy = 4 6 4 / 6 5 6 / 4 6 4: every share is 1 but the
 * centre's, s = (5/3)/3 = 0x3f0e38e3; a cell covered by windows R(r) x R(c)
 * (|R| = 1 2 1 2 1) sums its shares in output order: s alone at (2,2),
 * 1 + s = s + 1 = 0x3fc71c72 at the centre's edge midpoints, and
 * 3 + s = 0x40638e39 (in each order that occurs) at its corners. */
START_TEST(test_adaptive_2d_divisions) {
  simdpool_isa isa;
  if (!loop_isa(_i, "adaptive 2d", &isa))
    return;
  float x[25] = {0};
  x[0] = 1;
  x[1] = -0.0f;
  x[12] = 1;
  x[18] = 13;
  x[24] = 7;
  const float q = u2f(0x400aaaabu);
  const float yavg[9] = {0.25f, 0, 0, 0, u2f(0x3fc71c71u), q, 0, q, 5};
  const float ymax[9] = {1, -0.0f, 0, 0, 13, 13, 0, 13, 13};
  const int64_t flat[9] = {0, 1, 3, 5, 18, 18, 15, 18, 18};
  const float dy[9] = {4, 6, 4, 6, 5, 6, 4, 6, 4};
  const float e = u2f(0x3fc71c72u), c = u2f(0x40638e39u);
  const float dxavg[25] = {1, 2, 1, 2, 1, 2, c, e, c, 2, 1, e, u2f(0x3f0e38e3u),
                           e, 1, 2, c, e, c, 2, 1, 2, 1, 2, 1};
  float dxmax[25] = {0};
  dxmax[0] = 4;
  dxmax[1] = 6;
  dxmax[3] = 4;
  dxmax[5] = 6;
  dxmax[15] = 4;
  dxmax[18] = 5 + 6 + 6 + 4; /* outputs (1,1) (1,2) (2,1) (2,2), in order */
  for (int l = 0; l < 2; l++) {
    simdpool_desc d;
    simdpool_desc_init_adaptive(&d, SIMDPOOL_AVG, (simdpool_layout)l, 1, 1, 1,
                                5, 5, 1, 3, 3);
    d.isa = isa;
    run_nd(&d, "adaptive 2d avg", x, 25, yavg, NULL, NULL, 9, dy, dxavg);
    d.method = SIMDPOOL_MAX;
    run_nd(&d, "adaptive 2d max", x, 25, ymax, flat, NULL, 9, dy, dxmax);
  }
}
END_TEST

/* ---- 7. Max unpooling ------------------------------------------------- */

/* Unpooling (DESIGN.md "Unpooling", PyTorch max_unpool) by hand: x = +0.0f
 * everywhere, then for each y in output order x_plane[index] = y, bits
 * copied, the last of equal indices winning; its backward gathers
 * dy[o] = dx_plane[index[o]]. I32/I64 indices are flat positions in the
 * plane ((ih * w + iw) here), U8 ones tap numbers kh_i * kernel_w + kw_i of
 * their own window. Every expected array below is written out by hand;
 * special values as bits. Each case runs serially, over a 2-thread
 * simdpool_threadpool and with parallel_for NULL, as written (NCHW) and as
 * NHWC with every channel copied T_REPL times (plain data movement). */

/* How a case's call runs: serial, parallel on a pool, parallel_for NULL. */
enum { UNPOOL_SERIAL, UNPOOL_POOL, UNPOOL_NULL_FOR, UNPOOL_MODES };
static const char *const kUnpoolModes[UNPOOL_MODES] = {"serial", "pool",
                                                       "parallel_for NULL"};

static simdpool_status unpool_call(const simdpool_plan *p, int bwd, int mode,
                                   simdpool_threadpool *tp, const float *src,
                                   const void *ind, float *dst) {
  if (mode == UNPOOL_SERIAL)
    return bwd ? simdpool_unpool_backward(p, src, ind, dst)
               : simdpool_unpool(p, src, ind, dst);
  simdpool_parallel_for_fn pf =
      mode == UNPOOL_POOL ? simdpool_threadpool_parallel_for : NULL;
  return bwd ? simdpool_unpool_backward_parallel(p, src, ind, dst, pf, tp)
             : simdpool_unpool_parallel(p, src, ind, dst, pf, tp);
}

/* The name a call reports in its messages. */
static const char *unpool_fn_name(int bwd, int mode) {
  if (mode == UNPOOL_SERIAL)
    return bwd ? "unpool_backward" : "unpool";
  return bwd ? "unpool_backward_parallel" : "unpool_parallel";
}

static void check_bits(const float *got, const uint32_t *want, size_t n,
                       const char *ctx, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (f2u(got[i]) != want[i])
      ck_abort_msg("%s: %s[%zu] = 0x%08x (%.9g), expected 0x%08x (%.9g)", ctx,
                   what, i, (unsigned)f2u(got[i]), (double)got[i],
                   (unsigned)want[i], (double)u2f(want[i]));
}

/* A hand-computed unpooling case (NCHW, c = 1). */
typedef struct unpool_case {
  const char *name;
  simdpool_desc d;     /* index_type, layout, c and isa set by the runner */
  size_t nx, ny;       /* elements of x (and dx), of y (dy, indices) */
  const float *y;      /* unpooling's input */
  const int64_t *flat; /* the indices as flat positions (NULL: no I32/I64) */
  const uint8_t *tap;  /* the same indices as U8 taps (NULL: no U8) */
  const uint32_t *x;   /* unpooling's output, bits */
  const float *dx;     /* the backward's input */
  const uint32_t *dy;  /* the backward's output, bits */
  int fast_2x2;        /* the SIMD ISAs must name a 2x2/s2 kernel */
} unpool_case;

/* Copies n elements of esz bytes from src to dst, each channels times
 * (NHWC with every channel a copy of the one NCHW plane). */
static void *repeat_channels(const void *src, size_t n, size_t esz,
                             size_t channels) {
  unsigned char *dst = xmalloc(n * esz * channels);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < channels; ++k)
      memcpy(dst + (i * channels + k) * esz,
             (const unsigned char *)src + i * esz, esz);
  return dst;
}

static void run_unpool_case(const unpool_case *uc, simdpool_isa isa,
                            simdpool_threadpool *tp) {
  static const simdpool_index_type its[3] = {
      SIMDPOOL_INDEX_I32, SIMDPOOL_INDEX_I64, SIMDPOOL_INDEX_U8};
  for (int nhwc = 0; nhwc < 2; nhwc++)
    for (int k = 0; k < 3; k++) {
      const simdpool_index_type it = its[k];
      if (it == SIMDPOOL_INDEX_U8 ? !uc->tap : !uc->flat)
        continue;
      const size_t C = nhwc ? T_REPL : 1;
      simdpool_desc d = uc->d;
      d.index_type = it;
      d.isa = isa;
      d.layout = nhwc ? SIMDPOOL_NHWC : SIMDPOOL_NCHW;
      d.c = C;
      char ctx[200];
      snprintf(ctx, sizeof ctx, "%s [%s, %s, index %s]", uc->name,
               nhwc ? "NHWC x37" : "NCHW", simdpool_isa_name(isa), it_name(it));
      simdpool_plan *p = plan_or_die(d, isa);
      const char *kn = simdpool_plan_kernel_name(p, SIMDPOOL_OP_UNPOOL);
      const char *kb =
          simdpool_plan_kernel_name(p, SIMDPOOL_OP_UNPOOL_BACKWARD);
      ck_assert_msg(kn && kb, "%s: no unpooling kernel name", ctx);
      if (uc->fast_2x2 && isa != SIMDPOOL_ISA_SCALAR)
        ck_assert_msg(strstr(kn, "2x2s2") && strstr(kb, "2x2s2"),
                      "%s: expected the 2x2/s2 kernels, got %s and %s", ctx, kn,
                      kb);
      /* The indices in the plan's type, then every tensor widened. */
      void *ind1 = xmalloc(uc->ny * 8);
      for (size_t i = 0; i < uc->ny; ++i) {
        if (it == SIMDPOOL_INDEX_I32)
          ((int32_t *)ind1)[i] = (int32_t)uc->flat[i];
        else if (it == SIMDPOOL_INDEX_I64)
          ((int64_t *)ind1)[i] = uc->flat[i];
        else
          ((uint8_t *)ind1)[i] = uc->tap[i];
      }
      const size_t isz = it == SIMDPOOL_INDEX_I32   ? 4
                         : it == SIMDPOOL_INDEX_I64 ? 8
                                                    : 1;
      void *ind = repeat_channels(ind1, uc->ny, isz, C);
      float *y = repeat_channels(uc->y, uc->ny, 4, C);
      float *dx = repeat_channels(uc->dx, uc->nx, 4, C);
      uint32_t *want_x = repeat_channels(uc->x, uc->nx, 4, C);
      uint32_t *want_dy = repeat_channels(uc->dy, uc->ny, 4, C);
      float *x = xmalloc(uc->nx * C * sizeof *x);
      float *dy = xmalloc(uc->ny * C * sizeof *dy);
      for (int mode = 0; mode < UNPOOL_MODES; mode++) {
        char c2[260];
        snprintf(c2, sizeof c2, "%s %s", ctx, kUnpoolModes[mode]);
        fill_sentinel(x, uc->nx * C * sizeof *x);
        expect_ok(unpool_call(p, 0, mode, tp, y, ind, x), c2, "unpool");
        check_bits(x, want_x, uc->nx * C, c2, "x");
        fill_sentinel(dy, uc->ny * C * sizeof *dy);
        expect_ok(unpool_call(p, 1, mode, tp, dx, ind, dy), c2,
                  "unpool_backward");
        check_bits(dy, want_dy, uc->ny * C, c2, "dy");
      }
      free(ind1);
      free(ind);
      free(y);
      free(dx);
      free(want_x);
      free(want_dy);
      free(x);
      free(dy);
      simdpool_plan_destroy(p);
    }
}

/* Equal indices: the later output wins.
 * (a) 4x4, 2x2/s2, I32/I64 indices {5, 5, 0, 15}: 5 is a tap of window 0
 *     only (any in-plane position is accepted); outputs 0 and 1 both name
 *     it, so x[5] = y[1] = -0.0f (not 1.5). y[2], a NaN with payload
 *     0x7fc12345, lands at 0, and 7 at 15; the rest +0.0f. Backward of dx
 *     (dx[i] = i + 0.25, dx[0] = -0.0f, dx[5] = the signalling NaN
 *     0x7f800123): dy = {dx[5], dx[5], dx[0], dx[15]}.
 * (b) 1D, w = 5, kernel 2 stride 1: windows {0,1} {1,2} {2,3} {3,4}, each
 *     index a tap of its own window (as forward may write them), flat
 *     {1, 1, 3, 3} = taps {1, 0, 1, 0}: y = {2, -3, inf, -0.0f} gives
 *     x = {+0, -3, +0, -0.0f, +0} (-3 after 2 at 1, -0.0f after inf at 3).
 *     Backward of dx = {10, 11, 12, NaN 0xffc00abc, 14}: dy = {11, 11,
 *     0xffc00abc, 0xffc00abc}. */
START_TEST(test_unpool_last_wins) {
  simdpool_isa isa;
  if (!loop_isa(_i, "unpooling: equal indices", &isa))
    return;
  simdpool_threadpool *tp = NULL;
  ck_assert_int_eq(simdpool_threadpool_create(2, &tp), OK_);

  const float ya[4] = {1.5f, -0.0f, u2f(0x7fc12345u), 7.0f};
  static const int64_t fa[4] = {5, 5, 0, 15};
  // clang-format off
  static const uint32_t xa[16] = {
      0x7fc12345u, 0, 0, 0,
      0, 0x80000000u, 0, 0,
      0, 0, 0, 0,
      0, 0, 0, 0x40e00000u};
  // clang-format on
  float dxa[16];
  for (int i = 0; i < 16; i++)
    dxa[i] = (float)i + 0.25f;
  dxa[0] = -0.0f;
  dxa[5] = u2f(0x7f800123u);
  static const uint32_t dya[4] = {0x7f800123u, 0x7f800123u, 0x80000000u,
                                  0x41740000u /* 15.25 */};
  const unpool_case a = {"unpool 4x4 2x2/s2, indices {5,5,0,15}",
                         BMAX,
                         16,
                         4,
                         ya,
                         fa,
                         NULL,
                         xa,
                         dxa,
                         dya,
                         0};
  run_unpool_case(&a, isa, tp);

  const float yb[4] = {2.0f, -3.0f, INFINITY, -0.0f};
  static const int64_t fb[4] = {1, 1, 3, 3};
  static const uint8_t tb[4] = {1, 0, 1, 0};
  static const uint32_t xb[5] = {0, 0xc0400000u /* -3 */, 0, 0x80000000u, 0};
  const float dxb[5] = {10.0f, 11.0f, 12.0f, u2f(0xffc00abcu), 14.0f};
  static const uint32_t dyb[4] = {0x41300000u /* 11 */, 0x41300000u,
                                  0xffc00abcu, 0xffc00abcu};
  const unpool_case b = {"unpool 1d w=5 k=2 s=1, indices {1,1,3,3}",
                         mk(SIMDPOOL_MAX, 1, 1, 1, 5, 1, 2, 1, 1),
                         5,
                         4,
                         yb,
                         fb,
                         tb,
                         xb,
                         dxb,
                         dyb,
                         0};
  run_unpool_case(&b, isa, tp);
  simdpool_threadpool_destroy(tp);
}
END_TEST

/* U8 decoding beside padding: 4x4, 3x3/s2/pad 1, out 2x2. Window (0,0)
 * covers rows and columns -1..1, so its taps 0-3 and 6 are padding and tap
 * 8 = (kh 2, kw 2) is input (1,1) = 5; window (0,1) (rows -1..1, columns
 * 1..3): tap 8 is (1,3) = 7; window (1,0) (rows 1..3, columns -1..1): tap
 * 1 = (kh 0, kw 1) is (1,0) = 4; window (1,1) (rows and columns 1..3): tap
 * 0 is (1,1) = 5 again. U8 {8, 8, 1, 0} = flat {5, 7, 4, 5}: y = {1, 2, 3,
 * -0.0f} gives x[4] = 3, x[5] = -0.0f (output 3 after output 0), x[7] = 2,
 * the rest +0.0f. Backward of dx[i] = i + 0.5 with dx[5] = -inf and dx[7]
 * the subnormal 0x00000007: dy = {-inf, 0x00000007, 4.5, -inf}. */
START_TEST(test_unpool_u8_padding) {
  simdpool_isa isa;
  if (!loop_isa(_i, "unpooling: u8 beside padding", &isa))
    return;
  simdpool_threadpool *tp = NULL;
  ck_assert_int_eq(simdpool_threadpool_create(2, &tp), OK_);
  const float y[4] = {1.0f, 2.0f, 3.0f, -0.0f};
  static const int64_t flat[4] = {5, 7, 4, 5};
  static const uint8_t tap[4] = {8, 8, 1, 0};
  // clang-format off
  static const uint32_t x[16] = {
      0, 0, 0, 0,
      0x40400000u /* 3 */, 0x80000000u, 0, 0x40000000u /* 2 */,
      0, 0, 0, 0,
      0, 0, 0, 0};
  // clang-format on
  float dx[16];
  for (int i = 0; i < 16; i++)
    dx[i] = (float)i + 0.5f;
  dx[5] = -INFINITY;
  dx[7] = u2f(0x00000007u);
  static const uint32_t dy[4] = {0xff800000u, 0x00000007u,
                                 0x40900000u /* 4.5 */, 0xff800000u};
  const unpool_case c = {
      "unpool 4x4 3x3/s2/p1, u8 {8,8,1,0}",
      with_pads(mk(SIMDPOOL_MAX, 1, 1, 4, 4, 3, 3, 2, 2), 1, 1, 1, 1),
      16,
      4,
      y,
      flat,
      tap,
      x,
      dx,
      dy,
      0};
  run_unpool_case(&c, isa, tp);
  simdpool_threadpool_destroy(tp);
}
END_TEST

/* The 2x2/s2 fast path on an odd input: 5x5, out 2x2; row 4 and column 4
 * belong to no window and must be +0.0f like every other untargeted
 * element. Indices as forward may write them: window 0 (rows 0-1, columns
 * 0-1) takes (0,0) = 0, tap 0; window 1 (columns 2-3) (0,3) = 3, tap 1;
 * window 2 (rows 2-3) (2,1) = 11, tap 1; window 3 (3,3) = 18, tap 3. y =
 * {the signalling NaN 0x7fa00001, -0.0f, the smallest subnormal, -inf}
 * lands with its bits. Backward of dx[i] = i - 12 with dx[0] = -0.0f and
 * dx[3] the NaN 0xffc0dead: dy = {-0.0f, 0xffc0dead, -1, 6}. */
START_TEST(test_unpool_2x2s2_odd) {
  simdpool_isa isa;
  if (!loop_isa(_i, "unpooling: 2x2/s2 odd input", &isa))
    return;
  simdpool_threadpool *tp = NULL;
  ck_assert_int_eq(simdpool_threadpool_create(2, &tp), OK_);
  const float y[4] = {u2f(0x7fa00001u), -0.0f, u2f(0x00000001u), -INFINITY};
  static const int64_t flat[4] = {0, 3, 11, 18};
  static const uint8_t tap[4] = {0, 1, 1, 3};
  // clang-format off
  static const uint32_t x[25] = {
      0x7fa00001u, 0, 0, 0x80000000u, 0,
      0, 0, 0, 0, 0,
      0, 0x00000001u, 0, 0, 0,
      0, 0, 0, 0xff800000u, 0,
      0, 0, 0, 0, 0};
  // clang-format on
  float dx[25];
  for (int i = 0; i < 25; i++)
    dx[i] = (float)(i - 12);
  dx[0] = -0.0f;
  dx[3] = u2f(0xffc0deadu);
  static const uint32_t dy[4] = {0x80000000u, 0xffc0deadu, 0xbf800000u /* -1 */,
                                 0x40c00000u /* 6 */};
  const unpool_case c = {"unpool 5x5 2x2/s2 (last row, column uncovered)",
                         mk(SIMDPOOL_MAX, 1, 1, 5, 5, 2, 2, 2, 2),
                         25,
                         4,
                         y,
                         flat,
                         tap,
                         x,
                         dx,
                         dy,
                         1};
  run_unpool_case(&c, isa, tp);
  simdpool_threadpool_destroy(tp);
}
END_TEST

/* A rejected unpooling call: INVALID_ARGUMENT with exactly `want` as the
 * last error, and dst (bytes) unchanged from its copy `before`. */
static void expect_unpool_rejected(simdpool_status st, const char *want,
                                   const void *dst, const void *before,
                                   size_t bytes, const char *what) {
  if (st != SIMDPOOL_INVALID_ARGUMENT)
    ck_abort_msg("%s: status %d, expected INVALID_ARGUMENT (\"%s\")", what,
                 (int)st, want);
  if (strcmp(simdpool_last_error(), want) != 0)
    ck_abort_msg("%s: last error \"%s\", expected \"%s\"", what,
                 simdpool_last_error(), want);
  if (dst && memcmp(dst, before, bytes) != 0)
    ck_abort_msg("%s: the rejected call wrote its output", what);
}

/* Every rejection of the four unpooling entry points, with its message,
 * on the seed geometry (4x4, 2x2/s2: d*h*w = 16, 4 outputs) and on 4x4
 * 3x3/s2/pad 1 for U8 (windows as in test_unpool_u8_padding). */
START_TEST(test_exec_unpool) {
  simdpool_isa isa;
  if (!loop_isa(_i, "unpooling rejections", &isa))
    return;
  simdpool_threadpool *tp = NULL;
  ck_assert_int_eq(simdpool_threadpool_create(2, &tp), OK_);
  simdpool_desc d32 = BMAX, d64 = BMAX;
  d32.index_type = SIMDPOOL_INDEX_I32;
  d64.index_type = SIMDPOOL_INDEX_I64;
  simdpool_desc du8 =
      with_pads(mk(SIMDPOOL_MAX, 1, 1, 4, 4, 3, 3, 2, 2), 1, 1, 1, 1);
  du8.index_type = SIMDPOOL_INDEX_U8;
  simdpool_plan *pavg = plan_or_die(BAVG, isa), *plp = plan_or_die(BLP, isa);
  simdpool_plan *pnone = plan_or_die(BMAX, isa);
  simdpool_plan *p32 = plan_or_die(d32, isa), *p64 = plan_or_die(d64, isa);
  simdpool_plan *pu8 = plan_or_die(du8, isa);
  simdpool_desc du8f = BMAX; /* U8 on the 2x2/s2 kernels */
  du8f.index_type = SIMDPOOL_INDEX_U8;
  simdpool_plan *pu8f = plan_or_die(du8f, isa);
  static const float src[16] = {1, 2,  3,  4,  5,  6,  7,  8,
                                9, 10, 11, 12, 13, 14, 15, 16};
  static const int32_t good32[4] = {5, 3, 8, 10};
  static const int32_t neg32[4] = {5, -1, 8, 10};
  static const int32_t past32[4] = {5, 3, 8, 16};
  static const int64_t past64[4] = {5, 3, 16, 10};
  const int64_t high64[4] = {5, 3, 8, ((int64_t)1 << 32) + 10};
  static const int64_t neg64[4] = {-7, 3, 8, 10};
  static const uint8_t pad8[4] = {0, 8, 1, 0};  /* (-1,-1): padding */
  static const uint8_t pad8b[4] = {8, 0, 1, 0}; /* (-1,1): padding */
  static const uint8_t big8[4] = {8, 8, 9, 0};  /* tap 9 of 9 */
  static const uint8_t max8[4] = {8, 8, 1, 255};
  static const uint8_t four8[4] = {3, 1, 0, 4}; /* tap 4 of a 2x2 window */
  float dst[16], before[16];
  char want[300];

  for (int bwd = 0; bwd < 2; bwd++)
    for (int mode = 0; mode < UNPOOL_MODES; mode++) {
      const char *fn = unpool_fn_name(bwd, mode);
      /* unpool writes x (16 floats), its backward dy (4). */
      const size_t n = bwd ? 4 : 16;
      const char *src_name = bwd ? "dx" : "y", *dst_name = bwd ? "dy" : "x";
      char what[400];
#define UNPOOL_REJECT(PLAN, SRC, IND, DST, ...)                                \
  do {                                                                         \
    snprintf(want, sizeof want, __VA_ARGS__);                                  \
    snprintf(what, sizeof what, "%s (%s, %s)", want, kUnpoolModes[mode],       \
             simdpool_isa_name(isa));                                          \
    fill_sentinel(dst, sizeof dst);                                            \
    memcpy(before, dst, sizeof dst);                                           \
    expect_unpool_rejected(                                                    \
        unpool_call((PLAN), bwd, mode, tp, (SRC), (IND), (DST)), want, dst,    \
        before, n * sizeof(float), what);                                      \
  } while (0)
      const char *const needs = "unpooling needs a MAX plan with an index "
                                "type (I32, I64 or U8); this plan has";
      UNPOOL_REJECT(pavg, src, good32, dst,
                    "%s: %s method=AVG, index_type=NONE", fn, needs);
      UNPOOL_REJECT(plp, src, good32, dst, "%s: %s method=LP, index_type=NONE",
                    fn, needs);
      UNPOOL_REJECT(pnone, src, good32, dst,
                    "%s: %s method=MAX, index_type=NONE", fn, needs);
      UNPOOL_REJECT(p32, src, neg32, dst,
                    "%s: indices[1] = -1 is outside its input plane (0 <= "
                    "index < d*h*w = 16)",
                    fn);
      UNPOOL_REJECT(p32, src, past32, dst,
                    "%s: indices[3] = 16 is outside its input plane (0 <= "
                    "index < d*h*w = 16)",
                    fn);
      UNPOOL_REJECT(p64, src, past64, dst,
                    "%s: indices[2] = 16 is outside its input plane (0 <= "
                    "index < d*h*w = 16)",
                    fn);
      UNPOOL_REJECT(p64, src, high64, dst,
                    "%s: indices[3] = 4294967306 is outside its input plane "
                    "(0 <= index < d*h*w = 16)",
                    fn);
      UNPOOL_REJECT(p64, src, neg64, dst,
                    "%s: indices[0] = -7 is outside its input plane (0 <= "
                    "index < d*h*w = 16)",
                    fn);
      UNPOOL_REJECT(pu8, src, pad8, dst,
                    "%s: indices[0] = 0 names no valid tap of its window", fn);
      UNPOOL_REJECT(pu8, src, pad8b, dst,
                    "%s: indices[1] = 0 names no valid tap of its window", fn);
      UNPOOL_REJECT(pu8, src, big8, dst,
                    "%s: indices[2] = 9 names no valid tap of its window", fn);
      UNPOOL_REJECT(pu8, src, max8, dst,
                    "%s: indices[3] = 255 names no valid tap of its window",
                    fn);
      UNPOOL_REJECT(pu8f, src, four8, dst,
                    "%s: indices[3] = 4 names no valid tap of its window", fn);
      UNPOOL_REJECT(NULL, src, good32, dst, "%s: plan is NULL", fn);
      UNPOOL_REJECT(p32, NULL, good32, dst, "%s: %s is NULL", fn, src_name);
      UNPOOL_REJECT(p32, src, NULL, dst, "%s: indices is NULL", fn);
      UNPOOL_REJECT(p32, src, good32, NULL, "%s: %s is NULL", fn, dst_name);
#undef UNPOOL_REJECT

      /* The output sharing bytes with the input (unpool: x's 16 floats
       * over y's 4 at buf + 2; backward: dy's 4 inside dx's 16) or with the
       * indices (stored in the output's last bytes). */
      float buf[24], snap[24];
      for (int i = 0; i < 24; i++)
        buf[i] = (float)(i % 4); /* never a bad index when read as I32 */
      memcpy(snap, buf, sizeof buf);
      snprintf(want, sizeof want,
               "%s: %s overlaps %s (the call reads and writes distinct "
               "buffers)",
               fn, dst_name, src_name);
      expect_unpool_rejected(
          bwd ? unpool_call(p32, 1, mode, tp, buf, good32, buf + 10)
              : unpool_call(p32, 0, mode, tp, buf, good32, buf + 2),
          want, buf, snap, sizeof buf, want);
      int32_t *in_dst = (int32_t *)(void *)(buf + (bwd ? 2 : 14));
      memcpy(in_dst, good32, sizeof good32);
      memcpy(snap, buf, sizeof buf);
      snprintf(want, sizeof want,
               "%s: %s overlaps indices (the call reads and writes distinct "
               "buffers)",
               fn, dst_name);
      expect_unpool_rejected(unpool_call(p32, bwd, mode, tp, src, in_dst, buf),
                             want, buf, snap, sizeof buf, want);

      /* The same plans take good indices. */
      fill_sentinel(dst, sizeof dst);
      expect_ok(unpool_call(p32, bwd, mode, tp, src, good32, dst), fn, fn);
      ck_assert(f2u(dst[bwd ? 0 : 5]) == f2u(bwd ? 6.0f : 1.0f));
      ck_assert(f2u(dst[bwd ? 3 : 10]) == f2u(bwd ? 11.0f : 4.0f));
    }
  simdpool_plan_destroy(pavg);
  simdpool_plan_destroy(plp);
  simdpool_plan_destroy(pnone);
  simdpool_plan_destroy(p32);
  simdpool_plan_destroy(p64);
  simdpool_plan_destroy(pu8);
  simdpool_plan_destroy(pu8f);
  simdpool_threadpool_destroy(tp);
}
END_TEST

/* simdpool_plan_kernel_name() for the unpooling ops: a kernel of the
 * plan's ISA on MAX plans with an index type (2x2/s2 on the SIMD ISAs for
 * the seed geometry), NULL on plans without one. */
START_TEST(test_unpool_kernel_name) {
  simdpool_isa isa;
  if (!loop_isa(_i, "unpooling kernel names", &isa))
    return;
  static const simdpool_op ops[2] = {SIMDPOOL_OP_UNPOOL,
                                     SIMDPOOL_OP_UNPOOL_BACKWARD};
  static const simdpool_index_type its[3] = {
      SIMDPOOL_INDEX_I32, SIMDPOOL_INDEX_I64, SIMDPOOL_INDEX_U8};
  for (int shape = 0; shape < 2; shape++)
    for (int k = 0; k < 3; k++) {
      /* shape 0: 2x2/s2; 1: 3x3/s1 with padding on one side, 1D. */
      simdpool_desc d =
          shape
              ? with_pads(mk(SIMDPOOL_MAX, 2, 3, 1, 9, 1, 3, 1, 1), 0, 1, 0, 0)
              : BMAX;
      d.index_type = its[k];
      simdpool_plan *p = plan_or_die(d, isa);
      for (int o = 0; o < 2; o++) {
        const char *kn = simdpool_plan_kernel_name(p, ops[o]);
        ck_assert_msg(kn != NULL, "%s %s plan (%s): no kernel for op %d",
                      it_name(its[k]), shape ? "1d" : "2x2/s2",
                      simdpool_isa_name(isa), (int)ops[o]);
        ck_assert_msg(
            strstr(kn, "unpool") && strstr(kn, simdpool_isa_name(isa)),
            "op %d of a %s plan: %s", (int)ops[o], simdpool_isa_name(isa), kn);
        ck_assert_msg(!o == !strstr(kn, "bwd"), "op %d: %s", (int)ops[o], kn);
        if (!shape && isa != SIMDPOOL_ISA_SCALAR)
          ck_assert_msg(strstr(kn, "2x2s2"), "2x2/s2 %s plan: %s",
                        simdpool_isa_name(isa), kn);
      }
      ck_assert_ptr_null(simdpool_plan_kernel_name(p, (simdpool_op)5));
      simdpool_plan_destroy(p);
    }
  const simdpool_desc none[3] = {BMAX, BAVG, BLP};
  for (int k = 0; k < 3; k++) {
    simdpool_plan *p = plan_or_die(none[k], isa);
    ck_assert_ptr_nonnull(simdpool_plan_kernel_name(p, SIMDPOOL_OP_FORWARD));
    ck_assert_ptr_null(simdpool_plan_kernel_name(p, SIMDPOOL_OP_UNPOOL));
    ck_assert_ptr_null(
        simdpool_plan_kernel_name(p, SIMDPOOL_OP_UNPOOL_BACKWARD));
    simdpool_plan_destroy(p);
  }
  ck_assert_ptr_null(simdpool_plan_kernel_name(NULL, SIMDPOOL_OP_UNPOOL));
}
END_TEST

/* ---- driver ----------------------------------------------------------- */

static TCase *tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 100);
  return tc;
}

static Suite *cases_suite(void) {
  Suite *s = suite_create("cases");
  TCase *tc;

  tc = tcase("1 seed 001");
  tcase_add_loop_test(tc, test_seed001_max, 0, N_ISAS);
  tcase_add_loop_test(tc, test_seed001_avg, 0, N_ISAS);
  suite_add_tcase(s, tc);

  tc = tcase("2 seed 000");
  tcase_add_loop_test(tc, test_seed000_2x2, 0, N_ISAS);
  tcase_add_loop_test(tc, test_seed000_2x3, 0, N_ISAS);
  suite_add_tcase(s, tc);

  tc = tcase("3 hand-computed");
  tcase_add_loop_test(tc, test_ties_nan_zero, 0, N_ISAS);
  tcase_add_loop_test(tc, test_pad_sides, 0, N_ISAS);
  tcase_add_loop_test(tc, test_cases_1d, 0, N_ISAS);
  tcase_add_loop_test(tc, test_5x5_ceil_valid_same, 0, N_ISAS);
  tcase_add_loop_test(tc, test_5x5_dilation_3x3, 0, N_ISAS);
  tcase_add_loop_test(tc, test_global, 0, N_ISAS);
  tcase_add_loop_test(tc, test_zeros_and_negzero_dy, 0, N_ISAS);
  tcase_add_loop_test(tc, test_lp, 0, N_ISAS);
  tcase_add_loop_test(tc, test_canonical_nan, 0, N_ISAS);
  tcase_add_test(tc, test_shapes);
  tcase_add_loop_test(tc, test_3d_max_depth_ties, 0, N_ISAS);
  tcase_add_loop_test(tc, test_adaptive_5_to_3, 0, N_ISAS);
  tcase_add_loop_test(tc, test_adaptive_wide_rows, 0, N_ISAS);
  tcase_add_loop_test(tc, test_adaptive_2d_divisions, 0, N_ISAS);
  suite_add_tcase(s, tc);

  tc = tcase("4 plan rejections");
  tcase_add_test(tc, test_reject_sizes);
  tcase_add_test(tc, test_reject_modes);
  tcase_add_test(tc, test_reject_overflow);
  tcase_add_test(tc, test_reject_index_width_null);
  tcase_add_test(tc, test_forced_isa);
  tcase_add_test(tc, test_env_isa);
  suite_add_tcase(s, tc);

  tc = tcase("5 execution rejections");
  tcase_add_loop_test(tc, test_exec_forward, 0, N_ISAS);
  tcase_add_loop_test(tc, test_exec_backward, 0, N_ISAS);
  tcase_add_loop_test(tc, test_exec_bad_indices, 0, N_ISAS);
  suite_add_tcase(s, tc);

  tc = tcase("6 api basics");
  tcase_add_test(tc, test_desc_init);
  tcase_add_test(tc, test_desc_abi);
  tcase_add_test(tc, test_dtype_rules);
  tcase_add_test(tc, test_strides_clamp_by_hand);
  tcase_add_test(tc, test_strings);
  tcase_add_test(tc, test_plan_queries);
  tcase_add_loop_test(tc, test_plan_kernel_name, 0, N_ISAS);
  tcase_add_test(tc, test_plan_tensor_bytes);
  tcase_add_test(tc, test_last_error);
  suite_add_tcase(s, tc);

  tc = tcase("7 unpooling");
  tcase_add_loop_test(tc, test_unpool_last_wins, 0, N_ISAS);
  tcase_add_loop_test(tc, test_unpool_u8_padding, 0, N_ISAS);
  tcase_add_loop_test(tc, test_unpool_2x2s2_odd, 0, N_ISAS);
  tcase_add_loop_test(tc, test_exec_unpool, 0, N_ISAS);
  tcase_add_loop_test(tc, test_unpool_kernel_name, 0, N_ISAS);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr;
  int failed;
  /* Line-buffered, so forked test processes never repeat pending output. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("simdpool %s; ISAs this build and CPU support:", simdpool_version());
  for (int i = SIMDPOOL_ISA_SCALAR; i <= SIMDPOOL_ISA_NEON; ++i)
    printf(" %s=%s", simdpool_isa_name((simdpool_isa)i),
           simdpool_isa_supported((simdpool_isa)i) ? "yes" : "no");
  printf("\n(golden cases run once per supported ISA, forced via desc.isa)\n");
  sr = srunner_create(cases_suite());
  g_forked = srunner_fork_status(sr) == CK_FORK;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
