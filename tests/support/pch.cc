// The source of ballast_test_pch (tests/CMakeLists.txt), the target that
// precompiles the headers every test executable reuses: it has nothing of its
// own to compile.
