/* SPDX-License-Identifier: MIT */
/* pool_2x2s2.c's kernels for s8 elements (tmpl/elem.h). */
#define SP_EL_S8 1
#include "tmpl/pool_2x2s2.c"
