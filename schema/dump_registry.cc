// Prints every schema of the registry in a canonical line format, one fact
// per line, for comparison with the JSON it was generated from
// (registry_matches_json_test).

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schema/registry.h"

namespace onnxconvert::schema {
namespace {

constexpr const char* kOptions[] = {"Single", "Optional", "Variadic"};
constexpr const char* kDifferentiation[] = {"Unknown", "Differentiable", "NonDifferentiable"};

std::string Param(const FormalParam& p) {
  return absl::StrCat(p.name, "|", p.type_str, "|", kOptions[static_cast<int>(p.option)], "|",
                      p.is_homogeneous, "|", p.min_arity, "|",
                      kDifferentiation[static_cast<int>(p.differentiation)]);
}

std::string Default(const AttrSpec& a) {
  if (!a.has_default) return "-";
  switch (a.type) {
    case onnx::AttributeProto::INT: return absl::StrCat(a.default_value.i);
    case onnx::AttributeProto::FLOAT: return absl::StrCat(a.default_value.f);
    case onnx::AttributeProto::STRING: return std::string(a.default_value.s);
    case onnx::AttributeProto::INTS: return absl::StrJoin(a.default_value.ints, ",");
    case onnx::AttributeProto::STRINGS: return absl::StrJoin(a.default_value.strings, ",");
    default: return "?";
  }
}

void Dump(const OpSchema& s) {
  std::string id = absl::StrCat(s.domain, "/", s.name, "/", s.since_version);
  std::cout << id << " deprecated=" << s.deprecated << " inputs=" << s.min_input << ".."
            << s.max_input << " outputs=" << s.min_output << ".." << s.max_output
            << " inference=" << s.has_type_and_shape_inference << " function=" << s.has_function
            << "\n";
  for (const FormalParam& p : s.inputs) std::cout << id << " in " << Param(p) << "\n";
  for (const FormalParam& p : s.outputs) std::cout << id << " out " << Param(p) << "\n";
  for (const AttrSpec& a : s.attributes) {
    std::cout << id << " attr " << a.name << "|" << onnx::AttributeProto::AttributeType_Name(a.type)
              << "|" << a.required << "|" << Default(a) << "\n";
  }
  for (const TypeConstraint& c : s.type_constraints) {
    std::cout << id << " constraint " << c.type_param << "|" << absl::StrJoin(c.allowed_types, ",")
              << "\n";
  }
  for (const FunctionBody& b : s.function_bodies) {
    std::cout << id << " body " << b.opset << "|" << b.text.size() << "\n";
  }
  std::cout << id << " context_dependent " << absl::StrJoin(s.context_dependent_function_opsets, ",")
            << "\n";
}

}  // namespace
}  // namespace onnxconvert::schema

int main() {
  for (const auto& schema : onnxconvert::schema::Registry::Get().All()) {
    onnxconvert::schema::Dump(schema);
  }
  return 0;
}
