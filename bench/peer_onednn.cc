// SPDX-License-Identifier: MIT
// peer_onednn.cc — oneDNN 2.x (Debian's libdnnl-dev) as a peer: pooling_v2
// primitives through the C API, created once per (case, op, layout), run on
// one thread.
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include <oneapi/dnnl/dnnl.h>

#include "buffers.h"
#include "peers.h"

namespace spbench {

namespace {

dnnl_engine_t g_engine = nullptr;
dnnl_stream_t g_stream = nullptr;

// oneDNN's element type for simdpool's.
dnnl_data_type_t dnnl_type(simdpool_dtype t) {
  switch (t) {
  case SIMDPOOL_BF16:
    return dnnl_bf16;
  case SIMDPOOL_F16:
    return dnnl_f16;
  case SIMDPOOL_S8:
    return dnnl_s8;
  case SIMDPOOL_U8:
    return dnnl_u8;
  default:
    return dnnl_f32;
  }
}

std::string dnnl_err(const char *what, dnnl_status_t st) {
  return std::string("oneDNN ") + what + " failed (status " +
         std::to_string(static_cast<int>(st)) + ")";
}

#define DNNL_TRY(call, what)                                                   \
  do {                                                                         \
    const dnnl_status_t st_ = (call);                                          \
    if (st_ != dnnl_success) {                                                 \
      if (err)                                                                 \
        *err = dnnl_err(what, st_);                                            \
      return false;                                                            \
    }                                                                          \
  } while (0)

class OneDnnPool final : public PeerOp {
public:
  ~OneDnnPool() override {
    for (dnnl_memory_t m : mems_)
      dnnl_memory_destroy(m);
    if (fwd_)
      dnnl_primitive_destroy(fwd_);
    if (bwd_)
      dnnl_primitive_destroy(bwd_);
    if (fwd_pd_)
      dnnl_primitive_desc_destroy(fwd_pd_);
    if (bwd_pd_)
      dnnl_primitive_desc_destroy(bwd_pd_);
  }

  bool init(const Case &cs, const OpVariant &op, simdpool_layout layout,
            const sp_geom &g, const PeerIO &io, std::string *err) {
    // 3D plans (a depth axis) as ncdhw/ndhwc tensors, the rest as 2D (1D:
    // one row).
    const bool d3 = g.d > 1 || g.od > 1 || g.kd > 1;
    const int nd = d3 ? 5 : 4;
    const dnnl_format_tag_t tag =
        d3 ? (layout == SIMDPOOL_NCHW ? dnnl_ncdhw : dnnl_ndhwc)
           : (layout == SIMDPOOL_NCHW ? dnnl_nchw : dnnl_nhwc);
    // Spatial values, depth first when 3D.
    const auto dims = [&](size_t dv, size_t hv, size_t wv, dnnl_dims_t out,
                          dnnl_dim_t minus) {
      int i = 0;
      if (d3)
        out[i++] = (dnnl_dim_t)dv - minus;
      out[i++] = (dnnl_dim_t)hv - minus;
      out[i++] = (dnnl_dim_t)wv - minus;
    };
    dnnl_dims_t src_dims = {(dnnl_dim_t)g.n, (dnnl_dim_t)g.c};
    dnnl_dims_t dst_dims = {(dnnl_dim_t)g.n, (dnnl_dim_t)g.c};
    dims(g.d, g.h, g.w, src_dims + 2, 0);
    dims(g.od, g.oh, g.ow, dst_dims + 2, 0);
    // Tensors of the op's element type (the bench's buffers hold it).
    const dnnl_data_type_t dt = dnnl_type(op.dtype);
    dnnl_memory_desc_t src_md, dst_md;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_md, nd, src_dims, dt, tag),
             "memory_desc_init (src)");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_md, nd, dst_dims, dt, tag),
             "memory_desc_init (dst)");
    const dnnl_alg_kind_t alg = op.method == SIMDPOOL_MAX ? dnnl_pooling_max
                                : cs.count_include_pad
                                    ? dnnl_pooling_avg_include_padding
                                    : dnnl_pooling_avg_exclude_padding;
    // oneDNN counts dilation from 0 (no dilation).
    dnnl_dims_t strides, kernel, dilation, pad_l, pad_r;
    dims(g.sd, g.sh, g.sw, strides, 0);
    dims(g.kd, g.kh, g.kw, kernel, 0);
    dims(g.dd, g.dh, g.dw, dilation, 1);
    dims(g.pf, g.pt, g.pl, pad_l, 0);
    dims(g.pk, g.pb, g.pr, pad_r, 0);

    // Inference needs no workspace; everything that feeds a backward pass
    // (or writes the argmax, max_fwd_u8) is training.
    const bool inference =
        op.call == Call::Forward && op.index_type == SIMDPOOL_INDEX_NONE;
    dnnl_pooling_v2_desc_t fd;
    DNNL_TRY(
        dnnl_pooling_v2_forward_desc_init(
            &fd, inference ? dnnl_forward_inference : dnnl_forward_training,
            alg, &src_md, &dst_md, strides, kernel, dilation, pad_l, pad_r),
        "pooling_v2_forward_desc_init");
    DNNL_TRY(
        dnnl_primitive_desc_create(&fwd_pd_, &fd, nullptr, g_engine, nullptr),
        "primitive_desc_create (forward)");
    DNNL_TRY(dnnl_primitive_create(&fwd_, fwd_pd_), "primitive_create");

    const dnnl_memory_desc_t *ws_md =
        dnnl_primitive_desc_query_md(fwd_pd_, dnnl_query_workspace_md, 0);
    const bool has_ws = ws_md && dnnl_memory_desc_get_size(ws_md) > 0;
    dnnl_memory_t ws_mem = nullptr;
    if (has_ws) {
      ws_type_ = ws_md->data_type == dnnl_u8    ? ", workspace u8"
                 : ws_md->data_type == dnnl_s32 ? ", workspace s32"
                                                : ", workspace";
      workspace_.reset(dnnl_memory_desc_get_size(ws_md));
      if (!make_mem(ws_md, workspace_.data(), &ws_mem, err))
        return false;
    }

    dnnl_memory_t src_mem, dst_mem;
    if (op.call == Call::Forward) {
      if (!make_mem(&src_md, const_cast<float *>(io.x), &src_mem, err) ||
          !make_mem(&dst_md, io.y, &dst_mem, err))
        return false;
      fwd_args_ = {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_DST, dst_mem}};
      if (has_ws)
        fwd_args_.push_back({DNNL_ARG_WORKSPACE, ws_mem});
      return query_impl(fwd_pd_, err);
    }

    // Backward: the forward primitive is the hint; MAX first fills the
    // workspace with one forward pass over x (into a scratch dst).
    if (op.method == SIMDPOOL_MAX) {
      scratch_dst_.reset(g.n * g.c * sp_out_plane(&g) * sizeof(float));
      if (!make_mem(&src_md, const_cast<float *>(io.x), &src_mem, err) ||
          !make_mem(&dst_md, scratch_dst_.f(), &dst_mem, err))
        return false;
      fwd_args_ = {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_DST, dst_mem}};
      if (has_ws)
        fwd_args_.push_back({DNNL_ARG_WORKSPACE, ws_mem});
      DNNL_TRY(dnnl_primitive_execute(fwd_, g_stream, (int)fwd_args_.size(),
                                      fwd_args_.data()),
               "forward execute (workspace)");
      DNNL_TRY(dnnl_stream_wait(g_stream), "stream_wait");
    }
    dnnl_pooling_v2_desc_t bd;
    DNNL_TRY(dnnl_pooling_v2_backward_desc_init(&bd, alg, &src_md, &dst_md,
                                                strides, kernel, dilation,
                                                pad_l, pad_r),
             "pooling_v2_backward_desc_init");
    DNNL_TRY(
        dnnl_primitive_desc_create(&bwd_pd_, &bd, nullptr, g_engine, fwd_pd_),
        "primitive_desc_create (backward)");
    DNNL_TRY(dnnl_primitive_create(&bwd_, bwd_pd_), "primitive_create (bwd)");
    dnnl_memory_t dsrc_mem, ddst_mem;
    if (!make_mem(&src_md, io.dx, &dsrc_mem, err) ||
        !make_mem(&dst_md, const_cast<float *>(io.dy), &ddst_mem, err))
      return false;
    bwd_args_ = {{DNNL_ARG_DIFF_DST, ddst_mem}, {DNNL_ARG_DIFF_SRC, dsrc_mem}};
    if (has_ws)
      bwd_args_.push_back({DNNL_ARG_WORKSPACE, ws_mem});
    return query_impl(bwd_pd_, err);
  }

  bool run(std::string *err) override {
    dnnl_primitive_t p = bwd_ ? bwd_ : fwd_;
    std::vector<dnnl_exec_arg_t> &a = bwd_ ? bwd_args_ : fwd_args_;
    DNNL_TRY(dnnl_primitive_execute(p, g_stream, (int)a.size(), a.data()),
             "execute");
    DNNL_TRY(dnnl_stream_wait(g_stream), "stream_wait");
    return true;
  }

  std::string impl() const override { return impl_; }

private:
  bool make_mem(const dnnl_memory_desc_t *md, void *handle, dnnl_memory_t *m,
                std::string *err) {
    DNNL_TRY(dnnl_memory_create(m, md, g_engine, handle), "memory_create");
    mems_.push_back(*m);
    return true;
  }
  bool query_impl(const_dnnl_primitive_desc_t pd, std::string *err) {
    const char *name = nullptr;
    DNNL_TRY(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                       static_cast<void *>(&name)),
             "query impl_info_str");
    impl_ = std::string(name ? name : "?") + ws_type_;
    return true;
  }

  dnnl_primitive_desc_t fwd_pd_ = nullptr, bwd_pd_ = nullptr;
  dnnl_primitive_t fwd_ = nullptr, bwd_ = nullptr;
  std::vector<dnnl_memory_t> mems_;
  std::vector<dnnl_exec_arg_t> fwd_args_, bwd_args_;
  Buffer workspace_, scratch_dst_;
  std::string impl_, ws_type_;
};

} // namespace

std::string onednn_init() {
  // oneDNN 2.6 in Debian runs on OpenMP (libgomp, already loaded with
  // libdnnl): one thread, so peers and simdpool compare single-threaded.
  typedef void (*set_threads_fn)(int);
  set_threads_fn set_threads = reinterpret_cast<set_threads_fn>(
      dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set_threads)
    set_threads(1);
  if (!g_engine && dnnl_engine_create(&g_engine, dnnl_cpu, 0) == dnnl_success)
    dnnl_stream_create(&g_stream, g_engine, dnnl_stream_default_flags);
  const dnnl_version_t *v = dnnl_version();
  char buf[128];
  std::snprintf(buf, sizeof buf, "oneDNN %d.%d.%d (%s)", v->major, v->minor,
                v->patch,
                set_threads ? "OpenMP, 1 thread" : "threads not limited");
  return buf;
}

bool onednn_supports(const Case &cs, const OpVariant &op,
                     simdpool_layout layout, std::string *why) {
  (void)layout;
  std::string reason;
  if (is_unpool(op.call))
    reason = "oneDNN has no unpooling";
  else if (op.method == SIMDPOOL_LP)
    reason = "oneDNN has no LP pooling";
  else if (cs.adaptive)
    reason = "oneDNN has no adaptive pooling";
  else if (op.dtype == SIMDPOOL_F16)
    // Measured: primitive_desc_create returns dnnl_unimplemented for f16
    // pooling on this AVX-512 (FP16) machine.
    reason = "oneDNN (Debian's 2.6) has no f16 pooling for CPUs";
  else if (op.dtype == SIMDPOOL_BF16 && op.method == SIMDPOOL_AVG &&
           op.call != Call::Forward)
    // Measured on incep_avg3: dx 0xbd72 where one rounding gives 0xbd70.
    reason = "oneDNN's bf16 average backward rounds more than once (2 bf16 "
             "units off the one-rounding result)";
  else if (op.method == SIMDPOOL_AVG &&
           (op.dtype == SIMDPOOL_S8 || op.dtype == SIMDPOOL_U8))
    reason = "oneDNN's s8/u8 average is the rounded mean of the stored "
             "integers, with no scales or zero points to requantize by";
  else if (op.call == Call::Forward && op.index_type != SIMDPOOL_INDEX_NONE &&
           op.index_type != SIMDPOOL_INDEX_U8)
    reason = "oneDNN keeps the argmax in its own workspace: timed as "
             "max_fwd_u8 only";
  else if (op.call == Call::BackwardX && op.method == SIMDPOOL_MAX)
    reason = "oneDNN's max backward reads the forward workspace: timed as "
             "max_bwd_u8";
  else if (op.call == Call::BackwardIdx && op.index_type != SIMDPOOL_INDEX_U8)
    reason = "oneDNN's max backward reads the forward workspace: timed as "
             "max_bwd_u8 only";
  if (!reason.empty()) {
    if (why)
      *why = reason;
    return false;
  }
  return true;
}

std::unique_ptr<PeerOp> make_onednn(const Case &cs, const OpVariant &op,
                                    simdpool_layout layout, const sp_geom &g,
                                    const PeerIO &io, std::string *err) {
  if (!g_engine || !g_stream) {
    if (err)
      *err = "oneDNN CPU engine could not be created";
    return nullptr;
  }
  std::unique_ptr<OneDnnPool> p(new OneDnnPool());
  if (!p->init(cs, op, layout, g, io, err))
    return nullptr;
  return p;
}

} // namespace spbench
