/* SPDX-License-Identifier: MIT */
/* threadpool.c — the built-in POSIX-threads pool behind
 * simdpool_threadpool_parallel_for(): persistent workers that, with the
 * calling thread, take task numbers from one atomic counter.
 *
 * Waking a sleeping thread takes tens of microseconds (on a VM, up to a
 * hundred), as long as a whole 200 us call: the worker arrived when the
 * caller had done most chunks alone, and a backward call from flat indices,
 * which runs two parallel-fors (the index check, then the kernel), ran
 * slower on two threads than on one. So a worker that finishes a job, and
 * the caller waiting for the workers, first spin for SP_POOL_SPIN_NS on an
 * atomic before they sleep on a condition variable: back-to-back jobs (the
 * check and its kernel, a network's layers) find the workers awake, and an
 * idle pool costs nothing after that. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SP_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define SP_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define SP_CPU_RELAX() ((void)0)
#endif

#include "internal.h"

#define SP_POOL_MAX_THREADS 1024
/* How long an idle worker, or a caller waiting for the workers, spins. */
#define SP_POOL_SPIN_NS 200000L

struct simdpool_threadpool {
  size_t threads;       /* the caller plus the workers */
  pthread_t *workers;   /* threads - 1 */
  pthread_mutex_t call; /* one parallel-for at a time */
  pthread_mutex_t lock; /* guards the sleeping below, pairs with the conds */
  pthread_cond_t start, done;
  size_t sleeping; /* workers waiting on start (under lock) */
  /* Bumped by every job (and by stop), with release order after the job's
   * fields below are set: a worker that sees it bumped sees the job. */
  atomic_ulong generation;
  atomic_int stop;
  atomic_size_t busy; /* workers still inside the current job */
  simdpool_task_fn task;
  void *ctx;
  size_t range;
  atomic_size_t next; /* the next task number to take */
};

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spins until cond(p, arg) holds or SP_POOL_SPIN_NS pass; returns it. The
 * clock is read every 64 pauses (a pause lasts from a few to 140 cycles). */
static int spin_until(const simdpool_threadpool *p,
                      int (*cond)(const simdpool_threadpool *, unsigned long),
                      unsigned long arg) {
  long long end = 0;
  for (unsigned k = 0;; k++) {
    if (cond(p, arg))
      return 1;
    if ((k & 63) == 0) {
      const long long t = now_ns();
      if (end == 0)
        end = t + SP_POOL_SPIN_NS;
      else if (t >= end)
        return 0;
    }
    SP_CPU_RELAX();
  }
}

static int job_posted(const simdpool_threadpool *p, unsigned long seen) {
  return atomic_load_explicit(&p->generation, memory_order_acquire) != seen ||
         atomic_load_explicit(&p->stop, memory_order_acquire);
}

static int workers_done(const simdpool_threadpool *p, unsigned long unused) {
  (void)unused;
  return atomic_load_explicit(&p->busy, memory_order_acquire) == 0;
}

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
  for (;;) {
    if (!spin_until(p, job_posted, seen)) {
      /* The poster bumps generation, then takes the lock and wakes the
       * sleepers it finds: either this test under the lock sees the bump,
       * or this worker is counted and waiting before the poster looks. */
      pthread_mutex_lock(&p->lock);
      p->sleeping++;
      while (!job_posted(p, seen))
        pthread_cond_wait(&p->start, &p->lock);
      p->sleeping--;
      pthread_mutex_unlock(&p->lock);
    }
    if (atomic_load_explicit(&p->stop, memory_order_acquire))
      break;
    seen = atomic_load_explicit(&p->generation, memory_order_acquire);
    take_tasks(p, p->task, p->ctx, p->range);
    if (atomic_fetch_sub_explicit(&p->busy, 1, memory_order_acq_rel) == 1) {
      /* The last one out wakes the caller if it sleeps (under the lock, so
       * the caller's test of busy and its wait cannot miss this). */
      pthread_mutex_lock(&p->lock);
      pthread_cond_signal(&p->done);
      pthread_mutex_unlock(&p->lock);
    }
  }
  return NULL;
}

/* Stops and joins the first `started` workers. */
static void stop_workers(simdpool_threadpool *p, size_t started) {
  atomic_store_explicit(&p->stop, 1, memory_order_release);
  pthread_mutex_lock(&p->lock);
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
  atomic_init(&p->generation, 0);
  atomic_init(&p->stop, 0);
  atomic_init(&p->busy, 0);
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
  /* The previous job ended with busy == 0: no worker reads these now. */
  p->task = task;
  p->ctx = ctx;
  p->range = range;
  atomic_store_explicit(&p->next, 0, memory_order_relaxed);
  atomic_store_explicit(&p->busy, p->threads - 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
  pthread_mutex_lock(&p->lock);
  if (p->sleeping)
    pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->lock);
  take_tasks(p, task, ctx, range);
  if (!spin_until(p, workers_done, 0)) {
    pthread_mutex_lock(&p->lock);
    while (!workers_done(p, 0))
      pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
  }
  pthread_mutex_unlock(&p->call);
}
