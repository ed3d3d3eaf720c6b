// SPDX-License-Identifier: MIT
// peer_pytorch.cc — PyTorch (Debian's libtorch-dev 1.13) as a peer: the ATen
// CPU operators a training step calls, through their _out variants so that no
// allocation is timed, on tensors that wrap the bench's own buffers
// (at::from_blob with the layout's strides: NCHW contiguous, or channels-last),
// on one thread.
#include <cstdio>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include "buffers.h"
#include "peers.h"

namespace spbench {

namespace {

// Did at::max_pool2d (the call without indices) run max_pool2d_with_indices?
// Found out once at start-up by watching the ATen operators it records.
bool g_max_pool2d_via_indices = false;

// The memory format of layout l for a tensor of `dims` dimensions (4: 2D,
// 5: 3D).
at::MemoryFormat format_of(simdpool_layout l, size_t dims) {
  if (l == SIMDPOOL_NCHW)
    return at::MemoryFormat::Contiguous;
  return dims == 5 ? at::MemoryFormat::ChannelsLast3d
                   : at::MemoryFormat::ChannelsLast;
}

// A tensor over bench memory p of sizes {n, c, spatial...} in layout l;
// PyTorch neither owns nor frees it, and may not resize it (an output of the
// wrong shape is an error, not a silent reallocation).
at::Tensor wrap(const void *p, size_t n, size_t c,
                const std::vector<int64_t> &spatial, simdpool_layout l,
                at::ScalarType type) {
  std::vector<int64_t> sizes = {(int64_t)n, (int64_t)c};
  sizes.insert(sizes.end(), spatial.begin(), spatial.end());
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1; // innermost first
  if (l == SIMDPOOL_NHWC) {
    strides[1] = 1;
    step = (int64_t)c;
  }
  for (size_t i = sizes.size(); i-- > 2;) {
    strides[i] = step;
    step *= sizes[i];
  }
  if (l == SIMDPOOL_NCHW) {
    strides[1] = step;
    step *= (int64_t)c;
  }
  strides[0] = step;
  return at::from_blob(const_cast<void *>(p), sizes, strides,
                       at::TensorOptions().dtype(type));
}

class TorchPool final : public PeerOp {
public:
  bool init(const Case &cs, const OpVariant &op, simdpool_layout layout,
            const sp_geom &g, const PeerIO &io, std::string *err) {
    method_ = op.method;
    call_ = op.call;
    layout_ = layout;
    if (is_unpool(op.call))
      return init_unpool(g, io, err);
    // 3D plans (a depth axis) run PyTorch's 3D operators; 1D ones its 2D
    // operators on one row, as torch.nn.MaxPool1d does.
    three_d_ = g.d > 1 || g.od > 1 || g.kd > 1;
    adaptive_ = g.adaptive != 0;
    std::vector<int64_t> in_sp = {(int64_t)g.h, (int64_t)g.w},
                         out_sp = {(int64_t)g.oh, (int64_t)g.ow};
    kernel_ = {(int64_t)g.kh, (int64_t)g.kw};
    stride_ = {(int64_t)g.sh, (int64_t)g.sw};
    pad_ = {(int64_t)g.pt, (int64_t)g.pl};
    dilation_ = {(int64_t)g.dh, (int64_t)g.dw};
    if (three_d_) {
      in_sp.insert(in_sp.begin(), (int64_t)g.d);
      out_sp.insert(out_sp.begin(), (int64_t)g.od);
      kernel_.insert(kernel_.begin(), (int64_t)g.kd);
      stride_.insert(stride_.begin(), (int64_t)g.sd);
      pad_.insert(pad_.begin(), (int64_t)g.pf);
      dilation_.insert(dilation_.begin(), (int64_t)g.dd);
    }
    out_size_ = out_sp;
    dims_ = 2 + in_sp.size();
    ceil_ = cs.ceil_mode != 0;
    count_pad_ = cs.count_include_pad != 0;
    // x and y in the op's element type (bf16: at::kBFloat16; pytorch_supports
    // admits no other besides f32).
    const at::ScalarType f32 = op.dtype == SIMDPOOL_BF16 ? at::kBFloat16
                                                         : at::kFloat,
                         i64 = at::kLong;
    const bool max = op.method == SIMDPOOL_MAX;
    const bool case_idx = max && (op.call != Call::Forward ||
                                  op.index_type == SIMDPOOL_INDEX_I64);
    if (!io.x || (case_idx && !io.indices) ||
        (op.call == Call::Forward ? !io.y : !io.dy || !io.dx)) {
      *err = "PyTorch peer: a tensor it needs was not given";
      return false;
    }
    x_ = wrap(io.x, g.n, g.c, in_sp, layout, f32);
    if (op.call == Call::Forward) {
      y_ = wrap(io.y, g.n, g.c, out_sp, layout, f32);
      if (max) { // with I64 indices: into the case's buffer, else a scratch
        const void *idx = io.indices;
        if (!case_idx) {
          scratch_idx_.reset(g.n * g.c * sp_out_plane(&g) * sizeof(int64_t));
          idx = scratch_idx_.data();
        }
        idx_ = wrap(idx, g.n, g.c, out_sp, layout, i64);
      }
    } else {
      dy_ = wrap(io.dy, g.n, g.c, out_sp, layout, f32);
      dx_ = wrap(io.dx, g.n, g.c, in_sp, layout, f32);
      if (max)
        idx_ = wrap(io.indices, g.n, g.c, out_sp, layout, i64);
    }
    // The kernels choose their layout from suggest_memory_format() of the
    // input (forward) or of grad_output (backward); every tensor must be
    // dense in that format, or ATen would copy it first.
    const at::MemoryFormat fmt = format_of(layout, dims_);
    const at::Tensor &selector = op.call == Call::Forward ? x_ : dy_;
    if (selector.suggest_memory_format() != fmt) {
      *err = std::string("PyTorch would not run its ") +
             (layout == SIMDPOOL_NHWC ? "channels-last" : "contiguous") +
             " kernel on these strides";
      return false;
    }
    for (const at::Tensor *t : {&x_, &y_, &idx_, &dy_, &dx_})
      if (t->defined() && !t->is_contiguous(fmt)) {
        *err = "PyTorch peer: a wrapped tensor is not dense in its layout";
        return false;
      }
    const at::Tensor &out = op.call == Call::Forward ? y_ : dx_;
    out_ = out.data_ptr();
    out_sizes_ = out.sizes().vec();
    idx_ptr_ = idx_.defined() ? idx_.data_ptr() : nullptr;
    const bool fwd = op.call == Call::Forward;
    const std::string rank = three_d_ ? "3d" : "2d";
    if (adaptive_)
      impl_ =
          max ? (fwd ? "at::adaptive_max_pool" + rank + "_out"
                     : "at::adaptive_max_pool" + rank + "_backward_out")
              : (fwd ? "at::adaptive_avg_pool" + rank + "_out"
                     : (three_d_ ? "at::adaptive_avg_pool3d_backward_out"
                                 : "at::_adaptive_avg_pool2d_backward_out"));
    else
      impl_ = max ? (fwd ? "at::max_pool" + rank + "_with_indices_out"
                         : "at::max_pool" + rank + "_with_indices_backward_out")
                  : (fwd ? "at::avg_pool" + rank + "_out"
                         : "at::avg_pool" + rank + "_backward_out");
    if (max && fwd && op.index_type == SIMDPOOL_INDEX_NONE && !three_d_ &&
        !adaptive_)
      impl_ += g_max_pool2d_via_indices
                   ? " (what at::max_pool2d runs), indices to a scratch"
                   : " (at::max_pool2d did NOT run it here), indices to a "
                     "scratch";
    else if (max && fwd && op.index_type == SIMDPOOL_INDEX_NONE)
      impl_ += ", indices to a scratch";
    impl_ += layout == SIMDPOOL_NHWC ? ", channels_last" : ", contiguous";
    if (op.dtype == SIMDPOOL_BF16)
      impl_ += ", bfloat16";
    // PyTorch's channels-last adaptive average sums a window in another
    // order than its own NCHW kernel (and simdpool): not bit-exact there.
    exact_ = !(adaptive_ && !max && layout == SIMDPOOL_NHWC);
    if (!exact_)
      impl_ += " (its bits differ from its own NCHW kernel's)";
    return true;
  }

  bool run(std::string *err) override {
    try {
      pass();
    } catch (const std::exception &e) {
      if (err)
        *err = std::string("PyTorch: ") + e.what();
      return false;
    }
    if (err) { // the checked pass: outputs stayed in place, in the layout
      // (an _out call may shrink a too-large output in place: the sizes
      // must be the ones simdpool computed)
      const at::MemoryFormat fmt = format_of(layout_, dims_);
      const bool fwd = call_ == Call::Forward;
      const at::Tensor &out = output();
      bool ok = out.data_ptr() == out_ && out.sizes().vec() == out_sizes_ &&
                out.is_contiguous(fmt);
      if (call_ == Call::UnpoolBackward) // gather_out wrote through this view
        ok = ok && dy_flat_.data_ptr() == out_ &&
             dy_flat_.sizes().vec() == flat_sizes_ &&
             dy_flat_.strides().vec() == flat_strides_;
      if (fwd && idx_.defined())
        ok = ok && idx_.data_ptr() == idx_ptr_ && idx_.sizes() == y_.sizes() &&
             idx_.is_contiguous(fmt);
      if (!ok) {
        *err = "PyTorch moved, resized or restrided an output tensor";
        return false;
      }
    }
    return true;
  }

  std::string impl() const override { return impl_; }
  bool bit_exact() const override { return exact_; }
  bool writes_indices() const override {
    return call_ == Call::Forward && method_ == SIMDPOOL_MAX &&
           scratch_idx_.empty();
  }

private:
  // The tensor a pass writes: y forward, dx backward; unpooling's x (in dx's
  // buffer), its backward's dy.
  const at::Tensor &output() const {
    switch (call_) {
    case Call::Forward:
      return y_;
    case Call::Unpool:
      return dx_;
    case Call::UnpoolBackward:
      return dy_;
    default:
      return dx_;
    }
  }

  // Max unpooling (2D: 1D as one row) and its gradient. Unpooling is
  // at::max_unpool2d_out(x, y, indices, {h, w}): y and the I64 indices are
  // output-shaped, x input-shaped; ATen picks its contiguous or channels-last
  // kernel by y's suggest_memory_format(), zeroes x and scatters. PyTorch
  // 1.13 has no max_unpool2d_backward operator: autograd's
  // MaxUnpool2DBackward0 runs max_pool_double_backward(grad, indices, 2) =
  // grad.contiguous(fmt).view({n, c, -1}).gather(-1, indices.view({n, c,
  // -1})).view(indices.sizes()), fmt = indices.suggest_memory_format()
  // (a RecordFunction callback sees aten::view, aten::view, aten::gather,
  // aten::view on Debian's 1.13.1). The peer runs the same with gather_out
  // into a view of the bench's dy, so nothing is allocated in the pass.
  bool init_unpool(const sp_geom &g, const PeerIO &io, std::string *err) {
    if (g.d > 1 || g.od > 1 || g.kd > 1) {
      *err = "PyTorch peer: 3D unpooling is not wired";
      return false;
    }
    if (!io.indices ||
        (call_ == Call::Unpool ? !io.dy || !io.dx : !io.x || !io.y)) {
      *err = "PyTorch peer: a tensor it needs was not given";
      return false;
    }
    const std::vector<int64_t> in_sp = {(int64_t)g.h, (int64_t)g.w},
                               out_sp = {(int64_t)g.oh, (int64_t)g.ow};
    out_size_ = in_sp; // what unpooling writes: the plan's input plane
    dims_ = 4;
    const at::MemoryFormat fmt = format_of(layout_, dims_);
    idx_ = wrap(io.indices, g.n, g.c, out_sp, layout_, at::kLong);
    if (call_ == Call::Unpool) {
      dy_ = wrap(io.dy, g.n, g.c, out_sp, layout_, at::kFloat); // y
      dx_ = wrap(io.dx, g.n, g.c, in_sp, layout_, at::kFloat);  // x
    } else {
      dx_ = wrap(io.x, g.n, g.c, in_sp, layout_, at::kFloat);  // dx
      dy_ = wrap(io.y, g.n, g.c, out_sp, layout_, at::kFloat); // dy
      flat_ = {(int64_t)g.n, (int64_t)g.c, -1};
      dy_flat_ = dy_.view(flat_);
      flat_sizes_ = dy_flat_.sizes().vec();
      flat_strides_ = dy_flat_.strides().vec();
    }
    // Unpooling's kernel follows y's format, the gradient's indices'.
    const at::Tensor &selector = call_ == Call::Unpool ? dy_ : idx_;
    if (selector.suggest_memory_format() != fmt) {
      *err = std::string("PyTorch would not run its ") +
             (layout_ == SIMDPOOL_NHWC ? "channels-last" : "contiguous") +
             " kernel on these strides";
      return false;
    }
    for (const at::Tensor *t : {&idx_, &dy_, &dx_})
      if (!t->is_contiguous(fmt)) {
        *err = "PyTorch peer: a wrapped tensor is not dense in its layout";
        return false;
      }
    const at::Tensor &out = output();
    out_ = out.data_ptr();
    out_sizes_ = out.sizes().vec();
    impl_ = call_ == Call::Unpool
                ? "at::max_unpool2d_out"
                : "at::gather_out on (n, c, h*w) views, what autograd's "
                  "MaxUnpool2DBackward0 runs (1.13 has no "
                  "max_unpool2d_backward)";
    impl_ += layout_ == SIMDPOOL_NHWC ? ", channels_last" : ", contiguous";
    exact_ = true; // copies bits: must equal simdpool's everywhere
    return true;
  }

  void pass() {
    const bool fwd = call_ == Call::Forward;
    if (call_ == Call::Unpool) {
      at::max_unpool2d_out(dx_, dy_, idx_, out_size_);
      return;
    }
    if (call_ == Call::UnpoolBackward) { // as MaxUnpool2DBackward0 does
      const at::MemoryFormat fmt = idx_.suggest_memory_format();
      at::gather_out(dy_flat_, dx_.contiguous(fmt).view(flat_), -1,
                     idx_.view(flat_));
      return;
    }
    if (adaptive_ && method_ == SIMDPOOL_MAX) {
      if (fwd && three_d_)
        at::adaptive_max_pool3d_out(y_, idx_, x_, out_size_);
      else if (fwd)
        at::adaptive_max_pool2d_out(y_, idx_, x_, out_size_);
      else if (three_d_)
        at::adaptive_max_pool3d_backward_out(dx_, dy_, x_, idx_);
      else
        at::adaptive_max_pool2d_backward_out(dx_, dy_, x_, idx_);
    } else if (adaptive_) {
      if (fwd && three_d_)
        at::adaptive_avg_pool3d_out(y_, x_, out_size_);
      else if (fwd)
        at::adaptive_avg_pool2d_out(y_, x_, out_size_);
      else if (three_d_)
        at::adaptive_avg_pool3d_backward_out(dx_, dy_, x_);
      else
        at::_adaptive_avg_pool2d_backward_out(dx_, dy_, x_);
    } else if (method_ == SIMDPOOL_MAX) {
      if (fwd && three_d_)
        at::max_pool3d_with_indices_out(y_, idx_, x_, kernel_, stride_, pad_,
                                        dilation_, ceil_);
      else if (fwd)
        at::max_pool2d_with_indices_out(y_, idx_, x_, kernel_, stride_, pad_,
                                        dilation_, ceil_);
      else if (three_d_)
        at::max_pool3d_with_indices_backward_out(dx_, dy_, x_, kernel_, stride_,
                                                 pad_, dilation_, ceil_, idx_);
      else
        at::max_pool2d_with_indices_backward_out(dx_, dy_, x_, kernel_, stride_,
                                                 pad_, dilation_, ceil_, idx_);
    } else if (fwd) {
      if (three_d_)
        at::avg_pool3d_out(y_, x_, kernel_, stride_, pad_, ceil_, count_pad_,
                           c10::nullopt);
      else
        at::avg_pool2d_out(y_, x_, kernel_, stride_, pad_, ceil_, count_pad_,
                           c10::nullopt);
    } else if (three_d_) {
      at::avg_pool3d_backward_out(dx_, dy_, x_, kernel_, stride_, pad_, ceil_,
                                  count_pad_, c10::nullopt);
    } else {
      at::avg_pool2d_backward_out(dx_, dy_, x_, kernel_, stride_, pad_, ceil_,
                                  count_pad_, c10::nullopt);
    }
  }

  simdpool_method method_ = SIMDPOOL_MAX;
  Call call_ = Call::Forward;
  simdpool_layout layout_ = SIMDPOOL_NCHW;
  std::vector<int64_t> kernel_, stride_, pad_, dilation_, out_size_;
  size_t dims_ = 4;
  bool three_d_ = false, adaptive_ = false, exact_ = true;
  bool ceil_ = false, count_pad_ = true;
  at::Tensor x_, y_, idx_, dy_, dx_;
  at::Tensor dy_flat_; // unpooling's backward: dy as (n, c, oh*ow)
  std::vector<int64_t> flat_, flat_sizes_, flat_strides_;
  const void *out_ = nullptr, *idx_ptr_ = nullptr;
  std::vector<int64_t> out_sizes_;
  Buffer scratch_idx_;
  std::string impl_;
};

// The value of "key" in ATen's build configuration text, up to the next
// comma or line end ("" when absent).
std::string config_value(const std::string &cfg, const std::string &key) {
  const size_t at = cfg.find(key);
  if (at == std::string::npos)
    return "";
  const size_t from = at + key.size();
  return cfg.substr(from, cfg.find_first_of(",\n", from) - from);
}

// Runs at::max_pool2d on a small tensor and records the ATen operators it
// calls: true when max_pool2d_with_indices is among them.
bool max_pool2d_runs_with_indices() {
  static std::vector<std::string> seen;
  seen.clear();
  const at::CallbackHandle h = at::addGlobalCallback(at::RecordFunctionCallback(
      [](const at::RecordFunction &fn) -> std::unique_ptr<at::ObserverContext> {
        seen.push_back(fn.name());
        return nullptr;
      }));
  try {
    at::max_pool2d(at::zeros({1, 2, 4, 4}), {2, 2});
  } catch (const std::exception &) {
  }
  at::removeCallback(h);
  for (const std::string &s : seen)
    if (s == "aten::max_pool2d_with_indices")
      return true;
  return false;
}

} // namespace

std::string pytorch_init() {
  at::set_num_threads(1);
  g_max_pool2d_via_indices = max_pool2d_runs_with_indices();
  const std::string cfg = at::show_config();
  std::string v = config_value(cfg, "TORCH_VERSION=");
  std::string cap = config_value(cfg, "CPU capability usage: ");
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "PyTorch %s (Debian libtorch 1.13.1; ATen CPU capability %s, "
                "%d thread; max_pool2d runs max_pool2d_with_indices: %s)",
                v.empty() ? "?" : v.c_str(), cap.empty() ? "?" : cap.c_str(),
                at::get_num_threads(), g_max_pool2d_via_indices ? "yes" : "NO");
  return buf;
}

bool pytorch_supports(const Case &cs, const OpVariant &op,
                      simdpool_layout layout, std::string *why) {
  std::string reason;
  if (is_unpool(op.call)) {
    if (op.index_type != SIMDPOOL_INDEX_I64)
      reason = "PyTorch's max_unpool reads I64 indices only: compare " +
               std::string(op.call == Call::Unpool ? "unpool_i64"
                                                   : "unpool_bwd_i64");
    else if (cs.has_depth())
      reason = "the bench wires PyTorch's 2D max unpooling only";
    if (why && !reason.empty())
      *why = reason;
    return reason.empty();
  }
  if (op.dtype != SIMDPOOL_F32 &&
      (op.dtype != SIMDPOOL_BF16 || op.call != Call::Forward ||
       cs.has_depth() || cs.adaptive))
    reason = "the bench wires PyTorch's bf16 max_pool2d_with_indices and "
             "avg_pool2d forward only (other dtypes, backward, 3D and "
             "adaptive pooling in f32)";
  else if (cs.has_depth() && layout == SIMDPOOL_NHWC)
    // Measured on Debian's 1.13.1: max_pool3d_with_indices_out and
    // avg_pool3d_out given channels_last_3d tensors write the output's
    // memory in NCDHW order regardless of its strides; the functional calls
    // return NCDHW tensors.
    reason = "PyTorch 1.13 has no channels-last 3D pooling (its _out calls "
             "write a channels_last_3d output in NCDHW order)";
  else if (op.method == SIMDPOOL_LP)
    reason = "PyTorch's lp_pool2d is a composite of pow, avg_pool2d, sign and "
             "relu (other numerics)";
  else if (op.method == SIMDPOOL_MAX && op.call == Call::Forward &&
           op.index_type != SIMDPOOL_INDEX_NONE &&
           op.index_type != SIMDPOOL_INDEX_I64)
    reason = "PyTorch's max pooling writes I64 indices only: compare "
             "max_fwd_i64";
  else if (op.method == SIMDPOOL_MAX && op.call != Call::Forward &&
           op.index_type != SIMDPOOL_INDEX_I64)
    reason = "PyTorch's max backward reads the forward's I64 indices: "
             "compare max_bwd_i64";
  else if (!cs.adaptive && (2 * cs.pad_h() > cs.kh || 2 * cs.pad > cs.kw ||
                            2 * cs.pad_d > cs.kd))
    reason = "PyTorch allows padding of at most half the kernel";
  if (!reason.empty()) {
    if (why)
      *why = reason;
    return false;
  }
  return true;
}

std::unique_ptr<PeerOp> make_pytorch(const Case &cs, const OpVariant &op,
                                     simdpool_layout layout, const sp_geom &g,
                                     const PeerIO &io, std::string *err) {
  std::unique_ptr<TorchPool> p(new TorchPool());
  std::string e;
  try {
    if (!p->init(cs, op, layout, g, io, &e)) {
      if (err)
        *err = e;
      return nullptr;
    }
  } catch (const std::exception &ex) {
    if (err)
      *err = std::string("PyTorch: ") + ex.what();
    return nullptr;
  }
  return p;
}

} // namespace spbench
