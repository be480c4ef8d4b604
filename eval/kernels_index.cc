// Indexing and rearranging kernels: Pad, GatherElements, GatherND,
// ScatterElements / Scatter, ScatterND, OneHot, NonZero, Compress, Trilu,
// ReverseSequence, DepthToSpace / SpaceToDepth, EyeLike, Unique,
// CenterCropPad and Col2Im. Most compute the source offset of each output
// element and leave the copying to Pick; the scatters compute (output,
// update) offset pairs and apply them with the node's reduction.

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "eval/kernel.h"
#include "eval/kernels.h"
#include "eval/kernel_util.h"

namespace onnxconvert::eval::index_ops {

// `index` in [0, dim) after counting a negative one from the end, or an
// error naming it.
absl::StatusOr<int64_t> InRange(const KernelCall& call, int64_t index, int64_t dim) {
  if (index < -dim || index >= dim) {
    return call.Error(absl::StrCat("index ", index, " is out of range for a dim of ", dim));
  }
  return index < 0 ? index + dim : index;
}

// The multi-index of row-major element `offset` of a tensor of `dims`.
std::vector<int64_t> Unravel(int64_t offset, absl::Span<const int64_t> dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : offset % dims[d];
    offset = dims[d] == 0 ? 0 : offset / dims[d];
  }
  return index;
}

// The offsets, in the output's order, of the elements of a tensor of
// `dims` transposed by `perm`.
std::vector<int64_t> TransposedOffsets(absl::Span<const int64_t> dims,
                                       absl::Span<const int64_t> perm) {
  std::vector<int64_t> strides = Strides(dims);
  std::vector<int64_t> out_dims(perm.size()), out_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_dims[i] = dims[perm[i]];
    out_strides[i] = strides[perm[i]];
  }
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> offsets(count);
  ForEachIndex(out_dims, out_strides, 0, [&](int64_t i, int64_t offset) { offsets[i] = offset; });
  return offsets;
}

// ---------------------------------------------------------------- Pad

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

struct PadModeName {
  const char* name;
  PadMode mode;
  int since;
};
constexpr PadModeName kPadModes[] = {
    {"constant", PadMode::kConstant, 1},
    {"reflect", PadMode::kReflect, 1},
    {"edge", PadMode::kEdge, 1},
    {"wrap", PadMode::kWrap, 19},
};

// The source index along an axis of `dim` kept elements (from `start`) for
// output position `o` of a side padded by `before`; -1 for the constant.
int64_t PadSource(PadMode mode, int64_t o, int64_t before, int64_t start, int64_t dim) {
  int64_t i = o - before;
  if (i >= 0 && i < dim) return start + i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return start + (i < 0 ? 0 : dim - 1);
    case PadMode::kWrap: return start + ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return start;
      int64_t period = 2 * (dim - 1);
      int64_t r = ((i % period) + period) % period;
      return start + (r < dim ? r : period - r);
    }
  }
  return -1;
}

// The constant Pad fills with: attribute `value` before 11, else the
// optional input constant_value (zero, "" or false when absent).
absl::StatusOr<Tensor> PadConstant(const KernelCall& call, const Tensor& data) {
  Tensor fill(data.elem_type(), {});
  if (call.since_version() < 11) {
    double value = call.Float("value", 0);
    bool stored = false;
    VisitElementType(data.elem_type(), [&](auto v) {
      using T = decltype(v);
      if constexpr (kIsFloat<T>) {
        fill.data<T>()[0] = Store<T>(static_cast<Compute<T>>(value));
        stored = true;
      }
    });
    if (!stored) return call.Error(NoKernel(data.elem_type()));
    return fill;
  }
  const Tensor* given = call.input(2);
  if (given == nullptr) return fill;
  if (given->elem_type() != data.elem_type() || given->size() != 1) {
    return call.Error("constant_value is not one element of data's type");
  }
  CopyElement(*given, 0, fill, 0);
  return fill;
}

// Pad: pads by attribute (paddings before 2, pads before 11) or input, on
// the axes input's axes from 18; negative pads crop first, then the modes
// pad the cropped tensor (reflect repeats as numpy's does).
Outputs PadKernel(const KernelCall& call) {
  const Tensor* data = call.input(0);
  if (data == nullptr) return call.Error("data is absent");
  std::optional<std::vector<int64_t>> pads =
      call.Ints(call.since_version() < 2 ? "paddings" : "pads");
  if (call.since_version() >= 11) {
    const Tensor* given = call.input(1);
    if (given == nullptr) return call.Error("pads is absent");
    OC_ASSIGN_OR_RETURN(pads, Int64s(call, *given));
  }
  if (!pads) return call.Error("pads are unset");
  int64_t rank = data->rank();
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (const Tensor* given = call.since_version() >= 18 ? call.input(3) : nullptr) {
    OC_ASSIGN_OR_RETURN(axes, Int64s(call, *given));
    std::vector<bool> seen(rank, false);
    for (int64_t& axis : axes) {
      OC_ASSIGN_OR_RETURN(axis, Axis(call, axis, rank));
      if (seen[axis]) return call.Error("axes repeat");
      seen[axis] = true;
    }
  }
  size_t n = axes.size();
  if (pads->size() != 2 * n) {
    return call.Error(absl::StrCat(pads->size(), " pads for ", n, " axes"));
  }
  const onnx::AttributeProto* mode_attr = call.attribute("mode");
  std::string mode_name = mode_attr == nullptr ? "constant" : mode_attr->s();
  const PadModeName* mode = nullptr;
  for (const PadModeName& m : kPadModes) {
    if (mode_name == m.name && call.since_version() >= m.since) mode = &m;
  }
  if (mode == nullptr) return call.Error(absl::StrCat("mode \"", mode_name, "\" is unknown"));
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < n; ++i) {
    before[axes[i]] = (*pads)[i];
    after[axes[i]] = (*pads)[n + i];
  }
  std::vector<int64_t> dims(rank), start(rank), kept(rank), pad_before(rank);
  for (int64_t a = 0; a < rank; ++a) {
    if (before[a] < -data->dims()[a] || after[a] < -data->dims()[a]) {
      return call.Error(absl::StrCat("the pads crop axis ", a, " below nothing"));
    }
    start[a] = std::max<int64_t>(0, -before[a]);
    kept[a] = data->dims()[a] - start[a] - std::max<int64_t>(0, -after[a]);
    if (kept[a] < 0) return call.Error(absl::StrCat("the pads crop axis ", a, " below nothing"));
    pad_before[a] = std::max<int64_t>(0, before[a]);
    int64_t pad_after = std::max<int64_t>(0, after[a]);
    if (pad_before[a] > kMaxElements || pad_after > kMaxElements) {
      return call.Error("the pads are too large");
    }
    dims[a] = kept[a] + pad_before[a] + pad_after;
    if (kept[a] == 0 && dims[a] > 0 && mode->mode != PadMode::kConstant) {
      return call.Error(absl::StrCat("mode \"", mode_name, "\" pads an empty axis"));
    }
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  // Per axis, the source index of each output position (-1: the constant).
  std::vector<std::vector<int64_t>> sources(rank);
  for (int64_t a = 0; a < rank; ++a) {
    sources[a].resize(dims[a]);
    for (int64_t o = 0; o < dims[a]; ++o) {
      sources[a][o] = PadSource(mode->mode, o, pad_before[a], start[a], kept[a]);
    }
  }
  OC_ASSIGN_OR_RETURN(Tensor fill, PadConstant(call, *data));
  Tensor out(data->elem_type(), dims);
  std::vector<int64_t> strides = Strides(data->dims());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int64_t a = 0; a < rank && offset >= 0; ++a) {
      int64_t s = sources[a][index[a]];
      offset = s < 0 ? -1 : offset + s * strides[a];
    }
    if (offset >= 0) {
      CopyElement(*data, offset, out, i);
    } else {
      CopyElement(fill, 0, out, i);
    }
    for (int64_t a = rank; a-- > 0;) {
      if (++index[a] < dims[a]) break;
      index[a] = 0;
    }
  }
  return One(std::move(out));
}

// ---------------------------------------------------------------- Gathers

// For each element i of `indices` (of data's rank), the offset in `data`
// of i with the axis index taken from indices[i] (negative counting from
// the end); an error for an index out of range or indices reaching past
// data off the axis.
absl::StatusOr<std::vector<int64_t>> ElementOffsets(const KernelCall& call, const Tensor& data,
                                                    const Tensor& indices) {
  if (data.rank() != indices.rank()) return call.Error("data and indices differ in rank");
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", 0), data.rank()));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> index, Int64s(call, indices));
  std::vector<int64_t> strides = Strides(data.dims());
  std::vector<int64_t> offsets(index.size());
  std::vector<int64_t> at(indices.rank(), 0);
  for (size_t i = 0; i < index.size(); ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < indices.rank(); ++d) {
      int64_t k = at[d];
      if (d == axis) {
        OC_ASSIGN_OR_RETURN(k, InRange(call, index[i], data.dims()[d]));
      } else if (k >= data.dims()[d]) {
        return call.Error("indices reach past data off the axis");
      }
      offset += k * strides[d];
    }
    offsets[i] = offset;
    for (int64_t d = indices.rank(); d-- > 0;) {
      if (++at[d] < indices.dims()[d]) break;
      at[d] = 0;
    }
  }
  return offsets;
}

// GatherElements: output[i] = data[i with the axis index taken from
// indices[i]].
Outputs GatherElementsKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [data, indices] = inputs;
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ElementOffsets(call, *data, *indices));
  return One(Pick(*data, indices->dims(), offsets));
}

// The slices GatherND and ScatterND address: for each index tuple (the
// last axis of indices, after `batch` leading axes shared with data), the
// offset of the data slice it names; `slice` elements each.
struct NdSlices {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
  std::vector<int64_t> slice_dims;  // data.dims()[batch + k:]
};

absl::StatusOr<NdSlices> AddressSlices(const KernelCall& call, const Tensor& data,
                                       const Tensor& indices, int64_t batch) {
  if (indices.rank() < 1) return call.Error("indices is a scalar");
  int64_t k = indices.dims().back();
  if (batch < 0 || batch >= indices.rank() || batch >= data.rank() ||
      k > data.rank() - batch) {
    return call.Error("indices' last dim or batch_dims does not fit data's rank");
  }
  for (int64_t b = 0; b < batch; ++b) {
    if (indices.dims()[b] != data.dims()[b]) return call.Error("batch dims differ");
  }
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> index, Int64s(call, indices));
  std::vector<int64_t> strides = Strides(data.dims());
  NdSlices s;
  s.slice_dims.assign(data.dims().begin() + batch + k, data.dims().end());
  for (int64_t d : s.slice_dims) s.slice *= d;
  int64_t tuples = 1;
  for (int64_t d = 0; d + 1 < indices.rank(); ++d) tuples *= indices.dims()[d];
  int64_t per_batch = 1;
  for (int64_t d = batch; d + 1 < indices.rank(); ++d) per_batch *= indices.dims()[d];
  int64_t batch_stride = batch == 0 ? 0 : strides[batch - 1];
  s.offsets.resize(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = per_batch == 0 ? 0 : (t / per_batch) * batch_stride;
    for (int64_t j = 0; j < k; ++j) {
      OC_ASSIGN_OR_RETURN(int64_t i, InRange(call, index[t * k + j], data.dims()[batch + j]));
      offset += i * strides[batch + j];
    }
    s.offsets[t] = offset;
  }
  return s;
}

// GatherND with batch_dims (12+).
Outputs GatherNDKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [data, indices] = inputs;
  int64_t batch = call.Int("batch_dims", 0);
  OC_ASSIGN_OR_RETURN(NdSlices s, AddressSlices(call, *data, *indices, batch));
  std::vector<int64_t> dims(indices->dims().begin(), indices->dims().end() - 1);
  dims.insert(dims.end(), s.slice_dims.begin(), s.slice_dims.end());
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  std::vector<int64_t> offsets;
  offsets.reserve(count);
  for (int64_t base : s.offsets) {
    for (int64_t e = 0; e < s.slice; ++e) offsets.push_back(base + e);
  }
  return One(Pick(*data, dims, offsets));
}

// ---------------------------------------------------------------- Scatters

enum class Combine { kNone, kAdd, kMul, kMax, kMin };

struct CombineName {
  const char* name;
  Combine combine;
  int since;
};
constexpr CombineName kCombines[] = {
    {"none", Combine::kNone, 16}, {"add", Combine::kAdd, 16}, {"mul", Combine::kMul, 16},
    {"max", Combine::kMax, 18},   {"min", Combine::kMin, 18},
};

absl::StatusOr<Combine> ReadReduction(const KernelCall& call) {
  const onnx::AttributeProto* a = call.attribute("reduction");
  if (a == nullptr) return Combine::kNone;
  for (const CombineName& c : kCombines) {
    if (a->s() == c.name && call.since_version() >= c.since) return c.combine;
  }
  return call.Error(absl::StrCat("reduction \"", a->s(), "\" is unknown"));
}

// `data` with updates[src] combined into element dst, for each (dst, src)
// of `moves` in order.
absl::StatusOr<Tensor> ApplyUpdates(const KernelCall& call, const Tensor& data,
                                    const Tensor& updates, Combine combine,
                                    absl::Span<const std::pair<int64_t, int64_t>> moves) {
  if (updates.elem_type() != data.elem_type()) return call.Error("updates' type differs");
  Tensor out = data;
  if (combine == Combine::kNone) {
    for (const auto& [dst, src] : moves) CopyElement(updates, src, out, dst);
    return out;
  }
  bool done = false;
  VisitElementType(data.elem_type(), [&](auto v) {
    using T = decltype(v);
    if constexpr (kIsNumber<T>) {
      using C = Compute<T>;
      absl::Span<T> o = out.data<T>();
      absl::Span<const T> u = updates.data<T>();
      for (const auto& [dst, src] : moves) {
        C a = Load(o[dst]), b = Load(u[src]);
        C r = a;
        switch (combine) {
          case Combine::kAdd: r = WrapAdd(a, b); break;
          case Combine::kMul: r = WrapMul(a, b); break;
          case Combine::kMax: r = b > a ? b : a; break;
          case Combine::kMin: r = b < a ? b : a; break;
          case Combine::kNone: r = b; break;
        }
        o[dst] = Store<T>(r);
      }
      done = true;
    }
  });
  if (!done) return call.Error(absl::StrCat("reduction of ", ElementTypeName(data.elem_type())));
  return out;
}

// ScatterElements (and Scatter 9-10): output = data with updates[i] put at
// i with the axis index taken from indices[i].
Outputs ScatterElementsKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<3>(call));
  auto [data, indices, updates] = inputs;
  if (indices->dims() != updates->dims()) return call.Error("indices and updates differ in shape");
  OC_ASSIGN_OR_RETURN(Combine combine, ReadReduction(call));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ElementOffsets(call, *data, *indices));
  std::vector<std::pair<int64_t, int64_t>> moves(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) moves[i] = {offsets[i], static_cast<int64_t>(i)};
  OC_ASSIGN_OR_RETURN(Tensor out, ApplyUpdates(call, *data, *updates, combine, moves));
  return One(std::move(out));
}

// ScatterND: output = data with each slice that an index tuple names
// replaced by (or combined with) the matching slice of updates.
Outputs ScatterNDKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<3>(call));
  auto [data, indices, updates] = inputs;
  OC_ASSIGN_OR_RETURN(Combine combine, ReadReduction(call));
  OC_ASSIGN_OR_RETURN(NdSlices s, AddressSlices(call, *data, *indices, 0));
  std::vector<int64_t> dims(indices->dims().begin(), indices->dims().end() - 1);
  dims.insert(dims.end(), s.slice_dims.begin(), s.slice_dims.end());
  if (updates->dims() != dims) return call.Error("updates' shape does not fit indices and data");
  std::vector<std::pair<int64_t, int64_t>> moves;
  moves.reserve(updates->size());
  int64_t src = 0;
  for (int64_t base : s.offsets) {
    for (int64_t e = 0; e < s.slice; ++e) moves.emplace_back(base + e, src++);
  }
  OC_ASSIGN_OR_RETURN(Tensor out, ApplyUpdates(call, *data, *updates, combine, moves));
  return One(std::move(out));
}

// TensorScatter: past_cache with update's slices along the axis written
// from each batch entry's write index on (0 without write_indices);
// "circular" wraps the sequence index. (The specification's pseudocode
// wraps the leading indices too, which differs only where a leading dim
// exceeds the sequence length: refused there.)
Outputs TensorScatterKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [past, update] = inputs;
  if (past->elem_type() != update->elem_type() || past->rank() != update->rank() ||
      past->rank() < 2) {
    return call.Error("past_cache and update differ in type or rank, or have rank below 2");
  }
  int64_t rank = past->rank();
  OC_ASSIGN_OR_RETURN(int64_t axis, Axis(call, call.Int("axis", -2), rank));
  if (axis == 0) return call.Error("the axis is the batch axis");
  const onnx::AttributeProto* mode_attr = call.attribute("mode");
  std::string mode = mode_attr == nullptr ? "linear" : mode_attr->s();
  if (mode != "linear" && mode != "circular") {
    return call.Error(absl::StrCat("mode \"", mode, "\" is unknown"));
  }
  bool circular = mode == "circular";
  int64_t max_length = past->dims()[axis];
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis ? update->dims()[d] > max_length : update->dims()[d] != past->dims()[d]) {
      return call.Error("update's shape does not fit past_cache");
    }
    if (circular && d < axis && past->dims()[d] > max_length) {
      return call.Error("circular mode with a leading dim above the sequence length");
    }
  }
  int64_t batch = past->dims()[0];
  std::vector<int64_t> write(batch, 0);
  if (const Tensor* given = call.input(2)) {
    OC_ASSIGN_OR_RETURN(write, Int64s(call, *given));
    if (static_cast<int64_t>(write.size()) != batch) return call.Error("write_indices do not fit the batch");
  }
  AxisSplit p = SplitAt(past->dims(), axis);
  int64_t length = update->dims()[axis];
  int64_t per_batch = p.outer / std::max<int64_t>(batch, 1);  // prefixes per batch entry
  Tensor out = *past;
  for (int64_t outer = 0; outer < p.outer; ++outer) {
    int64_t w = write[outer / std::max<int64_t>(per_batch, 1)];
    for (int64_t s = 0; s < length; ++s) {
      int64_t at;
      if (circular) {
        at = ((w % max_length) + max_length) % max_length;
        at = (at + s) % max_length;
      } else {
        if (w < 0 || w > max_length - length) return call.Error("a write index is out of range");
        at = w + s;
      }
      for (int64_t inner = 0; inner < p.inner; ++inner) {
        CopyElement(*update, (outer * length + s) * p.inner + inner, out,
                    (outer * max_length + at) * p.inner + inner);
      }
    }
  }
  return One(std::move(out));
}

// ---------------------------------------------------------------- Others

// The elements of a numeric tensor as int64, floats truncated (NaN and out
// of range values become `invalid`).
std::vector<int64_t> TruncatedInts(const Tensor& tensor, int64_t invalid) {
  std::vector<int64_t> values;
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    for (const T& x : tensor.data<T>()) {
      if constexpr (std::is_integral_v<T>) {
        bool fits = !std::is_same_v<T, uint64_t> ||
                    x <= static_cast<T>(std::numeric_limits<int64_t>::max());
        values.push_back(fits ? static_cast<int64_t>(x) : invalid);
      } else {
        absl::Status status;
        int64_t i = TruncateTo<int64_t>(Load(x), status);
        values.push_back(status.ok() ? i : invalid);
      }
    }
  });
  return values;
}

// OneHot: indices (cast to int64; negative ones count from depth) become
// on_value at their position along a new axis of `depth`, off_value
// elsewhere; indices outside [-depth, depth) give a row of off_value.
Outputs OneHotKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<3>(call));
  auto [indices, depth_input, values] = inputs;
  if (depth_input->size() != 1 || values->size() != 2) {
    return call.Error("depth is not one element or values not two");
  }
  std::vector<int64_t> depth_value = TruncatedInts(*depth_input, -1);
  if (depth_value.size() != 1 || depth_value[0] < 0) return call.Error("depth is not >= 0");
  int64_t depth = depth_value[0];
  int64_t rank = indices->rank() + 1;
  int64_t axis = call.Int("axis", -1);
  if (axis < -rank || axis >= rank) return call.Error(absl::StrCat("axis ", axis, " is out of range"));
  if (axis < 0) axis += rank;
  std::vector<int64_t> index = TruncatedInts(*indices, std::numeric_limits<int64_t>::min());
  if (static_cast<int64_t>(index.size()) != indices->size()) return call.Error(NoKernel(indices->elem_type()));
  std::vector<int64_t> dims = indices->dims();
  dims.insert(dims.begin() + axis, depth);
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  AxisSplit s = SplitAt(dims, axis);
  std::vector<int64_t> offsets(count, 0);  // 0: off_value, 1: on_value
  for (int64_t outer = 0; outer < s.outer; ++outer) {
    for (int64_t inner = 0; inner < s.inner; ++inner) {
      int64_t i = index[outer * s.inner + inner];
      if (i < -depth || i >= depth) continue;
      if (i < 0) i += depth;
      offsets[(outer * depth + i) * s.inner + inner] = 1;
    }
  }
  return One(Pick(*values, dims, offsets));
}

// Whether element `i` of `tensor` is nonzero (a string: non-empty).
std::vector<bool> NonZeroFlags(const Tensor& tensor) {
  std::vector<bool> flags(tensor.size());
  if (tensor.elem_type() == onnx::TensorProto::STRING) {
    for (int64_t i = 0; i < tensor.size(); ++i) flags[i] = !tensor.strings()[i].empty();
  }
  if (IsNarrow(tensor.elem_type())) {
    for (int64_t i = 0; i < tensor.size(); ++i) {
      flags[i] = NarrowValue(tensor, i) != 0;
    }
  }
  VisitElementType(tensor.elem_type(), [&](auto v) {
    using T = decltype(v);
    absl::Span<const T> x = tensor.data<T>();
    for (int64_t i = 0; i < tensor.size(); ++i) flags[i] = Load(x[i]) != Compute<T>{0};
  });
  return flags;
}

// NonZero: the indices of the nonzero elements, one row per axis, in
// row-major order.
Outputs NonZeroKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("input is absent");
  if (!Holds(x->elem_type())) return call.Error(NoKernel(x->elem_type()));
  std::vector<bool> flags = NonZeroFlags(*x);
  int64_t n = std::count(flags.begin(), flags.end(), true);
  Tensor out(onnx::TensorProto::INT64, {x->rank(), n});
  absl::Span<int64_t> o = out.data<int64_t>();
  int64_t column = 0;
  for (int64_t i = 0; i < x->size(); ++i) {
    if (!flags[i]) continue;
    std::vector<int64_t> index = Unravel(i, x->dims());
    for (int64_t d = 0; d < x->rank(); ++d) o[d * n + column] = index[d];
    ++column;
  }
  return One(std::move(out));
}

// Compress: the slices along the axis (of the flattened input without one)
// whose condition is true; the condition may be shorter than the axis.
Outputs CompressKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [x, condition] = inputs;
  if (condition->elem_type() != onnx::TensorProto::BOOL || condition->rank() != 1) {
    return call.Error("condition is not a 1-D bool tensor");
  }
  std::vector<int64_t> dims = x->dims();
  int64_t axis = 0;
  if (const onnx::AttributeProto* a = call.attribute("axis")) {
    OC_ASSIGN_OR_RETURN(axis, Axis(call, a->i(), x->rank()));
  } else {
    dims = {x->size()};
  }
  AxisSplit s = SplitAt(dims, axis);
  absl::Span<const bool> keep = condition->data<bool>();
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < condition->size(); ++i) {
    if (!keep[i]) continue;
    if (i >= s.dim) return call.Error("condition selects past the axis");
    kept.push_back(i);
  }
  dims[axis] = static_cast<int64_t>(kept.size());
  std::vector<int64_t> offsets;
  for (int64_t outer = 0; outer < s.outer; ++outer) {
    for (int64_t k : kept) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        offsets.push_back((outer * s.dim + k) * s.inner + inner);
      }
    }
  }
  return One(Pick(*x, dims, offsets));
}

// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of each
// matrix of the last two axes; the rest zero.
Outputs TriluKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("input is absent");
  if (x->rank() < 2) return call.Error("the input has rank below 2");
  int64_t k = 0;
  if (const Tensor* given = call.input(1)) {
    if (given->size() != 1) return call.Error("k is not one integer");
    OC_ASSIGN_OR_RETURN(std::vector<int64_t> value, Int64s(call, *given));
    k = value[0];
  }
  bool upper = call.Int("upper", 1) != 0;
  int64_t rows = x->dims()[x->rank() - 2];
  int64_t cols = x->dims()[x->rank() - 1];
  Tensor out(x->elem_type(), x->dims());
  for (int64_t e = 0; e < x->size(); ++e) {
    int64_t j = e % cols;
    int64_t i = (e / cols) % rows;
    // j - i cannot overflow; compare it with k as int64.
    bool keep = upper ? j - i >= k : j - i <= k;
    if (keep) CopyElement(*x, e, out, e);
  }
  return One(std::move(out));
}

// ReverseSequence: for each batch entry, its first sequence_lens[b]
// elements along the time axis reversed.
Outputs ReverseSequenceKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [x, lens_input] = inputs;
  if (x->rank() < 2) return call.Error("the input has rank below 2");
  OC_ASSIGN_OR_RETURN(int64_t batch_axis, Axis(call, call.Int("batch_axis", 1), x->rank()));
  OC_ASSIGN_OR_RETURN(int64_t time_axis, Axis(call, call.Int("time_axis", 0), x->rank()));
  if (batch_axis == time_axis || batch_axis > 1 || time_axis > 1) {
    return call.Error("batch_axis and time_axis are not 0 and 1");
  }
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> lens, Int64s(call, *lens_input));
  if (static_cast<int64_t>(lens.size()) != x->dims()[batch_axis]) {
    return call.Error("sequence_lens does not fit the batch axis");
  }
  std::vector<int64_t> strides = Strides(x->dims());
  std::vector<int64_t> offsets(x->size());
  for (int64_t e = 0; e < x->size(); ++e) {
    std::vector<int64_t> index = Unravel(e, x->dims());
    int64_t len = lens[index[batch_axis]];
    if (len < 0 || len > x->dims()[time_axis]) return call.Error("a sequence length is out of range");
    int64_t t = index[time_axis];
    int64_t source = t < len ? len - 1 - t : t;
    offsets[e] = e + (source - t) * strides[time_axis];
  }
  return One(Pick(*x, x->dims(), offsets));
}

// DepthToSpace (DCR or CRD) and SpaceToDepth of NCHW tensors, as a
// reshape to 6-D, a transpose and a reshape.
template <bool kToSpace>
Outputs BlockKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("input is absent");
  if (x->rank() != 4) return call.Error("the input is not 4-D");
  int64_t b = call.Int("blocksize", 0);
  if (b <= 0 || b > kMaxElements) return call.Error("blocksize is not in [1, 2^31]");
  int64_t n = x->dims()[0], c = x->dims()[1], h = x->dims()[2], w = x->dims()[3];
  std::vector<int64_t> six, perm, dims;
  if constexpr (kToSpace) {
    if (c / b < b || c % (b * b) != 0) {
      return call.Error("channels are not a multiple of blocksize^2");
    }
    const onnx::AttributeProto* mode = call.attribute("mode");
    std::string name = mode == nullptr ? "DCR" : mode->s();
    if (name == "DCR") {
      six = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (name == "CRD") {
      six = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return call.Error(absl::StrCat("mode \"", name, "\" is unknown"));
    }
    dims = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) return call.Error("height or width is not a multiple of blocksize");
    OC_RETURN_IF_ERROR(Count(call, {n, c, b, b}).status());
    six = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    dims = {n, c * b * b, h / b, w / b};
  }
  return One(Pick(*x, dims, TransposedOffsets(six, perm)));
}

// EyeLike: ones on the k-th diagonal of a 2-D tensor of the input's shape,
// of type dtype (the input's by default).
Outputs EyeLikeKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("input is absent");
  if (x->rank() != 2) return call.Error("the input is not 2-D");
  int32_t type = static_cast<int32_t>(call.Int("dtype", x->elem_type()));
  int64_t k = call.Int("k", 0);
  Tensor out(type, x->dims());
  bool held = VisitElementType(type, [&](auto v) {
    using T = decltype(v);
    absl::Span<T> o = out.data<T>();
    int64_t cols = x->dims()[1];
    for (int64_t i = 0; i < x->dims()[0]; ++i) {
      // j = i + k, compared without overflow.
      if (k >= cols - i || k < -i) continue;
      o[i * cols + i + k] = Store<T>(Compute<T>{1});
    }
  });
  if (!held) return call.Error(NoKernel(type));
  return One(std::move(out));
}

// -1, 0 or 1 as x is below, equal to or above y, NaN above every number
// and equal to NaN.
template <typename C>
int Order(C x, C y) {
  if constexpr (std::is_floating_point_v<C>) {
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) return nx == ny ? 0 : (nx ? 1 : -1);
  }
  return x < y ? -1 : (y < x ? 1 : 0);
}

// A total order on elements of one type for Unique: numbers ascending with
// NaN last (NaNs equal), strings by bytes.
int CompareElements(const Tensor& t, int64_t a, int64_t b) {
  if (t.elem_type() == onnx::TensorProto::STRING) {
    return t.strings()[a].compare(t.strings()[b]);
  }
  if (IsNarrow(t.elem_type())) {
    return Order(NarrowValue(t, a), NarrowValue(t, b));
  }
  int result = 0;
  VisitElementType(t.elem_type(), [&](auto v) {
    using T = decltype(v);
    result = Order(Load(t.data<T>()[a]), Load(t.data<T>()[b]));
  });
  return result;
}

// Unique: the distinct elements (or slices along the axis), sorted or in
// order of first occurrence, with the first occurrence of each, each
// element's index into them, and their counts.
Outputs UniqueKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  if (x == nullptr) return call.Error("input is absent");
  if (!Holds(x->elem_type())) return call.Error(NoKernel(x->elem_type()));
  bool sorted = call.Int("sorted", 1) != 0;
  std::vector<int64_t> dims = {x->size()};
  int64_t axis = 0;
  if (const onnx::AttributeProto* a = call.attribute("axis")) {
    OC_ASSIGN_OR_RETURN(axis, Axis(call, a->i(), x->rank()));
    dims = x->dims();
  }
  AxisSplit s = SplitAt(dims, axis);
  // Slice k's elements: (outer * dim + k) * inner + inner_i.
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t outer = 0; outer < s.outer; ++outer) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        int c = CompareElements(*x, (outer * s.dim + a) * s.inner + inner,
                                (outer * s.dim + b) * s.inner + inner);
        if (c != 0) return c;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(s.dim);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  // Groups of equal slices in sorted order; each group's first occurrence
  // is its first member (the sort is stable).
  std::vector<int64_t> group_of(s.dim), firsts, counts;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      firsts.push_back(order[i]);
      counts.push_back(0);
    }
    group_of[order[i]] = static_cast<int64_t>(firsts.size()) - 1;
    ++counts.back();
  }
  std::vector<int64_t> rank_of(firsts.size());  // group -> output position
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(firsts.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return firsts[a] < firsts[b]; });
    for (size_t p = 0; p < by_first.size(); ++p) rank_of[by_first[p]] = static_cast<int64_t>(p);
  }
  int64_t u = static_cast<int64_t>(firsts.size());
  std::vector<int64_t> first_at(u), count_at(u);
  for (int64_t g = 0; g < u; ++g) {
    first_at[rank_of[g]] = firsts[g];
    count_at[rank_of[g]] = counts[g];
  }
  std::vector<int64_t> inverse(s.dim);
  for (int64_t k = 0; k < s.dim; ++k) inverse[k] = rank_of[group_of[k]];
  std::vector<int64_t> y_dims = dims;
  y_dims[axis] = u;
  std::vector<int64_t> offsets;
  for (int64_t outer = 0; outer < s.outer; ++outer) {
    for (int64_t k : first_at) {
      for (int64_t inner = 0; inner < s.inner; ++inner) {
        offsets.push_back((outer * s.dim + k) * s.inner + inner);
      }
    }
  }
  std::vector<Tensor> outputs;
  outputs.push_back(Pick(*x, y_dims, offsets));
  outputs.push_back(Int64Tensor(first_at));
  outputs.push_back(Int64Tensor(inverse));
  outputs.push_back(Int64Tensor(count_at));
  return outputs;
}

// CenterCropPad: each named axis cropped or zero-padded to its target
// around the centre (the odd element at the end).
Outputs CenterCropPadKernel(const KernelCall& call) {
  OC_ASSIGN_OR_RETURN(auto inputs, RequiredInputs<2>(call));
  auto [x, shape] = inputs;
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> target, Int64s(call, *shape));
  int64_t rank = x->rank();
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (std::optional<std::vector<int64_t>> given = call.Ints("axes")) axes = *given;
  if (axes.size() != target.size()) return call.Error("shape does not fit the axes");
  std::vector<int64_t> dims = x->dims();
  std::vector<int64_t> shift(rank, 0);  // source index = output index + shift
  for (size_t i = 0; i < axes.size(); ++i) {
    OC_ASSIGN_OR_RETURN(int64_t a, Axis(call, axes[i], rank));
    if (target[i] < 0) return call.Error("a target dim is negative");
    int64_t dim = x->dims()[a];
    shift[a] = dim >= target[i] ? (dim - target[i]) / 2 : -((target[i] - dim) / 2);
    dims[a] = target[i];
  }
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  Tensor out(x->elem_type(), dims);
  std::vector<int64_t> strides = Strides(x->dims());
  for (int64_t e = 0; e < count; ++e) {
    std::vector<int64_t> index = Unravel(e, dims);
    int64_t offset = 0;
    for (int64_t d = 0; d < rank && offset >= 0; ++d) {
      int64_t s = index[d] + shift[d];
      offset = s < 0 || s >= x->dims()[d] ? -1 : offset + s * strides[d];
    }
    if (offset >= 0) CopyElement(*x, offset, out, e);
  }
  return One(std::move(out));
}

// Col2Im: sums the columns of [N, C * prod(block), L] back into images of
// image_shape, with dilations, pads and strides.
Outputs Col2ImKernel(const KernelCall& call) {
  const Tensor* x = call.input(0);
  const Tensor* image = call.input(1);
  const Tensor* block = call.input(2);
  if (x == nullptr || image == nullptr || block == nullptr) return call.Error("an input is absent");
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> image_shape, Int64s(call, *image));
  OC_ASSIGN_OR_RETURN(std::vector<int64_t> block_shape, Int64s(call, *block));
  size_t n = image_shape.size();
  if (x->rank() != 3 || block_shape.size() != n || n == 0) {
    return call.Error("input is not 3-D or the shapes differ in length");
  }
  std::vector<int64_t> dilations = call.Ints("dilations").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> strides = call.Ints("strides").value_or(std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = call.Ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (dilations.size() != n || strides.size() != n || pads.size() != 2 * n) {
    return call.Error("dilations, strides or pads do not fit the image rank");
  }
  int64_t block_size = 1, columns = 1;
  std::vector<int64_t> grid(n);
  for (size_t i = 0; i < n; ++i) {
    auto within = [](int64_t v, int64_t lowest) { return v >= lowest && v <= kMaxElements; };
    if (!within(block_shape[i], 1) || !within(dilations[i], 1) || !within(strides[i], 1) ||
        !within(image_shape[i], 0) || !within(pads[i], 0) || !within(pads[n + i], 0)) {
      return call.Error("a block dim, dilation or stride is not positive, an image dim or pad "
                        "is negative, or one is past 2^31");
    }
    block_size *= block_shape[i];
    int64_t span = dilations[i] * (block_shape[i] - 1) + 1;
    grid[i] = (image_shape[i] + pads[i] + pads[n + i] - span) / strides[i] + 1;
    if (grid[i] < 0) grid[i] = 0;
    columns *= grid[i];
  }
  if (x->dims()[1] % block_size != 0 || x->dims()[2] != columns) {
    return call.Error("the input's dims do not fit the block and image shapes");
  }
  int64_t batch = x->dims()[0], channels = x->dims()[1] / block_size;
  std::vector<int64_t> dims = {batch, channels};
  dims.insert(dims.end(), image_shape.begin(), image_shape.end());
  OC_ASSIGN_OR_RETURN(int64_t count, Count(call, dims));
  int64_t image_size = count / std::max<int64_t>(batch * channels, 1);
  std::vector<int64_t> image_strides = Strides(image_shape);
  return ForTypes<NumberTypes>(call, x->elem_type(), [&](auto v) -> Outputs {
    using T = decltype(v);
    using A = Wide<T>;
    std::vector<A> acc(count, A{0});
    absl::Span<const T> in = x->data<T>();
    for (int64_t nc = 0; nc < batch * channels; ++nc) {
      for (int64_t kb = 0; kb < block_size; ++kb) {
        std::vector<int64_t> offset = Unravel(kb, block_shape);
        for (int64_t col = 0; col < columns; ++col) {
          std::vector<int64_t> at = Unravel(col, grid);
          int64_t pixel = 0;
          for (size_t i = 0; i < n && pixel >= 0; ++i) {
            int64_t p = at[i] * strides[i] - pads[i] + offset[i] * dilations[i];
            pixel = p < 0 || p >= image_shape[i] ? -1 : pixel + p * image_strides[i];
          }
          if (pixel < 0) continue;
          int64_t src = (nc * block_size + kb) * columns + col;
          A& target = acc[nc * image_size + pixel];
          target = WrapAdd(target, static_cast<A>(Load(in[src])));
        }
      }
    }
    Tensor out(x->elem_type(), dims);
    absl::Span<T> o = out.data<T>();
    for (int64_t i = 0; i < count; ++i) o[i] = Store<T>(static_cast<Compute<T>>(acc[i]));
    return One(std::move(out));
  });
}

template KernelResult BlockKernel<true>(const KernelCall& call);
template KernelResult BlockKernel<false>(const KernelCall& call);

}  // namespace onnxconvert::eval::index_ops
