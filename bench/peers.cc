// SPDX-License-Identifier: MIT
// peers.cc — dispatch to the peer libraries compiled into this binary (see
// peer_onednn.cc, peer_xnnpack.cc, peer_pytorch.cc); without peers every query
// says "none".
#include "peers.h"

namespace spbench {

#ifdef SPBENCH_HAVE_ONEDNN
std::string onednn_init();
bool onednn_supports(const Case &cs, const OpVariant &op,
                     simdpool_layout layout, std::string *why);
std::unique_ptr<PeerOp> make_onednn(const Case &cs, const OpVariant &op,
                                    simdpool_layout layout, const sp_geom &g,
                                    const PeerIO &io, std::string *err);
#endif
#ifdef SPBENCH_HAVE_XNNPACK
std::string xnnpack_init();
bool xnnpack_supports(const Case &cs, const OpVariant &op,
                      simdpool_layout layout, std::string *why);
std::unique_ptr<PeerOp> make_xnnpack(const Case &cs, const OpVariant &op,
                                     simdpool_layout layout, const sp_geom &g,
                                     const PeerIO &io, std::string *err);
#endif
#ifdef SPBENCH_HAVE_PYTORCH
std::string pytorch_init();
bool pytorch_supports(const Case &cs, const OpVariant &op,
                      simdpool_layout layout, std::string *why);
std::unique_ptr<PeerOp> make_pytorch(const Case &cs, const OpVariant &op,
                                     simdpool_layout layout, const sp_geom &g,
                                     const PeerIO &io, std::string *err);
#endif

const char *peer_name(Peer p) {
  switch (p) {
  case Peer::OneDNN:
    return "onednn";
  case Peer::XNNPACK:
    return "xnnpack";
  case Peer::PyTorch:
    return "pytorch";
  }
  return "?";
}

std::vector<Peer> peers_built() {
  std::vector<Peer> v;
#ifdef SPBENCH_HAVE_ONEDNN
  v.push_back(Peer::OneDNN);
#endif
#ifdef SPBENCH_HAVE_XNNPACK
  v.push_back(Peer::XNNPACK);
#endif
#ifdef SPBENCH_HAVE_PYTORCH
  v.push_back(Peer::PyTorch);
#endif
  return v;
}

std::string peers_init() {
  std::string s;
#ifdef SPBENCH_HAVE_ONEDNN
  s += onednn_init();
#endif
#ifdef SPBENCH_HAVE_XNNPACK
  if (!s.empty())
    s += "; ";
  s += xnnpack_init();
#endif
#ifdef SPBENCH_HAVE_PYTORCH
  if (!s.empty())
    s += "; ";
  s += pytorch_init();
#endif
  return s.empty() ? "none (configure with -Dpeers=enabled)" : s;
}

bool peer_supports(Peer p, const Case &cs, const OpVariant &op,
                   simdpool_layout layout, std::string *why) {
  (void)cs, (void)op, (void)layout;
  if (op.slice > 1 || op.clamp) {
    // XNNPACK has both (pixel strides, output_min/max); not wired here.
    if (why)
      *why = "channel-slice and clamp variants are timed for simdpool only";
    return false;
  }
  switch (p) {
  case Peer::OneDNN:
#ifdef SPBENCH_HAVE_ONEDNN
    return onednn_supports(cs, op, layout, why);
#else
    break;
#endif
  case Peer::XNNPACK:
#ifdef SPBENCH_HAVE_XNNPACK
    return xnnpack_supports(cs, op, layout, why);
#else
    break;
#endif
  case Peer::PyTorch:
#ifdef SPBENCH_HAVE_PYTORCH
    return pytorch_supports(cs, op, layout, why);
#else
    break;
#endif
  }
  if (why)
    *why = "not built";
  return false;
}

std::unique_ptr<PeerOp> make_peer(Peer p, const Case &cs, const OpVariant &op,
                                  simdpool_layout layout, const sp_geom &g,
                                  const PeerIO &io, std::string *err) {
  (void)cs, (void)op, (void)layout, (void)g, (void)io;
  switch (p) {
  case Peer::OneDNN:
#ifdef SPBENCH_HAVE_ONEDNN
    return make_onednn(cs, op, layout, g, io, err);
#else
    break;
#endif
  case Peer::XNNPACK:
#ifdef SPBENCH_HAVE_XNNPACK
    return make_xnnpack(cs, op, layout, g, io, err);
#else
    break;
#endif
  case Peer::PyTorch:
#ifdef SPBENCH_HAVE_PYTORCH
    return make_pytorch(cs, op, layout, g, io, err);
#else
    break;
#endif
  }
  if (err)
    *err = "peer not built";
  return nullptr;
}

} // namespace spbench
