#ifndef ONNX_CONVERT_CONVERTER_ADAPTER_PLAN_H_
#define ONNX_CONVERT_CONVERTER_ADAPTER_PLAN_H_

// How the converter picks the adapter of each node at a step: once per pair
// of operator versions (AdapterPlan), then per node (FindAdapter), and the
// check that a rewritten node fits the version it binds to.

#include <string>

#include "absl/status/status.h"
#include "adapters/adapter.h"
#include "proto/onnx.pb.h"
#include "schema/registry.h"

namespace onnxconvert::converter {

using adapters::AdapterEntry;

// What FindAdapter decides once per pair of versions, before looking at
// nodes: the rewrite registered for the pair, if any, and the pair's name.
struct AdapterPlan {
  const schema::OpSchema* from;
  const schema::OpSchema* to;
  const AdapterEntry* rewrite;  // null: derived from the registry
  std::string name;             // e.g. "Relu 13->14"
  // Every type a value may have under `from` is allowed by `to` in the same
  // place, with no new same-type requirement: nodes need no type check.
  bool types_widen = false;
  // A node that validates bound to `from` validates bound to `to`, with the
  // same output types (schema::NodeValidationUnchanged).
  bool validates_alike = false;
  // Every node valid under `from` is valid under `to` as it is, with the
  // same output types: same signature, attributes and inference, wider
  // types, no rewrite, no change of meaning. FindAdapter says kCompatible
  // for every valid node without looking at it.
  bool rebinds_only = false;
};

// The plan for converting between two adjacent versions of an operator:
// made on the first request for the pair and kept for the process (the
// registry never changes), so that windows ask for it at every step.
// Thread-safe.
const AdapterPlan& PlanAdapter(const schema::OpSchema& from, const schema::OpSchema& to);

// The adapter for converting `node` between the plan's two adjacent
// operator versions (either direction): the registered rewrite, else one
// derived from the registry. Compatible changes have identical inputs and
// outputs, and attributes that mean the same for this node (those it sets
// exist with the same type, those it leaves unset keep their default);
// type sets are checked by the caller. Changes the spec lists as semantic
// are never treated as compatible.
AdapterEntry FindAdapter(const AdapterPlan& plan, const onnx::NodeProto& node);

// OK when `node` fits operator version `to`; else FailedPrecondition saying
// why (an attribute `to` lacks or types differently, a required attribute or
// input missing, too many inputs or outputs). Run after a rewrite.
absl::Status NodeFitsVersion(const schema::OpSchema& to, const onnx::NodeProto& node);

}  // namespace onnxconvert::converter

#endif  // ONNX_CONVERT_CONVERTER_ADAPTER_PLAN_H_
