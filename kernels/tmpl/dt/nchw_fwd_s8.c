/* SPDX-License-Identifier: MIT */
/* nchw_fwd.c's kernels for s8 elements (tmpl/elem.h). */
#define SP_EL_S8 1
#include "tmpl/nchw_fwd.c"
