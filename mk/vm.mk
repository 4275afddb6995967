# SPDX-License-Identifier: MIT
# make check-vm: hwtune on a real kernel (a stage of make check).
# Debian's arm64 kernel boots under qemu-system-aarch64 -M virt,iommu=smmuv3
# (TCG) from an initramfs of busybox, the static aarch64 hwtune and the
# aarch64 test programs, twice: without and with
# arm_smmu_v3.disable_msipolling=1.  Inside: the main job and --json, whose
# kernel section tests/vm/check.py checks against the kernel itself, and the
# unit (first boot) and stress (second boot) suites on the real kernel.
# Skipped, naming the packages, without them (make deps installs
# qemu-system-arm and cpio, and unpacks linux-image-arm64:arm64 and
# busybox-static:arm64 into build/vm-pkgs without installing them); riscv64
# is always skipped: Debian 12 ships no riscv64 kernel.  VM_TIMEOUT (s per
# boot), VM_TEST_TIMEOUT_SCALE, VM_STRESS_MS and VM_JOB_S tune it
# (tests/vm/run.sh).
.PHONY: check-vm
check-vm:
ifeq ($(CROSS),)
	@mkdir -p build
	@if command -v aarch64-linux-gnu-gcc >/dev/null; then \
		$(MAKE) --no-print-directory CROSS=aarch64-linux-gnu- tests >/dev/null || exit 1; fi; \
	if ! command -v aarch64-linux-gnu-gcc >/dev/null; then \
		echo "# SKIP suite aarch64-vm: needs gcc-aarch64-linux-gnu (make deps)"; \
		echo "0 0 1" >> $(COUNTS); exit 0; fi; \
	sh tests/vm/run.sh $(COUNTS) build/aarch64
endif

# The packages of check-vm (make deps runs this as root).  The arm64 kernel
# and busybox are never installed on the host (an arm64 busybox-static would
# replace the host's /bin/busybox): apt-get downloads them and dpkg-deb
# unpacks them into $(VM_PKG_DIR), where tests/vm/run.sh looks.
VM_DEPS := qemu-system-arm cpio
VM_DEPS_ARM64 := linux-image-arm64 busybox-static
VM_PKG_DIR := build/vm-pkgs
.PHONY: deps-vm
deps-vm:
	@if [ "$$(id -u)" != 0 ]; then echo "make deps-vm: run as root (apt-get)" >&2; exit 1; fi
	dpkg --add-architecture arm64
	apt-get -o DPkg::Lock::Timeout=900 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
		--no-install-recommends $(VM_DEPS)
	rm -rf $(VM_PKG_DIR) && mkdir -p $(VM_PKG_DIR)/root
	cd $(VM_PKG_DIR) && kpkg=$$(apt-cache depends linux-image-arm64:arm64 | \
		sed -n 's/^ *Depends: \(linux-image-[^:]*\):arm64$$/\1/p' | head -n 1) && \
		[ -n "$$kpkg" ] && apt-get -o APT::Sandbox::User=root download -qq "$$kpkg:arm64" busybox-static:arm64 && \
		for d in *.deb; do dpkg-deb -x "$$d" root || exit 1; done
