/* SPDX-License-Identifier: MIT */
/* nhwc_fwd.c's kernels for bf16 elements (tmpl/elem.h). */
#define SP_EL_BF16 1
#include "tmpl/nhwc_fwd.c"
