"""cli_test: a test of the whole command line (cli_test_util.h runs it)."""

load("//tools:defs.bzl", "ABSL", "oc_test")

def cli_test(name, deps = [], **kwargs):
    """An oc_test of <name>.cc with cli_test_util.h, linked with :cli and abseil."""
    oc_test(
        name = name,
        srcs = [
            "cli_test_util.h",
            name + ".cc",
        ],
        deps = [
            ":cli",
            ABSL,
        ] + deps,
        **kwargs
    )
