// SPDX-License-Identifier: MIT
// suite.cc — the shape list of issue #3 and the shape/byte arithmetic of
// each (case, op, layout).
#include "suite.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <set>

#include "machine.h"

namespace spbench {

OpVariant make_op(simdpool_method m, Call call, simdpool_index_type idx) {
  OpVariant op;
  op.method = m;
  op.call = call;
  op.index_type = idx;
  if (is_unpool(call)) // always a MAX plan's: the method is not named
    op.name = call == Call::Unpool ? "unpool" : "unpool_bwd";
  else
    op.name =
        std::string(method_name(m)) + (call == Call::Forward ? "_fwd" : "_bwd");
  if (idx != SIMDPOOL_INDEX_NONE) {
    op.name += "_";
    op.name += index_suffix(idx);
  }
  return op;
}

OpVariant sliced(OpVariant op, size_t slice) {
  op.slice = slice;
  op.name += "_slice" + std::to_string(slice);
  return op;
}

OpVariant clamped(OpVariant op) {
  op.clamp = true;
  op.name += "_clamp6";
  return op;
}

OpVariant typed(OpVariant op, simdpool_dtype t) {
  op.dtype = t;
  if (t != SIMDPOOL_F32)
    op.name += std::string("-") + dtype_name(t);
  return op;
}

namespace {

Case pool2d(const char *name, const char *note, simdpool_method m, size_t n,
            size_t c, size_t hw, size_t k, size_t s, size_t pad) {
  Case cs;
  cs.name = name;
  cs.note = note;
  cs.method = m;
  cs.n = n;
  cs.c = c;
  cs.h = cs.w = hw;
  cs.kh = cs.kw = k;
  cs.sh = cs.sw = s;
  cs.pad = pad;
  return cs;
}

// A 3D case: n x c x d x hw x hw, window kd x k x k, stride sd x s x s,
// pad_d before and after the depth, pad around each plane.
Case pool3d(const char *name, const char *note, simdpool_method m, size_t n,
            size_t c, size_t d, size_t hw, size_t kd, size_t k, size_t sd,
            size_t s, size_t pad_d, size_t pad) {
  Case cs = pool2d(name, note, m, n, c, hw, k, s, pad);
  cs.d = d;
  cs.kd = kd;
  cs.sd = sd;
  cs.pad_d = pad_d;
  return cs;
}

// A 1D case: n x c x w, window k, stride s, pad on both sides.
Case pool1d(const char *name, const char *note, simdpool_method m, size_t n,
            size_t c, size_t w, size_t k, size_t s, size_t pad) {
  Case cs = pool2d(name, note, m, n, c, 1, 1, 1, 0);
  cs.w = w;
  cs.kw = k;
  cs.sw = s;
  cs.pad = pad; // the width's only (Case::pad_h)
  return cs;
}

// An adaptive 2D case: n x c x hw x hw pooled to out x out.
Case adaptive2d(const char *name, const char *note, simdpool_method m, size_t n,
                size_t c, size_t hw, size_t out) {
  Case cs = pool2d(name, note, m, n, c, hw, 1, 1, 0);
  cs.adaptive = true;
  cs.oh = cs.ow = out;
  return cs;
}

// The calls frameworks make on a MAX case: forward without indices (ONNX
// runtimes), with I32 and I64 indices (PyTorch trains with I64), with U8 tap
// numbers where asked; backward from x (winners recomputed), from U8 and from
// I64 indices.
std::vector<OpVariant> max_ops(bool fwd_u8) {
  const simdpool_method MAX = SIMDPOOL_MAX;
  std::vector<OpVariant> v = {make_op(MAX, Call::Forward, SIMDPOOL_INDEX_NONE),
                              make_op(MAX, Call::Forward, SIMDPOOL_INDEX_I32),
                              make_op(MAX, Call::Forward, SIMDPOOL_INDEX_I64)};
  if (fwd_u8)
    v.push_back(make_op(MAX, Call::Forward, SIMDPOOL_INDEX_U8));
  v.push_back(make_op(MAX, Call::BackwardX, SIMDPOOL_INDEX_NONE));
  for (simdpool_index_type t : {SIMDPOOL_INDEX_U8, SIMDPOOL_INDEX_I64})
    v.push_back(make_op(MAX, Call::BackwardIdx, t));
  return v;
}

// The out-of-cache case: the batch is chosen at run time so that x alone is
// at least 4x the last-level cache, within an eighth of the memory available
// (the bench holds about eight x-sized buffers of a case at a time: x, dx,
// the reference's dx, y, dy and indices, the copy reference's source and
// destination). Whether it ended up out of cache is in its legend.
Case out_of_cache(Case cs) {
  const size_t image = cs.c * cs.h * cs.w * sizeof(float);
  const size_t llc = llc_bytes(), mem = mem_available_bytes();
  if (!llc) {
    cs.note += " (LLC size unknown: batch " + std::to_string(cs.n) + ")";
    return cs;
  }
  size_t n = (4 * llc + image - 1) / image;
  std::string why = "x >= 4x the " + mib_text(llc) + " LLC";
  if (mem && n * image > mem / 8 / 8) {
    n = std::max<size_t>(1, mem / 8 / 8 / image);
    why = "cut to fit " + mib_text(mem) + " of available memory";
  }
  cs.n = n;
  cs.note += " (" + why + ")";
  return cs;
}

// The dtype axis (#16 item 5): rows of the same cases on bf16, f16, s8 and
// u8 elements, after each case's f32 ops. bf16 and f16: every case's MAX
// forward without and with I64 indices, MAX backward from I64 indices, AVG
// forward and backward (no LP, slices, clamps, unpooling or other index
// types: the whole axis would more than double the run). s8 and u8 (forward
// only): MAX forward without and with I64 indices on four MAX cases; the
// quantized u8 average forward on three AVG cases.
void add_dtype_rows(std::vector<Case> &s) {
  const std::set<std::string> float_ops = {"max_fwd", "max_fwd_i64",
                                           "max_bwd_i64", "avg_fwd", "avg_bwd"};
  const std::set<std::string> int_max_cases = {"vgg_max2", "stem_max3",
                                               "incep_max3", "small_max2"};
  const std::set<std::string> int_avg_cases = {"vgg_avg2", "incep_avg3",
                                               "gap_avg7"};
  for (Case &cs : s) {
    std::vector<OpVariant> add;
    for (simdpool_dtype t : {SIMDPOOL_BF16, SIMDPOOL_F16})
      for (const OpVariant &op : cs.ops)
        if (float_ops.count(op.name))
          add.push_back(typed(op, t));
    if (int_max_cases.count(cs.name))
      for (simdpool_dtype t : {SIMDPOOL_U8, SIMDPOOL_S8})
        for (const OpVariant &op : cs.ops)
          if (op.name == "max_fwd" || op.name == "max_fwd_i64")
            add.push_back(typed(op, t));
    if (int_avg_cases.count(cs.name))
      for (const OpVariant &op : cs.ops)
        if (op.name == "avg_fwd")
          add.push_back(typed(op, SIMDPOOL_U8));
    cs.ops.insert(cs.ops.end(), add.begin(), add.end());
  }
}

std::vector<Case> build_suite() {
  const simdpool_index_type none = SIMDPOOL_INDEX_NONE;
  const Call fwd = Call::Forward, bwd = Call::BackwardX;
  const simdpool_method MAX = SIMDPOOL_MAX, AVG = SIMDPOOL_AVG,
                        LP = SIMDPOOL_LP;
  std::vector<Case> s;

  Case vgg =
      pool2d("vgg_max2", "VGG pool1, max 2x2/s2", MAX, 1, 64, 224, 2, 2, 0);
  vgg.ops = max_ops(true);
  // What embedding costs: a channel slice (pixel strides 2c) and the clamp.
  vgg.ops.push_back(sliced(vgg.ops[0], 2));
  vgg.ops.push_back(clamped(vgg.ops[0]));
  vgg.ops.push_back(
      sliced(make_op(MAX, Call::BackwardIdx, SIMDPOOL_INDEX_I64), 2));
  s.push_back(vgg);

  Case batch = out_of_cache(pool2d("batch_max2", "batch sized, max 2x2/s2", MAX,
                                   16, 64, 112, 2, 2, 0));
  batch.ops = max_ops(false);
  s.push_back(batch);

  Case stem = pool2d("stem_max3", "ResNet stem, max 3x3/s2/pad 1", MAX, 1, 64,
                     112, 3, 2, 1);
  stem.ops = max_ops(false);
  stem.ops.push_back(sliced(stem.ops[2], 2)); // forward with I64
  stem.ops.push_back(clamped(stem.ops[0]));
  stem.ops.push_back(
      sliced(make_op(MAX, Call::BackwardIdx, SIMDPOOL_INDEX_I64), 2));
  s.push_back(stem);

  // GoogLeNet's inception 3a pool branch: overlapping windows, stride 1.
  Case incm = pool2d("incep_max3", "GoogLeNet 3a pool branch, max 3x3/s1/pad 1",
                     MAX, 1, 192, 28, 3, 1, 1);
  incm.ops = max_ops(false);
  s.push_back(incm);

  Case small =
      pool2d("small_max2", "max 2x2/s2, fits L2", MAX, 1, 32, 56, 2, 2, 0);
  small.ops = max_ops(false);
  s.push_back(small);

  Case incep = pool2d("incep_avg3", "Inception, avg 3x3/s1/pad 1, pad excluded",
                      AVG, 1, 192, 28, 3, 1, 1);
  incep.count_include_pad = 0;
  incep.ops = {make_op(AVG, fwd, none), make_op(AVG, bwd, none),
               sliced(make_op(AVG, fwd, none), 2),
               clamped(make_op(AVG, fwd, none)),
               sliced(make_op(AVG, bwd, none), 2)};
  s.push_back(incep);

  Case vgga = pool2d("vgg_avg2", "avg 2x2/s2", AVG, 1, 64, 224, 2, 2, 0);
  vgga.ops = {make_op(AVG, fwd, none), make_op(AVG, bwd, none)};
  s.push_back(vgga);

  Case gap = pool2d("gap_avg7", "ResNet-50 head, global average 7x7", AVG, 1,
                    2048, 7, 7, 7, 0);
  gap.ops = {make_op(AVG, fwd, none)};
  s.push_back(gap);

  Case lp = pool2d("lp2_2", "LP p=2, 2x2/s2", LP, 1, 64, 112, 2, 2, 0);
  lp.p = 2.0f;
  lp.ops = {make_op(LP, fwd, none)};
  s.push_back(lp);

  // The rest of the family (#15): 3D, 1D and adaptive windows, forward and
  // backward, MAX with and without I64 indices.
  const std::vector<OpVariant> max_train = {
      make_op(MAX, fwd, none), make_op(MAX, fwd, SIMDPOOL_INDEX_I64),
      make_op(MAX, bwd, none),
      make_op(MAX, Call::BackwardIdx, SIMDPOOL_INDEX_I64)};
  const std::vector<OpVariant> avg_train = {make_op(AVG, fwd, none),
                                            make_op(AVG, bwd, none)};
  const auto add = [&s](Case cs, const std::vector<OpVariant> &ops) {
    cs.ops = ops;
    s.push_back(cs);
  };
  add(pool3d("c3d_max122", "C3D pool1, max 1x2x2/s1x2x2", MAX, 1, 64, 16, 112,
             1, 2, 1, 2, 0, 0),
      max_train);
  add(pool3d("c3d_max222", "C3D pool2, max 2x2x2/s2", MAX, 1, 128, 16, 56, 2, 2,
             2, 2, 0, 0),
      max_train);
  Case x3d = pool3d("x3d_avg333", "X3D-style avg 3x3x3/s1/pad 1, pad excluded",
                    AVG, 1, 96, 8, 28, 3, 3, 1, 1, 1, 1);
  x3d.count_include_pad = 0;
  add(x3d, avg_train);
  add(adaptive2d("vgg_adapt7", "VGG head, adaptive avg 14x14 -> 7x7", AVG, 1,
                 512, 14, 7),
      avg_train);
  add(adaptive2d("alex_adapt6", "AlexNet head, adaptive avg 13 -> 6", AVG, 1,
                 256, 13, 6),
      avg_train);
  add(adaptive2d("alex_adapt6_max", "adaptive max 13 -> 6", MAX, 1, 256, 13, 6),
      max_train);
  // PSPNet's pyramid pooling, bin 6, on the 64x64 features of a 512x512 crop
  // (output stride 8): windows of 11 or 12 rows and columns, not fixed ones;
  // large enough that two threads split it (forward: output row blocks of
  // one channels-last image).
  add(adaptive2d("psp_adapt6", "PSPNet pyramid bin 6, adaptive avg 64 -> 6",
                 AVG, 1, 2048, 64, 6),
      avg_train);
  add(adaptive2d("res_adapt1", "ResNet head, adaptive avg 7x7 -> 1", AVG, 1,
                 2048, 7, 1),
      avg_train);
  add(pool1d("audio_max1d", "1D audio, max k3/s2/pad 1", MAX, 1, 128, 16000, 3,
             2, 1),
      max_train);
  // SegNet's decoder: max unpooling of 1x64x112x112 to 224x224 from the I64
  // indices of the encoder's max 2x2/s2 (the plan over x = 1x64x224x224),
  // and its backward (a gather of dx at the indices).
  add(pool2d("seg_unpool2",
             "SegNet decoder, max unpooling 1x64x112x112 -> 224x224 from I64 "
             "indices",
             MAX, 1, 64, 224, 2, 2, 0),
      {make_op(MAX, Call::Unpool, SIMDPOOL_INDEX_I64),
       make_op(MAX, Call::UnpoolBackward, SIMDPOOL_INDEX_I64)});
  add_dtype_rows(s);
  return s;
}

} // namespace

const std::vector<Case> &suite() {
  static const std::vector<Case> s = build_suite();
  return s;
}

namespace {

// One line of a network's layer list: method, input channels and size
// (square), kernel, stride, pad, how many layers of that shape in a row.
struct LayerSpec {
  simdpool_method m;
  size_t c, hw, k, s, pad, repeat;
};

Network network(const char *name, const char *note, bool ceil,
                std::initializer_list<LayerSpec> specs) {
  Network net;
  net.name = name;
  net.note = note;
  for (const LayerSpec &l : specs) {
    for (size_t r = 0; r < l.repeat; r++) {
      const std::string lname =
          net.name + "." + std::to_string(net.layers.size() + 1);
      std::string what =
          std::string(method_name(l.m)) + " " + std::to_string(l.k) + "x" +
          std::to_string(l.k) + "/s" + std::to_string(l.s) +
          (l.pad ? "/p" + std::to_string(l.pad) : "") + (ceil ? " ceil" : "") +
          " on " + std::to_string(l.c) + "x" + std::to_string(l.hw) + "x" +
          std::to_string(l.hw);
      Case cs = pool2d("", "", l.m, 1, l.c, l.hw, l.k, l.s, l.pad);
      cs.name = lname;
      cs.note = what;
      cs.ceil_mode = ceil ? 1 : 0;
      cs.count_include_pad = 1; // PyTorch's default, as torchvision calls it
      if (l.m == SIMDPOOL_MAX)
        cs.ops = {make_op(l.m, Call::Forward, SIMDPOOL_INDEX_I64),
                  make_op(l.m, Call::BackwardIdx, SIMDPOOL_INDEX_I64)};
      else
        cs.ops = {make_op(l.m, Call::Forward, SIMDPOOL_INDEX_NONE),
                  make_op(l.m, Call::BackwardX, SIMDPOOL_INDEX_NONE)};
      net.layers.push_back(cs);
    }
  }
  return net;
}

// torchvision 0.14's pooling layers, in network order (C x H x W of the
// input; batch 1).
std::vector<Network> build_networks() {
  const simdpool_method MAX = SIMDPOOL_MAX, AVG = SIMDPOOL_AVG;
  std::vector<Network> v;
  v.push_back(network("alexnet", "AlexNet", false,
                      {{MAX, 64, 55, 3, 2, 0, 1},
                       {MAX, 192, 27, 3, 2, 0, 1},
                       {MAX, 256, 13, 3, 2, 0, 1}}));
  v.push_back(network("vgg11", "VGG-11", false,
                      {{MAX, 64, 224, 2, 2, 0, 1},
                       {MAX, 128, 112, 2, 2, 0, 1},
                       {MAX, 256, 56, 2, 2, 0, 1},
                       {MAX, 512, 28, 2, 2, 0, 1},
                       {MAX, 512, 14, 2, 2, 0, 1}}));
  v.push_back(network("resnet", "ResNet-18/50 stem", false,
                      {{MAX, 64, 112, 3, 2, 1, 1}}));
  v.push_back(network("googlenet", "GoogLeNet (ceil mode)", true,
                      {{MAX, 64, 112, 3, 2, 0, 1},
                       {MAX, 192, 56, 3, 2, 0, 1},
                       {MAX, 192, 28, 3, 1, 1, 1},
                       {MAX, 256, 28, 3, 1, 1, 1},
                       {MAX, 480, 28, 3, 2, 0, 1},
                       {MAX, 480, 14, 3, 1, 1, 1},
                       {MAX, 512, 14, 3, 1, 1, 3},
                       {MAX, 528, 14, 3, 1, 1, 1},
                       {MAX, 832, 14, 2, 2, 0, 1},
                       {MAX, 832, 7, 3, 1, 1, 2}}));
  v.push_back(network("inception_v3", "Inception-v3", false,
                      {{MAX, 64, 147, 3, 2, 0, 1},
                       {MAX, 192, 71, 3, 2, 0, 1},
                       {AVG, 192, 35, 3, 1, 1, 1},
                       {AVG, 256, 35, 3, 1, 1, 1},
                       {AVG, 288, 35, 3, 1, 1, 1},
                       {MAX, 288, 35, 3, 2, 0, 1},
                       {AVG, 768, 17, 3, 1, 1, 4},
                       {MAX, 768, 17, 3, 2, 0, 1},
                       {AVG, 1280, 8, 3, 1, 1, 1},
                       {AVG, 2048, 8, 3, 1, 1, 1}}));
  v.push_back(network("densenet121", "DenseNet-121", false,
                      {{MAX, 64, 112, 3, 2, 1, 1},
                       {AVG, 128, 56, 2, 2, 0, 1},
                       {AVG, 256, 28, 2, 2, 0, 1},
                       {AVG, 512, 14, 2, 2, 0, 1}}));
  v.push_back(network("squeezenet1_0", "SqueezeNet 1.0 (ceil mode)", true,
                      {{MAX, 96, 109, 3, 2, 0, 1},
                       {MAX, 256, 54, 3, 2, 0, 1},
                       {MAX, 512, 27, 3, 2, 0, 1}}));
  return v;
}

} // namespace

const std::vector<Network> &networks() {
  static const std::vector<Network> v = build_networks();
  return v;
}

size_t network_bytes(const Network &net) {
  size_t total = 0;
  for (const Case &cs : net.layers)
    for (const OpVariant &op : cs.ops) {
      sp_geom g;
      if (resolve(cs, op, SIMDPOOL_NCHW, &g, nullptr))
        total += pass_bytes(g, op);
    }
  return total;
}

bool synthetic_case(simdpool_method m, sp_shape shape, Case *out) {
  Case cs;
  switch (shape) {
  case SP_SHAPE_2X2S2:
    cs = pool2d("syn_2x2s2", "generated: 2x2/s2", m, 1, 64, 112, 2, 2, 0);
    break;
  case SP_SHAPE_3X3S2P1:
    cs = pool2d("syn_3x3s2p1", "generated: 3x3/s2/pad 1", m, 1, 64, 112, 3, 2,
                1);
    break;
  case SP_SHAPE_3X3S1:
    cs = pool2d("syn_3x3s1", "generated: 3x3/s1/pad 1", m, 1, 64, 56, 3, 1, 1);
    break;
  case SP_SHAPE_GLOBAL:
    cs = pool2d("syn_global", "generated: global 7x7", m, 1, 512, 7, 7, 7, 0);
    break;
  case SP_SHAPE_GENERAL:
    cs = pool2d("syn_general", "generated: 3x3/s2", m, 1, 64, 56, 3, 2, 0);
    break;
  case SP_SHAPE_ND:
    cs = pool3d("syn_nd", "generated: 3x3x3/s2", m, 1, 32, 8, 28, 3, 3, 2, 2, 0,
                0);
    break;
  case SP_SHAPE_2X2X2S2:
    cs = pool3d("syn_2x2x2s2", "generated: 2x2x2/s2", m, 1, 32, 8, 28, 2, 2, 2,
                2, 0, 0);
    break;
  case SP_SHAPE_3X3X3S1:
    cs = pool3d("syn_3x3x3s1", "generated: 3x3x3/s1/pad 1", m, 1, 32, 8, 28, 3,
                3, 1, 1, 1, 1);
    break;
  case SP_SHAPE_3X3S2:
    cs = pool2d("syn_3x3s2", "generated: 3x3/s2", m, 1, 64, 56, 3, 2, 0);
    break;
  case SP_SHAPE_1X3S2P1:
    cs = pool1d("syn_1x3s2p1", "generated: 1D k3/s2/pad 1", m, 1, 64, 4000, 3,
                2, 1);
    break;
  default:
    return false;
  }
  cs.name += "_";
  cs.name += method_name(m);
  cs.synthetic = true;
  *out = cs;
  return true;
}

simdpool_desc make_desc(const Case &cs, const OpVariant &op,
                        simdpool_layout layout, simdpool_isa isa) {
  simdpool_desc d;
  if (cs.adaptive) {
    simdpool_desc_init_adaptive(&d, op.method, layout, cs.n, cs.c, cs.d, cs.h,
                                cs.w, cs.od, cs.oh, cs.ow);
  } else {
    simdpool_desc_init_3d(&d, op.method, layout, cs.n, cs.c, cs.d, cs.h, cs.w,
                          cs.kd, cs.kh, cs.kw);
    d.stride_d = cs.sd;
    d.stride_h = cs.sh;
    d.stride_w = cs.sw;
    d.pad_front = d.pad_back = cs.pad_d;
    d.pad_left = d.pad_right = cs.pad;
    d.pad_top = d.pad_bottom = cs.pad_h();
  }
  d.ceil_mode = cs.ceil_mode;
  d.count_include_pad = cs.count_include_pad;
  d.p = cs.p;
  d.index_type = op.index_type;
  d.isa = isa;
  if (op.slice > 1 && layout == SIMDPOOL_NHWC)
    d.x_pixel_stride = d.y_pixel_stride = op.slice * cs.c;
  if (op.clamp) {
    d.clamp = 1;
    d.clamp_min = 0.0f;
    d.clamp_max = 6.0f;
  }
  d.dtype = op.dtype;
  if (op.method == SIMDPOOL_AVG &&
      (op.dtype == SIMDPOOL_S8 || op.dtype == SIMDPOOL_U8))
    d.quant = bench_quant(op.dtype);
  return d;
}

simdpool_quant bench_quant(simdpool_dtype t) {
  // Not the identity (quant_text says which), so that the kernels' scale,
  // zero points, rounding and clamp to the type's range all do work.
  const int32_t sign = t == SIMDPOOL_S8 ? -1 : 1;
  simdpool_quant q;
  q.x_scale = 0.05f;
  q.y_scale = 0.04f;
  q.x_zero_point = 3 * sign;
  q.y_zero_point = 5 * sign;
  q.y_min = INT32_MIN; // the type's whole range
  q.y_max = INT32_MAX;
  return q;
}

std::string quant_text(simdpool_dtype t) {
  const int sign = t == SIMDPOOL_S8 ? -1 : 1;
  return std::string("x_scale 0.05, y_scale 0.04, zero points x ") +
         std::to_string(3 * sign) + ", y " + std::to_string(5 * sign) + " (" +
         dtype_name(t) + "), the type's whole output range";
}

bool resolve(const Case &cs, const OpVariant &op, simdpool_layout layout,
             sp_geom *g, std::string *err, bool view) {
  if (op.slice > 1 && layout == SIMDPOOL_NCHW) {
    if (err)
      *err = "channel slices are NHWC only";
    return false;
  }
  const simdpool_desc d = make_desc(cs, op, layout, SIMDPOOL_ISA_SCALAR);
  if (sp_resolve_geom(&d, g) != SIMDPOOL_OK) {
    if (err)
      *err = simdpool_last_error();
    return false;
  }
  if (view)
    sp_simplify_geom(g); // what plan creation does
  return true;
}

size_t pass_bytes(const sp_geom &g, const OpVariant &op) {
  const size_t f = sp_dtype_size(g.dtype);
  const size_t in = g.n * g.c * sp_in_plane(&g),
               out = g.n * g.c * sp_out_plane(&g);
  const size_t idx = out * sp_index_size(op.index_type);
  switch (op.call) {
  case Call::Forward: // read x, write y (+ indices)
    return in * f + out * f + idx;
  case Call::BackwardX: // read dy (+ x for MAX and LP), write dx
    return out * f + (op.method == SIMDPOOL_AVG ? 0 : in * f) + in * f;
  case Call::BackwardIdx: // read dy and indices, write dx
    return out * f + idx + in * f;
  case Call::Unpool: // read y and indices, write x
    return out * f + idx + in * f;
  case Call::UnpoolBackward: // read dx and indices, write dy
    return in * f + idx + out * f;
  }
  return 0;
}

simdpool_op public_op(Call call) {
  switch (call) {
  case Call::Forward:
    return SIMDPOOL_OP_FORWARD;
  case Call::BackwardX:
    return SIMDPOOL_OP_BACKWARD;
  case Call::BackwardIdx:
    return SIMDPOOL_OP_BACKWARD_INDICES;
  case Call::Unpool:
    return SIMDPOOL_OP_UNPOOL;
  case Call::UnpoolBackward:
    return SIMDPOOL_OP_UNPOOL_BACKWARD;
  }
  return SIMDPOOL_OP_FORWARD;
}

// The registry's ops are the public ones (plan.c asserts it too).
static_assert(SP_OP_FWD == static_cast<int>(SIMDPOOL_OP_FORWARD) &&
                  SP_OP_BWD == static_cast<int>(SIMDPOOL_OP_BACKWARD) &&
                  SP_OP_BWD_IDX ==
                      static_cast<int>(SIMDPOOL_OP_BACKWARD_INDICES) &&
                  SP_OP_UNPOOL == static_cast<int>(SIMDPOOL_OP_UNPOOL) &&
                  SP_OP_UNPOOL_BWD ==
                      static_cast<int>(SIMDPOOL_OP_UNPOOL_BACKWARD) &&
                  SP_OP_COUNT == 5,
              "sp_op and simdpool_op differ");

sp_op kernel_op(Call call) {
  return static_cast<sp_op>(public_op(call));
}

namespace {

std::string window_text(simdpool_method m, size_t kh, size_t kw, size_t sh,
                        size_t sw, size_t pad) {
  std::string s = std::string(method_name(m)) + " " + std::to_string(kh) + "x" +
                  std::to_string(kw) + "/s" + std::to_string(sh);
  if (sw != sh)
    s += "x" + std::to_string(sw);
  if (pad)
    s += "/pad " + std::to_string(pad);
  return s;
}

} // namespace

std::string case_legend(const Case &cs) {
  const bool depth = cs.has_depth(), one_d = cs.is_1d();
  std::string s = std::to_string(cs.n) + "x" + std::to_string(cs.c) + "x";
  if (depth)
    s += std::to_string(cs.d) + "x";
  if (!one_d)
    s += std::to_string(cs.h) + "x";
  s += std::to_string(cs.w) + (depth   ? " (NxCxDxHxW), "
                               : one_d ? " (NxCxW), "
                                       : " (NxCxHxW), ");
  if (cs.adaptive) {
    s += std::string("adaptive ") + method_name(cs.method) + " to " +
         (depth ? std::to_string(cs.od) + "x" : "") + std::to_string(cs.oh) +
         "x" + std::to_string(cs.ow);
  } else if (one_d) {
    s += std::string(method_name(cs.method)) + " " + std::to_string(cs.kw) +
         "/s" + std::to_string(cs.sw) +
         (cs.pad ? "/pad " + std::to_string(cs.pad) : "");
  } else {
    s += window_text(cs.method, cs.kh, cs.kw, cs.sh, cs.sw, cs.pad);
    if (depth) // the depth axis: "x kd/sd[/pad_d]" after the plane's window
      s += ", depth " + std::to_string(cs.kd) + "/s" + std::to_string(cs.sd) +
           (cs.pad_d ? "/pad " + std::to_string(cs.pad_d) : "");
  }
  if (cs.ceil_mode)
    s += " ceil";
  if (cs.method == SIMDPOOL_AVG && !cs.adaptive)
    s += cs.count_include_pad ? ", pad counted" : ", pad not counted";
  if (cs.method == SIMDPOOL_LP) {
    char p[32];
    std::snprintf(p, sizeof p, ", p=%g", (double)cs.p);
    s += p;
  }
  s += "; " + cs.note;
  sp_geom g;
  const OpVariant fwd = make_op(cs.method, Call::Forward, SIMDPOOL_INDEX_NONE);
  // An unpooling case runs no forward: where its unpooling's bytes live.
  const bool unpool = !cs.ops.empty() && is_unpool(cs.ops[0].call);
  const OpVariant &first = unpool ? cs.ops[0] : fwd;
  if (resolve(cs, first, SIMDPOOL_NCHW, &g, nullptr)) {
    const size_t bytes = pass_bytes(g, first);
    s += "; x " + mib_text(g.n * g.c * sp_in_plane(&g) * sizeof(float)) +
         (unpool ? ", unpooling moves " : ", forward moves ") +
         mib_text(bytes) + ": " + cache_class(bytes);
  }
  if (!cs.ops.empty())
    s += "; ops";
  size_t slice = 1;
  std::string quant;
  for (const OpVariant &op : cs.ops) {
    s += " " + op.name;
    slice = op.slice > slice ? op.slice : slice;
    if (op.method == SIMDPOOL_AVG && sp_dtype_integer(op.dtype) &&
        quant.find(dtype_name(op.dtype)) == std::string::npos)
      quant += std::string(quant.empty() ? "" : "; ") + "the " +
               dtype_name(op.dtype) +
               " average is quantized: " + quant_text(op.dtype);
  }
  if (!quant.empty())
    s += "; " + quant;
  // A channel slice moves the bytes of the dense op, but its x and y span
  // `slice` times as many: say where that span lives, since the copy
  // reference (of the dense bytes) does not.
  OpVariant sf = fwd;
  sf.slice = slice;
  if (slice > 1 && resolve(cs, sf, SIMDPOOL_NHWC, &g, nullptr)) {
    const size_t span = (sp_x_elems(&g) + sp_y_elems(&g)) * sizeof(float);
    s += "; the _slice" + std::to_string(slice) + " forward's x and y span " +
         mib_text(span) + ": " + cache_class(span);
  }
  return s;
}

std::string network_legend(const Network &net) {
  std::string s;
  for (size_t i = 0; i < net.layers.size();) {
    size_t j = i + 1;
    while (j < net.layers.size() && net.layers[j].note == net.layers[i].note)
      j++;
    s += (s.empty() ? "" : "; ") + net.layers[i].note +
         (j - i > 1 ? " (x" + std::to_string(j - i) + ")" : "");
    i = j;
  }
  return net.note + ": " + s;
}

const char *index_suffix(simdpool_index_type t) {
  switch (t) {
  case SIMDPOOL_INDEX_I32:
    return "i32";
  case SIMDPOOL_INDEX_I64:
    return "i64";
  case SIMDPOOL_INDEX_U8:
    return "u8";
  default:
    return "";
  }
}

const char *dtype_name(simdpool_dtype t) {
  switch (t) {
  case SIMDPOOL_F32:
    return "f32";
  case SIMDPOOL_BF16:
    return "bf16";
  case SIMDPOOL_F16:
    return "f16";
  case SIMDPOOL_S8:
    return "s8";
  case SIMDPOOL_U8:
    return "u8";
  }
  return "?";
}

const char *layout_name(simdpool_layout l) {
  return l == SIMDPOOL_NCHW ? "nchw" : "nhwc";
}

const char *method_name(simdpool_method m) {
  switch (m) {
  case SIMDPOOL_MAX:
    return "max";
  case SIMDPOOL_AVG:
    return "avg";
  case SIMDPOOL_LP:
    return "lp";
  }
  return "?";
}

const char *op_kind_name(sp_op op) {
  switch (op) {
  case SP_OP_FWD:
    return "fwd";
  case SP_OP_BWD:
    return "bwd";
  case SP_OP_BWD_IDX:
    return "bwd_idx";
  case SP_OP_UNPOOL:
    return "unpool";
  case SP_OP_UNPOOL_BWD:
    return "unpool_bwd";
  default:
    return "?";
  }
}

const char *shape_name(sp_shape s) {
  switch (s) {
  case SP_SHAPE_GENERAL:
    return "general";
  case SP_SHAPE_2X2S2:
    return "2x2s2";
  case SP_SHAPE_3X3S2P1:
    return "3x3s2p1";
  case SP_SHAPE_3X3S1:
    return "3x3s1";
  case SP_SHAPE_GLOBAL:
    return "global";
  case SP_SHAPE_ND:
    return "nd";
  case SP_SHAPE_2X2X2S2:
    return "2x2x2s2";
  case SP_SHAPE_3X3X3S1:
    return "3x3x3s1";
  case SP_SHAPE_1X3S2P1:
    return "1x3s2p1";
  case SP_SHAPE_3X3S2:
    return "3x3s2";
  default:
    return "?";
  }
}

} // namespace spbench
