// Operator specifications: the axioms the verifier proves rules from, kept
// as data in specs/*.smt2 (SMT-LIB2 over the vocabulary of op_functions.h).
// Each axiom is an `(assert ...)` preceded by structured comments that name
// it and list the concrete values it is tested on:
//
//   ; axiom add-comm
//   ; test x=f32[2,3] y=f32[2,3]
//   ; test x=f32[1,3] y=f32[4,1]
//   (assert (forall ((x T) (y T)) (= (add x y) (add y x))))
//
// A test gives every bound variable of the axiom a value: tensors a type
// (`f32[2,3]`, `f32[]` a scalar), Int variables an integer, (Seq Int)
// variables a list `[1,1]`. The verifier's `check_axioms` evaluates both sides
// at each test with the reference executor. The files are read in name
// order and parsed as one text, so a `define-fun` helper in one file serves
// the files after it; errors name the file and line.
#pragma once

#include <z3++.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/types.h"
#include "specs/op_functions.h"

namespace tso::specs {

struct SpecFile {
  std::string path;
  std::string text;
};

struct SpecSource {
  std::vector<SpecFile> files;  // in name order
  std::string hash;             // 16 hex digits over the files' names and text
};

// The specs that ship with tso (this source tree's specs/ folder).
std::string default_specs_dir();
// Reads every *.smt2 file of `dir`. An unreadable folder or file, or a folder
// without .smt2 files, is an error.
Expected<SpecSource> read_specs(const std::string& dir);
// Specs from text, for tests: `files` as (name, text) pairs.
SpecSource specs_from_text(std::vector<SpecFile> files);

// A value of one bound variable in an axiom test.
struct TestValue {
  enum class Kind : uint8_t { kTensor, kInt, kInts };
  Kind kind = Kind::kInt;
  TensorType type;            // kTensor
  int64_t value = 0;          // kInt
  std::vector<int64_t> list;  // kInts
};

struct AxiomTest {
  int line = 0;  // in the axiom's file
  std::map<std::string, TestValue> values;
};

struct Axiom {
  std::string name;
  std::string file;
  int line = 0;  // of its `(assert`
  z3::expr formula;
  std::vector<AxiomTest> tests;
};

// Parses the axioms into the context of `fns`. Errors read "FILE:LINE: ..."
// and carry Z3's message for malformed SMT-LIB2; an assertion without an
// `; axiom NAME` comment or without tests, and a malformed test, are errors.
Expected<std::vector<Axiom>> parse_axioms(const SpecSource& src, const OpFunctions& fns);

// Names of the operator functions that some axiom mentions: the operators
// that have a specification.
std::set<std::string> specified_functions(const std::vector<Axiom>& axioms);

}  // namespace tso::specs
