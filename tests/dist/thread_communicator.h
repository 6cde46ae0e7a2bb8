// A Communicator between threads of one process, for testing the data-parallel trainer without MPI: each
// thread is a rank. Sums go through a shared double buffer, so every rank reads the same result.
#pragma once

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "dist/communicator.h"

namespace tt::test {

class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : size_(size) {}

  // Every rank calls with its own `data`; `combine` folds it into the shared buffer, `extract` reads the
  // result back. A generation counter keeps successive collectives apart.
  template <typename Combine, typename Extract>
  void collective(Combine combine, Extract extract) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return !draining_; });
    if (arrived_ == 0) buffer_.clear();
    combine(buffer_);
    const int64_t generation = generation_;
    if (++arrived_ == size_) {
      draining_ = true;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
    extract(buffer_);
    if (--arrived_ == 0) {
      draining_ = false;
      cv_.notify_all();
    }
  }
  int size() const { return size_; }

 private:
  int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  int64_t generation_ = 0;
  bool draining_ = false;
  std::vector<double> buffer_;
};

class ThreadCommunicator final : public dist::Communicator {
 public:
  ThreadCommunicator(ThreadGroup& group, int rank) : group_(group), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_.size(); }
  std::string name() const override { return "threads"; }
  void all_reduce_sum(float* data, int64_t n) override { sum(data, n); }
  void all_reduce_sum(double* data, int64_t n) override { sum(data, n); }
  void all_reduce_sum(int64_t* data, int64_t n) override { sum(data, n); }
  void broadcast(void* data, int64_t bytes, int root) override {
    std::vector<char> copy;
    group_.collective(
        [&](std::vector<double>& b) {
          if (rank_ != root) return;
          b.resize(static_cast<size_t>(bytes + 7) / 8);
          std::memcpy(b.data(), data, static_cast<size_t>(bytes));
        },
        [&](std::vector<double>& b) { std::memcpy(data, b.data(), static_cast<size_t>(bytes)); });
  }
  void barrier() override {
    group_.collective([](std::vector<double>&) {}, [](std::vector<double>&) {});
  }

 private:
  template <typename T>
  void sum(T* data, int64_t n) {
    group_.collective(
        [&](std::vector<double>& b) {
          b.resize(static_cast<size_t>(n), 0.0);
          for (int64_t i = 0; i < n; ++i) b[static_cast<size_t>(i)] += static_cast<double>(data[i]);
        },
        [&](std::vector<double>& b) {
          for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(b[static_cast<size_t>(i)]);
        });
  }

  ThreadGroup& group_;
  int rank_;
};

}  // namespace tt::test
