# SPDX-License-Identifier: MIT
# Releases.  The version has one home, VERSION_MAJOR/MINOR/PATCH at the top
# of the Makefile; tests/native/version.sh fails when a copy of it (header
# macros, hwt_version(), --version, hwtune.pc, man .TH lines,
# debian/changelog, NEWS.md) says otherwise.
#
#   make check-unit             the systemd unit (tests/native/systemd.sh)
#   make print-version          the version
#   make set-version V=X.Y.Z    rewrite every copy (Makefile, header, man
#                               pages, a new debian/changelog entry)
#   make dist                   build/hwtune-VERSION.tar.gz (+ .sha256): git
#                               archive of HEAD (committed files only)
#   make distcheck              unpack that tarball in a temporary folder,
#                               build it and run make check there (a file the
#                               tarball lacks fails it); DISTCHECK_TARGETS
#                               overrides "check" for a quicker look

DIST_NAME := hwtune-$(VERSION)
DIST_TAR := build/$(DIST_NAME).tar.gz
DISTCHECK_TARGETS ?= check

.PHONY: print-version set-version dist distcheck check-unit

# hwtune-probe.service through systemd-analyze verify and security, and its
# system-call allow-list against what the probe calls (tests/native/systemd.sh,
# also part of make check's native stage).
check-unit: all
	@mkdir -p build && HWT_TEST_ONLY=systemd sh tests/run.sh native $(BUILD) build/check-unit.counts
print-version:
	@echo $(VERSION)

set-version:
	@test -n "$(V)" || { echo "make set-version: V=X.Y.Z" >&2; exit 2; }
	sh dist/set-version.sh $(V)

dist:
	@git rev-parse --verify -q HEAD >/dev/null || { echo "make dist: needs a git checkout" >&2; exit 2; }
	@if ! git diff --quiet HEAD; then echo "make dist: uncommitted changes are not in the tarball" >&2; fi
	@mkdir -p build
	git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o $(DIST_TAR) HEAD
	cd build && sha256sum $(DIST_NAME).tar.gz > $(DIST_NAME).tar.gz.sha256
	@echo "$(DIST_TAR): $$(wc -c < $(DIST_TAR)) bytes, $$(tar -tzf $(DIST_TAR) | grep -vc '/$$') files"

distcheck: dist
	@d=$$(mktemp -d) && trap 'rm -rf "$$d"' EXIT && \
	(cd build && sha256sum -c $(DIST_NAME).tar.gz.sha256) && \
	tar -xzf $(DIST_TAR) -C "$$d" && \
	echo "distcheck: make $(DISTCHECK_TARGETS) in $$d/$(DIST_NAME)" && \
	env -u MAKEFLAGS -u MAKELEVEL $(MAKE) -C "$$d/$(DIST_NAME)" $(DISTCHECK_TARGETS) && \
	echo "distcheck: $(DIST_TAR) builds and passes make $(DISTCHECK_TARGETS)"
