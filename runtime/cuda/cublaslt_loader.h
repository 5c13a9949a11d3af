// libcublasLt is opened on first use, not when a tso process starts.
//
// Linked, it made every tso process (`tso --version` included, on machines
// without a GPU) pay for loading it: 0.08 s and 210 MB of resident memory
// before main. This file's definitions of the cublasLt functions the runtime
// calls (cublaslt_loader.cc) stand in for the library's: the first call opens
// it and each forwards to the library's own function. cudart and cuDNN stay
// linked; loading them costs 0.4 and 1.5 MB.
#pragma once

#include <string>
#include <vector>

namespace tso::cuda {

// Why libcublasLt could not be opened, naming every file tried; empty when it
// opened. Opens it if no call has yet.
std::string cublaslt_load_error();

namespace detail {

// dlopen of the first of `files` that opens, or null with `*error` naming
// each file and why it did not.
void* open_first(const std::vector<std::string>& files, std::string* error);

}  // namespace detail
}  // namespace tso::cuda
