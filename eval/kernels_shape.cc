// Kernels that move elements without computing new ones: Identity,
// Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Concat, Slice, Gather,
// Expand, Tile, ConstantOfShape, Shape, Size and Range.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "eval/broadcast.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::shape_ops {

const Tensor* Data(const KernelCall& call) { return call.input(0); }

Outputs IdentityKernel(const KernelCall& call) {
  if (Data(call) == nullptr) return call.Error("input is absent");
  return One(call.TakeInput0());
}

// Input 0's elements with `dims` (moved out of the donor when there is
// one): what Reshape, Flatten, Squeeze and Unsqueeze give.
Outputs Input0Reshaped(const KernelCall& call, std::vector<int64_t> dims) {
  Tensor out = call.TakeInput0();
  out.Reshape(std::move(dims));
  return One(std::move(out));
}

Outputs ReshapeKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("data is absent");
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shape, IntsOf(call, "shape", 1));
  if (!shape) return call.Error("the shape is absent");
  bool allow_zero = call.Int("allowzero", 0) != 0;
  int64_t known = 1;
  int infer = -1;
  std::vector<int64_t> dims = *shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= data->rank()) return call.Error("0 names a missing dim");
      dims[i] = data->dims()[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return call.Error("the shape has two -1s");
      infer = static_cast<int>(i);
      continue;
    }
    if (dims[i] < 0) return call.Error(absl::StrCat("shape holds ", dims[i]));
    if (dims[i] != 0 && known > kMaxElements / dims[i]) return call.Error("the shape is too large");
    known *= dims[i];
  }
  if (infer >= 0) {
    if (known == 0 || data->size() % known != 0) {
      return call.Error("the -1 dim cannot be inferred");
    }
    dims[infer] = data->size() / known;
  } else if (known != data->size()) {
    return call.Error(absl::StrCat("the shape [", absl::StrJoin(dims, ","), "] holds ", known,
                                   " elements, not ", data->size()));
  }
  return Input0Reshaped(call, std::move(dims));
}

Outputs FlattenKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  int64_t axis = call.Int("axis", 1);
  if (axis < 0) axis += data->rank();
  if (axis < 0 || axis > data->rank()) return call.Error("axis is out of range");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data->dims()[i];
  std::vector<int64_t> dims{outer, outer == 0 ? 0 : data->size() / std::max<int64_t>(outer, 1)};
  if (outer == 0) {
    int64_t inner = 1;
    for (int64_t i = axis; i < data->rank(); ++i) inner *= data->dims()[i];
    dims = {0, inner};
  }
  return Input0Reshaped(call, std::move(dims));
}

Outputs TransposeKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  int64_t rank = data->rank();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  if (std::optional<std::vector<int64_t>> given = call.Ints("perm")) perm = *given;
  std::vector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank) return call.Error("perm does not fit the rank");
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) return call.Error("perm is not a permutation");
    seen[p] = true;
  }
  std::vector<int64_t> in_strides = Strides(data->dims());
  std::vector<int64_t> dims(rank), strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = data->dims()[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  return One(PickStrided(*data, std::move(dims), strides, 0));
}

Outputs SqueezeKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, IntsOf(call, "axes", 1));
  std::vector<bool> drop(data->rank(), false);
  if (axes) {
    for (int64_t axis : *axes) {
      OC_ASSIGN_OR_RETURN(int64_t a, Axis(call, axis, data->rank()));
      if (data->dims()[a] != 1) return call.Error(absl::StrCat("axis ", axis, " is not 1"));
      drop[a] = true;
    }
  } else {
    for (int64_t i = 0; i < data->rank(); ++i) drop[i] = data->dims()[i] == 1;
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < data->rank(); ++i) {
    if (!drop[i]) dims.push_back(data->dims()[i]);
  }
  return Input0Reshaped(call, std::move(dims));
}

Outputs UnsqueezeKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, IntsOf(call, "axes", 1));
  if (!axes) return call.Error("axes are absent");
  int64_t rank = data->rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> added(rank, false);
  for (int64_t axis : *axes) {
    OC_ASSIGN_OR_RETURN(int64_t a, Axis(call, axis, rank));
    if (added[a]) return call.Error("axes repeat");
    added[a] = true;
  }
  std::vector<int64_t> dims;
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i) dims.push_back(added[i] ? 1 : data->dims()[next++]);
  return Input0Reshaped(call, std::move(dims));
}

Outputs ConcatKernel(const KernelCall& call) {
  if (call.inputs.empty() || call.input(0) == nullptr) return call.Error("no inputs");
  const Tensor& first = *call.input(0);
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", 1), first.rank()));
  std::vector<int64_t> dims = first.dims();
  dims[axis] = 0;
  for (const Tensor* input : call.inputs) {
    if (input == nullptr || input->elem_type() != first.elem_type() ||
        input->rank() != first.rank()) {
      return call.Error("the inputs differ in type or rank");
    }
    for (int64_t i = 0; i < first.rank(); ++i) {
      if (i != axis && input->dims()[i] != first.dims()[i]) {
        return call.Error("the inputs differ off the axis");
      }
    }
    dims[axis] += input->dims()[axis];
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= dims[i];
  Tensor out(first.elem_type(), dims);
  int size = ElementSize(first.elem_type());
  int64_t written = 0;
  uint8_t* to = size == 0 ? nullptr : out.data<uint8_t>().data();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* input : call.inputs) {
      int64_t block = outer == 0 ? 0 : input->size() / outer;
      if (block == 0) continue;
      int64_t from = o * block;
      if (size == 0) {
        for (int64_t k = 0; k < block; ++k) {
          out.strings()[written + k] = input->strings()[from + k];
        }
      } else {
        std::memcpy(to + written * size, input->data<uint8_t>().data() + from * size,
                    static_cast<size_t>(block) * size);
      }
      written += block;
    }
  }
  if (written != count) return call.Error("internal: concat size");
  return One(std::move(out));
}

// Slice-1 (attributes) and Slice-10+ (inputs, with steps).
Outputs SliceKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("data is absent");
  bool attrs = call.attribute("starts") != nullptr;
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> starts, IntsOf(call, "starts", 1));
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ends, IntsOf(call, "ends", 2));
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes,
                      attrs ? IntsOf(call, "axes", 99) : IntsOf(call, "", 3));
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> steps,
                      attrs ? std::optional<std::vector<int64_t>>() : IntsOf(call, "", 4));
  if (!starts || !ends || starts->size() != ends->size()) {
    return call.Error("starts and ends are absent or differ in length");
  }
  size_t n = starts->size();
  if (!axes) {
    axes.emplace(n);
    std::iota(axes->begin(), axes->end(), 0);
  }
  if (!steps) steps.emplace(n, 1);
  if (axes->size() != n || steps->size() != n) return call.Error("axes or steps differ in length");
  int64_t rank = data->rank();
  std::vector<int64_t> begin(rank, 0), step(rank, 1), dims = data->dims();
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    OC_ASSIGN_OR_RETURN(int64_t a, Axis(call, (*axes)[i], rank));
    if (seen[a]) return call.Error("axes repeat");
    seen[a] = true;
    int64_t dim = data->dims()[a];
    int64_t s = (*steps)[i];
    if (s == 0) return call.Error("a step is 0");
    int64_t b = (*starts)[i];
    int64_t e = (*ends)[i];
    if (b < 0) b = b < -dim ? 0 : b + dim;  // clamped below, without overflow
    if (e < 0) e = e < -dim ? -1 : e + dim;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      dims[a] = e > b ? (e - b - 1) / s + 1 : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // -s cannot overflow: s = INT64_MIN only steps once.
      dims[a] = b > e ? (s == INT64_MIN ? 1 : (b - e - 1) / -s + 1) : 0;
    }
    begin[a] = b;
    step[a] = s;
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  std::vector<int64_t> in_strides = Strides(data->dims());
  int64_t base = 0;
  std::vector<int64_t> strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    base += begin[i] * in_strides[i];
    strides[i] = step[i] * in_strides[i];
  }
  (void)count;
  return One(PickStrided(*data, std::move(dims), strides, base));
}

Outputs GatherKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  const Tensor* indices = call.input(1);
  if (data == nullptr || indices == nullptr) return call.Error("an input is absent");
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", 0), data->rank()));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> index, ToInt64s(*indices));
  int64_t dim = data->dims()[axis];
  for (int64_t& i : index) {
    if (i < -dim || i >= dim) return call.Error(absl::StrCat("index ", i, " is out of range"));
    if (i < 0) i += dim;
  }
  std::vector<int64_t> dims(data->dims().begin(), data->dims().begin() + axis);
  dims.insert(dims.end(), indices->dims().begin(), indices->dims().end());
  dims.insert(dims.end(), data->dims().begin() + axis + 1, data->dims().end());
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= data->dims()[i];
  for (int64_t i = axis + 1; i < data->rank(); ++i) inner *= data->dims()[i];
  std::vector<int64_t> offsets;
  offsets.reserve(count);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : index) {
      for (int64_t k = 0; k < inner; ++k) offsets.push_back((o * dim + i) * inner + k);
    }
  }
  return One(Pick(*data, dims, offsets));
}

// Split: by the sizes `split` gives (attribute or input), else into
// `num_outputs` parts of ceil(size / parts) (the last smaller), else into
// as many equal parts as the node has outputs.
Outputs SplitKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", 0), data->rank()));
  int64_t dim = data->dims()[axis];
  int64_t parts = call.node.output_size();
  OC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> split, IntsOf(call, "split", 1));
  std::vector<int64_t> sizes;
  if (split) {
    sizes = *split;
  } else if (int64_t n = call.Int("num_outputs", 0); n > 0) {
    int64_t each = (dim + n - 1) / n;
    for (int64_t i = 0, left = dim; i < n; ++i, left -= each) {
      sizes.push_back(std::max<int64_t>(0, std::min(each, left)));
    }
  } else {
    if (parts == 0 || dim % parts != 0) return call.Error("the axis does not split evenly");
    sizes.assign(parts, dim / parts);
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0) return call.Error("a split size is negative");
    total += size;
  }
  if (total != dim || static_cast<int64_t>(sizes.size()) != parts) {
    return call.Error("the split sizes do not fit the axis or the outputs");
  }
  std::vector<int64_t> begin(data->rank(), 0);
  std::vector<int64_t> in_strides = Strides(data->dims());
  std::vector<int64_t> ones(data->rank(), 1);
  std::vector<Tensor> outputs;
  int64_t start = 0;
  for (int64_t size : sizes) {
    std::vector<int64_t> dims = data->dims();
    dims[axis] = size;
    std::vector<int64_t> offsets;
    offsets.reserve(data->size());
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    offsets.resize(count);
    if (count > 0) {
      ForEachIndex(dims, in_strides, start * in_strides[axis],
                   [&](int64_t i, int64_t offset) { offsets[i] = offset; });
    }
    outputs.push_back(Pick(*data, dims, offsets));
    start += size;
  }
  return outputs;
}

// Expand (numpy broadcast of input and shape) and Tile.
Outputs ExpandKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  const Tensor* shape = call.input(1);
  if (data == nullptr || shape == nullptr) return call.Error("an input is absent");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> target, ToInt64s(*shape));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims({data->dims(), target}));
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  std::vector<int64_t> offsets(count);
  BroadcastCursor cursor(dims, data->dims());
  for (int64_t i = 0; i < count; ++i, cursor.Next()) offsets[i] = cursor.offset();
  return One(Pick(*data, dims, offsets));
}

Outputs TileKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  const Tensor* repeats = call.input(1);
  if (data == nullptr || repeats == nullptr) return call.Error("an input is absent");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> times, ToInt64s(*repeats));
  if (static_cast<int64_t>(times.size()) != data->rank()) {
    return call.Error("repeats do not fit the rank");
  }
  std::vector<int64_t> dims(data->rank());
  for (int64_t i = 0; i < data->rank(); ++i) {
    if (times[i] < 0) return call.Error("a repeat is negative");
    if (times[i] != 0 && data->dims()[i] > kMaxElements / times[i]) {
      return call.Error("the output is too large");
    }
    dims[i] = data->dims()[i] * times[i];
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  std::vector<int64_t> strides = Strides(data->dims());
  std::vector<int64_t> offsets(count);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) offset += (index[d] % data->dims()[d]) * strides[d];
    offsets[i] = offset;
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return One(Pick(*data, dims, offsets));
}

Outputs ConstantOfShapeKernel(const KernelCall& call) {
  const Tensor* shape = call.input(0);
  if (shape == nullptr) return call.Error("input is absent");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ToInt64s(*shape));
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  Tensor fill(onnx::TensorProto::FLOAT, {1});
  if (const onnx::AttributeProto* value = call.attribute("value"); value != nullptr) {
    OC_ASSIGN_OR_RETURN(fill, FromProto(value->t(), 1));
    if (fill.size() != 1) return call.Error("value holds other than one element");
  }
  std::vector<int64_t> offsets(count, 0);
  return One(Pick(fill, dims, offsets));
}

Outputs ShapeKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  int64_t rank = data->rank();
  int64_t start = call.Int("start", 0);
  int64_t end = call.Int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims(data->dims().begin() + start,
                            data->dims().begin() + std::max(start, end));
  return One(Int64Tensor(dims));
}

Outputs SizeKernel(const KernelCall& call) {
  const Tensor* data = Data(call);
  if (data == nullptr) return call.Error("input is absent");
  int64_t size = data->size();
  return One(Int64Tensor({&size, 1}, /*scalar=*/true));
}

Outputs RangeKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<3>(call));
  // Named variables, not a structured binding: the lambda below captures
  // them, which clang 14 (the fuzzing build) does not allow of one.
  const auto start = inputs[0];
  const auto limit = inputs[1];
  const auto delta = inputs[2];
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1 ||
      start->elem_type() != limit->elem_type() || start->elem_type() != delta->elem_type()) {
    return call.Error("expects three scalars of one type");
  }
  absl::StatusOr<Tensor> out = call.Error("no kernel for this type");
  VisitElementType(start->elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      Compute<T> s = Load(start->data<T>()[0]);
      Compute<T> l = Load(limit->data<T>()[0]);
      Compute<T> d = Load(delta->data<T>()[0]);
      if (d == 0) {
        out = call.Error("delta is 0");
        return;
      }
      // ceil((limit - start) / delta), exactly for integers.
      double n;
      if constexpr (std::is_integral_v<T>) {
        __int128 diff = static_cast<__int128>(l) - static_cast<__int128>(s);
        __int128 step = d;
        if (step < 0) {
          diff = -diff;
          step = -step;
        }
        n = diff <= 0 ? 0.0 : static_cast<double>((diff + step - 1) / step);
      } else {
        n = std::ceil((static_cast<double>(l) - s) / d);
      }
      if (!(n < static_cast<double>(kMaxElements))) {
        out = call.Error("the range is too long");
        return;
      }
      int64_t count = n > 0 ? static_cast<int64_t>(n) : 0;
      Tensor t(start->elem_type(), {count});
      // Each element the previous plus delta, in T (integers wrapping).
      Compute<T> value = Load(start->data<T>()[0]);
      Compute<T> step = Load(delta->data<T>()[0]);
      for (int64_t i = 0; i < count; ++i) {
        t.data<T>()[i] = Store<T>(value);
        value = Load(Store<T>(WrapAdd(value, step)));
      }
      out = std::move(t);
    }
  });
  if (!out.ok()) return out.status();
  return One(*std::move(out));
}

}  // namespace onnxconvert::eval::shape_ops
