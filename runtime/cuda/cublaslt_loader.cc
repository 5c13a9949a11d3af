// The cublasLt functions the runtime calls, each opening the library on
// first use and forwarding to its own definition (cublaslt_loader.h). The
// definitions match cublasLt.h's declarations, which the compiler checks.
#include "runtime/cuda/cublaslt_loader.h"

#include <cublasLt.h>
#include <dlfcn.h>

namespace tso::cuda {
namespace {

struct Library {
  void* handle = nullptr;
  std::string error;
};

// The soname first, so that LD_LIBRARY_PATH and the system's cache decide as
// they would for a linked library; then the file the build found.
const Library& library() {
  static const Library lib = [] {
    Library l;
    l.handle = detail::open_first({TSO_CUBLASLT_SONAME, TSO_CUBLASLT_PATH}, &l.error);
    return l;
  }();
  return lib;
}

template <typename Fn>
Fn* resolve(const char* name) {
  void* handle = library().handle;
  return handle ? reinterpret_cast<Fn*>(dlsym(handle, name)) : nullptr;
}

}  // namespace

std::string cublaslt_load_error() { return library().error; }

namespace detail {

void* open_first(const std::vector<std::string>& files, std::string* error) {
  error->clear();
  for (const std::string& file : files) {
    if (void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      error->clear();
      return handle;
    }
    const char* why = dlerror();
    *error += (error->empty() ? "" : "; ") + std::string(why ? why : file + ": not opened");
  }
  *error = "cannot open libcublasLt (" + *error + ")";
  return nullptr;
}

}  // namespace detail
}  // namespace tso::cuda

// Forwards `name` to the library; CUBLAS_STATUS_NOT_INITIALIZED where the
// library could not be opened (cublas_message then gives the reason).
#define TSO_CUBLASLT_FORWARD(name, params, args)                         \
  cublasStatus_t CUBLASWINAPI name params {                              \
    static auto* const real = tso::cuda::resolve<decltype(name)>(#name); \
    return real ? real args : CUBLAS_STATUS_NOT_INITIALIZED;             \
  }

TSO_CUBLASLT_FORWARD(cublasLtCreate, (cublasLtHandle_t * handle), (handle))
TSO_CUBLASLT_FORWARD(cublasLtDestroy, (cublasLtHandle_t handle), (handle))
TSO_CUBLASLT_FORWARD(cublasLtMatmul,
                     (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                      const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                      cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                      cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                      const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                      cudaStream_t stream),
                     (handle, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d, d_desc, algo,
                      workspace, workspace_bytes, stream))
TSO_CUBLASLT_FORWARD(cublasLtMatmulAlgoGetHeuristic,
                     (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                      cublasLtMatrixLayout_t a_desc, cublasLtMatrixLayout_t b_desc,
                      cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                      cublasLtMatmulPreference_t preference, int requested,
                      cublasLtMatmulHeuristicResult_t results[], int* returned),
                     (handle, desc, a_desc, b_desc, c_desc, d_desc, preference, requested, results,
                      returned))
TSO_CUBLASLT_FORWARD(cublasLtMatmulDescCreate,
                     (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute,
                      cudaDataType_t scale),
                     (desc, compute, scale))
TSO_CUBLASLT_FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
TSO_CUBLASLT_FORWARD(cublasLtMatmulDescSetAttribute,
                     (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                      const void* buf, size_t bytes),
                     (desc, attr, buf, bytes))
TSO_CUBLASLT_FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * pref), (pref))
TSO_CUBLASLT_FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t pref), (pref))
TSO_CUBLASLT_FORWARD(cublasLtMatmulPreferenceSetAttribute,
                     (cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                      const void* buf, size_t bytes),
                     (pref, attr, buf, bytes))
TSO_CUBLASLT_FORWARD(cublasLtMatrixLayoutCreate,
                     (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows,
                      uint64_t cols, int64_t ld),
                     (layout, type, rows, cols, ld))
TSO_CUBLASLT_FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
TSO_CUBLASLT_FORWARD(cublasLtMatrixLayoutSetAttribute,
                     (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                      const void* buf, size_t bytes),
                     (layout, attr, buf, bytes))

// 0 where the library could not be opened.
size_t CUBLASWINAPI cublasLtGetVersion(void) {
  static auto* const real = tso::cuda::resolve<decltype(cublasLtGetVersion)>("cublasLtGetVersion");
  return real ? real() : 0;
}

const char* CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t status) {
  static auto* const real =
      tso::cuda::resolve<decltype(cublasLtGetStatusName)>("cublasLtGetStatusName");
  return real ? real(status) : "CUBLAS_STATUS_NOT_INITIALIZED";
}

const char* CUBLASWINAPI cublasLtGetStatusString(cublasStatus_t status) {
  static auto* const real =
      tso::cuda::resolve<decltype(cublasLtGetStatusString)>("cublasLtGetStatusString");
  return real ? real(status) : "libcublasLt could not be opened";
}
