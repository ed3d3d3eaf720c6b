/* SPDX-License-Identifier: MIT */
/* nhwc_fwd.c's kernels for u8 elements (tmpl/elem.h). */
#define SP_EL_U8 1
#include "tmpl/nhwc_fwd.c"
