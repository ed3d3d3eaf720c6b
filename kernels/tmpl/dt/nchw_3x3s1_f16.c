/* SPDX-License-Identifier: MIT */
/* nchw_3x3s1.c's 2D AVG kernel for f16 elements (tmpl/elem.h). */
#define SP_EL_F16 1
#include "tmpl/nchw_3x3s1.c"
