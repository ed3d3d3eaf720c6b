/* SPDX-License-Identifier: MIT */
/* pthreadpool.c — simdpool_parallel_for_fn over Debian's libpthreadpool. */
#include <pthreadpool.h>

#include "simdpool_pthreadpool.h"

void simdpool_pthreadpool_parallel_for(void *pool, simdpool_task_fn task,
                                       void *ctx, size_t range) {
  pthreadpool_parallelize_1d((pthreadpool_t)pool, task, ctx, range, 0);
}
