/* SPDX-License-Identifier: MIT */
/*
 * The hypervisor's name, from its CPUID vendor signature (x86_64: leaf
 * 0x40000000; arch/cputype.h), as lscpu's "Hypervisor vendor" does.
 */
#include "hwtune/cpu.h"

#include "arch/cputype.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The signatures hypervisors put in CPUID 0x40000000 EBX:ECX:EDX, as
 * Linux's and lscpu's tables know them (NULs written as \0). */
static const struct {
	const char sig[13];
	const char *name;
} known[] = {
	{ "KVMKVMKVM\0\0\0", "KVM" },
	{ "Microsoft Hv", "Microsoft Hyper-V" },
	{ "VMwareVMware", "VMware" },
	{ "XenVMMXenVMM", "Xen" },
	{ "TCGTCGTCGTCG", "QEMU TCG" },
	{ " lrpepyh  vr", "Parallels" },
	{ "ACRNACRNACRN", "ACRN" },
	{ "bhyve bhyve ", "bhyve" },
	{ "VBoxVBoxVBox", "VirtualBox" },
	{ "Jailhouse\0\0\0", "Jailhouse" },
	{ "QNXQVMBSQG\0\0", "QNX" },
	{ "SRESRESRESRE", "SRE" },
	{ "EVMMEVMMEVMM", "Intel EVMM" },
	{ "OpenBSDVMM58", "OpenBSD vmm" },
};

int hwt__hypervisor_name(const char sig[12], char *buf, size_t len)
{
	char shown[13];
	size_t n = 12;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!memcmp(sig, known[i].sig, 12))
			return snprintf(buf, len, "%s", known[i].name) < (int)len ? 0 : -ERANGE;
	/* Unknown: the signature itself, printable, without trailing NULs
	 * or blanks; all NUL or blank says nothing. */
	while (n && (sig[n - 1] == '\0' || sig[n - 1] == ' '))
		n--;
	if (!n)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		shown[i] = sig[i] > ' ' && sig[i] < 0x7f ? sig[i] : sig[i] == ' ' ? ' ' : '?';
	shown[n] = '\0';
	return snprintf(buf, len, "unknown (CPUID signature \"%s\")", shown) < (int)len ? 0
											   : -ERANGE;
}

HWT_API int hwt_cpu_hypervisor(char *buf, size_t len)
{
	char sig[12];
	int r;

	if (!buf || !len)
		return -EINVAL;
	buf[0] = '\0';
	r = hwt__x86_hypervisor_sig(sig);
	if (!r)
		r = hwt__hypervisor_name(sig, buf, len);
	if (r)
		buf[0] = '\0';
	return r;
}
