/* SPDX-License-Identifier: MIT */
/* index_check.c — the index validity passes of kernels/index_check.h at
 * this ISA's width (SP_FN from the vector layer); compiled once per SIMD ISA
 * (kernels/meson.build). */
#include "tmpl/vec.h"

#include "index_check.h"
