/* SPDX-License-Identifier: MIT */
/* nhwc_fwd.c's kernels for s8 elements (tmpl/elem.h). */
#define SP_EL_S8 1
#include "tmpl/nhwc_fwd.c"
