// Collective communication between the ranks of a data-parallel run. One interface, one place that
// chooses the implementation (make_communicator): LocalCommunicator (one process, size 1) and, in builds
// with MPI (TT_MPI), MpiCommunicator. An NCCL communicator for device buffers on CUDA hosts does not
// exist yet: multi-rank runs on a GPU backend are refused (see the trainer).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tt::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "local", "mpi (Open MPI v4.1.4)"
  bool is_root() const { return rank() == 0; }
  // Whether all_reduce_sum(float*) may be given device memory; false: host memory only.
  virtual bool accepts_device_memory() const { return false; }

  // In place: every rank ends with the elementwise sum over all ranks, the same bits on every rank.
  // A failed collective (a rank died) throws tt::Error.
  virtual void all_reduce_sum(float* data, int64_t n) = 0;
  virtual void all_reduce_sum(double* data, int64_t n) = 0;
  virtual void all_reduce_sum(int64_t* data, int64_t n) = 0;
  // Root's `bytes` bytes at `data` to every rank.
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
  virtual void barrier() = 0;
};

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "local"; }
  bool accepts_device_memory() const override { return true; }
  void all_reduce_sum(float*, int64_t) override {}
  void all_reduce_sum(double*, int64_t) override {}
  void all_reduce_sum(int64_t*, int64_t) override {}
  void broadcast(void*, int64_t, int) override {}
  void barrier() override {}
};

// The number of processes a launcher (mpirun, mpiexec, srun with PMI) started this one among, from its
// environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE...); 1 when not launched by one.
int launcher_size();

// The communicator of this process: MPI when launched by an MPI launcher and built with MPI, local
// otherwise. Launched with more than one process by a build without MPI: tt::ConfigError (training N
// independent copies would be silent waste). `program` names the tool in that message.
std::unique_ptr<Communicator> make_communicator(const std::string& program);

// Whether this build has MPI support.
bool mpi_available();

}  // namespace tt::dist
