// make_communicator: the communicator factory. The only file in tt with #ifdef TT_WITH_MPI.
#include "dist/communicator.h"

#include <cstdlib>
#include <string>

#include "util/error.h"

#ifdef TT_WITH_MPI
#include "dist/mpi/mpi_communicator.h"
#endif

namespace tt::dist {

int launcher_size() {
  // Open MPI (mpirun), MPICH / Intel MPI (Hydra: PMI_SIZE), PMIx launchers (srun --mpi=pmix).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* v = std::getenv(name)) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && n >= 1) return static_cast<int>(n);
    }
  }
  return 1;
}

bool mpi_available() {
#ifdef TT_WITH_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_communicator(const std::string& program) {
  const int launched = launcher_size();
  // One process: no MPI_Init (it costs time and, under some launchers, wants a daemon).
  if (launched <= 1) return std::make_unique<LocalCommunicator>();
#ifdef TT_WITH_MPI
  (void)program;
  return std::make_unique<MpiCommunicator>();
#else
  throw ConfigError(program + " was launched as one of " + std::to_string(launched) +
                        " processes, but this build has no MPI support: each would train its own copy",
                    "rebuild with Open MPI installed (scripts/install-deps.sh; CMake finds it and sets TT_MPI), "
                    "or run a single process");
#endif
}

}  // namespace tt::dist
