/* SPDX-License-Identifier: MIT */
/*
 * Linked only into the CLI tests' build of the tool (build/test-hwtune):
 * HWTUNE_TEST_FORCE_SIGBUS=1 and HWTUNE_TEST_FORCE_VECTOR_TRAP=1 (any value
 * but empty or "0") set the probe's private test hook before main, so the
 * CLI tests reach the fault paths on any machine; HWTUNE_TEST_UNKNOWN=N
 * spoils the next N scalar measurements (hwt__misaligned_test_unknown).
 * The shipped library and tool read none of these variables.
 */
#include "misaligned/misaligned.h"

#include <stdlib.h>
#include <string.h>

static int set_in_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

void hwt_test_probe_hook_from_env(void) __attribute__((constructor));
void hwt_test_probe_hook_from_env(void)
{
	unsigned force = 0;

	if (set_in_env("HWTUNE_TEST_FORCE_SIGBUS"))
		force |= HWT__MISALIGNED_FORCE_SIGBUS;
	if (set_in_env("HWTUNE_TEST_FORCE_VECTOR_TRAP"))
		force |= HWT__MISALIGNED_FORCE_VECTOR_TRAP;
	hwt__misaligned_test_hook(force);
	if (set_in_env("HWTUNE_TEST_UNKNOWN"))
		hwt__misaligned_test_unknown((unsigned)strtoul(getenv("HWTUNE_TEST_UNKNOWN"), NULL, 10));
}
