#!/bin/sh
# SPDX-License-Identifier: MIT
# Every public header compiles alone, as C11 (gcc, clang) and as C++.
. tests/tap.sh
for h in include/hwtune/*.h; do
	for cc in "${CC:-gcc} -std=c11 -x c" "clang -std=c11 -x c" "g++ -std=c++11 -x c++"; do
		set -- $cc
		if ! command -v "$1" >/dev/null 2>&1; then
			tap_skip "$h alone ($1)" "$1 not installed"
			continue
		fi
		tap_ok "$h alone ($*)" sh -c "echo '#include <hwtune/$(basename "$h")>' |
			$* -Iinclude -Wall -Wextra -Werror -fsyntax-only - 2>&1"
	done
done
tap_end
