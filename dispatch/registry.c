/* SPDX-License-Identifier: MIT */
/* registry.c — turns kernels/registry.inc into the table dispatch, tests and
 * benches iterate. */
#include "kernel.h"

#define SP_KERNEL_T(fn, isa, method, layout, op, shape, mask, flags, dtypes)   \
  void fn(const sp_geom *g, const sp_io *io);
#define SP_KERNEL(fn, isa, method, layout, op, shape, mask, flags)             \
  SP_KERNEL_T(fn, isa, method, layout, op, shape, mask, flags, SP_DT_F32)
#include "registry.inc"
#undef SP_KERNEL_T

#define SP_KERNEL_T(fn, isa, method, layout, op, shape, mask, flags, dtypes)   \
  {#fn,                                                                        \
   SIMDPOOL_ISA_##isa,                                                         \
   SIMDPOOL_##method,                                                          \
   SIMDPOOL_##layout,                                                          \
   SP_OP_##op,                                                                 \
   SP_SHAPE_##shape,                                                           \
   (mask),                                                                     \
   (dtypes),                                                                   \
   (flags),                                                                    \
   fn},
const sp_kernel_entry sp_registry[] = {
#include "registry.inc"
};
#undef SP_KERNEL_T
#undef SP_KERNEL

const size_t sp_registry_size = sizeof sp_registry / sizeof sp_registry[0];

/* The AVG division of each SIMD ISA built (kernels/tmpl/common.h), for its
 * proof. */
#define SP_DIVIDE_DECL(sfx)                                                    \
  int sp_divide_##sfx(const float *x, const float *d, size_t d_stride,         \
                      float *y, size_t n, int sum);
#if SIMDPOOL_HAVE_SSE41
SP_DIVIDE_DECL(sse41)
#endif
#if SIMDPOOL_HAVE_AVX2
SP_DIVIDE_DECL(avx2)
#endif
#if SIMDPOOL_HAVE_AVX512
SP_DIVIDE_DECL(avx512)
#endif
#if SIMDPOOL_HAVE_NEON
SP_DIVIDE_DECL(neon)
#endif
#undef SP_DIVIDE_DECL

const sp_divide_entry sp_divide_table[] = {
#if SIMDPOOL_HAVE_SSE41
    {SIMDPOOL_ISA_SSE41, sp_divide_sse41},
#endif
#if SIMDPOOL_HAVE_AVX2
    {SIMDPOOL_ISA_AVX2, sp_divide_avx2},
#endif
#if SIMDPOOL_HAVE_AVX512
    {SIMDPOOL_ISA_AVX512, sp_divide_avx512},
#endif
#if SIMDPOOL_HAVE_NEON
    {SIMDPOOL_ISA_NEON, sp_divide_neon},
#endif
    {SIMDPOOL_ISA_SCALAR, NULL}, /* never empty; the test skips it */
};

const size_t sp_divide_table_size =
    sizeof sp_divide_table / sizeof sp_divide_table[0] - 1;

/* The bf16/f16/s8/u8 conversions of each SIMD ISA built
 * (kernels/tmpl/convert.c). */
#define SP_CONVERT_DECL(sfx)                                                   \
  void sp_widen_##sfx(simdpool_dtype t, const void *src, float *dst,           \
                      size_t n);                                               \
  void sp_narrow_##sfx(simdpool_dtype t, int keep, const float *src,           \
                       void *dst, size_t n);
#if SIMDPOOL_HAVE_SSE41
SP_CONVERT_DECL(sse41)
#endif
#if SIMDPOOL_HAVE_AVX2
SP_CONVERT_DECL(avx2)
#endif
#if SIMDPOOL_HAVE_AVX512
SP_CONVERT_DECL(avx512)
#endif
#if SIMDPOOL_HAVE_NEON
SP_CONVERT_DECL(neon)
#endif
#undef SP_CONVERT_DECL

const sp_convert_entry sp_convert_table[] = {
#if SIMDPOOL_HAVE_SSE41
    {SIMDPOOL_ISA_SSE41, sp_widen_sse41, sp_narrow_sse41},
#endif
#if SIMDPOOL_HAVE_AVX2
    {SIMDPOOL_ISA_AVX2, sp_widen_avx2, sp_narrow_avx2},
#endif
#if SIMDPOOL_HAVE_AVX512
    {SIMDPOOL_ISA_AVX512, sp_widen_avx512, sp_narrow_avx512},
#endif
#if SIMDPOOL_HAVE_NEON
    {SIMDPOOL_ISA_NEON, sp_widen_neon, sp_narrow_neon},
#endif
    {SIMDPOOL_ISA_SCALAR, NULL, NULL}, /* never empty; not an entry */
};

const size_t sp_convert_table_size =
    sizeof sp_convert_table / sizeof sp_convert_table[0] - 1;
