"""The rule shapes the BUILD files share (Bazel 4 Starlark).

oc_library(name, deps, srcs, hdrs, ...)
    a cc_library of <name>.cc and <name>.h unless srcs or hdrs say otherwise.
oc_test(name, deps, srcs, ...)
    a GoogleTest cc_test of <name>.cc (unless srcs says otherwise), linked
    with gtest_main.
oc_corpus_test(name, deps, size, ...)
    an oc_test that sweeps the backend corpus (//tests:corpus, abseil),
    tagged "corpus": not in the sanitized run.
oc_golden_test(name, goldens, deps, ...)
    an oc_corpus_test that compares with the golden tables
    tests/golden/<golden>.txt (//tests:golden).
oc_tests(names, deps, ...)
    one oc_test per name, all with the same deps and attributes.
oc_unit(name, deps, test_deps, ...)
    an oc_library and its oc_test <name>_test.
oc_test_library(name, deps, srcs, hdrs, ...)
    a testonly oc_library: the header <name>.h alone unless srcs or hdrs
    say otherwise.
oc_binary(name, deps, srcs, ...)
    a cc_binary of <name>.cc unless srcs says otherwise.
"""

GTEST_MAIN = "@system//:gtest_main"

ABSL = "@system//:absl"

def oc_library(name, deps = [], srcs = None, hdrs = None, **kwargs):
    """A cc_library of <name>.cc and <name>.h unless srcs or hdrs are given."""
    native.cc_library(
        name = name,
        srcs = [name + ".cc"] if srcs == None else srcs,
        hdrs = [name + ".h"] if hdrs == None else hdrs,
        deps = deps,
        **kwargs
    )

def oc_test_library(name, deps = [], srcs = [], hdrs = None, **kwargs):
    """A testonly oc_library, header-only (<name>.h) unless srcs or hdrs are given."""
    oc_library(name = name, testonly = True, srcs = srcs, hdrs = hdrs, deps = deps, **kwargs)

def oc_test(name, deps = [], srcs = None, **kwargs):
    """A GoogleTest cc_test of <name>.cc (or srcs) linked with gtest_main."""
    native.cc_test(
        name = name,
        srcs = [name + ".cc"] if srcs == None else srcs,
        deps = deps + [GTEST_MAIN],
        **kwargs
    )

def oc_corpus_test(name, deps = [], size = "large", tags = [], **kwargs):
    """An oc_test over the backend corpus, tagged "corpus" (not sanitized)."""
    oc_test(
        name = name,
        size = size,
        tags = ["corpus"] + tags,
        deps = deps + ["//tests:corpus", ABSL],
        **kwargs
    )

def oc_golden_test(name, goldens, deps = [], **kwargs):
    """An oc_corpus_test comparing with tests/golden/<g>.txt for each g in goldens."""
    oc_corpus_test(
        name = name,
        data = ["//tests:golden/%s.txt" % golden for golden in goldens],
        deps = deps + ["//tests:golden"],
        **kwargs
    )

def oc_binary(name, deps = [], srcs = None, **kwargs):
    """A cc_binary of <name>.cc (or srcs)."""
    native.cc_binary(
        name = name,
        srcs = [name + ".cc"] if srcs == None else srcs,
        deps = deps,
        **kwargs
    )

def oc_tests(names, deps = [], **kwargs):
    """One oc_test per name in names, with the same deps and attributes."""
    for name in names:
        oc_test(name = name, deps = deps, **kwargs)

def oc_unit(name, deps = [], test_deps = [], test_size = None, **kwargs):
    """An oc_library <name> and its oc_test <name>_test (on :<name> and test_deps)."""
    oc_library(name = name, deps = deps, **kwargs)
    oc_test(
        name = name + "_test",
        size = test_size,
        deps = [":" + name] + test_deps,
    )
