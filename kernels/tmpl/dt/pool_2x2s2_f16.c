/* SPDX-License-Identifier: MIT */
/* pool_2x2s2.c's kernels for f16 elements (tmpl/elem.h). */
#define SP_EL_F16 1
#include "tmpl/pool_2x2s2.c"
