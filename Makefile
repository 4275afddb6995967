# SPDX-License-Identifier: MIT
# hwtune build: plain GNU make, no configure step.
#
#   make                         libhwtune.a, libhwtune.so, build/hwtune
#   make run                     build and run the main job
#   make check                   every test suite; ends with "N passed, N failed, N skipped"
#   make CROSS=aarch64-linux-gnu-   cross build (static) into build/aarch64/
#   make CC=clang                into build/clang/ (each variant has its folder: build/noasm,
#                                build/aarch64, build/san-thread ...; BUILD= overrides)
#   make SAN=thread BUILD=build/tsan   sanitizer build
#   make SAN=address,undefined BUILD=build/asan   (every sanitizer but TSan halts on its first report)
#   make NO_ASM=1                force the generic (plain C) arch layer (into build/noasm/)
#   make deps                    install the optional tools the suites use (apt-get)
#   make soak                    the public-API random stress for ~2 minutes (seed, totals)
#   make check-fuzz [FUZZ_TIME=25]   the libFuzzer targets of tests/fuzz, FUZZ_TIME s each
#   make install [PREFIX=/usr/local] [DESTDIR=]   library, headers, hwtune.pc, tool, man pages,
#                                the systemd unit hwtune-probe.service (not enabled; SYSTEMDUNITDIR)
#   make bench-cmdq              hwt_cmdq against rte_ring(_rts) / ck_ring / wfcqueue / a mutex ring (JSON);
#                                rte_ring needs dpdk-dev (not in make deps: ~230 packages)
#   make bench [BENCH_QUICK=1]   every benchmark: JSON in bench/results/<date>-<host>/, plots,
#                                docs/benchmarks.md (~5-10 min; quick ~1 min); make bench-report
#                                [RESULTS=dir] regenerates the plots and the page from the JSON
#   make bench-deps              install the benchmark peers and gnuplot (dpdk-dev, libck-dev, liburcu-dev, gnuplot-nox; apt-get)

VERSION_MAJOR := 0
VERSION_MINOR := 2
VERSION_PATCH := 0
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
# The ABI's number, the soname's (libhwtune.so.$(ABI_MAJOR)): raised with every
# incompatible change (make check-abi), whatever the version says.
ABI_MAJOR := 1

CROSS ?=
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
AR := $(CROSS)ar

TRIPLE := $(shell $(CC) -dumpmachine 2>/dev/null)
ARCH := $(firstword $(subst -, ,$(TRIPLE)))
ifeq ($(filter $(ARCH),x86_64 aarch64 riscv64),)
ARCHDIR := generic
else ifeq ($(NO_ASM),1)
ARCHDIR := generic
else
ARCHDIR := $(ARCH)
endif
ifeq ($(ARCHDIR),generic)
ARCH_DEFS := -DHWT_ARCH_GENERIC
endif

# Every build variant has its own folder by default, so that switching
# variants never links objects of two of them: build/ (native gcc),
# build/$(ARCH) (CROSS), then -noasm (NO_ASM=1), -<cc> (a CC other than gcc,
# e.g. build/clang), -san-<list> (SAN; make check names its own folders,
# build/asan and build/tsan).  BUILD= overrides it; whatever the folder,
# $(BUILD)/flags (below) rebuilds everything when the flags change.
comma := ,
empty :=
space := $(empty) $(empty)
ifneq ($(CROSS),)
STATIC := -static
endif
CC_NAME := $(subst $(space),_,$(notdir $(CC)))
BUILD_TAGS := $(if $(filter 1,$(NO_ASM)),noasm) \
	$(if $(filter-out gcc $(CROSS)gcc,$(CC_NAME)),$(CC_NAME)) \
	$(if $(SAN),san-$(subst $(comma),-,$(SAN)))
BUILD_BASE := $(if $(CROSS),build/$(ARCH),build)
BUILD_TAG := $(subst $(space),-,$(strip $(BUILD_TAGS)))
BUILD ?= $(BUILD_BASE)$(if $(BUILD_TAG),$(if $(CROSS),-,/)$(BUILD_TAG))

OPT ?= -O2 -g
CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -fno-strict-aliasing $(OPT) -pthread \
	-Iinclude -Isrc -Itests $(ARCH_DEFS) -DHWT_VERSION_STRING='"$(VERSION)"'
ifneq ($(SAN),)
CFLAGS_BASE += -fsanitize=$(SAN) -fno-omit-frame-pointer
# ASan/UBSan: a report ends the program (the TSan stage sets halt_on_error instead).
ifneq ($(filter-out thread,$(SAN)),)
CFLAGS_BASE += -fno-sanitize-recover=all
endif
SAN_LD := -fsanitize=$(SAN)
STATIC :=
endif
# libhwtune.so may not leave a symbol undefined, except in a sanitizer build:
# clang links a sanitizer's runtime into the program only, not into the
# shared library (gcc links it into both).
ZDEFS := $(if $(SAN),,-Wl,-z,defs)
LIB_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden
ASFLAGS := -fPIC -Isrc
LDLIBS := -pthread
# Programs (tools/, bench/) see only the public headers and their helpers
# in prog/ (#include "prog/json.h"); hwtune's own objects also see tools/.
PROG_CFLAGS := $(filter-out -Isrc -Itests,$(CFLAGS_BASE)) -I.
TOOL_CFLAGS := $(PROG_CFLAGS) -Itools

# Library sources: every subsystem directory, plus the one arch directory in use.
LIB_SRCS := $(filter-out src/arch/%,$(wildcard src/*/*.c)) \
	$(wildcard src/arch/*.c) $(wildcard src/arch/$(ARCHDIR)/*.c)
LIB_ASM := $(wildcard src/arch/$(ARCHDIR)/*.S)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB_ASM:%.S=$(BUILD)/obj/%.o)
HEADERS := $(wildcard include/hwtune/*.h src/*/*.h src/arch/*/*.h)

# prog/: helpers of the programs (hwtune and the benches), public API only;
# tools/ (hwtune: one folder per command) and bench/ both build on it.
PROG_SRCS := $(wildcard prog/*.c)
PROG_OBJS := $(PROG_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_SRCS := $(wildcard tools/*.c tools/*/*.c)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o) $(PROG_OBJS)
TOOL_HEADERS := $(wildcard tools/*.h tools/*/*.h prog/*.h)

# The harness and the helpers tests may use (tests/harness/*.c), as an
# archive: a test program links only what it uses.  A test object also
# depends on the harness headers.
HARNESS_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/harness/*.c))
HARNESS_OBJ := $(BUILD)/obj/tests/harness/libtst.a
TEST_SRCS := $(wildcard tests/unit/*.c tests/stress/*.c)
TEST_BINS := $(foreach s,$(TEST_SRCS),$(BUILD)/tests/$(word 2,$(subst /, ,$(s)))_$(basename $(notdir $(s))))
$(TEST_SRCS:%.c=$(BUILD)/obj/%.o) $(HARNESS_OBJS): $(wildcard tests/harness/*.h)

# One program per bench/*.c; bench_probe also links bench/probe/*.c.
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
BENCH_PROBE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard bench/probe/*.c))
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/obj/%.o) $(BENCH_PROBE_OBJS)

.PHONY: all run examples man-lint check check-native check-sanitize check-tsan check-cross tests bench bench-probe \
	bench-cmdq bench-sync bench-report bench-check rmw-count rmw-list soak \
	deps bench-deps clean install uninstall
.DELETE_ON_ERROR:
# No "Entering directory" lines on stdout (make -C DIR bench-probe > file).
MAKEFLAGS += --no-print-directory
.DEFAULT_GOAL := all

all: $(BUILD)/libhwtune.a $(BUILD)/libhwtune.so $(BUILD)/hwtune

# $(BUILD)/flags holds the compile and link commands of this build; it is
# rewritten only when they change (make OPT=-O0, NO_ASM=1 with BUILD=...),
# and everything compiled or linked depends on it.
# (FLAGS_LIB: the library's flags, which tools/, prog/ and bench/ objects override
# for themselves and so for their prerequisites; sq: one shell word.)
FLAGS_STAMP := $(BUILD)/flags
FLAGS_LIB := $(LIB_CFLAGS)
sq = '$(subst ','\'',$(1))'
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' $(call sq,CC=$(CC)) $(call sq,AR=$(AR)) $(call sq,LIB_CFLAGS=$(FLAGS_LIB)) \
		$(call sq,PROG_CFLAGS=$(PROG_CFLAGS)) $(call sq,ASFLAGS=$(ASFLAGS)) \
		$(call sq,LINK=$(STATIC) $(SAN_LD) $(ZDEFS) $(LDLIBS)) > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(BUILD)/obj/%.o: %.c $(HEADERS) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/prog/%.o $(BUILD)/obj/bench/%.o: LIB_CFLAGS = $(PROG_CFLAGS)
$(BUILD)/obj/tools/%.o: LIB_CFLAGS = $(TOOL_CFLAGS)
$(TOOL_OBJS): $(TOOL_HEADERS)
$(BENCH_OBJS): $(wildcard prog/*.h bench/probe/*.h)

$(BUILD)/obj/%.o: %.S $(HEADERS) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASFLAGS) -c $< -o $@

$(BUILD)/libhwtune.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/libhwtune.so: $(LIB_OBJS) src/libhwtune.map $(FLAGS_STAMP)
	$(CC) -shared -Wl,-soname,libhwtune.so.$(ABI_MAJOR) -Wl,--version-script=src/libhwtune.map \
		$(ZDEFS) $(SAN_LD) -o $@ $(LIB_OBJS) $(LDLIBS)

$(BUILD)/hwtune: $(TOOL_OBJS) $(BUILD)/libhwtune.a $(FLAGS_STAMP)
	$(CC) $(STATIC) $(SAN_LD) -o $@ $(TOOL_OBJS) $(BUILD)/libhwtune.a $(LDLIBS)

# Tests: one program per file, linked with the harness and the static library
# (tests may use internal headers; tools may not).
define test_rule
$(BUILD)/tests/$(word 2,$(subst /, ,$(1)))_$(basename $(notdir $(1))): $(BUILD)/obj/$(1:.c=.o) $(HARNESS_OBJ) $(BUILD)/libhwtune.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(STATIC) $$(SAN_LD) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach s,$(TEST_SRCS),$(eval $(call test_rule,$(s))))

# tests/stress/rseq.c also links test builds of the rseq assembly (where the
# arch has one; their names: src/arch/rseq_builds.h): rseq-test counts its
# restarts, and the mutants the storm must catch: rseq-broken commits sprod
# before the entries, -post leaves the commit out of the section, -nocpu does
# not check the CPU inside it, -msiaddr does not store a CMD_SYNC's MSIADDR,
# -pubout publishes outside a section, -ntfence (x86_64) leaves out the sfence
# after a non-temporal copy, -pubcpu publishes without checking the CPU.  The
# library never contains any of them.
RSEQ_S := $(wildcard src/arch/$(ARCHDIR)/rseq.S)
RSEQ_BUILDS := test broken broken-post broken-nocpu broken-msiaddr broken-pubout broken-ntfence broken-pubcpu
rseq_def_broken := -DHWT_RSEQ_BROKEN_COMMIT
rseq_def_broken-post := -DHWT_RSEQ_BROKEN_POST
rseq_def_broken-nocpu := -DHWT_RSEQ_BROKEN_NOCPU
rseq_def_broken-msiaddr := -DHWT_RSEQ_BROKEN_MSIADDR
rseq_def_broken-pubout := -DHWT_RSEQ_BROKEN_PUBOUT
rseq_def_broken-ntfence := -DHWT_RSEQ_BROKEN_NTFENCE
rseq_def_broken-pubcpu := -DHWT_RSEQ_BROKEN_PUBCPU
ifneq ($(RSEQ_S),)
$(BUILD)/obj/tests/rseq-%.o: $(RSEQ_S) $(HEADERS) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ASFLAGS) -DHWT_RSEQ_TEST $(rseq_def_$*) -c $< -o $@
$(BUILD)/tests/stress_rseq: $(RSEQ_BUILDS:%=$(BUILD)/obj/tests/rseq-%.o)
endif

$(HARNESS_OBJ): $(HARNESS_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

tests: all $(TEST_BINS) $(BUILD)/test-hwtune

# The CLI tests' build of the tool: the shipped objects plus the harness's
# probe_hook.o, which sets the probe's test hook from HWTUNE_TEST_FORCE_*.
$(BUILD)/test-hwtune: $(TOOL_OBJS) $(BUILD)/obj/tests/harness/probe_hook.o $(BUILD)/libhwtune.a
	$(CC) $(STATIC) $(SAN_LD) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/bench_probe: $(BENCH_PROBE_OBJS)
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(PROG_OBJS) $(BUILD)/libhwtune.a
	@mkdir -p $(dir $@)
	$(CC) $(STATIC) $(SAN_LD) -o $@ $^ $(LDLIBS) -lm

# make bench: every benchmark (bench/run.sh), JSON per run in
# bench/results/<date>-<host>/, plots and docs/benchmarks.md (bench/report.sh).
# BENCH_QUICK=1: short runs (~1 min) to validate the harness.  Never in make check.
BENCH_QUICK ?= 0
bench: $(BENCH_BINS) $(BUILD)/bench/bench_cmdq $(BUILD)/hwtune
	BENCH_QUICK=$(BENCH_QUICK) sh bench/run.sh $(BUILD)

# Regenerate the plots and docs/benchmarks.md from one results folder
# (default: the newest under bench/results/, else the published run that
# docs/benchmarks.md cites, docs/benchmarks/<date>-<host>/).
BENCH_PUBLISHED := $(patsubst %/,%,$(lastword $(sort $(wildcard docs/benchmarks/[0-9]*-*/))))
RESULTS ?= $(or $(lastword $(sort $(wildcard bench/results/*-*))),$(BENCH_PUBLISHED))
bench-report:
	@if [ -z "$(RESULTS)" ]; then echo "make bench-report: no results (run make bench, or RESULTS=dir)" >&2; exit 2; fi
	sh bench/report.sh $(RESULTS)

# Check a results folder (machine facts, CDFs, every case present).
bench-check:
	@if [ -z "$(RESULTS)" ]; then echo "make bench-check: no results (run make bench, or RESULTS=dir)" >&2; exit 2; fi
	sh bench/check.sh $(RESULTS)

# The empty-queue CMD_SYNC latency CDF, MSI vs CONS vs the floor (JSON).
bench-sync: $(BUILD)/bench/bench_sync
	./$(BUILD)/bench/bench_sync

# Locked read-modify-writes per call of the queue, counted by single-stepping
# (x86_64), with the functions they are in; rmw-list lists the atomic RMW
# instructions of src/cmdq per function for this build (any architecture:
# make CROSS=aarch64-linux-gnu- rmw-list).
rmw-count: $(BUILD)/bench/rmwcount
	@./$(BUILD)/bench/rmwcount | while read -r line; do \
		case "$$line" in at:*) for a in $${line#at:}; do \
			printf '    %s %s\n' $$a "$$(addr2line -f -s -e $(BUILD)/bench/rmwcount $$a | head -n 1)"; done ;; \
		*) echo "$$line" ;; esac; done

rmw-list: $(BUILD)/libhwtune.a
	@sh bench/rmw-list.sh $(BUILD) $(CROSS)objdump

# Misaligned-access probe: per-CPU time, parallel vs serial, stability (JSON).
bench-probe:
	@$(MAKE) --no-print-directory $(BUILD)/bench/bench_probe >&2
	@./$(BUILD)/bench/bench_probe $(BENCH_PROBE_ARGS)

# Command queue against peer rings (JSON).  Peers are optional: detect.sh
# compile-tests each (rte_ring and rte_ring_rts: dpdk-dev, ck_ring: libck-dev,
# urcu_wfcq: liburcu-dev); its answer is
# kept in cmdq-peers.sh and the binary relinks only when that changes.
CMDQ_PEERS := $(BUILD)/bench/cmdq-peers.sh
$(CMDQ_PEERS): FORCE
	@mkdir -p $(dir $@)
	@sh bench/peers/detect.sh '$(CC)' > $@.new; \
	if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(BUILD)/bench/bench_cmdq: bench/bench_cmdq.c $(wildcard bench/cmdq/*.[ch] bench/peers/*.[ch] prog/*.h) \
		$(CMDQ_PEERS) $(PROG_OBJS) $(BUILD)/libhwtune.a $(FLAGS_STAMP)
	@mkdir -p $(BUILD)/obj/bench/peers $(BUILD)/obj/bench/cmdq
	@. $(CMDQ_PEERS); set -e; objs=; \
	for c in $(patsubst bench/cmdq/%.c,%,$(wildcard bench/cmdq/*.c)); do \
		(set -x; $(CC) $(PROG_CFLAGS) $$DEFS -c bench/cmdq/$$c.c -o $(BUILD)/obj/bench/cmdq/$$c.o); \
		objs="$$objs $(BUILD)/obj/bench/cmdq/$$c.o"; \
	done; \
	for p in hwt ring mutex $${DEFS:+$$(echo "$$DEFS" | sed 's/-DHAVE_DPDK_RTS//; s/-DHAVE_DPDK/dpdk/; s/-DHAVE_CK/ck/; s/-DHAVE_URCU/urcu/')}; do \
		extra=; [ $$p = dpdk ] && extra="$$DPDK_CFLAGS"; \
		(set -x; $(CC) $(PROG_CFLAGS) $$DEFS $$extra -c bench/peers/$$p.c -o $(BUILD)/obj/bench/peers/$$p.o); \
		objs="$$objs $(BUILD)/obj/bench/peers/$$p.o"; \
	done; \
	(set -x; $(CC) $(PROG_CFLAGS) $$DEFS -c bench/bench_cmdq.c -o $(BUILD)/obj/bench/bench_cmdq.o); \
	(set -x; $(CC) $(STATIC) $(SAN_LD) -o $@ $(BUILD)/obj/bench/bench_cmdq.o $$objs \
		$(PROG_OBJS) $(BUILD)/libhwtune.a $$PEER_LIBS $(LDLIBS)); \
	for s in $$SKIPPED; do echo "bench_cmdq: without $${s%%:*} (apt-get install $${s#*:})" >&2; done

# The benchmarks print JSON on stdout (make bench-probe > probe.json): the
# build's own output goes to stderr, and the run is not echoed.
# BENCH_PROBE_ARGS / BENCH_CMDQ_ARGS are passed to the program.
bench-cmdq:
	@$(MAKE) --no-print-directory $(BUILD)/bench/bench_cmdq >&2
	@./$(BUILD)/bench/bench_cmdq $(BENCH_CMDQ_ARGS)

.PHONY: FORCE
FORCE:

# examples/*.c: small programs using the public API, built here against this
# build's static library (tests/native/examples.sh builds them against the
# installed library through pkg-config, shared and static).
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
$(BUILD)/examples/%: examples/%.c $(wildcard include/hwtune/*.h) $(BUILD)/libhwtune.a $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -D_GNU_SOURCE,$(PROG_CFLAGS)) $(STATIC) $(SAN_LD) -o $@ $< $(BUILD)/libhwtune.a $(LDLIBS)

examples: $(EXAMPLE_BINS)

run: all
	./$(BUILD)/hwtune

# The public-API random stress for minutes, not seconds (not in make check):
# SOAK_SCENARIOS x SOAK_MS; prints its seed and totals.
SOAK_SCENARIOS ?= 30
SOAK_MS ?= 4000
soak: tests
	HWT_STRESS_SCENARIOS=$(SOAK_SCENARIOS) HWT_STRESS_MS=$(SOAK_MS) HWT_TEST_TIMEOUT_SCALE=20 \
		./$(BUILD)/tests/stress_api -v

# --- check -------------------------------------------------------------------
# Each stage appends "pass fail skip" counts to $(COUNTS) and each failure's
# TAP line (with its first diagnostics) to $(COUNTS).failed; the last step sums
# the counts and repeats the failures, so the tail of a long log names them.
COUNTS := build/check.counts
QEMU_AARCH64 := $(shell command -v qemu-aarch64 2>/dev/null)
QEMU_RISCV64 := $(shell command -v qemu-riscv64 2>/dev/null)
# qemu's riscv64 CPU options for the cross stage: V on, so the vector probe
# runs its RVV loops (qemu-user 7.2 leaves AT_HWCAP's V bit clear: the
# library then asks with a SIGILL-guarded vsetvli).
QEMU_RISCV64_OPTS ?= -cpu rv64,v=true,vext_spec=v1.0

check:
	@mkdir -p build && : > $(COUNTS) && : > $(COUNTS).failed
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-native
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-sanitize
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-tsan
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-cross
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-vm
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-fuzz
	@HWT_CHECK_ALL=1 $(MAKE) --no-print-directory check-abi
	@sh tests/summary.sh $(COUNTS)

check-native: tests
	@sh tests/run.sh native $(BUILD) $(COUNTS)

# Every program and CLI script again under AddressSanitizer (with its leak
# checker) and UBSan, native only; skipped, naming the runtimes, when a tiny
# program built with them does not run.  A report ends the program with
# status 99, which no test expects.  The stress suites run for fixed times,
# so only the harness's time limits are scaled.
SAN_RUNTIMES := libasan8 libubsan1
# The programs that run several command queues, rerun under the sanitizers
# with rseq off (GLIBC_TUNABLES=glibc.pthread.rseq=0): every queue object then
# takes the shared path (natively: tests/native/cmdq_shared_path.sh).
RSEQ_OFF_TESTS := unit_cmdq_mq stress_cmdq_mq stress_api
# How the sanitizer stages run a program: any report fails it.
ASAN_ENV := HWT_TEST_TIMEOUT_SCALE=3 \
	ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:halt_on_error=1:exitcode=99:$$ASAN_OPTIONS" \
	UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=99:$$UBSAN_OPTIONS"
TSAN_ENV := HWT_STRESS_MS=200 TSAN_OPTIONS="halt_on_error=1 $$TSAN_OPTIONS"
SAN_PROBE := d=$$(mktemp -d) && printf 'int main(void) { return 0; }\n' > $$d/t.c && \
	$(CC) -fsanitize=address,undefined $$d/t.c -o $$d/t >/dev/null 2>&1 && $$d/t; \
	r=$$?; rm -rf $$d; [ $$r -eq 0 ]
check-sanitize:
	@mkdir -p build
	@if ! { $(SAN_PROBE); }; then \
		echo "# SKIP suite asan: $(CC) -fsanitize=address,undefined does not build and run" \
			"(needs $(SAN_RUNTIMES): make deps)"; \
		echo "0 0 1" >> $(COUNTS); exit 0; fi; \
	$(MAKE) --no-print-directory SAN=address,undefined BUILD=build/asan OPT="-O1 -g" tests && \
	$(ASAN_ENV) sh tests/run.sh asan build/asan $(COUNTS) && \
	for t in $(RSEQ_OFF_TESTS); do \
		GLIBC_TUNABLES=glibc.pthread.rseq=0 HWT_TEST_ONLY=$$t $(ASAN_ENV) \
		sh tests/run.sh asan-rseq-off build/asan $(COUNTS) || exit 1; done

# The stress suite again under ThreadSanitizer (native only), and the
# several-queue stress programs once more with rseq off (the shared path).
check-tsan:
	@$(MAKE) --no-print-directory SAN=thread BUILD=build/tsan OPT="-O1 -g" tests
	@$(TSAN_ENV) HWT_TEST_ONLY=stress_ sh tests/run.sh tsan build/tsan $(COUNTS)
	@for t in $(filter stress_%,$(RSEQ_OFF_TESTS)); do \
		GLIBC_TUNABLES=glibc.pthread.rseq=0 HWT_TEST_ONLY=$$t $(TSAN_ENV) \
		sh tests/run.sh tsan-rseq-off build/tsan $(COUNTS) || exit 1; \
	done

check-cross:
ifeq ($(CROSS),)
	@for t in aarch64:$(QEMU_AARCH64) riscv64:$(QEMU_RISCV64); do \
		a=$${t%%:*}; q=$${t#*:}; \
		if ! command -v $$a-linux-gnu-gcc >/dev/null || [ -z "$$q" ]; then \
			echo "# SKIP suite $$a: needs gcc-$$a-linux-gnu and qemu-user (make deps)"; \
			echo "0 0 1" >> $(COUNTS); continue; fi; \
		$(MAKE) --no-print-directory CROSS=$$a-linux-gnu- tests || exit 1; \
		opts=; [ $$a = riscv64 ] && opts="$(QEMU_RISCV64_OPTS)"; \
		HWT_TEST_TIMEOUT_SCALE=8 sh tests/run.sh $$a build/$$a $(COUNTS) "$$q $$opts" || exit 1; \
	done
endif

include mk/vm.mk

# --- fuzzing (clang + libFuzzer) ------------------------------------------------
# tests/fuzz/*.c: one LLVMFuzzerTestOneInput each, built with clang,
# -fsanitize=fuzzer and ASan + UBSan (no recovery) into build/fuzz/; the
# library (and, for cli_args, the tool's objects without main.o) is rebuilt
# there with the same instrumentation.  check-fuzz runs each target for
# FUZZ_TIME seconds from its seeds in tests/fuzz/corpus/<target>/ (what it
# finds beyond them stays in build/fuzz/corpus/); a crash or a violated
# property is a failure, its input kept in build/fuzz/artifacts/ (replay:
# build/fuzz/fuzzers/<target> FILE).  Without a working clang
# -fsanitize=fuzzer the stage is skipped.
FUZZ_CC ?= clang
FUZZ_TIME ?= 25
FUZZ_BUILD := build/fuzz
FUZZ_SAN := fuzzer-no-link,address,undefined
FUZZ_NAMES := $(basename $(notdir $(wildcard tests/fuzz/*.c)))
FUZZ_BINS := $(FUZZ_NAMES:%=$(BUILD)/fuzzers/%)

.PHONY: check-fuzz fuzz
check-fuzz:
	@if ! sh tests/fuzz/have-libfuzzer.sh '$(FUZZ_CC)'; then \
		echo "# SKIP suite fuzz: needs clang with libFuzzer (apt-get install clang libclang-rt-14-dev, or make deps)"; \
		echo "0 0 1" >> $(COUNTS); exit 0; fi; \
	$(MAKE) --no-print-directory CC='$(FUZZ_CC)' BUILD=$(FUZZ_BUILD) SAN=$(FUZZ_SAN) \
		OPT="-O1 -g -fno-sanitize-recover=all" fuzz && \
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(COUNTS) $(FUZZ_TIME)

# The targets alone (make CC=clang BUILD=build/fuzz SAN=$(FUZZ_SAN) fuzz).
fuzz: $(FUZZ_BINS)

# cli_args links hwtune without main(); -Itools -I. come first so that its
# headers (cmdq/command.h ...) never resolve to a namesake under src/.
$(BUILD)/fuzzers/cli_args: $(filter-out %/tools/main.o,$(TOOL_OBJS))
$(BUILD)/fuzzers/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(HEADERS) $(TOOL_HEADERS) $(BUILD)/libhwtune.a \
		$(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -Itools -I. $(CFLAGS_BASE) -fsanitize=fuzzer -o $@ $< $(filter %.o,$^) $(BUILD)/libhwtune.a $(LDLIBS)

deps:
	@if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (apt-get)" >&2; exit 1; fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		make gcc g++ clang libc6-dev gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu \
		libc6-dev-arm64-cross libc6-dev-riscv64-cross qemu-user binutils libtsan2 \
		libasan8 libubsan1 libclang-rt-14-dev \
		libck-dev spin pkgconf mandoc \
		debhelper dpkg-dev lintian abigail-tools systemd strace
	$(MAKE) --no-print-directory deps-vm

# The benchmarks' optional peers (bench_cmdq: rte_ring, ck_ring, urcu wfcqueue) and gnuplot.
bench-deps:
	@if [ "$$(id -u)" != 0 ]; then echo "make bench-deps: run as root (apt-get)" >&2; exit 1; fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		dpdk-dev libck-dev liburcu-dev gnuplot-nox pkgconf

# --- install ------------------------------------------------------------------
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man

# hwtune.pc is written by install itself, for the PREFIX, LIBDIR and
# INCLUDEDIR of that very install (a .pc made earlier for another PREFIX
# would point programs at the wrong folders).
define HWTUNE_PC
prefix=$(PREFIX)
libdir=$(LIBDIR)
includedir=$(INCLUDEDIR)

Name: hwtune
Description: SMMUv3-style command queue and misaligned-access probe
Version: $(VERSION)
Libs: -L$${libdir} -lhwtune
Libs.private: -pthread
Cflags: -I$${includedir}
endef
export HWTUNE_PC

install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/hwtune \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7
	install -m 644 include/hwtune/*.h $(DESTDIR)$(INCLUDEDIR)/hwtune/
	install -m 644 $(BUILD)/libhwtune.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libhwtune.so $(DESTDIR)$(LIBDIR)/libhwtune.so.$(VERSION)
	ln -sf libhwtune.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libhwtune.so.$(ABI_MAJOR)
	ln -sf libhwtune.so.$(ABI_MAJOR) $(DESTDIR)$(LIBDIR)/libhwtune.so
	printf '%s\n' "$$HWTUNE_PC" > $(DESTDIR)$(LIBDIR)/pkgconfig/hwtune.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/hwtune.pc
	install -m 755 $(BUILD)/hwtune $(DESTDIR)$(BINDIR)/
	install -m 644 docs/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 docs/man/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 docs/man/man7/*.7 $(DESTDIR)$(MANDIR)/man7/
	@sh docs/man/links.sh | while read -r fn page; do \
		printf '.so man3/%s.3\n' "$$page" > $(DESTDIR)$(MANDIR)/man3/$$fn.3 || exit 1; \
		chmod 644 $(DESTDIR)$(MANDIR)/man3/$$fn.3; done

uninstall:
	rm -rf $(DESTDIR)$(INCLUDEDIR)/hwtune
	rm -f $(DESTDIR)$(LIBDIR)/libhwtune.a $(DESTDIR)$(LIBDIR)/libhwtune.so* \
		$(DESTDIR)$(LIBDIR)/pkgconfig/hwtune.pc $(DESTDIR)$(BINDIR)/hwtune \
		$(DESTDIR)$(MANDIR)/man1/hwtune.1 $(DESTDIR)$(MANDIR)/man7/hwtune.7 \
		$(patsubst docs/man/%,$(DESTDIR)$(MANDIR)/%,$(wildcard docs/man/man3/*.3))
	@sh docs/man/links.sh | while read -r fn page; do rm -f $(DESTDIR)$(MANDIR)/man3/$$fn.3; done

# Every man page through mandoc's linter (make deps installs mandoc), or
# groff's warnings without it; tests/native/man.sh does this and more.
man-lint:
	@if command -v mandoc >/dev/null 2>&1; then \
		mandoc -T lint -W warning docs/man/man*/*.[137]; \
	else \
		for p in docs/man/man*/*.[137]; do \
			groff -ww -z -man $$p 2>&1 | { ! grep .; } || exit 1; done; \
	fi

# The boot-time probe for all users (dist/hwtune-probe.service), installed
# but not enabled: systemctl enable hwtune-probe.service.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
.PHONY: install-unit uninstall-unit
install: install-unit
uninstall: uninstall-unit
install-unit:
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' dist/hwtune-probe.service > $(DESTDIR)$(SYSTEMDUNITDIR)/hwtune-probe.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/hwtune-probe.service
uninstall-unit:
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/hwtune-probe.service

clean:
	rm -rf build

include mk/deb.mk
include mk/abi.mk
include mk/dist.mk
