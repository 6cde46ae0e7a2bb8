// The OpenMP wait policy of the tools that compute (tt-train, tt-translate, tt-attnviz).
//
// libgomp's default lets an idle thread spin for a long while before it sleeps. On a VM whose hypervisor
// takes an idle spinning vCPU away (PAUSE-loop exiting), the next parallel region then waits for that
// thread to be scheduled again: measured on a 2-vCPU KVM guest (AMD EPYC), the tiny Multi30k model's
// beam search on 2 threads took 15.6 s with the default, 4.1 s with GOMP_SPINCOUNT=10000 (4.9 s on one
// thread); base's 12 % less; training unchanged. libgomp reads the variable once, before main(), so the
// tool re-executes itself once with it set.
#pragma once

namespace tt::cli {

// When neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set: sets GOMP_SPINCOUNT=10000 and re-executes
// the program (its path read from /proc/self/exe) with the same arguments (same process, same standard streams). Returns (doing nothing)
// when either is set, or when the re-execution fails.
void use_short_openmp_spin(char** argv);

}  // namespace tt::cli
