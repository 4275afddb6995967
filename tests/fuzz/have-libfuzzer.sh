#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fuzz/have-libfuzzer.sh CC: exit 0 if CC links a libFuzzer target
# with ASan and UBSan (clang and its runtimes, libclang-rt-*-dev).
cc=${1:-clang}
command -v "$cc" >/dev/null 2>&1 || exit 1
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	> "$d/t.c"
"$cc" -fsanitize=fuzzer,address,undefined -o "$d/t" "$d/t.c" >/dev/null 2>&1 && "$d/t" -runs=1 >/dev/null 2>&1
