/* SPDX-License-Identifier: MIT */
/* threadpool.c — the built-in POSIX-threads pool behind
 * simdpool_threadpool_parallel_for(): persistent workers that, with the
 * calling thread, take task numbers from one atomic counter. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

#define SP_POOL_MAX_THREADS 1024

struct simdpool_threadpool {
  size_t threads;       /* the caller plus the workers */
  pthread_t *workers;   /* threads - 1 */
  pthread_mutex_t call; /* one parallel-for at a time */
  pthread_mutex_t lock; /* guards everything below */
  pthread_cond_t start, done;
  unsigned long generation; /* bumped by every job (and by stop) */
  int stop;
  size_t busy; /* workers still inside the current job */
  simdpool_task_fn task;
  void *ctx;
  size_t range;
  atomic_size_t next; /* the next task number to take */
};

static void take_tasks(simdpool_threadpool *p, simdpool_task_fn task, void *ctx,
                       size_t range) {
  for (;;) {
    const size_t i =
        atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
    if (i >= range)
      return;
    task(ctx, i);
  }
}

static void *worker(void *arg) {
  simdpool_threadpool *p = arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (p->generation == seen && !p->stop)
      pthread_cond_wait(&p->start, &p->lock);
    if (p->stop)
      break;
    seen = p->generation;
    const simdpool_task_fn task = p->task;
    void *const ctx = p->ctx;
    const size_t range = p->range;
    pthread_mutex_unlock(&p->lock);
    take_tasks(p, task, ctx, range);
    pthread_mutex_lock(&p->lock);
    if (--p->busy == 0)
      pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* Stops and joins the first `started` workers. */
static void stop_workers(simdpool_threadpool *p, size_t started) {
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  for (size_t i = 0; i < started; i++)
    pthread_join(p->workers[i], NULL);
}

static void free_pool(simdpool_threadpool *p) {
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->start);
  pthread_mutex_destroy(&p->lock);
  pthread_mutex_destroy(&p->call);
  free(p->workers);
  free(p);
}

simdpool_status simdpool_threadpool_create(size_t threads,
                                           simdpool_threadpool **out) {
  if (!out)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT, "threadpool_create: out is NULL");
  *out = NULL;
  if (threads == 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    threads = online < 1                     ? 1
              : online > SP_POOL_MAX_THREADS ? SP_POOL_MAX_THREADS
                                             : (size_t)online;
  }
  if (threads > SP_POOL_MAX_THREADS)
    return sp_fail(SIMDPOOL_INVALID_ARGUMENT,
                   "threadpool_create: threads = %zu is above %d", threads,
                   SP_POOL_MAX_THREADS);
  simdpool_threadpool *p = calloc(1, sizeof *p);
  if (!p)
    return sp_fail(SIMDPOOL_OUT_OF_MEMORY,
                   "threadpool_create: cannot allocate the pool");
  p->threads = threads;
  p->workers = calloc(threads, sizeof *p->workers);
  if (!p->workers) {
    free(p);
    return sp_fail(SIMDPOOL_OUT_OF_MEMORY,
                   "threadpool_create: cannot allocate %zu thread handles",
                   threads);
  }
  pthread_mutex_init(&p->call, NULL);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->start, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->next, 0);
  for (size_t i = 0; i + 1 < threads; i++) {
    const int e = pthread_create(&p->workers[i], NULL, worker, p);
    if (e != 0) {
      stop_workers(p, i);
      free_pool(p);
      return sp_fail(SIMDPOOL_OUT_OF_MEMORY,
                     "threadpool_create: thread %zu of %zu could not start "
                     "(error %d)",
                     i + 1, threads - 1, e);
    }
  }
  *out = p;
  return SIMDPOOL_OK;
}

void simdpool_threadpool_destroy(simdpool_threadpool *pool) {
  if (!pool)
    return;
  stop_workers(pool, pool->threads - 1);
  free_pool(pool);
}

size_t simdpool_threadpool_threads(const simdpool_threadpool *pool) {
  return pool ? pool->threads : 0;
}

void simdpool_threadpool_parallel_for(void *pool, simdpool_task_fn task,
                                      void *ctx, size_t range) {
  simdpool_threadpool *p = pool;
  if (!p || p->threads == 1 || range <= 1) {
    for (size_t i = 0; i < range; i++)
      task(ctx, i);
    return;
  }
  pthread_mutex_lock(&p->call);
  pthread_mutex_lock(&p->lock);
  p->task = task;
  p->ctx = ctx;
  p->range = range;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  p->busy = p->threads - 1;
  p->generation++;
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  take_tasks(p, task, ctx, range);
  pthread_mutex_lock(&p->lock);
  while (p->busy != 0)
    pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_unlock(&p->call);
}
