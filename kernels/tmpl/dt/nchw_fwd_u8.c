/* SPDX-License-Identifier: MIT */
/* nchw_fwd.c's kernels for u8 elements (tmpl/elem.h). */
#define SP_EL_U8 1
#include "tmpl/nchw_fwd.c"
