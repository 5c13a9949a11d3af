// The revision of each runtime's kernels: a hash of the runtime's sources
// (tests and benchmarks left out), and for the CPU of the kernel sets the
// build holds, generated at build time by revision.cmake. It ends the device
// string of every cost cache and plan-choices file the runtime measures, so
// costs and choices measured by another build of its kernels are never read
// as this build's.
#pragma once

namespace tso::cpu {

// Twelve hex digits, e.g. "3f0c9a1e52b7".
const char* runtime_revision();

}  // namespace tso::cpu

namespace tso::cuda {

// Twelve hex digits, as the CPU's.
const char* runtime_revision();

}  // namespace tso::cuda
