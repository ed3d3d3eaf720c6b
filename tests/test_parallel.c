/* SPDX-License-Identifier: MIT */
/* test_parallel.c — the parallel entry points and the built-in thread pool:
 * results bit-identical (memcmp) to the single-threaded calls for 1, 2, 3
 * and 8 threads and for adversarial task orders, every op, both layouts,
 * every ISA this machine runs; plus the execution-time checks (NULL
 * pointers, aliasing buffers, misplaced indices) that must leave every
 * output untouched. */
#define _POSIX_C_SOURCE 200809L
#include "check_quiet.h"
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#include "test_random.h"

static double scale = 1.0;

static size_t scaled(size_t count) {
  const size_t s = (size_t)((double)count * scale);
  return s ? s : 1;
}

/* ------------------------------------------------------------ pools */

static const size_t thread_counts[] = {1, 2, 3, 8};
#define N_POOLS (sizeof thread_counts / sizeof thread_counts[0])
static simdpool_threadpool *pools[N_POOLS];

static void pools_up(void) {
  for (size_t i = 0; i < N_POOLS; i++)
    ck_assert_int_eq(simdpool_threadpool_create(thread_counts[i], &pools[i]),
                     SIMDPOOL_OK);
}

static void pools_down(void) {
  for (size_t i = 0; i < N_POOLS; i++) {
    simdpool_threadpool_destroy(pools[i]);
    pools[i] = NULL;
  }
}

/* Adversarial parallel-fors on one thread: tasks backwards, or shuffled. */
static void reverse_for(void *pool, simdpool_task_fn task, void *ctx,
                        size_t range) {
  (void)pool;
  for (size_t i = range; i-- > 0;)
    task(ctx, i);
}

static void shuffled_for(void *pool, simdpool_task_fn task, void *ctx,
                         size_t range) {
  (void)pool;
  size_t *order = malloc(range * sizeof *order);
  ck_assert_ptr_nonnull(order);
  for (size_t i = 0; i < range; i++)
    order[i] = i;
  for (size_t i = range; i > 1; i--) {
    const size_t j = (size_t)(rnd() % i), t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < range; i++)
    task(ctx, order[i]);
  free(order);
}

/* ------------------------------------------------------------ configs */

/* A random accepted plan of method m and layout l on isa, or NULL. Shapes
 * lean towards few planes and many rows, so row blocks are cut. */
static simdpool_plan *rnd_plan(simdpool_method m, simdpool_layout l,
                               simdpool_isa isa, simdpool_desc *d) {
  const int nhwc = l == SIMDPOOL_NHWC;
  simdpool_desc_init(d, m, l, rnd_range(1, 2),
                     nhwc ? rnd_range(1, 40) : rnd_range(1, 3),
                     rnd_range(1, 40), rnd_range(1, nhwc ? 12 : 40),
                     rnd_range(1, 4), rnd_range(1, 4));
  d->isa = isa;
  d->stride_h = rnd_range(1, 4);
  d->stride_w = rnd_range(1, 4);
  if (rnd() % 4 == 0) { /* the CNN hot paths */
    const size_t k = rnd_range(2, 3);
    d->kernel_h = d->kernel_w = k;
    d->stride_h = d->stride_w = rnd_range(1, 2);
    d->pad_top = d->pad_left = k == 3 && rnd() % 2;
  }
  d->dilation_h = rnd() % 5 ? 1 : 2;
  d->dilation_w = rnd() % 5 ? 1 : 2;
  switch (rnd() % 6) {
  case 0:
    d->padding = SIMDPOOL_PAD_VALID;
    d->pad_top = d->pad_left = 0;
    break;
  case 1:
    d->padding = SIMDPOOL_PAD_SAME_UPPER;
    d->pad_top = d->pad_left = 0;
    break;
  case 2:
    d->padding = SIMDPOOL_PAD_SAME_LOWER;
    d->pad_top = d->pad_left = 0;
    break;
  default:
    d->pad_top += rnd() % 3 == 0;
    d->pad_bottom = rnd() % 3 == 0;
    d->pad_right = rnd() % 3 == 0;
    d->ceil_mode = (int)(rnd() % 2);
    break;
  }
  d->count_include_pad = (int)(rnd() % 2);
  static const float ps[] = {1.0f, 2.0f, 3.0f, 0.5f, 1.7f};
  d->p = ps[rnd() % 5];
  if (m == SIMDPOOL_MAX)
    d->index_type = (simdpool_index_type)(rnd() % 4);
  if (nhwc && rnd() % 2) { /* a channel slice of wider tensors */
    d->x_pixel_stride = d->c + rnd_range(0, 5);
    d->y_pixel_stride = d->c + rnd_range(0, 5);
  }
  if (rnd() % 4 == 0) { /* forward only: backward rejects it */
    d->clamp = 1;
    d->clamp_min = -1.0f;
    d->clamp_max = rnd() % 2 ? 2.0f : INFINITY;
  }
  simdpool_plan *plan = NULL;
  return simdpool_plan_create(d, &plan) == SIMDPOOL_OK ? plan : NULL;
}

#define BAND 64 /* guard floats after each output */

static float *fill_new(size_t count) {
  float *p = malloc((count + BAND) * sizeof *p);
  ck_assert_ptr_nonnull(p);
  for (size_t i = 0; i < count; i++)
    p[i] = rnd_value(8);
  return p;
}

/* Output buffers start as a known pattern with a band after them. */
static void *out_new(size_t bytes) {
  unsigned char *p = malloc(bytes + BAND * 4);
  ck_assert_ptr_nonnull(p);
  memset(p, 0x5a, bytes + BAND * 4);
  return p;
}

static void band_intact(const void *p, size_t bytes, const char *what) {
  const unsigned char *b = (const unsigned char *)p + bytes;
  for (size_t i = 0; i < BAND * 4; i++)
    if (b[i] != 0x5a)
      ck_abort_msg("%s: written %zu bytes past its end", what, i);
}

/* One parallel-for under test. */
typedef struct runner {
  const char *name;
  simdpool_parallel_for_fn pfor;
  void *pool;
  size_t chunk_bytes; /* 0: the public entry point (default chunks) */
} runner;

static size_t make_runners(runner *r) {
  size_t n = 0;
  static const size_t chunks[] = {1, 512, 4096};
  for (size_t i = 0; i < N_POOLS; i++) {
    r[n++] = (runner){"public", simdpool_threadpool_parallel_for, pools[i], 0};
    for (size_t c = 0; c < 3; c++)
      r[n++] = (runner){"chunked", simdpool_threadpool_parallel_for, pools[i],
                        chunks[c]};
  }
  r[n++] = (runner){"reverse", reverse_for, NULL, 1};
  r[n++] = (runner){"shuffled", shuffled_for, NULL, 1};
  r[n++] = (runner){"inline", NULL, NULL, 1};
  return n;
}

static const char *runner_desc(const runner *r, char *buf, size_t len) {
  snprintf(buf, len, "%s, %zu threads, chunk %zu", r->name,
           simdpool_threadpool_threads(r->pool), r->chunk_bytes);
  return buf;
}

/* One config: every runner vs the single-threaded calls. */
static void check_config(const simdpool_plan *plan, const simdpool_desc *d,
                         const runner *rs, size_t nr) {
  const sp_geom *g = &plan->geom;
  /* x and dx, y and dy span these (pixel strides: the gaps, which both
   * outputs start with the same pattern in, are compared too); indices
   * are dense. */
  const size_t nin = sp_x_elems(g);
  const size_t nout = sp_y_elems(g);
  const size_t nidx = g->n * g->c * sp_out_plane(g);
  const size_t isz = sp_index_size(g->index_type);
  const int bwd_ok = !g->clamp; /* a plan with a clamp is forward only */
  float *x = fill_new(nin), *dy = fill_new(nout);
  float *y0 = out_new(nout * 4), *dx0 = out_new(nin * 4);
  float *dxi0 = out_new(nin * 4);
  void *ix0 = isz ? out_new(nidx * isz) : NULL;
  ck_assert_int_eq(simdpool_forward(plan, x, y0, ix0), SIMDPOOL_OK);
  if (bwd_ok)
    ck_assert_int_eq(simdpool_backward(plan, dy, NULL, x, dx0), SIMDPOOL_OK);
  else
    ck_assert_int_eq(simdpool_backward(plan, dy, NULL, x, dx0),
                     SIMDPOOL_INVALID_ARGUMENT);
  if (isz && bwd_ok)
    ck_assert_int_eq(simdpool_backward(plan, dy, ix0, NULL, dxi0), SIMDPOOL_OK);
  float *y = out_new(nout * 4), *dx = out_new(nin * 4);
  void *ix = isz ? out_new(nidx * isz) : NULL;
  char what[96];
  for (size_t k = 0; k < nr; k++) {
    const runner *r = &rs[k];
    runner_desc(r, what, sizeof what);
    const sp_io fwd = {.x = x, .y = y, .indices = ix};
    const sp_io bwd = {.x = x, .dy = dy, .dx = dx};
    const sp_io bwd_idx = {.indices = ix0, .dy = dy, .dx = dx};
    memset(y, 0x5a, nout * 4);
    if (r->chunk_bytes)
      sp_run_chunked(plan, SP_OP_FWD, &fwd, r->pfor, r->pool, r->chunk_bytes);
    else
      ck_assert_int_eq(
          simdpool_forward_parallel(plan, x, y, ix, r->pfor, r->pool),
          SIMDPOOL_OK);
    if (memcmp(y, y0, nout * 4) || (isz && memcmp(ix, ix0, nidx * isz)))
      ck_abort_msg("forward (%s) differs from simdpool_forward: method %d "
                   "layout %d n%zu c%zu h%zu w%zu k%zux%zu s%zux%zu "
                   "idx %d isa %s pixel strides %zu %zu clamp %d",
                   what, (int)d->method, (int)d->layout, d->n, d->c, d->h, d->w,
                   d->kernel_h, d->kernel_w, d->stride_h, d->stride_w,
                   (int)d->index_type, simdpool_isa_name(plan->isa),
                   d->x_pixel_stride, d->y_pixel_stride, d->clamp);
    band_intact(y, nout * 4, "y");
    if (isz)
      band_intact(ix, nidx * isz, "indices");
    if (!bwd_ok)
      continue;
    memset(dx, 0x5a, nin * 4);
    if (r->chunk_bytes)
      sp_run_chunked(plan, SP_OP_BWD, &bwd, r->pfor, r->pool, r->chunk_bytes);
    else
      ck_assert_int_eq(
          simdpool_backward_parallel(plan, dy, NULL, x, dx, r->pfor, r->pool),
          SIMDPOOL_OK);
    if (memcmp(dx, dx0, nin * 4))
      ck_abort_msg("backward (%s) differs: method %d layout %d n%zu c%zu "
                   "h%zu w%zu k%zux%zu s%zux%zu isa %s",
                   what, (int)d->method, (int)d->layout, d->n, d->c, d->h, d->w,
                   d->kernel_h, d->kernel_w, d->stride_h, d->stride_w,
                   simdpool_isa_name(plan->isa));
    band_intact(dx, nin * 4, "dx");
    if (!isz)
      continue;
    memset(dx, 0x5a, nin * 4);
    if (r->chunk_bytes)
      sp_run_chunked(plan, SP_OP_BWD_IDX, &bwd_idx, r->pfor, r->pool,
                     r->chunk_bytes);
    else
      ck_assert_int_eq(
          simdpool_backward_parallel(plan, dy, ix0, NULL, dx, r->pfor, r->pool),
          SIMDPOOL_OK);
    if (memcmp(dx, dxi0, nin * 4))
      ck_abort_msg("backward from indices (%s) differs: layout %d n%zu c%zu "
                   "h%zu w%zu k%zux%zu s%zux%zu idx %d isa %s",
                   what, (int)d->layout, d->n, d->c, d->h, d->w, d->kernel_h,
                   d->kernel_w, d->stride_h, d->stride_w, (int)d->index_type,
                   simdpool_isa_name(plan->isa));
    band_intact(dx, nin * 4, "dx");
  }
  /* Unpooling (from forward's y and indices) and its backward (from x). */
  float *xu0 = isz ? out_new(nin * 4) : NULL,
        *xu = isz ? out_new(nin * 4) : NULL;
  float *yu0 = isz ? out_new(nout * 4) : NULL,
        *yu = isz ? out_new(nout * 4) : NULL;
  if (isz) {
    ck_assert_int_eq(simdpool_unpool(plan, y0, ix0, xu0), SIMDPOOL_OK);
    ck_assert_int_eq(simdpool_unpool_backward(plan, x, ix0, yu0), SIMDPOOL_OK);
  }
  for (size_t k = 0; k < nr && isz; k++) {
    const runner *r = &rs[k];
    runner_desc(r, what, sizeof what);
    const sp_io up = {.indices = ix0, .dy = y0, .dx = xu};
    const sp_io upb = {.x = x, .y = yu, .indices = ix0};
    memset(xu, 0x5a, nin * 4);
    memset(yu, 0x5a, nout * 4);
    if (r->chunk_bytes) {
      sp_run_chunked(plan, SP_OP_UNPOOL, &up, r->pfor, r->pool, r->chunk_bytes);
      sp_run_chunked(plan, SP_OP_UNPOOL_BWD, &upb, r->pfor, r->pool,
                     r->chunk_bytes);
    } else {
      ck_assert_int_eq(
          simdpool_unpool_parallel(plan, y0, ix0, xu, r->pfor, r->pool),
          SIMDPOOL_OK);
      ck_assert_int_eq(
          simdpool_unpool_backward_parallel(plan, x, ix0, yu, r->pfor, r->pool),
          SIMDPOOL_OK);
    }
    if (memcmp(xu, xu0, nin * 4) || memcmp(yu, yu0, nout * 4))
      ck_abort_msg("unpooling%s (%s) differs from the serial call: layout %d "
                   "n%zu c%zu h%zu w%zu k%zux%zu s%zux%zu idx %d isa %s",
                   memcmp(xu, xu0, nin * 4) ? "" : "'s backward", what,
                   (int)d->layout, d->n, d->c, d->h, d->w, d->kernel_h,
                   d->kernel_w, d->stride_h, d->stride_w, (int)d->index_type,
                   simdpool_isa_name(plan->isa));
    band_intact(xu, nin * 4, "unpooled x");
    band_intact(yu, nout * 4, "unpooling's dy");
  }
  free(xu0);
  free(xu);
  free(yu0);
  free(yu);
  free(x);
  free(dy);
  free(y0);
  free(dx0);
  free(dxi0);
  free(ix0);
  free(y);
  free(dx);
  free(ix);
}

static const simdpool_isa all_isas[] = {SIMDPOOL_ISA_SCALAR, SIMDPOOL_ISA_SSE41,
                                        SIMDPOOL_ISA_AVX2, SIMDPOOL_ISA_AVX512,
                                        SIMDPOOL_ISA_NEON};

/* _i: method * 2 + layout. */
START_TEST(test_bit_identical) {
  const simdpool_method m = (simdpool_method)(_i / 2);
  const simdpool_layout l = (simdpool_layout)(_i % 2);
  rng_state = seed + (uint64_t)_i * 7919;
  pools_up();
  runner rs[4 * N_POOLS + 3];
  const size_t nr = make_runners(rs);
  for (size_t a = 0; a < sizeof all_isas / sizeof all_isas[0]; a++) {
    if (!simdpool_isa_supported(all_isas[a]))
      continue;
    size_t ran = 0;
    for (size_t tries = 0; ran < scaled(60) && tries < 2000; tries++) {
      simdpool_desc d;
      simdpool_plan *plan = rnd_plan(m, l, all_isas[a], &d);
      if (!plan)
        continue;
      check_config(plan, &d, rs, nr);
      simdpool_plan_destroy(plan);
      ran++;
    }
    ck_assert_uint_ge(ran, scaled(60));
    printf("  parallel %s %s [%s]: %zu configurations x %zu runners, "
           "bit-identical\n",
           m == SIMDPOOL_MAX   ? "max"
           : m == SIMDPOOL_AVG ? "avg"
                               : "lp",
           l == SIMDPOOL_NCHW ? "nchw" : "nhwc", simdpool_isa_name(all_isas[a]),
           ran, nr);
  }
  pools_down();
}
END_TEST

/* 3D plans of one image, so that the chunks are blocks of output slices
 * (adaptive windows too; test_adaptive_bit_identical): the random depth-axis
 * descriptors of the kernel suites (test_random.h), ND and 2x2x2/s2, every
 * index type. _i: method * 2 + layout. */
START_TEST(test_3d_bit_identical) {
  const simdpool_method m = (simdpool_method)(_i / 2);
  const simdpool_layout l = (simdpool_layout)(_i % 2);
  rng_state = seed + (uint64_t)_i * 104729;
  pools_up();
  runner rs[4 * N_POOLS + 3];
  const size_t nr = make_runners(rs);
  size_t ran = 0, split = 0;
  for (size_t a = 0; a < sizeof all_isas / sizeof all_isas[0]; a++) {
    if (!simdpool_isa_supported(all_isas[a]))
      continue;
    /* At small scales (the emulated runs) a draw may hold no plan of
     * several output slices: draws go on until one has. */
    for (size_t k = 0; k < scaled(40) || (split == 0 && k < 4000); k++) {
      const sp_shape shape = k % 4 == 0   ? SP_SHAPE_2X2X2S2
                             : k % 4 == 1 ? SP_SHAPE_3X3X3S1
                                          : SP_SHAPE_ND;
      /* Every index type with every shape (k % 4 picks the shape). */
      const simdpool_index_type it = m == SIMDPOOL_MAX
                                         ? (simdpool_index_type)(k / 4 % 4)
                                         : SIMDPOOL_INDEX_NONE;
      const sp_kernel_entry probe = {.name = "probe",
                                     .isa = all_isas[a],
                                     .method = m,
                                     .layout = l,
                                     .op = SP_OP_FWD,
                                     .shape = shape,
                                     .index_mask = SP_IDX_ANY,
                                     .dtype_mask = SP_DT_F32};
      simdpool_desc d;
      rnd_desc(&d, &probe, it);
      d.n = 1;
      d.isa = all_isas[a];
      /* Now and then 3x3x3/s1 planes tall enough for bands of dx rows
       * (channels-last backward) and rows long enough for column tiles. */
      if (shape == SP_SHAPE_3X3X3S1 && k % 8 == 1) {
        d.h = rnd_range(24, 40);
        if (rnd() % 3 == 0) {
          d.w = rnd_range(60, 130);
          d.c = rnd_range(1, 20);
          d.d = d.d < 3 ? d.d : 3;
        }
      }
      simdpool_plan *plan = NULL;
      if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK)
        continue;
      split += plan->geom.od > 1;
      check_config(plan, &d, rs, nr);
      simdpool_plan_destroy(plan);
      ran++;
    }
  }
  ck_assert_uint_ge(split, 1);
  printf("  parallel 3d %s %s: %zu configurations (%zu with slice blocks) x "
         "%zu runners, bit-identical\n",
         m == SIMDPOOL_MAX   ? "max"
         : m == SIMDPOOL_AVG ? "avg"
                             : "lp",
         l == SIMDPOOL_NCHW ? "nchw" : "nhwc", ran, split, nr);
  pools_down();
}
END_TEST

/* Adaptive plans of one image, 1D, 2D and 3D, both layouts: forward cut
 * into blocks of output slices, rows or columns whatever the windows;
 * backward where out divides in on the cut axis (drawn half the time),
 * else by planes. Each block keeps the whole axis's windows
 * (sp_geom.acut). _i: method (MAX, AVG) * 2 + layout. */
START_TEST(test_adaptive_bit_identical) {
  const simdpool_method m = _i / 2 ? SIMDPOOL_AVG : SIMDPOOL_MAX;
  const simdpool_layout l = (simdpool_layout)(_i % 2);
  rng_state = seed + (uint64_t)_i * 7919;
  pools_up();
  runner rs[4 * N_POOLS + 3];
  const size_t nr = make_runners(rs);
  size_t ran = 0, dividing = 0;
  for (size_t a = 0; a < sizeof all_isas / sizeof all_isas[0]; a++) {
    if (!simdpool_isa_supported(all_isas[a]))
      continue;
    for (size_t k = 0; k < scaled(12); k++) {
      const int rank = 1 + (int)(k % 3);
      /* An output size, and an input its multiple or not. */
      size_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
      for (int ax = 3 - rank; ax < 3; ax++) {
        out[ax] = rnd_range(1, 7);
        in[ax] = rnd() % 2 ? out[ax] * rnd_range(1, 4) : rnd_range(1, 30);
      }
      const simdpool_index_type it =
          m == SIMDPOOL_MAX ? (simdpool_index_type)(k / 3 % 3)
                            : SIMDPOOL_INDEX_NONE; /* NONE, I32, I64 */
      simdpool_desc d;
      simdpool_desc_init_adaptive(&d, m, l, 1, rnd_range(1, 20), in[0], in[1],
                                  in[2], out[0], out[1], out[2]);
      d.index_type = it;
      d.isa = all_isas[a];
      simdpool_plan *plan = NULL;
      if (simdpool_plan_create(&d, &plan) != SIMDPOOL_OK)
        ck_abort_msg("adaptive plan: %s", simdpool_last_error());
      dividing += plan->geom.adaptive && in[0] % out[0] == 0 &&
                  in[1] % out[1] == 0 && in[2] % out[2] == 0;
      check_config(plan, &d, rs, nr);
      simdpool_plan_destroy(plan);
      ran++;
    }
  }
  printf("  parallel adaptive %s %s: %zu configurations (%zu still adaptive "
         "with out dividing in) x %zu runners, bit-identical\n",
         m == SIMDPOOL_MAX ? "max" : "avg",
         l == SIMDPOOL_NCHW ? "nchw" : "nhwc", ran, dividing, nr);
  pools_down();
}
END_TEST

/* Large enough for the public entry points to cut many chunks: n = 1 NHWC
 * (row blocks) and NCHW (plane groups), the bench's kind of shapes. */
START_TEST(test_big_shapes) {
  rng_state = seed + 99;
  pools_up();
  runner rs[4 * N_POOLS + 3];
  const size_t nr = make_runners(rs);
  static const struct {
    simdpool_method m;
    size_t c, h, w, k, s, pad;
  } cases[] = {
      {SIMDPOOL_MAX, 64, 56, 56, 2, 2, 0}, {SIMDPOOL_MAX, 32, 57, 57, 3, 2, 1},
      {SIMDPOOL_AVG, 24, 35, 35, 3, 1, 1}, {SIMDPOOL_AVG, 48, 28, 28, 2, 2, 0},
      {SIMDPOOL_LP, 16, 30, 30, 2, 2, 0},  {SIMDPOOL_MAX, 8, 200, 64, 2, 2, 0},
      {SIMDPOOL_AVG, 3, 301, 33, 3, 3, 1}, {SIMDPOOL_MAX, 64, 7, 7, 7, 1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int l = 0; l < 2; l++) {
      for (int it = 0; it < 4; it++) {
        if (it && cases[i].m != SIMDPOOL_MAX)
          break;
        simdpool_desc d;
        simdpool_desc_init(&d, cases[i].m, (simdpool_layout)l, 1, cases[i].c,
                           cases[i].h, cases[i].w, cases[i].k, cases[i].k);
        d.stride_h = d.stride_w = cases[i].s;
        d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = cases[i].pad;
        d.index_type = (simdpool_index_type)it;
        simdpool_plan *plan = NULL;
        ck_assert_int_eq(simdpool_plan_create(&d, &plan), SIMDPOOL_OK);
        check_config(plan, &d, rs, nr);
        simdpool_plan_destroy(plan);
        if (l == SIMDPOOL_NCHW)
          continue;
        /* A slice of 3 more channels in and 5 more out, then with a ReLU6
         * clamp (forward only). */
        d.x_pixel_stride = d.c + 3;
        d.y_pixel_stride = d.c + 5;
        for (int clamp = 0; clamp < 2; clamp++) {
          d.clamp = clamp;
          d.clamp_min = 0.0f;
          d.clamp_max = 6.0f;
          ck_assert_int_eq(simdpool_plan_create(&d, &plan), SIMDPOOL_OK);
          check_config(plan, &d, rs, nr);
          simdpool_plan_destroy(plan);
        }
      }
    }
  }
  pools_down();
}
END_TEST

/* 1D plans of one image, long enough for many chunks: channels-last they
 * split into blocks of output columns (forward, and backward where windows
 * do not overlap and indices are not flat), channels-first into planes.
 * Overlapping and tiling windows, padding, every index type. */
START_TEST(test_1d_shapes) {
  rng_state = seed + 1009;
  pools_up();
  runner rs[4 * N_POOLS + 3];
  const size_t nr = make_runners(rs);
  static const struct {
    simdpool_method m;
    size_t c, w, k, s, pad;
  } cases[] = {
      {SIMDPOOL_MAX, 32, 1501, 3, 2, 1}, {SIMDPOOL_MAX, 16, 999, 2, 2, 0},
      {SIMDPOOL_AVG, 24, 1200, 3, 1, 1}, {SIMDPOOL_AVG, 8, 2049, 4, 4, 2},
      {SIMDPOOL_LP, 12, 1500, 2, 2, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int l = 0; l < 2; l++) {
      for (int it = 0; it < 4; it++) {
        if (it && cases[i].m != SIMDPOOL_MAX)
          break;
        simdpool_desc d;
        simdpool_desc_init_1d(&d, cases[i].m, (simdpool_layout)l, 1, cases[i].c,
                              cases[i].w, cases[i].k);
        d.stride_w = cases[i].s;
        d.pad_left = d.pad_right = cases[i].pad;
        d.index_type = (simdpool_index_type)it;
        simdpool_plan *plan = NULL;
        ck_assert_int_eq(simdpool_plan_create(&d, &plan), SIMDPOOL_OK);
        check_config(plan, &d, rs, nr);
        simdpool_plan_destroy(plan);
      }
    }
  }
  pools_down();
}
END_TEST

/* ------------------------------------------------------------ the pool */

typedef struct count_ctx {
  atomic_uint *hits;
} count_ctx;

static void count_task(void *ctx, size_t i) {
  count_ctx *c = ctx;
  atomic_fetch_add(&c->hits[i], 1);
}

START_TEST(test_pool_runs_each_task_once) {
  static const size_t ranges[] = {0, 1, 2, 7, 64, 1000};
  for (size_t t = 0; t < 5; t++) {
    simdpool_threadpool *pool = NULL;
    const size_t threads = t < N_POOLS ? thread_counts[t] : 0;
    ck_assert_int_eq(simdpool_threadpool_create(threads, &pool), SIMDPOOL_OK);
    ck_assert_ptr_nonnull(pool);
    if (threads)
      ck_assert_uint_eq(simdpool_threadpool_threads(pool), threads);
    else
      ck_assert_uint_ge(simdpool_threadpool_threads(pool), 1);
    for (int rep = 0; rep < 20; rep++) {
      for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        atomic_uint hits[1000];
        for (size_t i = 0; i < 1000; i++)
          atomic_init(&hits[i], 0);
        count_ctx c = {hits};
        simdpool_threadpool_parallel_for(pool, count_task, &c, ranges[r]);
        for (size_t i = 0; i < 1000; i++)
          ck_assert_uint_eq(atomic_load(&hits[i]), i < ranges[r] ? 1 : 0);
      }
    }
    simdpool_threadpool_destroy(pool);
  }
  /* A NULL pool runs inline. */
  atomic_uint hits[5];
  for (size_t i = 0; i < 5; i++)
    atomic_init(&hits[i], 0);
  count_ctx c = {hits};
  simdpool_threadpool_parallel_for(NULL, count_task, &c, 5);
  for (size_t i = 0; i < 5; i++)
    ck_assert_uint_eq(atomic_load(&hits[i]), 1);
  ck_assert_uint_eq(simdpool_threadpool_threads(NULL), 0);
  simdpool_threadpool_destroy(NULL);
}
END_TEST

/* The pool's threads spin for a while after a job, then sleep (threadpool.c):
 * jobs posted to spinning workers, to workers falling asleep and to sleeping
 * ones, and jobs whose one slow task makes the others (the caller included)
 * give up spinning and sleep until it ends, each run every task once. */
typedef struct slow_ctx {
  atomic_uint *hits;
  size_t slow; /* the task that sleeps */
  long slow_ns;
} slow_ctx;

static void sleep_ns(long ns) {
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static void slow_task(void *ctx, size_t i) {
  slow_ctx *c = ctx;
  if (i == c->slow)
    sleep_ns(c->slow_ns);
  atomic_fetch_add(&c->hits[i], 1);
}

START_TEST(test_pool_spin_then_sleep) {
  static const long pauses_ns[] = {0, 50000, 180000, 250000, 2000000};
  static const long slow_ns[] = {0, 400000};
  for (size_t t = 0; t < N_POOLS; t++) {
    simdpool_threadpool *pool = NULL;
    ck_assert_int_eq(simdpool_threadpool_create(thread_counts[t], &pool),
                     SIMDPOOL_OK);
    for (size_t pi = 0; pi < sizeof pauses_ns / sizeof pauses_ns[0]; pi++) {
      for (size_t si = 0; si < 2; si++) {
        for (size_t slow = 0; slow < 3; slow++) {
          atomic_uint hits[32];
          for (size_t i = 0; i < 32; i++)
            atomic_init(&hits[i], 0);
          slow_ctx c = {hits, slow * 15, slow_ns[si]};
          sleep_ns(pauses_ns[pi]);
          simdpool_threadpool_parallel_for(pool, slow_task, &c, 32);
          for (size_t i = 0; i < 32; i++)
            ck_assert_uint_eq(atomic_load(&hits[i]), 1);
        }
      }
    }
    simdpool_threadpool_destroy(pool);
  }
}
END_TEST

START_TEST(test_pool_rejects) {
  ck_assert_int_eq(simdpool_threadpool_create(2, NULL),
                   SIMDPOOL_INVALID_ARGUMENT);
  ck_assert_str_eq(simdpool_last_error(), "threadpool_create: out is NULL");
  simdpool_threadpool *pool = (simdpool_threadpool *)&pool;
  ck_assert_int_eq(simdpool_threadpool_create(1025, &pool),
                   SIMDPOOL_INVALID_ARGUMENT);
  ck_assert_ptr_null(pool);
  ck_assert_str_eq(simdpool_last_error(),
                   "threadpool_create: threads = 1025 is above 1024");
}
END_TEST

/* ------------------------------------------------------------ checks */

static size_t pfor_calls;

static void counting_for(void *pool, simdpool_task_fn task, void *ctx,
                         size_t range) {
  (void)pool;
  pfor_calls++;
  for (size_t i = 0; i < range; i++)
    task(ctx, i);
}

/* A 1x1x4x4 2x2/s2 MAX plan with I32 indices on the given layout. */
static simdpool_plan *small_plan(simdpool_method m, simdpool_index_type it) {
  simdpool_desc d;
  simdpool_desc_init(&d, m, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  d.index_type = it;
  simdpool_plan *plan = NULL;
  ck_assert_int_eq(simdpool_plan_create(&d, &plan), SIMDPOOL_OK);
  return plan;
}

/* Every entry point, serial and parallel, returns `want` with `msg` and
 * writes nothing. */
#define EXPECT_BOTH(call_serial, call_parallel, want, msg)                     \
  do {                                                                         \
    pfor_calls = 0;                                                            \
    ck_assert_int_eq((call_serial), (want));                                   \
    ck_assert_str_eq(simdpool_last_error(), msg);                              \
    ck_assert_int_eq((call_parallel), (want));                                 \
    ck_assert_uint_eq(pfor_calls, 0);                                          \
  } while (0)

START_TEST(test_exec_rejects_aliasing) {
  simdpool_plan *plan = small_plan(SIMDPOOL_MAX, SIMDPOOL_INDEX_I32);
  float mem[64];
  int32_t ix[8];
  for (int i = 0; i < 64; i++)
    mem[i] = (float)i;
  float before[64];
  int32_t ix_before[8] = {5, 2, 12, 11, 0, 0, 0, 0};
  memcpy(ix, ix_before, sizeof ix);
  memcpy(before, mem, sizeof mem);
  /* x == y */
  EXPECT_BOTH(simdpool_forward(plan, mem, mem, ix),
              simdpool_forward_parallel(plan, mem, mem, ix, counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "forward: x and y overlap (the call reads and writes distinct "
              "buffers)");
  /* y overlapping the tail of x by one float */
  EXPECT_BOTH(
      simdpool_forward(plan, mem, mem + 15, ix),
      simdpool_forward_parallel(plan, mem, mem + 15, ix, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT,
      "forward: x and y overlap (the call reads and writes distinct "
      "buffers)");
  ck_assert_int_eq(
      simdpool_forward_parallel(plan, mem, mem + 15, ix, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT);
  ck_assert_str_eq(simdpool_last_error(),
                   "forward_parallel: x and y overlap (the call reads and "
                   "writes distinct buffers)");
  /* indices inside y */
  EXPECT_BOTH(simdpool_forward(plan, mem, mem + 16, (void *)(mem + 18)),
              simdpool_forward_parallel(plan, mem, mem + 16, (void *)(mem + 18),
                                        counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "forward: y and indices overlap (the call reads and writes "
              "distinct buffers)");
  /* indices inside x */
  EXPECT_BOTH(simdpool_forward(plan, mem, mem + 16, (void *)(mem + 2)),
              simdpool_forward_parallel(plan, mem, mem + 16, (void *)(mem + 2),
                                        counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "forward: x and indices overlap (the call reads and writes "
              "distinct buffers)");
  /* Adjacent buffers are fine: y right after x, indices right after y. */
  ck_assert_int_eq(simdpool_forward(plan, mem, mem + 16, (void *)(mem + 20)),
                   SIMDPOOL_OK);
  memcpy(mem, before, sizeof mem);
  /* dy == dx */
  EXPECT_BOTH(simdpool_backward(plan, mem, NULL, mem + 32, mem),
              simdpool_backward_parallel(plan, mem, NULL, mem + 32, mem,
                                         counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "backward: dx overlaps dy (the call reads and writes distinct "
              "buffers)");
  /* x inside dx (MAX recomputes winners from x) */
  EXPECT_BOTH(simdpool_backward(plan, mem + 40, NULL, mem + 4, mem),
              simdpool_backward_parallel(plan, mem + 40, NULL, mem + 4, mem,
                                         counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "backward: dx overlaps x (the call reads and writes distinct "
              "buffers)");
  /* indices inside dx */
  EXPECT_BOTH(simdpool_backward(plan, mem + 40, (void *)(mem + 8), NULL, mem),
              simdpool_backward_parallel(plan, mem + 40, (void *)(mem + 8),
                                         NULL, mem, counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "backward: dx overlaps indices (the call reads and writes "
              "distinct buffers)");
  ck_assert_mem_eq(mem, before, sizeof mem);
  ck_assert_mem_eq(ix, ix_before, sizeof ix);
  /* With indices, x is not read: x == dx is no aliasing. */
  ck_assert_int_eq(simdpool_backward(plan, mem + 40, ix, mem, mem),
                   SIMDPOOL_OK);
  simdpool_plan_destroy(plan);
  /* AVG never reads x. */
  plan = small_plan(SIMDPOOL_AVG, SIMDPOOL_INDEX_NONE);
  ck_assert_int_eq(simdpool_backward_parallel(plan, mem + 40, NULL, mem, mem,
                                              counting_for, NULL),
                   SIMDPOOL_OK);
  simdpool_plan_destroy(plan);
}
END_TEST

START_TEST(test_exec_rejects_bad_pointers) {
  simdpool_plan *plan = small_plan(SIMDPOOL_MAX, SIMDPOOL_INDEX_NONE);
  simdpool_plan *iplan = small_plan(SIMDPOOL_MAX, SIMDPOOL_INDEX_U8);
  float x[16] = {0}, y[4], dy[4] = {1, 2, 3, 4}, dx[16];
  uint8_t ix[4] = {0, 0, 0, 0};
  memset(y, 0x5a, sizeof y);
  memset(dx, 0x5a, sizeof dx);
  EXPECT_BOTH(simdpool_forward(NULL, x, y, NULL),
              simdpool_forward_parallel(NULL, x, y, NULL, counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT, "forward: plan is NULL");
  EXPECT_BOTH(
      simdpool_forward(plan, NULL, y, NULL),
      simdpool_forward_parallel(plan, NULL, y, NULL, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT, "forward: x is NULL");
  EXPECT_BOTH(
      simdpool_forward(plan, x, NULL, NULL),
      simdpool_forward_parallel(plan, x, NULL, NULL, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT, "forward: y is NULL");
  EXPECT_BOTH(simdpool_forward(plan, x, y, ix),
              simdpool_forward_parallel(plan, x, y, ix, counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "forward: indices given but the plan has index_type=NONE");
  EXPECT_BOTH(simdpool_forward(iplan, x, y, NULL),
              simdpool_forward_parallel(iplan, x, y, NULL, counting_for, NULL),
              SIMDPOOL_INVALID_ARGUMENT,
              "forward: indices is NULL but the plan writes indices "
              "(index_type=U8)");
  EXPECT_BOTH(
      simdpool_backward(NULL, dy, NULL, x, dx),
      simdpool_backward_parallel(NULL, dy, NULL, x, dx, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT, "backward: plan is NULL");
  EXPECT_BOTH(
      simdpool_backward(plan, NULL, NULL, x, dx),
      simdpool_backward_parallel(plan, NULL, NULL, x, dx, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT, "backward: dy is NULL");
  EXPECT_BOTH(
      simdpool_backward(plan, dy, NULL, x, NULL),
      simdpool_backward_parallel(plan, dy, NULL, x, NULL, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT, "backward: dx is NULL");
  EXPECT_BOTH(
      simdpool_backward(plan, dy, NULL, NULL, dx),
      simdpool_backward_parallel(plan, dy, NULL, NULL, dx, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT,
      "backward: MAX needs indices or x, both are NULL");
  EXPECT_BOTH(
      simdpool_backward(plan, dy, ix, x, dx),
      simdpool_backward_parallel(plan, dy, ix, x, dx, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT,
      "backward: indices given but the plan has no index type (only "
      "MAX plans with index_type I32, I64 or U8 have indices)");
  ix[2] = 4; /* 2x2 windows have taps 0..3 */
  EXPECT_BOTH(
      simdpool_backward(iplan, dy, ix, NULL, dx),
      simdpool_backward_parallel(iplan, dy, ix, NULL, dx, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT,
      "backward: indices[2] = 4 names no valid tap of its window");
  for (size_t i = 0; i < 4; i++)
    ck_assert_uint_eq(((const unsigned char *)y)[i], 0x5a);
  for (size_t i = 0; i < sizeof dx; i++)
    ck_assert_uint_eq(((const unsigned char *)dx)[i], 0x5a);
  /* The parallel messages name their function. */
  ck_assert_int_eq(
      simdpool_backward_parallel(iplan, dy, ix, NULL, dx, counting_for, NULL),
      SIMDPOOL_INVALID_ARGUMENT);
  ck_assert_str_eq(simdpool_last_error(), "backward_parallel: indices[2] = 4 "
                                          "names no valid tap of its window");
  simdpool_plan_destroy(plan);
  simdpool_plan_destroy(iplan);
}
END_TEST

/* Index validation runs chunk by chunk on the pool: with bad indices in
 * several chunks it must report the first one, as the serial call does,
 * and leave dx untouched. */
START_TEST(test_parallel_index_validation) {
  rng_state = seed + 4242;
  pools_up();
  static const simdpool_index_type types[] = {
      SIMDPOOL_INDEX_U8, SIMDPOOL_INDEX_I32, SIMDPOOL_INDEX_I64};
  for (int l = 0; l < 2; l++) {
    for (size_t t = 0; t < 3; t++) {
      simdpool_desc d;
      simdpool_desc_init(&d, SIMDPOOL_MAX, (simdpool_layout)l, 1, 32, 64, 64, 2,
                         2);
      d.index_type = types[t];
      simdpool_plan *plan = NULL;
      ck_assert_int_eq(simdpool_plan_create(&d, &plan), SIMDPOOL_OK);
      const size_t nin = 32 * 64 * 64, nout = 32 * 32 * 32;
      const size_t isz = sp_index_size(types[t]);
      float *x = fill_new(nin), *dy = fill_new(nout);
      unsigned char *ix = out_new(nout * isz);
      unsigned char *dx = out_new(nin * 4);
      ck_assert_int_eq(simdpool_forward(plan, x, (float *)dx, ix), SIMDPOOL_OK);
      for (int rep = 0; rep < 8; rep++) {
        unsigned char *bad = malloc(nout * isz);
        ck_assert_ptr_nonnull(bad);
        memcpy(bad, ix, nout * isz);
        /* Two or three bad entries anywhere; 9 is never a 2x2 tap, and no
         * flat index of a window is -1. */
        const size_t nbad = rnd_range(1, 3);
        for (size_t b = 0; b < nbad; b++) {
          const size_t at = rnd_range(0, nout - 1);
          if (isz == 1)
            bad[at] = 9;
          else if (isz == 4)
            ((int32_t *)(void *)bad)[at] = -1;
          else
            ((int64_t *)(void *)bad)[at] = -1;
        }
        memset(dx, 0x5a, nin * 4);
        ck_assert_int_eq(simdpool_backward(plan, dy, bad, NULL, (float *)dx),
                         SIMDPOOL_INVALID_ARGUMENT);
        char want[256];
        snprintf(want, sizeof want, "backward_parallel: %s",
                 simdpool_last_error() + strlen("backward: "));
        for (size_t k = 0; k < N_POOLS; k++) {
          ck_assert_int_eq(simdpool_backward_parallel(
                               plan, dy, bad, NULL, (float *)dx,
                               simdpool_threadpool_parallel_for, pools[k]),
                           SIMDPOOL_INVALID_ARGUMENT);
          ck_assert_str_eq(simdpool_last_error(), want);
        }
        for (size_t i = 0; i < nin * 4; i++)
          if (dx[i] != 0x5a)
            ck_abort_msg("dx byte %zu written by a rejected call", i);
        free(bad);
      }
      free(x);
      free(dy);
      free(ix);
      free(dx);
      simdpool_plan_destroy(plan);
    }
  }
  pools_down();
}
END_TEST

int main(void) {
  scale = test_random_init();
  printf("test_parallel: seed %llu (SIMDPOOL_TEST_SEED=%llu reproduces), "
         "scale %g\n",
         (unsigned long long)seed, (unsigned long long)seed, scale);
  Suite *su = suite_create("parallel");
  TCase *tc = tcase_create("bit-identical");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_bit_identical, 0, 6);
  tcase_add_test(tc, test_big_shapes);
  tcase_add_test(tc, test_1d_shapes);
  tcase_add_loop_test(tc, test_3d_bit_identical, 0, 6);
  tcase_add_loop_test(tc, test_adaptive_bit_identical, 0, 4);
  suite_add_tcase(su, tc);
  TCase *pool = tcase_create("threadpool");
  tcase_set_timeout(pool, 120);
  tcase_add_test(pool, test_pool_runs_each_task_once);
  tcase_add_test(pool, test_pool_spin_then_sleep);
  tcase_add_test(pool, test_pool_rejects);
  suite_add_tcase(su, pool);
  TCase *ex = tcase_create("execution checks");
  tcase_add_test(ex, test_exec_rejects_aliasing);
  tcase_add_test(ex, test_exec_rejects_bad_pointers);
  tcase_add_test(ex, test_parallel_index_validation);
  suite_add_tcase(su, ex);
  SRunner *sr = srunner_create(su);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
