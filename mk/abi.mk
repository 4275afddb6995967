# SPDX-License-Identifier: MIT
# The ABI guard (abi/check.sh has the rule): make check-abi compares this
# build's libhwtune.so with abi/libhwtune.abi (abidiff); make abi-update
# rewrites that baseline from the release library (the default build:
# native gcc, OPT=-O2 -g).  Both need abigail-tools (make deps); check-abi
# is skipped, naming it, without them.  A cross build has no check-abi.
ABI_LIB := build/libhwtune.so

.PHONY: check-abi abi-update
check-abi:
ifeq ($(CROSS),)
	@if command -v abidw >/dev/null 2>&1; then $(MAKE) --no-print-directory $(BUILD)/libhwtune.so; fi
	@mkdir -p build && sh abi/check.sh $(BUILD)/libhwtune.so $(COUNTS)
endif

abi-update:
	@$(MAKE) --no-print-directory BUILD=build OPT="-O2 -g" $(ABI_LIB)
	@sh abi/check.sh --update $(ABI_LIB)
