/* SPDX-License-Identifier: MIT */
/* nchw_fwd.c's kernels for bf16 elements (tmpl/elem.h). */
#define SP_EL_BF16 1
#include "tmpl/nchw_fwd.c"
