// The revision of the CPU runtime's kernels: a hash of runtime/cpu's sources
// (tests and benchmarks left out) and of the kernel sets the build holds,
// generated at build time by revision.cmake. It ends the device string of
// every plan-choices file and cost cache (device_description), so choices
// and costs measured by another build of these kernels are never read as
// this build's.
#pragma once

namespace tso::cpu {

// Twelve hex digits, e.g. "3f0c9a1e52b7".
const char* runtime_revision();

}  // namespace tso::cpu
