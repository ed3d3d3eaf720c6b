// SPDX-License-Identifier: MIT
// roofline.h — the bandwidth references every result is measured against: a
// streaming copy and a read-4-write-1 reduction, over any byte count.
#ifndef SPBENCH_ROOFLINE_H
#define SPBENCH_ROOFLINE_H

#include <cstddef>

namespace spbench {

// dst[i] = src[i] for n floats: reads 4n bytes, writes 4n bytes. Both
// pointers must be 64-byte aligned.
void roof_copy(float *dst, const float *src, size_t n);

// Each 64-byte line j of dst = the sum of the four 64-byte lines 4j..4j+3 of
// src (a 4:1 reduction like a 2x2 pool's): reads 16n bytes, writes 4n bytes.
// Both pointers must be 64-byte aligned.
void roof_r4w1(float *dst, const float *src, size_t n);

// Which vector width the dispatched loops use ("avx512", "avx2", "sse2", ...).
const char *roof_isa();

} // namespace spbench

#endif
