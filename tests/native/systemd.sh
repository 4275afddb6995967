#!/bin/sh
# SPDX-License-Identifier: MIT
# hwtune-probe.service as make install writes it, checked by systemd's own
# tools: systemd-analyze verify is silent, systemd-analyze security rates
# its exposure at most 1.5 (8.4 before the sandbox), and the sandbox still
# lets the probe work: every system call "hwtune probe --system" makes
# (strace) is in the unit's SystemCallFilter allow-list, and nothing takes
# root, /proc/cpuinfo or a CPU away from it.  Skipped, naming the package,
# without systemd-analyze (systemd) or strace.
. tests/tap.sh
unset MAKEFLAGS MAKELEVEL MFLAGS
root=$tap_dir/root
unit=$root/usr/lib/systemd/system/hwtune-probe.service
tap_ok "make install PREFIX=<scratch>/usr" sh -c \
	"make -s install PREFIX='$root/usr' SYSTEMDUNITDIR='$root/usr/lib/systemd/system' > '$out' 2>&1"
if command -v systemd-analyze >/dev/null 2>&1; then
	# verify also runs man for Documentation=man:hwtune(1): the scratch pages.
	tap_ok "systemd-analyze verify is silent on the installed unit" sh -c \
		"MANPATH='$root/usr/share/man' systemd-analyze verify '$unit' > '$out' 2>&1; r=\$?;
		 [ \$r -eq 0 ] && ! test -s '$out'"
	score=$(systemd-analyze security --offline=true --no-pager "$unit" 2>/dev/null |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	tap_ok "systemd-analyze security: exposure ${score:-?} (at most 1.5)" sh -c \
		"systemd-analyze security --offline=true --threshold=15 --no-pager '$unit' > '$out' 2>&1"
else
	for t in "systemd-analyze verify is silent on the installed unit" \
		"systemd-analyze security: exposure at most 1.5"; do
		tap_skip "$t" "no systemd-analyze (Debian package systemd)"
	done
fi
# What the probe needs stays: root (the readers trust only root's file),
# /proc/cpuinfo and /proc/sys (ProcSubset=pid hides them), every CPU.
tap_ok "the unit runs the probe as root, with /proc whole and every CPU" sh -c \
	"! grep -E '^(User|DynamicUser|PrivateUsers|ProcSubset|CPUAffinity|AllowedCPUs)=' '$unit' > '$out'"
if command -v systemd-analyze >/dev/null 2>&1 && command -v strace >/dev/null 2>&1; then
	# The allow-list, its @groups expanded, less the ~ deny lines.
	systemd-analyze syscall-filter --no-pager > "$tap_dir/groups" 2>/dev/null
	expand() {
		awk -v want="$1" '
			/^@/ { g = $1; next }
			g != "" && NF && $1 !~ /^#/ { n[g]++; m[g, n[g]] = $1 }
			function add(x,   i) { if (x in seen) return; seen[x] = 1
				if (x ~ /^@/) { for (i = 1; i <= n[x]; i++) add(m[x, i]) } else print x }
			END { split(want, w, " "); for (i in w) add(w[i]) }' "$tap_dir/groups" | sort -u
	}
	allow=$(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$unit" | tr '\n' ' ')
	[ -n "$allow" ] || allow=@known # no allow-list: every call
	deny=$(sed -n 's/^SystemCallFilter=~\(.*\)/\1/p' "$unit" | tr '\n' ' ')
	expand "$allow" > "$tap_dir/allow"
	expand "$deny" > "$tap_dir/deny"
	comm -23 "$tap_dir/allow" "$tap_dir/deny" > "$tap_dir/allowed"
	mkdir -m 755 "$tap_dir/run"
	tap_ok "hwtune probe --system runs under strace" sh -c \
		"HWTUNE_RUNTIME_DIR='$tap_dir/run' strace -f -qq -o '$tap_dir/trace' $HWTUNE probe --system > '$out' 2>&1"
	sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$tap_dir/trace" | sort -u > "$tap_dir/used"
	kinds=$(wc -l < "$tap_dir/used")
	tap_ok "every system call of the probe ($kinds kinds) is in the unit's allow-list" sh -c \
		"grep -q sched_setaffinity '$tap_dir/used' && comm -23 '$tap_dir/used' '$tap_dir/allowed' > '$out';
		 ! test -s '$out'"
	tap_ok "and so are the ones it makes elsewhere (perf_event_open, membarrier, riscv_hwprobe)" sh -c \
		"printf '%s\n' membarrier perf_event_open riscv_hwprobe | comm -23 - '$tap_dir/allowed' > '$out';
		 ! test -s '$out'"
else
	for t in "hwtune probe --system runs under strace" \
		"every system call of the probe is in the unit's allow-list" \
		"and so are the ones it makes elsewhere (perf_event_open, membarrier, riscv_hwprobe)"; do
		tap_skip "$t" "needs systemd-analyze (Debian package systemd) and strace (Debian package strace)"
	done
fi
tap_end
