/* SPDX-License-Identifier: MIT */
/* transpose4.h — one in-register step the x86 vector layers share: four
 * vectors transposed as 4x4 blocks within every 128-bit lane, for the
 * intrinsic prefix P (_mm, _mm256 or _mm512). out[j]'s lane 4k + i is lane
 * 4k + j of r[i]. */
#ifndef SIMDPOOL_X86_TRANSPOSE4_H
#define SIMDPOOL_X86_TRANSPOSE4_H

#define SP_X86_TRANSPOSE4(P, r, out)                                           \
  do {                                                                         \
    const vf a_ = P##_unpacklo_ps((r)[0], (r)[1]);                             \
    const vf b_ = P##_unpackhi_ps((r)[0], (r)[1]);                             \
    const vf c_ = P##_unpacklo_ps((r)[2], (r)[3]);                             \
    const vf d_ = P##_unpackhi_ps((r)[2], (r)[3]);                             \
    (out)[0] =                                                                 \
        P##_castpd_ps(P##_unpacklo_pd(P##_castps_pd(a_), P##_castps_pd(c_)));  \
    (out)[1] =                                                                 \
        P##_castpd_ps(P##_unpackhi_pd(P##_castps_pd(a_), P##_castps_pd(c_)));  \
    (out)[2] =                                                                 \
        P##_castpd_ps(P##_unpacklo_pd(P##_castps_pd(b_), P##_castps_pd(d_)));  \
    (out)[3] =                                                                 \
        P##_castpd_ps(P##_unpackhi_pd(P##_castps_pd(b_), P##_castps_pd(d_)));  \
  } while (0)

#endif /* SIMDPOOL_X86_TRANSPOSE4_H */
