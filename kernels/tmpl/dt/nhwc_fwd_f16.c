/* SPDX-License-Identifier: MIT */
/* nhwc_fwd.c's kernels for f16 elements (tmpl/elem.h). */
#define SP_EL_F16 1
#include "tmpl/nhwc_fwd.c"
