// SPDX-License-Identifier: MIT
// cpp_example.cpp — simdpool from C++17: plans and pools owned by RAII handles,
// failed statuses turned into exceptions, buffers as std::vectors sized by the
// plan; global average pooling (a classifier head) checked against the
// documented rule.
#include <simdpool.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Throws with simdpool's own explanation when a call fails.
void check(simdpool_status st, const char *what) {
  if (st != SIMDPOOL_OK)
    throw std::runtime_error(std::string(what) + ": " +
                             simdpool_status_string(st) + ": " +
                             simdpool_last_error());
}

// A plan that is destroyed with its owner.
class Plan {
public:
  explicit Plan(const simdpool_desc &d) {
    simdpool_plan *raw = nullptr;
    check(simdpool_plan_create(&d, &raw), "plan");
    plan_.reset(raw);
  }
  const simdpool_plan *get() const { return plan_.get(); }
  // Elements of float tensor `which` (x, y, dy, dx).
  std::size_t floats(simdpool_tensor which) const {
    return simdpool_plan_tensor_bytes(plan_.get(), which) / sizeof(float);
  }
  std::vector<float> forward(const std::vector<float> &x) const {
    std::vector<float> y(floats(SIMDPOOL_TENSOR_Y));
    if (x.size() != floats(SIMDPOOL_TENSOR_X))
      throw std::invalid_argument("x has the wrong size");
    check(simdpool_forward(plan_.get(), x.data(), y.data(), nullptr),
          "forward");
    return y;
  }

private:
  struct Destroy {
    void operator()(simdpool_plan *p) const noexcept {
      simdpool_plan_destroy(p);
    }
  };
  std::unique_ptr<simdpool_plan, Destroy> plan_;
};

} // namespace

int main() {
  try {
    // NHWC 2x7x7x32 -> 2x1x1x32: the window is the whole plane.
    constexpr std::size_t n = 2, c = 32, h = 7, w = 7;
    simdpool_desc d;
    simdpool_desc_init(&d, SIMDPOOL_AVG, SIMDPOOL_NHWC, n, c, h, w, h, w);
    const Plan plan(d);
    std::vector<float> x(plan.floats(SIMDPOOL_TENSOR_X));
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>((i * 37) % 101) / 7.0f;
    const std::vector<float> y = plan.forward(x);

    // The rule: acc = 0.0f; acc += x over the window in row-major order;
    // y = acc / divisor, all in float. The same loop gives the same bits.
    std::size_t mismatches = 0;
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t ch = 0; ch < c; ++ch) {
        float acc = 0.0f;
        for (std::size_t i = 0; i < h * w; ++i)
          acc += x[(b * h * w + i) * c + ch];
        const float want = acc / static_cast<float>(h * w);
        mismatches += std::memcmp(&want, &y[b * c + ch], sizeof want) != 0;
      }
    std::printf("global average NHWC %zux%zux%zux%zu on %s (%s): %zu of %zu "
                "outputs differ from the rule\n",
                n, h, w, c, simdpool_isa_name(simdpool_plan_isa(plan.get())),
                simdpool_plan_kernel_name(plan.get(), SIMDPOOL_OP_FORWARD),
                mismatches, y.size());

    // A failure surfaces as an exception that says why.
    simdpool_desc bad = d;
    bad.kernel_w = 0;
    try {
      const Plan never(bad);
      std::printf("cpp_example: a zero kernel was accepted\n");
      return 1;
    } catch (const std::runtime_error &e) {
      std::printf("kernel_w = 0: %s\n", e.what());
    }
    std::printf(mismatches ? "cpp_example: FAILED\n" : "cpp_example: ok\n");
    return mismatches != 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "cpp_example: %s\n", e.what());
    return 1;
  }
}
