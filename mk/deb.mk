# SPDX-License-Identifier: MIT
# Debian packages (debian/): libhwtune1, libhwtune-dev, hwtune.
#
#   make deb           dpkg-buildpackage -us -uc -b in a copy of the tree
#                      (build/pkg/hwtune-VERSION: what a commit would hold,
#                      so a stale build/ never leaks in); the .deb files land
#                      in build/pkg/, then lintian (errors and warnings fail)
#   make deb-symbols   regenerate debian/libhwtune1.symbols from the last
#                      make deb (after adding public functions: the new ones
#                      get this VERSION; removing one needs a soname bump)
# make deps installs debhelper, dpkg-dev and lintian.

DEB_OUT := build/pkg
DEB_TREE := $(DEB_OUT)/hwtune-$(VERSION)

.PHONY: deb deb-tree deb-symbols
deb-tree:
	@rm -rf $(DEB_OUT) && mkdir -p $(DEB_TREE)
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			tar --null -T - --ignore-failed-read -cf - 2>/dev/null; \
	else tar --exclude=./build -cf - .; fi | tar -xf - -C $(DEB_TREE)

deb: deb-tree
	cd $(DEB_TREE) && dpkg-buildpackage -us -uc -b
	@if command -v lintian >/dev/null 2>&1; then \
		echo "lintian $(DEB_OUT)/*.changes"; \
		lintian --fail-on error,warning $(DEB_OUT)/*.changes; \
	else echo "make deb: no lintian (make deps)" >&2; exit 1; fi
	@ls -l $(DEB_OUT)/*.deb

deb-symbols:
	@test -d $(DEB_TREE)/debian/libhwtune1 || { echo "make deb-symbols: run make deb first" >&2; exit 2; }
	dpkg-gensymbols -plibhwtune1 -P$(DEB_TREE)/debian/libhwtune1 -v$(VERSION) \
		-Idebian/libhwtune1.symbols -Odebian/libhwtune1.symbols -c0
