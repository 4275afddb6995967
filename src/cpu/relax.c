/* SPDX-License-Identifier: MIT */
#include <hwtune/cpu.h>

#include "arch/arch.h"

void hwt_cpu_relax(void)
{
	hwt__cpu_relax();
}
