"""Where the Python test drivers find the source tree and the backend corpus.

A driver in a folder below tests/ imports it after putting tests/ on its
path (the runfiles tree holds this file there when the test lists
//tests:test_paths.py in its data; so does the source tree):

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from test_paths import workspace_root
"""

import os

# The corpus's folders of cases, as tests/corpus.cc reads them.
CORPUS_SUITES = ("node", "simple", "pytorch-operator")


def workspace_root():
    """The source tree, through the //:WORKSPACE runfile symlink (tests and
    `bazel run` start in the runfiles tree) or else this file's place."""
    runfiles = os.path.join(os.environ.get("TEST_SRCDIR", ""), "onnx_convert", "WORKSPACE")
    for link in ("WORKSPACE", runfiles):
        if os.path.exists(link):
            return os.path.dirname(os.path.realpath(link))
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def backend_corpus_root():
    """The backend corpus: $ONNX_BACKEND_TESTS, else ../shared/onnx-backend-tests
    beside the source tree."""
    return os.environ.get("ONNX_BACKEND_TESTS") or os.path.join(
        os.path.dirname(workspace_root()), "shared", "onnx-backend-tests")


def corpus_models(corpus):
    """(suite, case, path) of every model.onnx of the corpus's suites, by
    suite then case name."""
    found = []
    for suite in CORPUS_SUITES:
        folder = os.path.join(corpus, suite)
        if not os.path.isdir(folder):
            continue
        for case in sorted(os.listdir(folder)):
            path = os.path.join(folder, case, "model.onnx")
            if os.path.isfile(path):
                found.append((suite, case, path))
    return found
