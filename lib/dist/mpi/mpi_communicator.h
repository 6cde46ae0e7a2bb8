// Communicator over MPI (MPI_COMM_WORLD). Compiled only in builds with MPI (TT_MPI); created by
// dist::make_communicator. Errors return (MPI_ERRORS_RETURN) and become tt::Error naming the call,
// so a dead peer ends the run with a message instead of an abort deep inside MPI.
#pragma once

#include "dist/communicator.h"

namespace tt::dist {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();  // MPI_Init_thread (funneled) unless MPI is already initialised
  ~MpiCommunicator() override;  // MPI_Finalize if this object initialised MPI (not while an error unwinds)
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override;
  void all_reduce_sum(float* data, int64_t n) override;
  void all_reduce_sum(double* data, int64_t n) override;
  void all_reduce_sum(int64_t* data, int64_t n) override;
  void broadcast(void* data, int64_t bytes, int root) override;
  void barrier() override;

 private:
  int rank_ = 0, size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace tt::dist
