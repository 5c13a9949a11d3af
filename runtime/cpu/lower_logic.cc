// Comparisons, logic, cumsum, arg_max, integer add/sub/mul and where on non-f32
// branches: what encoders compute on token ids and attention masks, as own
// steps on row-major tensors (logic.h).
#include <functional>
#include <string>
#include <vector>

#include "runtime/cpu/builder.h"
#include "runtime/cpu/logic.h"

namespace tso::cpu {

namespace {

Error unsupported(Builder& b, int node, const std::string& what) {
  return Error{b.describe(node) + " " + what + "; the CPU runtime computes it on " +
               "f32, f64, i64 and i32"};
}

// One own step of `node` reading the row-major tensors `args` and writing a
// new row-major output: `body(inputs, output)` on the buffers bound to them.
using Body = std::function<void(const std::vector<const std::byte*>&, std::byte*)>;

void add_own_step(Builder& b, int node, const std::vector<int>& args, Body body) {
  const int y = row_major_output(b, node, 0, args);
  b.add_kernel(std::string(op_name(b.graph().node(node).op)) + " (own)", b.describe(node), args,
               {y}, [=](const Bindings& m) -> Run {
                 std::vector<const std::byte*> in;
                 for (int a : args) in.push_back(m.data(a));
                 std::byte* out = m.data(y);
                 return [=] { body(in, out); };
               });
  b.set_value({node, 0}, y);
}

uint8_t* bools(std::byte* p) { return reinterpret_cast<uint8_t*>(p); }
const uint8_t* bools(const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); }

Status lower_compare(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0])), z = b.as_plain(b.value(n.args[1]));
  const DType t = b.tensor(x).type.dtype;
  if (!numeric(t)) return unsupported(b, node, "compares " + to_string(b.tensor(x).type));
  const CompareFn f = n.op == Op::Equal  ? CompareFn::kEqual
                      : n.op == Op::Less ? CompareFn::kLess
                                         : CompareFn::kGreater;
  const Shape xs = b.tensor(x).type.shape, zs = b.tensor(z).type.shape, ys = n.outs[0].shape;
  add_own_step(b, node, {x, z}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
    compare(f, t, in[0], xs, in[1], zs, bools(y), ys);
  });
  return {};
}

Status lower_logic(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const Shape xs = b.tensor(x).type.shape, ys = n.outs[0].shape;
  if (n.op == Op::Not) {
    const int64_t count = ys.numel();
    add_own_step(b, node, {x}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
      logical_not(bools(in[0]), bools(y), count);
    });
    return {};
  }
  const int z = b.as_plain(b.value(n.args[1]));
  const Shape zs = b.tensor(z).type.shape;
  const LogicFn f = n.op == Op::And ? LogicFn::kAnd : LogicFn::kOr;
  add_own_step(b, node, {x, z}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
    logical(f, bools(in[0]), xs, bools(in[1]), zs, bools(y), ys);
  });
  return {};
}

Status lower_cumsum(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const TensorType type = b.tensor(x).type;
  if (!numeric(type.dtype)) return unsupported(b, node, "sums " + to_string(type));
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  const CumSumGeometry g{lines_along(type.shape, axis), n.attrs.i(AttrKey::exclusive) != 0,
                         n.attrs.i(AttrKey::reverse) != 0};
  add_own_step(b, node, {x}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
    cumsum(g, type.dtype, in[0], y);
  });
  return {};
}

Status lower_arg_max(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const TensorType type = b.tensor(x).type;
  if (!numeric(type.dtype)) return unsupported(b, node, "compares " + to_string(type));
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  const ArgMaxGeometry g{lines_along(type.shape, axis),
                         n.attrs.i(AttrKey::select_last_index) != 0};
  add_own_step(b, node, {x}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
    arg_max(g, type.dtype, in[0], reinterpret_cast<int64_t*>(y));
  });
  return {};
}

// Two outputs: an own step writes both.
Status lower_top_k(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0]));
  const TensorType type = b.tensor(x).type;
  if (type.dtype != DType::kF32 && type.dtype != DType::kF64)
    return unsupported(b, node, "selects among " + to_string(type));
  const int axis = static_cast<int>(n.attrs.i(AttrKey::axis));
  TopKGeometry g;
  static_cast<AxisLines&>(g) = lines_along(type.shape, axis);
  g.k = n.attrs.i(AttrKey::k);
  g.largest = n.attrs.i(AttrKey::largest) != 0;
  const int values = row_major_output(b, node, 0, {x});
  const int indices = row_major_output(b, node, 1, {x});
  b.add_kernel("top_k (own)", b.describe(node), {x}, {values, indices},
               [=](const Bindings& m) -> Run {
                 const std::byte* px = m.data(x);
                 std::byte* pv = m.data(values);
                 int64_t* pi = reinterpret_cast<int64_t*>(m.data(indices));
                 return [=] { top_k(g, type.dtype, px, pv, pi); };
               });
  b.set_value({node, 0}, values);
  b.set_value({node, 1}, indices);
  return {};
}

Status lower_integer_binary(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int x = b.as_plain(b.value(n.args[0])), z = b.as_plain(b.value(n.args[1]));
  const DType t = b.tensor(x).type.dtype;
  const BinaryFn f = binary_fn(n.op);
  if (!integer_binary_supported(f, t))
    return Error{b.describe(node) + " computes on " + to_string(b.tensor(x).type) +
                 "; the CPU runtime computes integer add, sub, mul, max and min of i64 and i32, "
                 "and "
                 "everything on f32"};
  const Shape xs = b.tensor(x).type.shape, zs = b.tensor(z).type.shape, ys = n.outs[0].shape;
  add_own_step(b, node, {x, z}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
    integer_binary(f, t, in[0], xs, in[1], zs, y, ys);
  });
  return {};
}

Status lower_where_bytes(Builder& b, int node) {
  const Node& n = b.graph().node(node);
  const int c = b.as_plain(b.value(n.args[0]));
  const int x = b.as_plain(b.value(n.args[1])), z = b.as_plain(b.value(n.args[2]));
  const TensorType& type = n.outs[0];
  const int elem = static_cast<int>(dtype_bytes(type.dtype));
  if (elem != 1 && elem != 4 && elem != 8)
    return Error{b.describe(node) + " selects " + to_string(type) +
                 "; the CPU runtime selects elements of 1, 4 or 8 bytes"};
  const Shape cs = b.tensor(c).type.shape, xs = b.tensor(x).type.shape, zs = b.tensor(z).type.shape,
              ys = type.shape;
  add_own_step(b, node, {c, x, z}, [=](const std::vector<const std::byte*>& in, std::byte* y) {
    where_bytes(elem, bools(in[0]), cs, in[1], xs, in[2], zs, y, ys);
  });
  return {};
}

}  // namespace

bool is_logic(const Graph& g, int node) {
  const Node& n = g.node(node);
  switch (n.op) {
    case Op::Equal:
    case Op::Less:
    case Op::Greater:
    case Op::Not:
    case Op::And:
    case Op::Or:
    case Op::CumSum:
    case Op::ArgMax:
    case Op::TopK:
      return true;
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pow:
    case Op::Max:
    case Op::Min: {
      const DType t = g.type(n.args[0]).dtype;
      return t == DType::kI64 || t == DType::kI32;
    }
    case Op::Where:
      return g.type(n.args[1]).dtype != DType::kF32;
    default:
      return false;
  }
}

Status lower_logic_node(Builder& b, int node) {
  switch (b.graph().node(node).op) {
    case Op::Equal:
    case Op::Less:
    case Op::Greater:
      return lower_compare(b, node);
    case Op::Not:
    case Op::And:
    case Op::Or:
      return lower_logic(b, node);
    case Op::CumSum:
      return lower_cumsum(b, node);
    case Op::ArgMax:
      return lower_arg_max(b, node);
    case Op::TopK:
      return lower_top_k(b, node);
    case Op::Where:
      return lower_where_bytes(b, node);
    default:
      return lower_integer_binary(b, node);
  }
}

}  // namespace tso::cpu
