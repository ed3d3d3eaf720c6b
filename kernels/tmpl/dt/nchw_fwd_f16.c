/* SPDX-License-Identifier: MIT */
/* nchw_fwd.c's kernels for f16 elements (tmpl/elem.h). */
#define SP_EL_F16 1
#include "tmpl/nchw_fwd.c"
