// SPDX-License-Identifier: MIT
// suite.h — the bench's shape list and op variants: how each (case, op,
// layout) becomes a simdpool_desc, a resolved geometry and a byte count.
#ifndef SPBENCH_SUITE_H
#define SPBENCH_SUITE_H

#include <cstddef>
#include <string>
#include <vector>

extern "C" {
#include "internal.h"
}

namespace spbench {

// Which public call a benchmark times.
enum class Call {
  Forward,     // simdpool_forward (with indices when the op has an index type)
  BackwardX,   // simdpool_backward without indices (MAX recomputes from x)
  BackwardIdx, // simdpool_backward from the indices of a forward pass
  Unpool,      // simdpool_unpool: reads y and the indices, writes x
  UnpoolBackward, // simdpool_unpool_backward: reads dx and the indices,
                  // writes dy
};

// Max unpooling or its backward (MAX plans with an index type).
inline bool is_unpool(Call c) {
  return c == Call::Unpool || c == Call::UnpoolBackward;
}

// One timed operation on a case: e.g. "max_fwd_u8" = MAX forward writing U8
// indices, "max_bwd" = MAX backward recomputing winners from x, "unpool_i64"
// = max unpooling from I64 indices, "unpool_bwd_i64" its backward.
struct OpVariant {
  std::string name;
  simdpool_method method = SIMDPOOL_MAX;
  Call call = Call::Forward;
  simdpool_index_type index_type = SIMDPOOL_INDEX_NONE;
  // Embedding variants (#17): NHWC only, x and y a channel slice of a tensor
  // slice times as wide (pixel strides slice * c; 1: dense), and a forward
  // output clamp to [0, 6] (ReLU6). Their bytes are the dense ones.
  size_t slice = 1;
  bool clamp = false;
  // The element type of x, y, dy and dx (indices keep their own type): F32,
  // or a row of the dtype axis (#16), named with a "-bf16", "-f16", "-s8" or
  // "-u8" suffix. S8/U8 AVG is the quantized average (make_desc's quant).
  simdpool_dtype dtype = SIMDPOOL_F32;
};

// The op with x and y channel slices of a tensor `slice` times as wide
// ("_slice2"), or with the forward clamp ("_clamp6").
OpVariant sliced(OpVariant op, size_t slice);
OpVariant clamped(OpVariant op);
// The op on elements of dtype t ("max_fwd_i64-bf16"). The suffix is set off
// by '-', not '_': "max_fwd_u8" already names f32 MAX forward with U8
// indices, so "max_fwd_u8" could not also be U8 MAX forward without indices.
OpVariant typed(OpVariant op, simdpool_dtype t);

// One shape of the suite (f32; an op may name another dtype). Global
// pooling sets kernel = h x w. A 3D case has a depth axis (d, kd, sd and
// pad_d on both sides); 1D sets h = 1. An adaptive case pools to od x oh x
// ow (kernel, stride and pad unused).
struct Case {
  std::string name;
  std::string note; // shown in the summary: what the case stands for
  simdpool_method method = SIMDPOOL_MAX;
  size_t n = 1, c = 1, d = 1, h = 1, w = 1;
  size_t kd = 1, kh = 1, kw = 1, sd = 1, sh = 1, sw = 1, pad_d = 0, pad = 0;
  bool adaptive = false;
  size_t od = 1, oh = 1, ow = 1;

  bool has_depth() const { return d > 1 || kd > 1 || od > 1; }
  bool is_1d() const { return !has_depth() && h == 1 && kh == 1 && oh == 1; }
  size_t pad_h() const { return is_1d() ? 0 : pad; } // 1D pads its width only
  int ceil_mode = 0;
  int count_include_pad = 1;
  float p = 2.0f;
  std::vector<OpVariant> ops; // timed in both layouts
  bool synthetic = false;     // generated for a kernel no suite case picks
};

// The pooling layers of a real network (torchvision 0.14, batch 1), timed as
// one training step: every layer's forward in network order, then every
// layer's backward in reverse order. A MAX layer's ops are {max_fwd_i64,
// max_bwd_i64} (PyTorch's training calls: the backward reads the indices its
// forward wrote), an AVG layer's {avg_fwd, avg_bwd}. Each layer has its own
// tensors, as in the network.
struct Network {
  std::string name; // "alexnet"
  std::string note; // "AlexNet"
  std::vector<Case> layers;
};

// The networks group, in registration order.
const std::vector<Network> &networks();

// The bytes one training step of net must move (pass_bytes of every op of
// every layer).
size_t network_bytes(const Network &net);

// The legend of a case, as every output shows it: input shape, window, what
// the case stands for, its ops and where its forward pass's bytes live, e.g.
// "1x64x224x224 (NxCxHxW), max 2x2/s2; VGG pool1; x 12.2 MiB, forward moves
// 15.3 MiB: in cache; ops max_fwd max_fwd_i32 ...".
std::string case_legend(const Case &cs);
// A network's layers in order, repeats folded: "max 3x3/s2 on 64x55x55; ...".
std::string network_legend(const Network &net);

// Builds an op variant and its name: <method>_<fwd|bwd>[_<index type>], or
// for unpooling (m is MAX: the plan's method) unpool[_bwd]_<index type>.
OpVariant make_op(simdpool_method m, Call call, simdpool_index_type idx);

// The shape list of issue #3, in registration order.
const std::vector<Case> &suite();

// A case generated for a kernel class no suite case reaches (method m,
// shape class s); false when the bench knows no geometry for s.
bool synthetic_case(simdpool_method m, sp_shape s, Case *out);

// The descriptor of (case, op, layout), forced to isa.
simdpool_desc make_desc(const Case &cs, const OpVariant &op,
                        simdpool_layout layout, simdpool_isa isa);

// Resolved geometry of (case, op, layout); false (with the library's error
// text in *err) when the library rejects it. view: in the view plan creation
// gives it (sp_simplify_geom: e.g. a 1x2x2 3D window runs as 2D), what the
// kernels see; else as the caller described it (what peers are given).
bool resolve(const Case &cs, const OpVariant &op, simdpool_layout layout,
             sp_geom *g, std::string *err, bool view = true);

// The bytes one pass must move: every tensor read once plus every tensor
// written once (x, y, dy, dx, indices as the call needs them), x, y, dy and
// dx in elements of g's dtype (the op's).
size_t pass_bytes(const sp_geom &g, const OpVariant &op);

// The op a call runs, as the public API and the registry name it.
simdpool_op public_op(Call call);
sp_op kernel_op(Call call);

const char *index_suffix(simdpool_index_type t); // "", "i32", "i64", "u8"
const char *dtype_name(simdpool_dtype t);        // "f32", "bf16", ... "u8"
const char *layout_name(simdpool_layout l);      // "nchw", "nhwc"
const char *method_name(simdpool_method m);      // "max", "avg", "lp"
const char *op_kind_name(sp_op op);              // "fwd", "bwd", "bwd_idx", ...
const char *shape_name(sp_shape s);              // "general", "2x2s2", ...

// The quantization S8/U8 AVG rows of dtype t run with (make_desc, and the
// peers' quantized averages).
simdpool_quant bench_quant(simdpool_dtype t);

// The same for the legends:
// "x_scale 0.05, y_scale 0.04, zero points x 3, y 5 (u8), the type's whole
// output range".
std::string quant_text(simdpool_dtype t);

} // namespace spbench

#endif
