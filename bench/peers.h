// SPDX-License-Identifier: MIT
// peers.h — other pooling libraries timed on the same cases in the same run
// (built with -Dpeers=enabled): oneDNN (NCHW and NHWC), XNNPACK (NHWC) and
// PyTorch's ATen (NCHW and channels-last).
#ifndef SPBENCH_PEERS_H
#define SPBENCH_PEERS_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "suite.h"

namespace spbench {

enum class Peer { OneDNN, XNNPACK, PyTorch };

const char *peer_name(Peer p); // "onednn", "xnnpack", "pytorch"

// The peers compiled into this binary.
std::vector<Peer> peers_built();

// One-time set-up before any peer runs: single-threaded execution (oneDNN's
// OpenMP runtime limited to one thread, XNNPACK without a thread pool, ATen's
// at::set_num_threads(1)) and library initialisation. Returns a line describing
// the peers' versions.
std::string peers_init();

// Does peer p implement (case, op, layout) with simdpool's semantics? When it
// does not, *why says what differs (shown by --list-kernels).
bool peer_supports(Peer p, const Case &cs, const OpVariant &op,
                   simdpool_layout layout, std::string *why);

// The tensors a peer reads and writes: the bench's buffers, in the layout of
// the case. Outputs (y, dx) are where simdpool's own results are compared.
// indices: the case's I64 index tensor (MAX ops with I64 indices): a forward
// writes it, a backward or unpooling reads it; nullptr otherwise. Unpooling
// follows the kernels' sp_io: it reads y from dy (output-shaped) and writes x
// into dx (input-shaped); its backward reads dx from x and writes dy into y.
struct PeerIO {
  const float *x = nullptr;
  const float *dy = nullptr;
  float *y = nullptr;
  float *dx = nullptr;
  void *indices = nullptr;
};

// A peer's operator (primitive) for one (case, op, layout), created once; run()
// executes one pass. Operators that need state from a forward pass (oneDNN's
// max-pooling workspace) compute it at creation.
class PeerOp {
public:
  virtual ~PeerOp() = default;
  // One pass; false with *err on failure.
  virtual bool run(std::string *err) = 0;
  // What the peer ran (implementation name), for the benchmark's label.
  virtual std::string impl() const = 0;
  // Argmax outputs as tap numbers (kh_i * kernel_w + kw_i), when the peer
  // writes them in that convention (XNNPACK's argmax); else nullptr.
  virtual const uint32_t *tap_indices() const { return nullptr; }
  // Must every output equal simdpool's bits? (Else sums may differ by
  // rounding: the peer sums in another order or multiplies by a reciprocal.)
  virtual bool bit_exact() const { return false; }
  // Does the pass write PeerIO::indices (then compared with simdpool's)?
  virtual bool writes_indices() const { return false; }
};

std::unique_ptr<PeerOp> make_peer(Peer p, const Case &cs, const OpVariant &op,
                                  simdpool_layout layout, const sp_geom &g,
                                  const PeerIO &io, std::string *err);

} // namespace spbench

#endif
