// The stand-ins for cublasLt's functions open the library on first use and
// forward to it; where it cannot be opened, the error names what was tried.
// None of this needs a GPU: layouts and status names are host-side.
#include "runtime/cuda/cublaslt_loader.h"

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <string>

namespace tso::cuda {
namespace {

TEST(CublasLtLoader, ForwardsToTheLibrary) {
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  cublasLtMatrixLayout_t layout = nullptr;
  ASSERT_EQ(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, 3, 5, 3), CUBLAS_STATUS_SUCCESS)
      << cublaslt_load_error();
  const int32_t batch = 4;
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                             sizeof batch),
            CUBLAS_STATUS_SUCCESS);
  // The library's own check: an attribute buffer of the wrong size.
  EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, 1),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasLtMatrixLayoutDestroy(layout), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublaslt_load_error(), "");
}

TEST(CublasLtLoader, TakesTheFirstFileThatOpens) {
  std::string error = "stale";
  void* handle = detail::open_first({"/no/such/dir/libcublasLt.so.13", "libc.so.6"}, &error);
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(error, "");
}

TEST(CublasLtLoader, NamesEveryFileTriedWhenNoneOpens) {
  std::string error;
  void* handle =
      detail::open_first({"libtso_no_such_library.so.7", "/no/such/dir/libcublasLt.so.13"}, &error);
  EXPECT_EQ(handle, nullptr);
  EXPECT_NE(error.find("libtso_no_such_library.so.7"), std::string::npos) << error;
  EXPECT_NE(error.find("/no/such/dir/libcublasLt.so.13"), std::string::npos) << error;
  EXPECT_EQ(error.rfind("cannot open libcublasLt", 0), 0u) << error;
}

}  // namespace
}  // namespace tso::cuda
