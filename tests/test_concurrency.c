/* SPDX-License-Identifier: MIT */
/* test_concurrency.c — 16 threads make their first-ever simdpool calls at the
 * same moment (CPU detection, SIMDPOOL_ISA, plan creation), then share plans
 * and one thread pool; every result must equal the scalar reference bit for
 * bit and every thread's last_error must stay its own. Meant to run under
 * ThreadSanitizer too (.ci/tsan.sh). A plain program: no simdpool call may
 * happen before the threads start, so no test framework runs first. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpool.h"

#define THREADS 16
#define SHARED_PLANS 6
/* SIMDPOOL_TEST_SCALE below 1 (emulated runs) shrinks the work. */
static int rounds = 3;
static size_t plane_h = 47, plane_w = 41;

static pthread_barrier_t start_line, shared_ready;
static simdpool_plan *shared[SHARED_PLANS];     /* AUTO plans */
static simdpool_plan *shared_ref[SHARED_PLANS]; /* the same on scalar */
static simdpool_threadpool *shared_pool;
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(int thread, const char *what) {
  pthread_mutex_lock(&fail_lock);
  failures++;
  fprintf(stderr, "thread %d: %s\n", thread, what);
  pthread_mutex_unlock(&fail_lock);
}

static void shared_desc(int i, simdpool_desc *d, simdpool_isa isa) {
  static const simdpool_method methods[] = {SIMDPOOL_MAX, SIMDPOOL_AVG,
                                            SIMDPOOL_LP};
  simdpool_desc_init(d, methods[i % 3], (simdpool_layout)(i / 3 % 2), 1, 19,
                     plane_h, plane_w, 2 + (size_t)(i % 2),
                     2 + (size_t)(i % 2));
  d->stride_h = d->stride_w = 2;
  d->pad_top = d->pad_left = (size_t)(i % 2);
  d->p = 3.0f;
  if (d->method == SIMDPOOL_MAX)
    d->index_type = SIMDPOOL_INDEX_I32;
  d->isa = isa;
}

static size_t elems_in(const simdpool_desc *d) {
  return d->n * d->c * d->h * d->w;
}

static size_t elems_out(const simdpool_plan *p, const simdpool_desc *d) {
  size_t oh, ow;
  simdpool_plan_output_shape(p, &oh, &ow);
  return d->n * d->c * oh * ow;
}

/* Runs plan and ref on the same inputs (serially and through the shared
 * pool) and compares. */
static void run_pair(int t, int i, const simdpool_plan *plan,
                     const simdpool_plan *ref, const simdpool_desc *d,
                     unsigned salt) {
  const size_t nin = elems_in(d), nout = elems_out(plan, d);
  float *x = malloc(nin * 4), *dy = malloc(nout * 4);
  float *y[3], *dx[3];
  int32_t *ix[3];
  for (int k = 0; k < 3; k++) {
    y[k] = malloc(nout * 4);
    dx[k] = malloc(nin * 4);
    ix[k] = malloc(nout * 4);
  }
  for (size_t e = 0; e < nin; e++)
    x[e] = (float)((e * 2654435761u + salt) % 17) - 8.0f;
  for (size_t e = 0; e < nout; e++)
    dy[e] = (float)((e * 40503u + salt) % 13) * 0.25f;
  const int idx = d->index_type != SIMDPOOL_INDEX_NONE;
  const simdpool_plan *plans[3] = {ref, plan, plan};
  for (int k = 0; k < 3; k++) {
    simdpool_status st;
    if (k < 2)
      st = simdpool_forward(plans[k], x, y[k], idx ? ix[k] : NULL);
    else
      st = simdpool_forward_parallel(plans[k], x, y[k], idx ? ix[k] : NULL,
                                     simdpool_threadpool_parallel_for,
                                     shared_pool);
    if (st != SIMDPOOL_OK)
      fail(t, simdpool_last_error());
    if (k < 2)
      st = simdpool_backward(plans[k], dy, NULL, x, dx[k]);
    else
      st = simdpool_backward_parallel(plans[k], dy, NULL, x, dx[k],
                                      simdpool_threadpool_parallel_for,
                                      shared_pool);
    if (st != SIMDPOOL_OK)
      fail(t, simdpool_last_error());
  }
  for (int k = 1; k < 3; k++) {
    if (memcmp(y[k], y[0], nout * 4) || memcmp(dx[k], dx[0], nin * 4) ||
        (idx && memcmp(ix[k], ix[0], nout * 4))) {
      char msg[96];
      snprintf(msg, sizeof msg, "plan %d (%s) differs from scalar", i,
               k == 1 ? "serial" : "parallel");
      fail(t, msg);
    }
  }
  for (int k = 0; k < 3; k++) {
    free(y[k]);
    free(dx[k]);
    free(ix[k]);
  }
  free(x);
  free(dy);
}

/* Tasks that count their calls: every thread also drives the shared pool
 * directly, all at once. */
static void count_task(void *ctx, size_t i) {
  unsigned *hits = ctx;
  hits[i]++; /* each i belongs to one task call: no two threads touch it */
}

static void hammer_pool(int t) {
  unsigned hits[257];
  for (int rep = 0; rep < 20; rep++) {
    const size_t range = (size_t)(t * 16 + rep) % 257 + 1;
    memset(hits, 0, sizeof hits);
    simdpool_threadpool_parallel_for(shared_pool, count_task, hits, range);
    for (size_t i = 0; i < 257; i++)
      if (hits[i] != (i < range)) {
        fail(t, "the shared pool ran a task twice or not at all");
        return;
      }
  }
}

static void *thread_main(void *arg) {
  const int t = (int)(intptr_t)arg;
  pthread_barrier_wait(&start_line);
  /* First calls, all at once: detection, environment, plan creation. */
  const simdpool_isa best =
      simdpool_isa_supported(SIMDPOOL_ISA_AVX512)  ? SIMDPOOL_ISA_AVX512
      : simdpool_isa_supported(SIMDPOOL_ISA_AVX2)  ? SIMDPOOL_ISA_AVX2
      : simdpool_isa_supported(SIMDPOOL_ISA_SSE41) ? SIMDPOOL_ISA_SSE41
      : simdpool_isa_supported(SIMDPOOL_ISA_NEON)  ? SIMDPOOL_ISA_NEON
                                                   : SIMDPOOL_ISA_SCALAR;
  simdpool_desc d;
  shared_desc(t, &d, SIMDPOOL_ISA_AUTO);
  simdpool_plan *mine = NULL, *mine_ref = NULL;
  if (simdpool_plan_create(&d, &mine) != SIMDPOOL_OK)
    fail(t, simdpool_last_error());
  else if (simdpool_plan_isa(mine) != best)
    fail(t, "AUTO plan did not pick the best ISA");
  if (t < SHARED_PLANS) { /* some threads build the shared plans */
    shared[t] = mine;
    d.isa = SIMDPOOL_ISA_SCALAR;
    if (simdpool_plan_create(&d, &shared_ref[t]) != SIMDPOOL_OK)
      fail(t, simdpool_last_error());
    mine = NULL;
  } else {
    d.isa = SIMDPOOL_ISA_SCALAR;
    if (simdpool_plan_create(&d, &mine_ref) != SIMDPOOL_OK)
      fail(t, simdpool_last_error());
  }
  /* last_error is per thread: each thread fails its own way. */
  char want[512];
  simdpool_desc bad;
  simdpool_desc_init(&bad, SIMDPOOL_MAX, SIMDPOOL_NCHW, 1, 1, 4, 4, 2, 2);
  bad.kernel_w = (size_t)t + 5; /* wider than w = 4: a message per thread */
  simdpool_plan *never = NULL;
  if (simdpool_plan_create(&bad, &never) != SIMDPOOL_INVALID_ARGUMENT)
    fail(t, "a window wider than the input was accepted");
  snprintf(want, sizeof want, "%s", simdpool_last_error());
  char num[32];
  snprintf(num, sizeof num, "%d", t + 5);
  if (!strstr(want, num))
    fail(t, "last_error does not name this thread's kernel_w");
  pthread_barrier_wait(&shared_ready);
  if (strcmp(want, simdpool_last_error()) != 0)
    fail(t, "last_error changed under another thread's failure");
  hammer_pool(t);
  /* Everyone uses every shared plan at once, on its own buffers. */
  for (int r = 0; r < rounds; r++) {
    for (int i = 0; i < SHARED_PLANS; i++) {
      simdpool_desc sd;
      shared_desc(i, &sd, SIMDPOOL_ISA_AUTO);
      run_pair(t, i, shared[i], shared_ref[i], &sd,
               (unsigned)(t * 131 + r * 7 + i));
    }
    if (mine) {
      run_pair(t, -1, mine, mine_ref, &d, (unsigned)(t + r));
    }
  }
  simdpool_plan_destroy(mine);
  simdpool_plan_destroy(mine_ref);
  return NULL;
}

int main(void) {
  const char *scale = getenv("SIMDPOOL_TEST_SCALE");
  if (scale && atof(scale) > 0 && atof(scale) < 1) {
    rounds = 1;
    plane_h = 23;
    plane_w = 21;
  }
  pthread_t th[THREADS];
  pthread_barrier_init(&start_line, NULL, THREADS);
  pthread_barrier_init(&shared_ready, NULL, THREADS + 1);
  for (int t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t)) {
      fprintf(stderr, "cannot start thread %d\n", t);
      return 1;
    }
  /* The shared pool is created while the threads make their first calls. */
  if (simdpool_threadpool_create(3, &shared_pool) != SIMDPOOL_OK) {
    fprintf(stderr, "threadpool_create: %s\n", simdpool_last_error());
    return 1;
  }
  pthread_barrier_wait(&shared_ready);
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  simdpool_threadpool_destroy(shared_pool);
  for (int i = 0; i < SHARED_PLANS; i++) {
    simdpool_plan_destroy(shared[i]);
    simdpool_plan_destroy(shared_ref[i]);
  }
  printf("concurrency: %d threads, first calls at once, %d shared plans x %d "
         "rounds, one shared pool: %s\n",
         THREADS, SHARED_PLANS, rounds, failures ? "FAILED" : "all bit-exact");
  return failures ? 1 : 0;
}
