/* SPDX-License-Identifier: MIT */
/* pool_neon.c — the SIMD kernel bodies of tmpl/pool_simd.h instantiated for
 * NEON (AArch64 Advanced SIMD). */
#include "arm/vec-neon.h"

#include "tmpl/pool_simd.h"

#include "index_check.h"
