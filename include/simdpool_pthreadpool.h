/* SPDX-License-Identifier: MIT */
/* simdpool_pthreadpool.h — run simdpool's parallel entry points over a
 * pthreadpool (https://github.com/Maratyszcza/pthreadpool, the pool XNNPACK
 * uses). Link libsimdpool_pthreadpool (pkg-config simdpool-pthreadpool):
 *
 *   pthreadpool_t pool = pthreadpool_create(4);
 *   simdpool_forward_parallel(plan, x, y, NULL,
 *                             simdpool_pthreadpool_parallel_for, pool);
 */
#ifndef SIMDPOOL_PTHREADPOOL_H
#define SIMDPOOL_PTHREADPOOL_H

#include "simdpool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A simdpool_parallel_for_fn over pool, a pthreadpool_t (NULL runs every
 * task on the calling thread, as pthreadpool does): one
 * pthreadpool_parallelize_1d call. */
SIMDPOOL_API void simdpool_pthreadpool_parallel_for(void *pool,
                                                    simdpool_task_fn task,
                                                    void *ctx, size_t range);

#ifdef __cplusplus
}
#endif

#endif /* SIMDPOOL_PTHREADPOOL_H */
