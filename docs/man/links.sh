#!/bin/sh
# SPDX-License-Identifier: MIT
# The link pages of section 3: for every function named in the NAME line of
# a page docs/man/man3/PAGE.3 (other than PAGE itself), print "FUNCTION PAGE".
# make install writes man3/FUNCTION.3 as ".so man3/PAGE.3" for each, so that
# "man hwt_cmdq_destroy" finds hwt_cmdq_create(3).
# Usage: sh docs/man/links.sh [MAN3_DIR]
dir=${1:-docs/man/man3}
for f in "$dir"/*.3; do
	page=$(basename "$f" .3)
	# The NAME section: "name, name, ... \- description".
	awk '/^\.SH[ \t]+NAME/ { on = 1; next } /^\.S[HS]/ { on = 0 } on' "$f" |
		sed 's/[ \t]*\\-.*//' | tr ',' '\n' | tr -d ' \t\\' |
		while read -r fn; do
			[ -n "$fn" ] && [ "$fn" != "$page" ] && echo "$fn $page"
		done
done
