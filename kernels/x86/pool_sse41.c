/* SPDX-License-Identifier: MIT */
/* pool_sse41.c — the SIMD kernel bodies of tmpl/pool_simd.h instantiated for
 * SSE4.1. */
#include "x86/vec-sse41.h"

#include "tmpl/pool_simd.h"

#include "index_check.h"
