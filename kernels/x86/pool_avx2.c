/* SPDX-License-Identifier: MIT */
/* pool_avx2.c — the SIMD kernel bodies of tmpl/pool_simd.h instantiated for
 * AVX2. */
#include "x86/vec-avx2.h"

#include "tmpl/pool_simd.h"

#include "index_check.h"
