#include "dist/mpi/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <string>

#include "util/error.h"

namespace tt::dist {

namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<size_t>(length)),
              "another rank has probably died or cannot be reached; see its message above, then resume the run "
              "from its last checkpoint");
}

// MPI counts are int: long buffers go in pieces of at most INT_MAX elements.
template <typename T>
void all_reduce(T* data, int64_t n, MPI_Datatype type) {
  for (int64_t done = 0; done < n;) {
    const int count = static_cast<int>(std::min<int64_t>(n - done, INT_MAX));
    check(MPI_Allreduce(MPI_IN_PLACE, data + done, count, type, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    done += count;
  }
}

}  // namespace

MpiCommunicator::MpiCommunicator() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_mpi_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

MpiCommunicator::~MpiCommunicator() {
  // Unwinding an error: MPI_Finalize would wait for ranks that are waiting for this one. Exit without it;
  // the tool prints the error, and the launcher, seeing a rank end without finalising, stops the others.
  if (!owns_mpi_ || std::uncaught_exceptions() > 0) return;
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

std::string MpiCommunicator::name() const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, static_cast<size_t>(length));
  v = v.substr(0, v.find_first_of(",\n"));
  return "mpi (" + v + ", " + std::to_string(size_) + " ranks)";
}

void MpiCommunicator::all_reduce_sum(float* data, int64_t n) { all_reduce(data, n, MPI_FLOAT); }
void MpiCommunicator::all_reduce_sum(double* data, int64_t n) { all_reduce(data, n, MPI_DOUBLE); }
void MpiCommunicator::all_reduce_sum(int64_t* data, int64_t n) { all_reduce(data, n, MPI_INT64_T); }

void MpiCommunicator::broadcast(void* data, int64_t bytes, int root) {
  auto* p = static_cast<char*>(data);
  for (int64_t done = 0; done < bytes;) {
    const int count = static_cast<int>(std::min<int64_t>(bytes - done, INT_MAX));
    check(MPI_Bcast(p + done, count, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    done += count;
  }
}

void MpiCommunicator::barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

}  // namespace tt::dist
