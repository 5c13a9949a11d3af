#include "python/convert.h"

#include <cstring>
#include <vector>

namespace py = pybind11;

namespace tso::python {
namespace {

struct DTypeMatch {
  char kind;  // numpy's dtype.kind: 'f' float, 'i' signed, 'u' unsigned integer, 'b' bool
  int itemsize;
  DType dtype;
};
constexpr DTypeMatch kDTypes[] = {
    {'f', 4, DType::kF32}, {'f', 2, DType::kF16}, {'f', 8, DType::kF64},
    {'i', 8, DType::kI64}, {'i', 4, DType::kI32}, {'b', 1, DType::kBool},
    {'u', 1, DType::kU8},  {'i', 1, DType::kI8},
};

// numpy's name of each tso dtype.
const char* numpy_dtype(DType t) {
  switch (t) {
    case DType::kF32:
      return "float32";
    case DType::kF16:
      return "float16";
    case DType::kF64:
      return "float64";
    case DType::kI64:
      return "int64";
    case DType::kI32:
      return "int32";
    case DType::kBool:
      return "bool";
    case DType::kU8:
      return "uint8";
    case DType::kI8:
      return "int8";
  }
  throw TsoError{"internal error: unknown dtype"};
}

}  // namespace

WeightData to_weight(const py::handle& object, const std::string& what) {
  py::array a = py::array::ensure(object, py::array::c_style);
  if (!a) throw TsoError{what + ": not convertible to a numpy array"};
  // The dtype's fields are read through Python: Debian's pybind11 (2.10)
  // reads them from numpy 1's struct layout, which numpy 2 changed.
  const py::object d = a.attr("dtype");
  const std::string kind = d.attr("kind").cast<std::string>();
  const int itemsize = d.attr("itemsize").cast<int>();
  WeightData w;
  bool known = false;
  for (const DTypeMatch& m : kDTypes)
    if (kind.size() == 1 && kind[0] == m.kind && itemsize == m.itemsize)
      w.type.dtype = m.dtype, known = true;
  if (!known)
    throw TsoError{what + ": numpy dtype " + py::str(d).cast<std::string>() +
                   " has no tso type (float32, float16, float64, int64, int32, bool)"};
  if (a.ndim() > Shape::kMaxRank)
    throw TsoError{what + ": rank " + std::to_string(a.ndim()) + " is above " +
                   std::to_string(Shape::kMaxRank)};
  for (py::ssize_t i = 0; i < a.ndim(); ++i) w.type.shape.push_back(a.shape(i));
  w.bytes.resize(a.attr("nbytes").cast<size_t>());
  if (!w.bytes.empty()) std::memcpy(w.bytes.data(), a.data(), w.bytes.size());
  return w;
}

py::array to_numpy(const WeightData& w) {
  py::tuple shape(w.type.shape.rank());
  for (int i = 0; i < w.type.shape.rank(); ++i) shape[i] = w.type.shape[i];
  // numpy.empty, not py::array's constructor: that computes strides from
  // the dtype's size as numpy 1 laid it out (see to_weight).
  py::array a = py::module_::import("numpy").attr("empty")(shape, numpy_dtype(w.type.dtype));
  if (!w.bytes.empty()) std::memcpy(a.mutable_data(), w.bytes.data(), w.bytes.size());
  return a;
}

py::dict describe_tensor(const std::string& name, const TensorType& t) {
  py::dict d;
  d["name"] = name;
  d["dtype"] = dtype_name(t.dtype);
  py::list shape;
  for (int64_t x : t.shape) shape.append(x);
  d["shape"] = shape;
  return d;
}

}  // namespace tso::python
