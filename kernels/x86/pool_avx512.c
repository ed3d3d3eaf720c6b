/* SPDX-License-Identifier: MIT */
/* pool_avx512.c — the SIMD kernel bodies of tmpl/pool_simd.h instantiated for
 * AVX-512 (F, BW, DQ, VL). */
#include "x86/vec-avx512.h"

#include "tmpl/pool_simd.h"

#include "index_check.h"
