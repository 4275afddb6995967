/* SPDX-License-Identifier: MIT */
#include "hwtune/hwtune.h"

const char *hwt_version(void)
{
	return HWT_VERSION_STRING;
}
