#!/bin/sh
# SPDX-License-Identifier: MIT
# Which peers of bench_cmdq build with the C compiler $1 (a compile-and-link
# test each).  Prints shell assignments for the bench-cmdq Makefile rule:
#   DEFS (-DHAVE_DPDK -DHAVE_DPDK_RTS -DHAVE_CK -DHAVE_URCU), DPDK_CFLAGS,
#   PEER_LIBS, SKIPPED.  HAVE_DPDK_RTS: the ring's relaxed tail sync mode
#   (RING_F_MP_RTS_ENQ, DPDK 20.05 and later) compiles too.
# Never fails: a missing peer is only reported.
cc=${1:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
defs= dpdk_cflags= libs= skipped=

if pkg-config --exists libdpdk 2>/dev/null; then
	cf=$(pkg-config --cflags libdpdk | sed 's/-I/-isystem /g')
	cat > "$tmp/d.c" <<'C'
#include <rte_ring.h>
#include <rte_ring_elem.h>
static _Alignas(128) char m[1 << 16];
int main(void) { return rte_ring_init((struct rte_ring *)m, "t", 16, RING_F_SC_DEQ) != 0; }
C
	for l in "-lrte_ring -lrte_eal" "$(pkg-config --libs libdpdk)"; do
		if $cc -std=c11 -D_GNU_SOURCE $cf "$tmp/d.c" -o "$tmp/d" $l >/dev/null 2>&1; then
			defs="$defs -DHAVE_DPDK" dpdk_cflags=$cf libs="$libs $l"
			dlibs=$l
			break
		fi
	done
	cat > "$tmp/r.c" <<'C'
#include <rte_ring.h>
#include <rte_ring_elem.h>
static _Alignas(128) char m[1 << 16];
static char e[16];
int main(void)
{
	struct rte_ring *r = (struct rte_ring *)m;

	if (rte_ring_init(r, "t", 16, RING_F_MP_RTS_ENQ | RING_F_SC_DEQ))
		return 1;
	return rte_ring_mp_rts_enqueue_burst_elem(r, e, sizeof(e), 1, NULL) != 1;
}
C
	case $defs in *HAVE_DPDK*)
		if $cc -std=c11 -D_GNU_SOURCE $cf "$tmp/r.c" -o "$tmp/r" $dlibs >/dev/null 2>&1; then
			defs="$defs -DHAVE_DPDK_RTS"
		fi ;;
	esac
fi
case $defs in *HAVE_DPDK*) ;; *) skipped="$skipped rte_ring:dpdk-dev" ;; esac
case $defs in *HAVE_DPDK_RTS*) ;; *) skipped="$skipped rte_ring_rts:dpdk-dev" ;; esac

cat > "$tmp/c.c" <<'C'
#include <ck_ring.h>
static struct ck_ring r;
int main(void) { ck_ring_init(&r, 16); return (int)ck_ring_size(&r); }
C
if $cc -std=c11 -D_GNU_SOURCE "$tmp/c.c" -o "$tmp/c" >/dev/null 2>&1; then
	defs="$defs -DHAVE_CK"
else
	skipped="$skipped ck_ring:libck-dev"
fi

# liburcu's wfcqueue: out-of-line functions in liburcu-common (the
# liburcu-cds pkg-config module lists it).
cat > "$tmp/u.c" <<'C'
#include <urcu/wfcqueue.h>
static struct __cds_wfcq_head h;
static struct cds_wfcq_tail t;
static struct cds_wfcq_node n;
int main(void)
{
	__cds_wfcq_init(&h, &t);
	cds_wfcq_node_init(&n);
	cds_wfcq_enqueue(&h, &t, &n);
	return __cds_wfcq_dequeue_nonblocking(&h, &t) != &n;
}
C
ulibs=$(pkg-config --libs liburcu-cds 2>/dev/null)
for l in "-lurcu-common" "$ulibs"; do
	[ -n "$l" ] || continue
	if $cc -std=c11 -D_GNU_SOURCE "$tmp/u.c" -o "$tmp/u" $l >/dev/null 2>&1; then
		defs="$defs -DHAVE_URCU" libs="$libs $l"
		break
	fi
done
case $defs in *HAVE_URCU*) ;; *) skipped="$skipped urcu_wfcq:liburcu-dev" ;; esac

printf "DEFS='%s'\nDPDK_CFLAGS='%s'\nPEER_LIBS='%s'\nSKIPPED='%s'\n" \
	"${defs# }" "$dpdk_cflags" "${libs# }" "${skipped# }"
