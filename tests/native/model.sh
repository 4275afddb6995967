#!/bin/sh
# SPDX-License-Identifier: MIT
# The SPIN model check of the command-queue protocol (tests/model/README.md);
# skipped, naming the package, when spin is not installed.
exec sh "$(dirname "$0")/../model/run.sh"
