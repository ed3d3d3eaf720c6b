// SPDX-License-Identifier: MIT
// peer_xnnpack.cc — XNNPACK (Debian's libxnnpack-dev) as a peer: NHWC f32
// max, argmax, average and global-average pooling operators, created and set
// up once per (case, op), run without a thread pool (one thread).
#include <cmath>
#include <cstdint>
#include <string>

#include <xnnpack.h>

#include "peers.h"

namespace spbench {

namespace {

bool g_ready = false;

class XnnPool final : public PeerOp {
public:
  ~XnnPool() override {
    if (op_)
      xnn_delete_operator(op_);
  }

  bool init(const Case &cs, const OpVariant &op, const sp_geom &g,
            const PeerIO &io, std::string *err) {
    const float lo = -INFINITY, hi = INFINITY;
    const uint32_t pt = (uint32_t)g.pt, pr = (uint32_t)g.pr,
                   pb = (uint32_t)g.pb, pl = (uint32_t)g.pl;
    xnn_status st;
    if (op.dtype != SIMDPOOL_F32) {
      st = init_typed(op, g, io);
    } else if (op.method == SIMDPOOL_MAX &&
               op.index_type == SIMDPOOL_INDEX_U8) {
      // Argmax pooling: stride = kernel; indices are uint32 tap numbers.
      index_.resize(g.n * g.c * g.oh * g.ow);
      st = xnn_create_argmax_pooling2d_nhwc_f32(pt, pr, pb, pl, (uint32_t)g.kh,
                                                (uint32_t)g.kw, g.c, g.c, g.c,
                                                0, &op_);
      if (st == xnn_status_success)
        st = xnn_setup_argmax_pooling2d_nhwc_f32(op_, g.n, g.h, g.w, io.x, io.y,
                                                 index_.data(), nullptr);
      impl_ = "xnn_argmax_pooling2d_nhwc_f32";
    } else if (op.method == SIMDPOOL_MAX) {
      st = xnn_create_max_pooling2d_nhwc_f32(
          pt, pr, pb, pl, (uint32_t)g.kh, (uint32_t)g.kw, (uint32_t)g.sh,
          (uint32_t)g.sw, (uint32_t)g.dh, (uint32_t)g.dw, g.c, g.c, g.c, lo, hi,
          0, &op_);
      if (st == xnn_status_success)
        st = xnn_setup_max_pooling2d_nhwc_f32(op_, g.n, g.h, g.w, io.x, io.y,
                                              nullptr);
      impl_ = "xnn_max_pooling2d_nhwc_f32";
    } else if (is_global(g)) {
      st = xnn_create_global_average_pooling_nwc_f32(g.c, g.c, g.c, lo, hi, 0,
                                                     &op_);
      if (st == xnn_status_success)
        st = xnn_setup_global_average_pooling_nwc_f32(op_, g.n, g.h * g.w, io.x,
                                                      io.y, nullptr);
      impl_ = "xnn_global_average_pooling_nwc_f32";
    } else {
      (void)cs;
      st = xnn_create_average_pooling2d_nhwc_f32(
          pt, pr, pb, pl, (uint32_t)g.kh, (uint32_t)g.kw, (uint32_t)g.sh,
          (uint32_t)g.sw, g.c, g.c, g.c, lo, hi, 0, &op_);
      if (st == xnn_status_success)
        st = xnn_setup_average_pooling2d_nhwc_f32(op_, g.n, g.h, g.w, io.x,
                                                  io.y, nullptr);
      impl_ = "xnn_average_pooling2d_nhwc_f32";
    }
    if (st != xnn_status_success) {
      if (err)
        *err = "XNNPACK " + impl_ + " create/setup failed (status " +
               std::to_string(static_cast<int>(st)) + ")";
      return false;
    }
    return true;
  }

  // The operators of the other element types (xnnpack_supports says which):
  // f16, s8 and u8 max pooling, and the qu8 average with the bench's
  // quantization (bench_quant).
  xnn_status init_typed(const OpVariant &op, const sp_geom &g,
                        const PeerIO &io) {
    const uint32_t pt = (uint32_t)g.pt, pr = (uint32_t)g.pr,
                   pb = (uint32_t)g.pb, pl = (uint32_t)g.pl;
    const uint32_t kh = (uint32_t)g.kh, kw = (uint32_t)g.kw,
                   sh = (uint32_t)g.sh, sw = (uint32_t)g.sw,
                   dh = (uint32_t)g.dh, dw = (uint32_t)g.dw;
    const void *x = io.x;
    void *y = io.y;
    xnn_status st = xnn_status_unsupported_parameter;
    if (op.method == SIMDPOOL_MAX && op.dtype == SIMDPOOL_F16) {
      st = xnn_create_max_pooling2d_nhwc_f16(pt, pr, pb, pl, kh, kw, sh, sw, dh,
                                             dw, g.c, g.c, g.c, -INFINITY,
                                             INFINITY, 0, &op_);
      if (st == xnn_status_success)
        st =
            xnn_setup_max_pooling2d_nhwc_f16(op_, g.n, g.h, g.w, x, y, nullptr);
      impl_ = "xnn_max_pooling2d_nhwc_f16";
    } else if (op.method == SIMDPOOL_MAX && op.dtype == SIMDPOOL_S8) {
      st = xnn_create_max_pooling2d_nhwc_s8(pt, pr, pb, pl, kh, kw, sh, sw, dh,
                                            dw, g.c, g.c, g.c, INT8_MIN,
                                            INT8_MAX, 0, &op_);
      if (st == xnn_status_success)
        st = xnn_setup_max_pooling2d_nhwc_s8(op_, g.n, g.h, g.w,
                                             static_cast<const int8_t *>(x),
                                             static_cast<int8_t *>(y), nullptr);
      impl_ = "xnn_max_pooling2d_nhwc_s8";
    } else if (op.method == SIMDPOOL_MAX && op.dtype == SIMDPOOL_U8) {
      st = xnn_create_max_pooling2d_nhwc_u8(pt, pr, pb, pl, kh, kw, sh, sw, dh,
                                            dw, g.c, g.c, g.c, 0, UINT8_MAX, 0,
                                            &op_);
      if (st == xnn_status_success)
        st = xnn_setup_max_pooling2d_nhwc_u8(
            op_, g.n, g.h, g.w, static_cast<const uint8_t *>(x),
            static_cast<uint8_t *>(y), nullptr);
      impl_ = "xnn_max_pooling2d_nhwc_u8";
    } else if (op.method == SIMDPOOL_AVG && op.dtype == SIMDPOOL_U8) {
      const simdpool_quant q = bench_quant(SIMDPOOL_U8);
      const uint8_t xz = (uint8_t)q.x_zero_point, yz = (uint8_t)q.y_zero_point;
      const uint8_t *xu = static_cast<const uint8_t *>(x);
      uint8_t *yu = static_cast<uint8_t *>(y);
      if (is_global(g)) {
        st = xnn_create_global_average_pooling_nwc_qu8(
            g.c, g.c, g.c, xz, q.x_scale, yz, q.y_scale, 0, UINT8_MAX, 0, &op_);
        if (st == xnn_status_success)
          st = xnn_setup_global_average_pooling_nwc_qu8(op_, g.n, g.h * g.w, xu,
                                                        yu, nullptr);
        impl_ = "xnn_global_average_pooling_nwc_qu8";
      } else {
        st = xnn_create_average_pooling2d_nhwc_qu8(
            pt, pr, pb, pl, kh, kw, sh, sw, g.c, g.c, g.c, xz, q.x_scale, yz,
            q.y_scale, 0, UINT8_MAX, 0, &op_);
        if (st == xnn_status_success)
          st = xnn_setup_average_pooling2d_nhwc_qu8(op_, g.n, g.h, g.w, xu, yu,
                                                    nullptr);
        impl_ = "xnn_average_pooling2d_nhwc_qu8";
      }
    }
    return st;
  }

  bool run(std::string *err) override {
    const xnn_status st = xnn_run_operator(op_, nullptr);
    if (st != xnn_status_success) {
      if (err)
        *err = "xnn_run_operator failed (status " +
               std::to_string(static_cast<int>(st)) + ")";
      return false;
    }
    return true;
  }

  std::string impl() const override { return impl_; }
  const uint32_t *tap_indices() const override {
    return index_.empty() ? nullptr : index_.data();
  }

  static bool is_global(const sp_geom &g) {
    return g.oh == 1 && g.ow == 1 && g.kh == g.h && g.kw == g.w && g.pt == 0 &&
           g.pl == 0 && g.pb == 0 && g.pr == 0;
  }

private:
  xnn_operator_t op_ = nullptr;
  std::vector<uint32_t> index_;
  std::string impl_;
};

} // namespace

std::string xnnpack_init() {
  g_ready = xnn_initialize(nullptr) == xnn_status_success;
  return g_ready ? "XNNPACK (Debian 0.0~git20220216, no thread pool)"
                 : "XNNPACK (xnn_initialize failed: unsupported CPU?)";
}

bool xnnpack_supports(const Case &cs, const OpVariant &op,
                      simdpool_layout layout, std::string *why) {
  std::string reason;
  if (op.call == Call::Unpool)
    // xnn_create_unpooling2d_nhwc_x32 exists: it scatters to the window tap
    // its argmax pooling numbered (uint32, column-major), not to a flat
    // position in the plane.
    reason = "XNNPACK's unpooling reads its argmax pooling's uint32 tap "
             "numbers (NHWC), not flat I64 indices";
  else if (op.call == Call::UnpoolBackward)
    reason = "XNNPACK has no unpooling backward";
  else if (layout != SIMDPOOL_NHWC)
    reason = "XNNPACK pools NHWC only";
  else if (op.method == SIMDPOOL_LP)
    reason = "XNNPACK has no LP pooling";
  else if (cs.adaptive)
    reason = "XNNPACK has no adaptive pooling";
  else if (cs.has_depth())
    reason = "XNNPACK pools 2D only";
  else if (op.call != Call::Forward)
    reason = "XNNPACK has no backward pooling";
  else if (op.method == SIMDPOOL_MAX && op.index_type != SIMDPOOL_INDEX_NONE &&
           (op.index_type != SIMDPOOL_INDEX_U8 || cs.sh != cs.kh ||
            cs.sw != cs.kw || cs.pad != 0))
    reason = "XNNPACK's argmax (uint32 tap indices, stride = kernel) is "
             "compared with max_fwd_u8 only";
  else if (op.method == SIMDPOOL_AVG && cs.pad != 0 && cs.count_include_pad)
    reason = "XNNPACK's average pooling never counts padding";
  else if (op.dtype == SIMDPOOL_BF16)
    reason = "XNNPACK has no bf16 pooling";
  else if (op.dtype != SIMDPOOL_F32 && op.method == SIMDPOOL_MAX &&
           op.index_type != SIMDPOOL_INDEX_NONE)
    reason = "XNNPACK's argmax pooling is f32 only";
  else if (op.dtype == SIMDPOOL_F16 && op.method == SIMDPOOL_AVG)
    // Measured on gap_avg7: y 0x35a5 where one rounding gives 0x35a7; and
    // Debian's 2022-02 snapshot averages f16 globally only.
    reason = "XNNPACK's f16 average scales by a rounded reciprocal (2 f16 "
             "units off the one-rounding result)";
  else if (op.dtype == SIMDPOOL_U8 && op.method == SIMDPOOL_AVG &&
           cs.pad != 0 && !cs.count_include_pad)
    // Measured on incep_avg3: a corner of 4 valid taps came out 4/9 of ours.
    reason = "XNNPACK's qu8 average counts padding (as the zero point)";
  else if (op.dtype == SIMDPOOL_S8 && op.method == SIMDPOOL_AVG)
    reason = "the bench wires XNNPACK's qu8 average only (its qs8 one is "
             "global only)";
  if (!reason.empty()) {
    if (why)
      *why = reason;
    return false;
  }
  return true;
}

std::unique_ptr<PeerOp> make_xnnpack(const Case &cs, const OpVariant &op,
                                     simdpool_layout layout, const sp_geom &g,
                                     const PeerIO &io, std::string *err) {
  (void)layout;
  if (!g_ready) {
    if (err)
      *err = "XNNPACK is not initialised (xnn_initialize failed)";
    return nullptr;
  }
  std::unique_ptr<XnnPool> p(new XnnPool());
  if (!p->init(cs, op, g, io, err))
    return nullptr;
  return p;
}

} // namespace spbench
