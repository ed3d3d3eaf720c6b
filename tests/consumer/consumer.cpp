// SPDX-License-Identifier: MIT
// consumer.cpp — a C++17 program that uses simdpool as an outside project
// would (public header and library only): the header must compile as C++
// under -Wall -Wextra -Werror -pedantic, plans live in RAII handles, and the
// parallel entry points run over the built-in pool and over a parallel-for
// of std::threads. Hand-computed answers; exit status 0 on success.
#include <simdpool.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char *what, int line) {
  if (!ok) {
    std::fprintf(stderr, "consumer.cpp:%d: check failed: %s\n", line, what);
    ++failures;
  }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

struct PlanDeleter {
  void operator()(simdpool_plan *p) const noexcept { simdpool_plan_destroy(p); }
};
using Plan = std::unique_ptr<simdpool_plan, PlanDeleter>;

struct PoolDeleter {
  void operator()(simdpool_threadpool *p) const noexcept {
    simdpool_threadpool_destroy(p);
  }
};
using Pool = std::unique_ptr<simdpool_threadpool, PoolDeleter>;

Plan make_plan(const simdpool_desc &d) {
  simdpool_plan *raw = nullptr;
  const simdpool_status st = simdpool_plan_create(&d, &raw);
  if (st != SIMDPOOL_OK) {
    std::fprintf(stderr, "plan: %s: %s\n", simdpool_status_string(st),
                 simdpool_last_error());
    ++failures;
  }
  return Plan(raw);
}

template <typename T, std::size_t N>
bool same_bits(const std::array<T, N> &a, const std::array<T, N> &b) {
  return std::memcmp(a.data(), b.data(), sizeof(T) * N) == 0;
}

// The tutorial's 4x4 map as channel 0 and 10 - x as channel 1, NHWC.
std::array<float, 32> make_input() {
  const std::array<float, 16> map = {1, 3, 2, 4, 5, 6, 1, 2,
                                     3, 2, 8, 1, 0, 1, 4, 5};
  std::array<float, 32> x{};
  for (std::size_t i = 0; i < map.size(); ++i) {
    x[2 * i] = map[i];
    x[2 * i + 1] = 10.0f - map[i];
  }
  return x;
}

void max_forward_backward(const std::array<float, 32> &x) {
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NHWC, 1, 2, 4, 4, 2, 2);
  d.index_type = SIMDPOOL_INDEX_I64;
  const Plan plan = make_plan(d);
  if (!plan)
    return;
  // Window maxima: channel 0 6 4 / 3 8, channel 1 9 9 / 10 9; indices
  // ih * 4 + iw of the winner.
  const std::array<float, 8> want_y = {6, 9, 4, 9, 3, 10, 8, 9};
  const std::array<std::int64_t, 8> want_idx = {5, 0, 3, 6, 8, 12, 10, 11};
  std::array<float, 8> y{};
  std::array<std::int64_t, 8> idx{};
  CHECK(simdpool_forward(plan.get(), x.data(), y.data(), idx.data()) ==
        SIMDPOOL_OK);
  CHECK(same_bits(y, want_y));
  CHECK(same_bits(idx, want_idx));

  // Backward recomputes the winners from x here (no indices passed).
  const std::array<float, 8> dy = {1, 10, 2, 20, 3, 30, 4, 40};
  std::array<float, 32> dx{}, want_dx{};
  for (std::size_t i = 0; i < dy.size(); ++i)
    want_dx[static_cast<std::size_t>(want_idx[i]) * 2 + i % 2] = dy[i];
  CHECK(simdpool_backward(plan.get(), dy.data(), nullptr, x.data(),
                          dx.data()) == SIMDPOOL_OK);
  CHECK(same_bits(dx, want_dx));
  std::printf("max 2x2/s2 (%s): y = %g %g %g %g | %g %g %g %g\n",
              simdpool_isa_name(simdpool_plan_isa(plan.get())), y[0], y[2],
              y[4], y[6], y[1], y[3], y[5], y[7]);
}

void lp_forward(const std::array<float, 32> &x) {
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_LP, SIMDPOOL_NHWC, 1, 2, 4, 4, 2, 2);
  d.p = 1.0f; // p = 1: the plain sum of |x| per window
  const Plan plan = make_plan(d);
  if (!plan)
    return;
  const std::array<float, 8> want_y = {15, 25, 9, 31, 6, 34, 18, 22};
  std::array<float, 8> y{};
  CHECK(simdpool_forward(plan.get(), x.data(), y.data(), nullptr) ==
        SIMDPOOL_OK);
  CHECK(same_bits(y, want_y));
}

// A parallel-for over std::threads: `pool` points at the thread count.
void std_thread_parallel_for(void *pool, simdpool_task_fn task, void *ctx,
                             std::size_t range) {
  const unsigned threads = *static_cast<const unsigned *>(pool);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < range;)
      task(ctx, i);
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(work);
  work();
  for (std::thread &w : workers)
    w.join();
}

void parallel_matches_serial() {
  constexpr std::size_t n = 1, c = 3, h = 64, w = 61;
  simdpool_desc d;
  simdpool_desc_init(&d, SIMDPOOL_MAX, SIMDPOOL_NHWC, n, c, h, w, 3, 3);
  d.stride_h = d.stride_w = 2;
  d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 1;
  d.index_type = SIMDPOOL_INDEX_U8;
  const Plan plan = make_plan(d);
  simdpool_threadpool *raw = nullptr;
  CHECK(simdpool_threadpool_create(2, &raw) == SIMDPOOL_OK);
  const Pool pool(raw);
  if (!plan || !pool)
    return;
  std::size_t oh = 0, ow = 0;
  simdpool_plan_output_shape(plan.get(), &oh, &ow);
  std::vector<float> x(n * c * h * w);
  std::uint32_t s = 777;
  for (float &v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.0f;
  }
  const std::size_t out = n * c * oh * ow;
  std::vector<float> y1(out), y2(out), y3(out);
  std::vector<std::uint8_t> i1(out), i2(out), i3(out);
  unsigned four = 4;
  CHECK(simdpool_forward(plan.get(), x.data(), y1.data(), i1.data()) ==
        SIMDPOOL_OK);
  CHECK(simdpool_forward_parallel(plan.get(), x.data(), y2.data(), i2.data(),
                                  simdpool_threadpool_parallel_for,
                                  pool.get()) == SIMDPOOL_OK);
  CHECK(simdpool_forward_parallel(plan.get(), x.data(), y3.data(), i3.data(),
                                  std_thread_parallel_for,
                                  &four) == SIMDPOOL_OK);
  CHECK(y1 == y2 && y1 == y3 && i1 == i2 && i1 == i3);
  std::printf("max 3x3/s2/p1: %zu outputs, built-in pool (%zu threads) and "
              "std::thread (%u) == serial\n",
              out, simdpool_threadpool_threads(pool.get()), four);
}

} // namespace

int main() {
  std::printf("simdpool %s (header %s)\n", simdpool_version(),
              SIMDPOOL_VERSION_STRING);
  CHECK(std::strcmp(simdpool_version(), SIMDPOOL_VERSION_STRING) == 0);
  const std::array<float, 32> x = make_input();
  max_forward_backward(x);
  lp_forward(x);
  parallel_matches_serial();
  simdpool_plan *none = nullptr;
  CHECK(simdpool_plan_create(nullptr, &none) == SIMDPOOL_INVALID_ARGUMENT);
  CHECK(none == nullptr && *simdpool_last_error() != '\0');
  if (failures) {
    std::fprintf(stderr, "consumer (C++): %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("consumer (C++): all checks passed\n");
  return 0;
}
