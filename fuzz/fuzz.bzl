"""One fuzz target, three ways to build it.

onnx_fuzz_target(name, srcs, deps, seeds) declares:
  <name>_lib     the target's LLVMFuzzerTestOneInput;
  <name>         the libFuzzer binary (tagged manual: it links
                 -fsanitize=fuzzer, so it builds only under --config=fuzz
                 with clang; tools/fuzz.sh runs it);
  <name>_replay  a test that feeds the target its seed corpus (drawn from
                 the backend corpus as `seeds` says) and every input under
                 regressions/<name>/: part of `bazel test //...`, and of the
                 ASan + UBSan run in CI.
"""

def onnx_fuzz_target(name, srcs, deps, seeds):
    native.cc_library(
        name = name + "_lib",
        srcs = srcs,
        deps = deps,
        alwayslink = 1,
    )
    native.cc_binary(
        name = name,
        deps = [":" + name + "_lib"],
        linkopts = ["-fsanitize=fuzzer"],
        tags = ["manual"],
    )
    native.cc_test(
        name = name + "_replay",
        size = "large",
        deps = [
            ":" + name + "_lib",
            ":replay",
        ],
        data = native.glob(["regressions/" + name + "/**"]),
        env = {
            "FUZZ_TARGET": name,
            "FUZZ_SEEDS": seeds,
        },
    )
