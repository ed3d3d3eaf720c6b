/* SPDX-License-Identifier: MIT */
/* test_fpenv.c — the public entry points compute the same bits whatever
 * floating-point environment the caller (and every worker thread of its
 * pool) left set, and give the caller's control and status state back:
 * simdpool_forward/backward and their parallel forms, on every ISA this
 * machine runs, every method, layout and shape class, against the scalar
 * plan run in the default environment, memcmp. */
#define _POSIX_C_SOURCE 200809L
#include "check_quiet.h"
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#include "fpenv_test.h"
#include "test_random.h"

/* Caller environments (tenv_decode codes: bits 0-1 rounding, 2 FTZ/FZ, 3
 * DAZ/FZ16, 4 status flags set, 5 traps unmasked / DN). */
static const unsigned caller_codes[] = {0, 4, 8, 4 | 8, 32, 1, 2, 3, 16, 63};
#define N_CODES ((int)(sizeof caller_codes / sizeof caller_codes[0]))
/* The environment every task of the pool runs in: FTZ|DAZ (FZ|FZ16),
 * rounding upward, no status flags. */
#define WORKER_CODE (4u | 8u | 1u)

static int configs = 6;

/* ------------------------------------------------------------ the pool */

/* A parallel-for over the built-in pool whose tasks run with the worker
 * environment set, as on a runtime's threads that set FTZ|DAZ; each task
 * checks that the environment it had is still there when it returns. */
typedef struct env_pool {
  simdpool_threadpool *tp;
  tenv worker;
  atomic_int tasks, changed;
} env_pool;

typedef struct env_job {
  env_pool *pool;
  simdpool_task_fn task;
  void *ctx;
} env_job;

static void env_task(void *ctx, size_t i) {
  env_job *j = ctx;
  const tenv own = tenv_read();
  tenv_write(j->pool->worker);
  j->task(j->ctx, i);
  if (!tenv_equal(tenv_read(), j->pool->worker))
    atomic_fetch_add(&j->pool->changed, 1);
  atomic_fetch_add(&j->pool->tasks, 1);
  tenv_write(own);
}

static void env_parallel_for(void *pool, simdpool_task_fn task, void *ctx,
                             size_t range) {
  env_job j = {pool, task, ctx};
  simdpool_threadpool_parallel_for(j.pool->tp, env_task, &j, range);
}

/* ------------------------------------------------------------ one plan */

typedef enum { CALL_SERIAL, CALL_PARALLEL, CALL_CHUNKED, CALL_COUNT } call_kind;
static const char *const call_names[CALL_COUNT] = {
    "serial", "parallel (public)", "parallel (chunks of 512 bytes)"};

typedef struct tensors {
  float *x, *dy, *y, *dx;
  void *idx;
  size_t nx, ny, isz;
} tensors;

/* Runs op of plan p under caller environment env through call kind k into
 * the output buffers of t; checks the status and that env reads back. */
static void run_call(const simdpool_plan *p, sp_op op, call_kind k,
                     const tensors *t, const void *idx_in, tenv env,
                     env_pool *pool, const char *what) {
  simdpool_status st = SIMDPOOL_OK;
  const int has_idx = p->geom.index_type != SIMDPOOL_INDEX_NONE;
  const int unpool = op == SP_OP_UNPOOL || op == SP_OP_UNPOOL_BWD;
  if (op != SP_OP_BWD_IDX && !unpool)
    idx_in = NULL;
  const sp_io io = {.x = t->x,
                    .y = t->y,
                    .indices = op == SP_OP_FWD ? (has_idx ? t->idx : NULL)
                                               : (void *)(uintptr_t)idx_in,
                    .dy = t->dy,
                    .dx = t->dx};
  tenv_write(env);
  switch (unpool ? (int)k + 100 * (int)op : (int)k) {
  case CALL_SERIAL + 100 * SP_OP_UNPOOL: /* y from dy, x into dx */
    st = simdpool_unpool(p, t->dy, idx_in, t->dx);
    break;
  case CALL_PARALLEL + 100 * SP_OP_UNPOOL:
    st = simdpool_unpool_parallel(p, t->dy, idx_in, t->dx, env_parallel_for,
                                  pool);
    break;
  case CALL_SERIAL + 100 * SP_OP_UNPOOL_BWD: /* dx from x, dy into y */
    st = simdpool_unpool_backward(p, t->x, idx_in, t->y);
    break;
  case CALL_PARALLEL + 100 * SP_OP_UNPOOL_BWD:
    st = simdpool_unpool_backward_parallel(p, t->x, idx_in, t->y,
                                           env_parallel_for, pool);
    break;
  case CALL_SERIAL:
    st = op == SP_OP_FWD
             ? simdpool_forward(p, t->x, t->y, io.indices)
             : simdpool_backward(p, t->dy, idx_in,
                                 op == SP_OP_BWD ? t->x : NULL, t->dx);
    break;
  case CALL_PARALLEL:
    st = op == SP_OP_FWD
             ? simdpool_forward_parallel(p, t->x, t->y, io.indices,
                                         env_parallel_for, pool)
             : simdpool_backward_parallel(p, t->dy, idx_in,
                                          op == SP_OP_BWD ? t->x : NULL, t->dx,
                                          env_parallel_for, pool);
    break;
  default:
    sp_run_chunked(p, op, &io, env_parallel_for, pool, 512);
    break;
  }
  const tenv after = tenv_read();
  tenv_write(tenv_default());
  char a[64], b[64];
  ck_assert_msg(st == SIMDPOOL_OK, "%s: %s", what, simdpool_last_error());
  ck_assert_msg(tenv_equal(after, env),
                "%s: the caller's environment %s came back as %s", what,
                tenv_text(env, a, sizeof a), tenv_text(after, b, sizeof b));
}

static void fill(tensors *t, const sp_geom *g, simdpool_index_type it) {
  t->nx = g->n * g->c * sp_in_plane(g);
  t->ny = g->n * g->c * sp_out_plane(g);
  t->isz = sp_index_size(it) ? sp_index_size(it) : 1;
  t->x = malloc(t->nx * sizeof(float));
  t->dx = malloc(t->nx * sizeof(float));
  t->dy = malloc(t->ny * sizeof(float));
  t->y = malloc(t->ny * sizeof(float));
  t->idx = malloc(t->ny * t->isz);
  ck_assert(t->x && t->dx && t->dy && t->y && t->idx);
  for (size_t i = 0; i < t->nx; i++)
    t->x[i] = rnd_value_subnormal();
  for (size_t i = 0; i < t->ny; i++)
    t->dy[i] = rnd_value_subnormal();
}

static void release(tensors *t) {
  free(t->x);
  free(t->dx);
  free(t->dy);
  free(t->y);
  free(t->idx);
}

/* Every op of plan p (and the scalar plan ps of the same descriptor) under
 * every caller environment and call kind; returns the checks made. */
static long check_plan(const simdpool_plan *p, const simdpool_plan *ps,
                       env_pool *pool, const char *desc_text) {
  const sp_geom *g = &ps->geom;
  const simdpool_index_type it = g->index_type;
  tensors t, ref;
  fill(&t, g, it);
  ref = t;
  ref.y = malloc(t.ny * sizeof(float));
  ref.dx = malloc(t.nx * sizeof(float));
  ref.idx = malloc(t.ny * t.isz);
  float *ref_dx_idx = malloc(t.nx * sizeof(float));
  float *ref_xu = malloc(t.nx * sizeof(float)); /* unpooled */
  float *ref_yu = malloc(t.ny * sizeof(float)); /* unpooling's backward */
  ck_assert(ref.y && ref.dx && ref.idx && ref_dx_idx && ref_xu && ref_yu);
  const int has_idx = it != SIMDPOOL_INDEX_NONE;
  /* References: the scalar plan, default environment, serial. */
  tenv_write(tenv_default());
  ck_assert(simdpool_forward(ps, t.x, ref.y, has_idx ? ref.idx : NULL) ==
            SIMDPOOL_OK);
  ck_assert(simdpool_backward(ps, t.dy, NULL, t.x, ref.dx) == SIMDPOOL_OK);
  if (has_idx) {
    ck_assert(simdpool_backward(ps, t.dy, ref.idx, NULL, ref_dx_idx) ==
              SIMDPOOL_OK);
    ck_assert(simdpool_unpool(ps, t.dy, ref.idx, ref_xu) == SIMDPOOL_OK);
    ck_assert(simdpool_unpool_backward(ps, t.x, ref.idx, ref_yu) ==
              SIMDPOOL_OK);
  }

  long checks = 0;
  char what[512];
  const sp_op ops[] = {SP_OP_FWD, SP_OP_BWD, SP_OP_BWD_IDX, SP_OP_UNPOOL,
                       SP_OP_UNPOOL_BWD};
  static const char *const op_text[] = {"forward", "backward",
                                        "backward from indices", "unpooling",
                                        "unpooling's backward"};
  for (int c = 0; c < N_CODES; c++) {
    const tenv env = tenv_decode(caller_codes[c]);
    for (int k = 0; k < CALL_COUNT; k++) {
      for (int o = 0; o < 5; o++) {
        const sp_op op = ops[o];
        if (op != SP_OP_FWD && op != SP_OP_BWD && !has_idx)
          continue;
        snprintf(what, sizeof what,
                 "%s %s %s under caller code %u (worker code %u); seed "
                 "%" PRIu64 "; %s",
                 simdpool_isa_name(simdpool_plan_isa(p)), call_names[k],
                 op_text[o], caller_codes[c], WORKER_CODE, seed, desc_text);
        memset(t.y, 0xA5, t.ny * sizeof(float));
        memset(t.dx, 0xA5, t.nx * sizeof(float));
        memset(t.idx, 0xA5, t.ny * t.isz);
        run_call(p, op, (call_kind)k, &t, ref.idx, env, pool, what);
        if (op == SP_OP_UNPOOL) {
          ck_assert_msg(!memcmp(t.dx, ref_xu, t.nx * sizeof(float)),
                        "%s: x differs from the scalar reference", what);
        } else if (op == SP_OP_UNPOOL_BWD) {
          ck_assert_msg(!memcmp(t.y, ref_yu, t.ny * sizeof(float)),
                        "%s: dy differs from the scalar reference", what);
        } else if (op == SP_OP_FWD) {
          ck_assert_msg(!memcmp(t.y, ref.y, t.ny * sizeof(float)),
                        "%s: y differs from the scalar reference", what);
          ck_assert_msg(!has_idx || !memcmp(t.idx, ref.idx, t.ny * t.isz),
                        "%s: indices differ from the scalar reference", what);
        } else {
          ck_assert_msg(!memcmp(t.dx, op == SP_OP_BWD ? ref.dx : ref_dx_idx,
                                t.nx * sizeof(float)),
                        "%s: dx differs from the scalar reference", what);
        }
        checks++;
      }
    }
  }
  free(ref.y);
  free(ref.dx);
  free(ref.idx);
  free(ref_dx_idx);
  free(ref_xu);
  free(ref_yu);
  release(&t);
  return checks;
}

static env_pool *pool_new(void) {
  env_pool *pool = calloc(1, sizeof *pool);
  ck_assert(pool);
  ck_assert(simdpool_threadpool_create(3, &pool->tp) == SIMDPOOL_OK);
  pool->worker = tenv_decode(WORKER_CODE);
  return pool;
}

static void pool_done(env_pool *pool) {
  ck_assert_msg(atomic_load(&pool->changed) == 0,
                "%d tasks returned with their thread's environment changed",
                atomic_load(&pool->changed));
  simdpool_threadpool_destroy(pool->tp);
  free(pool);
}

/* ------------------------------------------------------------ tests */

/* _i: ISA x method x layout x shape class. Random descriptors of that
 * class (rnd_desc), every index type in turn for MAX. */
START_TEST(entry_points_ignore_caller_env) {
  const int shape = _i % SP_SHAPE_COUNT, layout = _i / SP_SHAPE_COUNT % 2;
  const int method = _i / SP_SHAPE_COUNT / 2 % 3;
  const simdpool_isa isa =
      (simdpool_isa)(SIMDPOOL_ISA_SCALAR + _i / SP_SHAPE_COUNT / 2 / 3);
  if (!simdpool_isa_supported(isa))
    return;
  env_pool *pool = pool_new();
  const sp_kernel_entry probe = {.name = "probe",
                                 .isa = isa,
                                 .method = (simdpool_method)method,
                                 .layout = (simdpool_layout)layout,
                                 .op = SP_OP_FWD,
                                 .shape = (sp_shape)shape,
                                 .index_mask = SP_IDX_ANY,
                                 .dtype_mask = SP_DT_F32};
  rng_state = seed ^ (uint64_t)_i * 0x9e37ull;
  long checks = 0;
  int ran = 0;
  for (int iter = 0; ran < configs && iter < configs * 100; iter++) {
    const simdpool_index_type it = method == SIMDPOOL_MAX
                                       ? (simdpool_index_type)(iter % 4)
                                       : SIMDPOOL_INDEX_NONE;
    simdpool_desc d;
    rnd_desc(&d, &probe, it);
    d.isa = SIMDPOOL_ISA_SCALAR;
    simdpool_plan *ps = NULL, *p = NULL;
    if (simdpool_plan_create(&d, &ps) != SIMDPOOL_OK)
      continue;
    if (!sp_shape_matches((sp_shape)shape, &ps->geom)) {
      simdpool_plan_destroy(ps);
      continue;
    }
    d.isa = isa;
    const simdpool_status st = simdpool_plan_create(&d, &p);
    ck_assert_msg(st == SIMDPOOL_OK, "%s", simdpool_last_error());
    char text[160];
    snprintf(text, sizeof text, "%s %s %s n=%zu c=%zu h=%zu w=%zu idx=%d",
             method == 0   ? "max"
             : method == 1 ? "avg"
                           : "lp",
             layout ? "nhwc" : "nchw", shape_names[shape], d.n, d.c, d.h, d.w,
             (int)it);
    checks += check_plan(p, ps, pool, text);
    simdpool_plan_destroy(p);
    simdpool_plan_destroy(ps);
    ran++;
  }
  ck_assert_msg(ran > 0, "no descriptor of shape %s drawn", shape_names[shape]);
  printf("  %-6s %-3s %s %-7s: %d plans, %ld calls (%d caller environments x "
         "3 call kinds x each op) bit-exact, caller and worker state "
         "restored; %d tasks ran on the pool\n",
         simdpool_isa_name(isa),
         method == 0   ? "max"
         : method == 1 ? "avg"
                       : "lp",
         layout ? "nhwc" : "nchw", shape_names[shape], ran, checks, N_CODES,
         atomic_load(&pool->tasks));
  fflush(stdout);
  pool_done(pool);
}
END_TEST

/* Tensors large enough that the public parallel entry points cut them into
 * several chunks on the pool: the fast paths of every ISA. */
START_TEST(large_parallel_calls_ignore_caller_env) {
  const simdpool_isa isa = (simdpool_isa)(SIMDPOOL_ISA_SCALAR + _i);
  if (!simdpool_isa_supported(isa))
    return;
  env_pool *pool = pool_new();
  typedef struct big {
    simdpool_method m;
    simdpool_layout l;
    size_t n, c, h, w, k, s, pad;
    simdpool_index_type it;
  } big;
  static const big bigs[] = {
      {SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 8, 128, 128, 2, 2, 0,
       SIMDPOOL_INDEX_I64},
      {SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 64, 48, 48, 3, 2, 1, SIMDPOOL_INDEX_I64},
      {SIMDPOOL_MAX, SIMDPOOL_NCHW, 2, 8, 64, 64, 3, 2, 1, SIMDPOOL_INDEX_U8},
      {SIMDPOOL_AVG, SIMDPOOL_NHWC, 1, 32, 64, 64, 3, 1, 1,
       SIMDPOOL_INDEX_NONE},
      {SIMDPOOL_AVG, SIMDPOOL_NCHW, 1, 16, 64, 64, 3, 1, 1,
       SIMDPOOL_INDEX_NONE},
      {SIMDPOOL_LP, SIMDPOOL_NCHW, 1, 16, 64, 64, 2, 2, 0, SIMDPOOL_INDEX_NONE},
  };
  rng_state = seed ^ 0xb16ull ^ (uint64_t)_i;
  long checks = 0;
  for (size_t b = 0; b < sizeof bigs / sizeof bigs[0]; b++) {
    const big *B = &bigs[b];
    simdpool_desc d;
    simdpool_desc_init(&d, B->m, B->l, B->n, B->c, B->h, B->w, B->k, B->k);
    d.stride_h = d.stride_w = B->s;
    d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = B->pad;
    d.index_type = B->it;
    d.isa = SIMDPOOL_ISA_SCALAR;
    simdpool_plan *ps = NULL, *p = NULL;
    ck_assert(simdpool_plan_create(&d, &ps) == SIMDPOOL_OK);
    d.isa = isa;
    ck_assert(simdpool_plan_create(&d, &p) == SIMDPOOL_OK);
    char text[96];
    snprintf(text, sizeof text, "large case %zu", b);
    checks += check_plan(p, ps, pool, text);
    simdpool_plan_destroy(p);
    simdpool_plan_destroy(ps);
  }
  printf("  %-6s large: %ld calls bit-exact, %d tasks on the pool\n",
         simdpool_isa_name(isa), checks, atomic_load(&pool->tasks));
  fflush(stdout);
  pool_done(pool);
}
END_TEST

/* A rejected call does no floating-point work either: backward on a plan
 * clamped to subnormal bounds (the message names them) leaves every caller
 * environment as it was, the denormal status flag included, and its message
 * does not depend on DAZ. Found by the fuzzer. */
START_TEST(rejected_calls_leave_caller_env) {
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 3, 4, 4, 2, 2);
  d.clamp = 1;
  d.clamp_min = 0x1p-149f;
  d.clamp_max = 0x1p-126f * 0.5f;
  simdpool_plan *p = NULL;
  ck_assert_msg(simdpool_plan_create(&d, &p) == SIMDPOOL_OK, "%s",
                simdpool_last_error());
  float dy[3 * 4] = {0}, x[3 * 16] = {0}, dx[3 * 16];
  const char *want =
      "backward: the plan has an output clamp (clamp_min=1.4013e-45, "
      "clamp_max=5.87747e-39), which applies to forward only: make a plan "
      "without one for backward";
  for (size_t c = 0; c < sizeof caller_codes / sizeof caller_codes[0]; c++) {
    const tenv env = tenv_decode(caller_codes[c]);
    memset(dx, 0x5a, sizeof dx);
    tenv_write(env);
    const simdpool_status st = simdpool_backward(p, dy, NULL, x, dx);
    const tenv after = tenv_read();
    tenv_write(tenv_default());
    char a[64], b[64];
    ck_assert_int_eq(st, SIMDPOOL_INVALID_ARGUMENT);
    ck_assert_str_eq(simdpool_last_error(), want);
    ck_assert_msg(tenv_equal(after, env),
                  "the caller's environment %s came back as %s",
                  tenv_text(env, a, sizeof a), tenv_text(after, b, sizeof b));
    for (size_t i = 0; i < sizeof dx; i++)
      ck_assert_uint_eq(((const unsigned char *)dx)[i], 0x5a);
  }
  simdpool_plan_destroy(p);
}
END_TEST

/* Plan creation's own floating-point work (the float checks, and the
 * decimals of its messages, which glibc rounds in the current mode on
 * AArch64) decides and prints as in the default environment whatever the
 * caller set, and gives the caller's environment back. Hand-derived:
 * (a) LP with p = 2^-140, subnormal but > 0: a valid plan (DAZ would read
 * p as 0 and reject it). (b) clamp_min = 2^-140 > clamp_max = 2^-141:
 * an empty range (DAZ would read both as 0). (c) U8 AVG with subnormal
 * scales 2^-140 / 2^-140: ratio 1, every check passes: a valid plan. (d) U8
 * AVG, x_scale = 0x1.7ffffep-125 over a 3-tap window: m = x_scale / 3 = 2^-126
 * - (2/3) 2^-149, which rounds to nearest as the subnormal 2^-126 - 2^-149
 * (rejected) but upward as FLT_MIN (normal). */
START_TEST(plan_checks_ignore_caller_env) {
  enum { CASES = 4 };
  const simdpool_status want[CASES] = {SIMDPOOL_OK, SIMDPOOL_INVALID_ARGUMENT,
                                       SIMDPOOL_OK, SIMDPOOL_INVALID_ARGUMENT};
  const char *const word[CASES] = {NULL, "clamp_min=", NULL, "quant.x_scale="};
  for (int k = 0; k < CASES; k++) {
    simdpool_desc d;
    simdpool_desc_init(&d, k < 2 ? SIMDPOOL_LP : SIMDPOOL_AVG, SIMDPOOL_NHWC, 1,
                       3, 1, 3, 1, 3);
    if (k == 0)
      d.p = 0x1p-140f;
    if (k == 1) {
      d.clamp = 1;
      d.clamp_min = 0x1p-140f;
      d.clamp_max = 0x1p-141f;
    }
    if (k >= 2) {
      d.dtype = SIMDPOOL_U8;
      d.quant.x_scale = k == 2 ? 0x1p-140f : 0x1.7ffffep-125f;
      d.quant.y_scale = k == 2 ? 0x1p-140f : 1.0f;
    }
    simdpool_plan *p = NULL;
    ck_assert_msg(simdpool_plan_create(&d, &p) == want[k], "case %d: %s", k,
                  simdpool_last_error());
    simdpool_plan_destroy(p);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", want[k] ? simdpool_last_error() : "");
    ck_assert_msg(!word[k] || strstr(msg, word[k]), "case %d: %s", k, msg);
    for (size_t c = 0; c < sizeof caller_codes / sizeof caller_codes[0]; c++) {
      const tenv env = tenv_decode(caller_codes[c]);
      p = NULL;
      tenv_write(env);
      const simdpool_status st = simdpool_plan_create(&d, &p);
      const tenv after = tenv_read();
      tenv_write(tenv_default());
      simdpool_plan_destroy(p);
      char a[64], b[64];
      const char *e = st ? simdpool_last_error() : "";
      ck_assert_msg(st == want[k] && strcmp(e, msg) == 0,
                    "case %d under %s: %d (%s), in the default environment "
                    "%d (%s)",
                    k, tenv_text(env, a, sizeof a), (int)st, e, (int)want[k],
                    msg);
      ck_assert_msg(tenv_equal(after, env),
                    "case %d: the caller's environment %s came back as %s", k,
                    tenv_text(env, a, sizeof a), tenv_text(after, b, sizeof b));
    }
  }
}
END_TEST

int main(void) {
  const double scale = test_random_init();
  configs = (int)(configs * scale) > 1 ? (int)(configs * scale) : 1;
  printf("test_fpenv: seed %" PRIu64 ", %s; caller environment codes", seed,
         TENV_MACHINE);
  for (int c = 0; c < N_CODES; c++)
    printf(" %u", caller_codes[c]);
  printf(" (bits 0-1 rounding, 2 FTZ/FZ, 3 DAZ/FZ16, 4 status flags set, 5 "
         "traps unmasked/DN); pool tasks run under code %u\n",
         WORKER_CODE);
  print_isas();
  if (!TENV_SUPPORTED) {
    printf("no access to the floating-point environment here: skipped\n");
    return 77;
  }
  Suite *suite = suite_create("fpenv");
  TCase *tc = tcase_create("entry points");
  tcase_set_timeout(tc, 600);
  const int nisa = SIMDPOOL_ISA_NEON - SIMDPOOL_ISA_SCALAR + 1;
  tcase_add_loop_test(tc, entry_points_ignore_caller_env, 0,
                      nisa * 3 * 2 * SP_SHAPE_COUNT);
  tcase_add_loop_test(tc, large_parallel_calls_ignore_caller_env, 0, nisa);
  tcase_add_test(tc, rejected_calls_leave_caller_env);
  tcase_add_test(tc, plan_checks_ignore_caller_env);
  suite_add_tcase(suite, tc);
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
