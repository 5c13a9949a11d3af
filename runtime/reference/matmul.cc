// Matrix products: the one GEMM kernel (Eigen for float and double, exact
// 64-bit accumulation for Mod) and the matmul and gemm operators on top of it.
// conv2d reaches the same kernel through im2col.
#include <Eigen/Core>

#include "runtime/reference/kernels.h"
#include "runtime/reference/scalar.h"

namespace tso::ref {

namespace {

template <class S>
using RowMat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class S>
using ColMat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

// A row-major [k,m] buffer read as its transpose is a column-major [m,k]
// matrix, so transposition costs nothing but a different Map type.
template <class S, class A>
void times(const A& a, const S* b, bool trans_b, int64_t n, int64_t k, S* c) {
  Eigen::Map<RowMat<S>> out(c, a.rows(), n);
  if (trans_b)
    out.noalias() = a * Eigen::Map<const ColMat<S>>(b, k, n);
  else
    out.noalias() = a * Eigen::Map<const RowMat<S>>(b, k, n);
}

// Exact product mod p: each term is reduced below 2^31 and the row sums are
// kept in 64 bits (safe for k < 2^33), then reduced once.
void mod_product(int64_t m, int64_t n, int64_t k, const Mod* a, bool trans_a, const Mod* b,
                 bool trans_b, Mod* c) {
  std::vector<uint64_t> acc(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t l = 0; l < k; ++l) {
      uint64_t x = (trans_a ? a[l * m + i] : a[i * k + l]).v;
      if (x == 0) continue;
      if (trans_b)
        for (int64_t j = 0; j < n; ++j) acc[j] += Mod::reduce(x * b[j * k + l].v);
      else
        for (int64_t j = 0; j < n; ++j) acc[j] += Mod::reduce(x * b[l * n + j].v);
    }
    for (int64_t j = 0; j < n; ++j) c[i * n + j] = Mod(acc[j]);
  }
}

}  // namespace

template <class S>
void Linalg<S>::product(int64_t m, int64_t n, int64_t k, const S* a, bool trans_a, const S* b,
                        bool trans_b, S* c) {
  if constexpr (fn::Real<S>) {
    if (trans_a)
      times(Eigen::Map<const ColMat<S>>(a, m, k), b, trans_b, n, k, c);
    else
      times(Eigen::Map<const RowMat<S>>(a, m, k), b, trans_b, n, k, c);
  } else {
    mod_product(m, n, k, a, trans_a, b, trans_b, c);
  }
}

// matmul multiplies the last two dimensions and broadcasts the leading ones;
// a rank-1 operand is a row (left) or column (right) vector whose unit
// dimension is dropped from the result, as in numpy.
template <class S>
Expected<Tensor<S>> Linalg<S>::matmul(const Tensor<S>& a, const Tensor<S>& b, const Attrs& attrs) {
  Shape sa = a.shape, sb = b.shape;
  if (sa.rank() == 0 || sb.rank() == 0)
    return shape_error("matmul", "operands must have rank >= 1, got " + shape_text(sa) + " and " +
                                     shape_text(sb));
  bool row = sa.rank() == 1, col = sb.rank() == 1;
  if (row) sa = Shape{1, sa[0]};
  if (col) sb = Shape{sb[0], 1};
  int ra = sa.rank(), rb = sb.rank();
  int64_t m = sa[ra - 2], k = sa[ra - 1], n = sb[rb - 1];
  if (sb[rb - 2] != k)
    return shape_error("matmul", "inner dimensions differ: " + shape_text(a.shape) + " x " +
                                     shape_text(b.shape));
  Shape ba(sa.dims().first(ra - 2)), bb(sb.dims().first(rb - 2));
  Expected<Shape> batch = broadcast_shapes(ba, bb, "matmul");
  if (!batch) return batch.error();

  Shape out = *batch;
  if (!row) out.push_back(m);
  if (!col) out.push_back(n);
  Tensor<S> y(out);
  std::vector<int64_t> st_a = broadcast_strides(ba, *batch), st_b = broadcast_strides(bb, *batch);
  std::vector<int64_t> st_out = strides_of(*batch);
  for (int64_t t = 0; t < batch->numel(); ++t) {
    int64_t oa = 0, ob = 0;
    for (int d = 0; d < batch->rank(); ++d) {
      int64_t i = t / st_out[d] % (*batch)[d];
      oa += i * st_a[d];
      ob += i * st_b[d];
    }
    product(m, n, k, a.data.data() + oa * m * k, false, b.data.data() + ob * k * n, false,
            y.data.data() + t * m * n);
  }
  Elementwise<S>::activate(attrs, y.data);
  return y;
}

// gemm: act(alpha * op(A) op(B) + beta * C), C broadcast to [M,N] (ONNX Gemm).
template <class S>
Expected<Tensor<S>> Linalg<S>::gemm(Args<S> in, const Attrs& attrs) {
  const Tensor<S>& a = *in[0];
  const Tensor<S>& b = *in[1];
  bool ta = attrs.i(AttrKey::trans_a) != 0, tb = attrs.i(AttrKey::trans_b) != 0;
  if (a.shape.rank() != 2 || b.shape.rank() != 2)
    return shape_error("gemm", "operands must be matrices, got " + shape_text(a.shape) + " and " +
                                   shape_text(b.shape));
  int64_t m = a.shape[ta ? 1 : 0], k = a.shape[ta ? 0 : 1];
  int64_t kb = b.shape[tb ? 1 : 0], n = b.shape[tb ? 0 : 1];
  if (k != kb)
    return shape_error("gemm", "inner dimensions differ: " + shape_text(a.shape) +
                                   (ta ? "^T" : "") + " x " + shape_text(b.shape) +
                                   (tb ? "^T" : ""));
  Tensor<S> y(Shape{m, n});
  product(m, n, k, a.data.data(), ta, b.data.data(), tb, y.data.data());
  S alpha = fn::constant<S>(attrs.f(AttrKey::alpha));
  if (!(alpha == fn::one<S>()))
    for (S& v : y.data) v = alpha * v;
  if (in.size() > 2) {
    Tensor<S> c = *in[2];
    S beta = fn::constant<S>(attrs.f(AttrKey::beta));
    for (S& v : c.data) v = beta * v;
    Expected<Tensor<S>> sum = Elementwise<S>::binary(Bin::kAdd, y, c);
    if (!sum) return sum.error();
    if (!(sum->shape == y.shape))
      return shape_error("gemm", "bias " + shape_text(c.shape) + " does not broadcast to " +
                                     shape_text(y.shape));
    y = std::move(*sum);
  }
  Elementwise<S>::activate(attrs, y.data);
  return y;
}

template struct Linalg<float>;
template struct Linalg<double>;
template struct Linalg<Mod>;

}  // namespace tso::ref
