// SPDX-License-Identifier: MIT
// peer_xnnpack.cc — XNNPACK (Debian's libxnnpack-dev) as a peer: NHWC f32
// max, argmax, average and global-average pooling operators, created and set
// up once per (case, op), run without a thread pool (one thread).
#include <cmath>
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
    if (op.method == SIMDPOOL_MAX && op.index_type == SIMDPOOL_INDEX_U8) {
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
