// Conversions between Python objects and tso's values for the module
// (tso_module.cc): numpy arrays and WeightData, tso's types as Python data.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "core/graph.h"

namespace tso::python {

// The error tso.Error carries: thrown by the module's functions, translated
// to the Python exception by pybind11 (tso_module.cc registers it).
struct TsoError {
  std::string message;
};

// A C-contiguous copy of `array` as tso's tensor; throws TsoError for a
// dtype tso has no type for or a rank above Shape::kMaxRank, naming `what`.
WeightData to_weight(const pybind11::handle& array, const std::string& what);

// A numpy array holding a copy of `w`.
pybind11::array to_numpy(const WeightData& w);

// {"name": ..., "dtype": "f32", "shape": [1, 3, 224, 224]}
pybind11::dict describe_tensor(const std::string& name, const TensorType& t);

}  // namespace tso::python
