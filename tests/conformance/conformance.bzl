"""The ONNX Runtime test drivers of tests/conformance.

Each driver is an executable Python 3 script run as an sh_test: the py_test
stub of Bazel 4 needs a `python` command, which Debian 12 does not have.
"""

# What ort_conformance.py runs and reads: the converter, the harness and,
# through //:WORKSPACE, the source tree's tools/ort/node_modules and the
# corpus.
CONFORMANCE_DATA = [
    ":convert_corpus",
    "//:WORKSPACE",
    "//tests:test_paths.py",
    "//tools/ort:run_models.js",
]

# The tests that drive the CLI name it with these.
CLI_ARGS = [
    "--cli",
    "$(rootpath //cli:onnx-convert)",
]

def ort_conformance_test(name, args, data = CONFORMANCE_DATA, **kwargs):
    """ort_conformance.py on the corpus :convert_corpus converts, with args."""
    native.sh_test(
        name = name,
        srcs = ["ort_conformance.py"],
        args = [
            "--convert-corpus",
            "$(rootpath :convert_corpus)",
        ] + args,
        data = data,
        **kwargs
    )

def ort_optimize_test(name, args, **kwargs):
    """ort_optimize.py through the CLI, with args."""
    native.sh_test(
        name = name,
        srcs = ["ort_optimize.py"],
        args = CLI_ARGS + args,
        data = [
            "ort_conformance.py",  # the shared ORT helpers it imports
            "//:WORKSPACE",
            "//cli:onnx-convert",
            "//tests:test_paths.py",
            "//tools/ort:run_models.js",
        ],
        **kwargs
    )
