#include "frontend/einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

namespace tso::onnx_frontend {

namespace {

using Ints = std::vector<int64_t>;

constexpr std::string_view kEllipsis = "...";

// A term as written: its letters before and after the ellipsis, if any.
struct WrittenTerm {
  std::string before, after;
  bool ellipsis = false;
  size_t letters() const { return before.size() + after.size(); }
};

Expected<WrittenTerm> parse_term(std::string_view s) {
  WrittenTerm t;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, kEllipsis.size()) == kEllipsis) {
      if (t.ellipsis) return Error{"term '" + std::string(s) + "' has two ellipses"};
      t.ellipsis = true;
      i += kEllipsis.size();
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(s[i])))
      return Error{"term '" + std::string(s) + "' has '" + std::string(1, s[i]) +
                   "', which is neither a letter nor an ellipsis"};
    (t.ellipsis ? t.after : t.before) += s[i++];
  }
  return t;
}

// The labels of the last `count` of `total` ellipsis axes.
std::string ellipsis_labels(int total, int count) {
  std::string s;
  for (int i = total - count; i < total; ++i) s += static_cast<char>('0' + i);
  return s;
}

bool has(const std::string& labels, char c) { return labels.find(c) != std::string::npos; }

// An operand during the contraction: a tensor and the label of each axis.
struct Operand {
  TensorRef t;
  std::string labels;
};

class Contraction {
 public:
  Contraction(NodeContext& ctx) : ctx_(ctx), b_(ctx.builder()) {}

  // Sums the axes whose label is not in `keep`.
  Expected<Operand> sum_out(Operand x, const std::string& keep) {
    Ints axes;
    std::string kept;
    for (size_t i = 0; i < x.labels.size(); ++i)
      if (has(keep, x.labels[i]))
        kept += x.labels[i];
      else
        axes.push_back(static_cast<int64_t>(i));
    if (axes.empty()) return x;
    Attrs a;
    a.set(AttrKey::axes, axes).set(AttrKey::keepdims, int64_t{0});
    Expected<TensorRef> r = add(Op::ReduceSum, {x.t}, std::move(a));
    if (!r) return r.error();
    return Operand{*r, kept};
  }

  // Transposes `x` so that its labels read `order` (a permutation of them).
  Expected<Operand> permute(Operand x, const std::string& order) {
    if (x.labels == order) return x;
    Ints perm;
    for (char c : order) perm.push_back(static_cast<int64_t>(x.labels.find(c)));
    Attrs a;
    a.set(AttrKey::perm, perm);
    Expected<TensorRef> r = add(Op::Transpose, {x.t}, std::move(a));
    if (!r) return r.error();
    return Operand{*r, order};
  }

  Expected<TensorRef> reshape(TensorRef t, Ints shape) {
    if (Ints(b_.type(t).shape.begin(), b_.type(t).shape.end()) == shape) return t;
    Attrs a;
    a.set(AttrKey::shape, std::move(shape));
    return add(Op::Reshape, {t}, std::move(a));
  }

  // The product of `x` and `y`, summed over the labels they share that
  // `keep` lacks: its labels are those of x, then y's others, in `keep`.
  Expected<Operand> contract(Operand x, Operand y, const std::string& keep) {
    // A summed label of extent 1 on one side broadcasts: that side drops it
    // (a sum over one element) and the other sums over it alone.
    auto extent = [this](const Operand& o, char c) {
      return b_.type(o.t).shape[static_cast<int>(o.labels.find(c))];
    };
    const std::string shared = x.labels;
    for (char c : shared) {
      if (!has(y.labels, c) || has(keep, c) || extent(x, c) == extent(y, c)) continue;
      if (extent(x, c) != 1 && extent(y, c) != 1)
        return Error{"label '" + std::string(1, c) + "' has extents " +
                     std::to_string(extent(x, c)) + " and " + std::to_string(extent(y, c))};
      Operand& one = extent(x, c) == 1 ? x : y;
      std::string rest = one.labels;
      rest.erase(rest.find(c), 1);
      Expected<Operand> dropped = sum_out(one, rest);
      if (!dropped) return dropped.error();
      one = *dropped;
    }
    Expected<Operand> xs = sum_out(x, y.labels + keep);
    if (!xs) return xs.error();
    Expected<Operand> ys = sum_out(y, xs->labels + keep);
    if (!ys) return ys.error();
    std::string batch, xfree, summed, yfree;
    for (char c : xs->labels) (has(ys->labels, c) ? (has(keep, c) ? batch : summed) : xfree) += c;
    for (char c : ys->labels)
      if (!has(xs->labels, c)) yfree += c;
    if (batch.size() + 2 > static_cast<size_t>(Shape::kMaxRank))
      return Error{"more batch labels than the IR's rank allows"};

    // Extents of x's and y's batch labels, which may broadcast (1 against n).
    Ints xbatch, ybatch, out;
    for (char c : batch) {
      xbatch.push_back(extent(*xs, c));
      ybatch.push_back(extent(*ys, c));
      out.push_back(std::max(xbatch.back(), ybatch.back()));
    }
    int64_t m = 1, n = 1, k = 1;
    for (char c : xfree) m *= extent(*xs, c), out.push_back(extent(*xs, c));
    for (char c : yfree) n *= extent(*ys, c), out.push_back(extent(*ys, c));
    for (char c : summed) k *= extent(*xs, c);

    Expected<Operand> xp = permute(*xs, batch + xfree + summed);
    if (!xp) return xp.error();
    Expected<Operand> yp = permute(*ys, batch + summed + yfree);
    if (!yp) return yp.error();
    const std::string labels = batch + xfree + yfree;
    if (summed.empty()) {
      // An outer or elementwise product: axes of extent 1 for the other's
      // free labels, then a broadcasting mul.
      Ints xs_shape = xbatch, ys_shape = ybatch;
      for (char c : xfree) xs_shape.push_back(extent(*xs, c)), ys_shape.push_back(1);
      for (char c : yfree) xs_shape.push_back(1), ys_shape.push_back(extent(*ys, c));
      Expected<TensorRef> xr = reshape(xp->t, xs_shape);
      if (!xr) return xr.error();
      Expected<TensorRef> yr = reshape(yp->t, ys_shape);
      if (!yr) return yr.error();
      Expected<TensorRef> r = add(Op::Mul, {*xr, *yr});
      if (!r) return r.error();
      return Operand{*r, labels};
    }
    Ints xmat = xbatch, ymat = ybatch;
    xmat.insert(xmat.end(), {m, k});
    ymat.insert(ymat.end(), {k, n});
    Expected<TensorRef> xr = reshape(xp->t, xmat);
    if (!xr) return xr.error();
    Expected<TensorRef> yr = reshape(yp->t, ymat);
    if (!yr) return yr.error();
    Expected<TensorRef> prod = add(Op::Matmul, {*xr, *yr});
    if (!prod) return prod.error();
    Expected<TensorRef> r = reshape(*prod, out);
    if (!r) return r.error();
    return Operand{*r, labels};
  }

 private:
  Expected<TensorRef> add(Op op, std::vector<TensorRef> args, Attrs attrs = {}) {
    return b_.add1(op, std::move(args), std::move(attrs), ctx_.node().name());
  }

  NodeContext& ctx_;
  GraphBuilder& b_;
};

}  // namespace

Expected<EinsumTerms> parse_einsum(std::string_view equation, std::span<const int> ranks) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<WrittenTerm> written;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    Expected<WrittenTerm> t = parse_term(std::string_view(lhs).substr(start, comma - start));
    if (!t) return t.error();
    written.push_back(*t);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (written.size() != ranks.size())
    return Error{"equation '" + std::string(equation) + "' has " + std::to_string(written.size()) +
                 " input terms for " + std::to_string(ranks.size()) + " inputs"};

  int ellipsis_axes = 0;
  std::vector<int> own(written.size(), 0);
  for (size_t i = 0; i < written.size(); ++i) {
    const int letters = static_cast<int>(written[i].letters());
    if (written[i].ellipsis ? letters > ranks[i] : letters != ranks[i])
      return Error{"term " + std::to_string(i) + " of '" + std::string(equation) + "' names " +
                   std::to_string(letters) + " axes of an input of rank " +
                   std::to_string(ranks[i])};
    own[i] = written[i].ellipsis ? ranks[i] - letters : 0;
    ellipsis_axes = std::max(ellipsis_axes, own[i]);
  }
  EinsumTerms terms;
  std::map<char, int> uses;
  for (size_t i = 0; i < written.size(); ++i) {
    terms.inputs.push_back(written[i].before + ellipsis_labels(ellipsis_axes, own[i]) +
                           written[i].after);
    for (char c : written[i].before + written[i].after) ++uses[c];
  }
  if (arrow == std::string::npos) {
    terms.output = ellipsis_labels(ellipsis_axes, ellipsis_axes);
    for (const auto& [c, n] : uses)  // std::map: alphabetical
      if (n == 1) terms.output += c;
    return terms;
  }
  Expected<WrittenTerm> out = parse_term(std::string_view(eq).substr(arrow + 2));
  if (!out) return out.error();
  terms.output = out->before +
                 (out->ellipsis ? ellipsis_labels(ellipsis_axes, ellipsis_axes) : "") + out->after;
  for (size_t i = 0; i < terms.output.size(); ++i) {
    const char c = terms.output[i];
    if (terms.output.find(c, i + 1) != std::string::npos)
      return Error{"output label '" + std::string(1, c) + "' of '" + std::string(equation) +
                   "' is repeated"};
    if (std::isalpha(static_cast<unsigned char>(c)) && !uses.count(c))
      return Error{"output label '" + std::string(1, c) + "' of '" + std::string(equation) +
                   "' is in no input term"};
  }
  return terms;
}

Expected<Mapped> map_einsum(NodeContext& ctx) {
  const onnx::NodeProto& n = ctx.node();
  const int count = n.input_size();
  if (count == 0) return Error{"needs at least one input"};
  std::vector<int> ranks;
  for (int i = 0; i < count; ++i) {
    if (ctx.type(i).dtype != DType::kF32) return opaque("operands that are not f32");
    ranks.push_back(ctx.type(i).shape.rank());
  }
  std::string equation;
  for (const onnx::AttributeProto& a : n.attribute())
    if (a.name() == "equation") equation = a.s();
  if (equation.empty()) return Error{"has no equation"};
  Expected<EinsumTerms> terms = parse_einsum(equation, ranks);
  if (!terms) return terms.error();

  std::vector<Operand> operands;
  for (int i = 0; i < count; ++i) {
    const std::string& labels = terms->inputs[i];
    for (size_t j = 0; j < labels.size(); ++j)
      if (labels.find(labels[j], j + 1) != std::string::npos)
        return opaque("label '" + std::string(1, labels[j]) +
                      "' repeated within one operand (a diagonal)");
    Expected<TensorRef> t = ctx.tensor(i);
    if (!t) return t.error();
    operands.push_back({*t, labels});
  }

  // Left to right: each step keeps the labels a later operand or the
  // output reads.
  Contraction c(ctx);
  Operand acc = operands[0];
  for (int i = 1; i < count; ++i) {
    std::string keep = terms->output;
    for (int j = i + 1; j < count; ++j) keep += operands[j].labels;
    Expected<Operand> r = c.contract(acc, operands[i], keep);
    if (!r) return r.error();
    acc = *r;
  }
  Expected<Operand> summed = c.sum_out(acc, terms->output);
  if (!summed) return summed.error();
  Expected<Operand> out = c.permute(*summed, terms->output);
  if (!out) return out.error();
  return Mapped{{out->t}, {}};
}

}  // namespace tso::onnx_frontend
