#!/bin/sh
# SPDX-License-Identifier: MIT
# The man pages: each one lints clean (mandoc -T lint -W warning, or groff
# -ww without mandoc); every public function (HWT_API and the public static
# inline ones of include/hwtune/*.h, and every symbol libhwtune.so exports)
# is named in the NAME section of a page; make install puts the pages and a
# ".so" link page for every function named, and "man FUNCTION" resolves.
. tests/tap.sh
unset MAKEFLAGS MAKELEVEL MFLAGS
pages=$(ls docs/man/man1/*.1 docs/man/man3/*.3 docs/man/man7/*.7)
for p in $pages; do
	if command -v mandoc >/dev/null 2>&1; then
		tap_ok "$p: mandoc -T lint -W warning is silent" sh -c \
			"mandoc -T lint -W warning '$p' > '$out' 2>&1; ! test -s '$out'"
	else
		tap_ok "$p: groff -ww -z -man is silent (no mandoc: make deps)" sh -c \
			"groff -ww -z -man '$p' > '$out' 2>&1; ! test -s '$out'"
	fi
done

# The public functions: the identifier before the first '(' of every HWT_API
# declaration line and of every public (hwt_x, not hwt__x) static inline.
funcs=$tap_dir/funcs
awk '/HWT_API|^static inline/ && match($0, /hwt_[a-z][a-z0-9_]*\(/) {
	print substr($0, RSTART, RLENGTH - 1) }' include/hwtune/*.h > "$funcs"
if [ -f build/libhwtune.so ] && command -v nm >/dev/null 2>&1; then
	nm -D --defined-only build/libhwtune.so | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' >> "$funcs"
fi
sort -u -o "$funcs" "$funcs"
named=$tap_dir/named
{ sh docs/man/links.sh | cut -d' ' -f1; ls docs/man/man3 | sed 's/\.3$//'; } | sort -u > "$named"
tap_ok "found the public functions ($(wc -l < "$funcs") of them)" test "$(wc -l < "$funcs")" -gt 50
tap_ok "every public function is in the NAME section of a page" sh -c \
	"comm -23 '$funcs' '$named' > '$out'; ! test -s '$out'"
tap_ok "every function a NAME section lists exists in a header" sh -c \
	"sh docs/man/links.sh | cut -d' ' -f1 | sort -u | comm -23 - '$funcs' > '$out'; ! test -s '$out'"

root=$tap_dir/root
man=$root/usr/share/man
tap_ok "make install DESTDIR=... PREFIX=/usr" sh -c "make -s install DESTDIR='$root' PREFIX=/usr > '$out' 2>&1"
tap_ok "hwtune.1, hwtune.7 and every section 3 page are installed" sh -c \
	"test -f '$man/man1/hwtune.1' && test -f '$man/man7/hwtune.7' &&
	 for p in docs/man/man3/*.3; do cmp -s \"\$p\" '$man/man3/'\$(basename \"\$p\") || exit 1; done"
tap_ok "a link page for every function named: .so man3/<page>.3" sh -c \
	"sh docs/man/links.sh | while read -r fn page; do
		test \"\$(cat '$man/man3/'\$fn.3)\" = \".so man3/\$page.3\" || { echo \"\$fn\"; exit 1; }
	 done > '$out' 2>&1"
if command -v mandoc >/dev/null 2>&1; then
	tap_ok "man hwt_cmdq_destroy shows hwt_cmdq_create(3)" sh -c \
		"cd '$man' && mandoc -T ascii man3/hwt_cmdq_destroy.3 > '$out' 2>&1 &&
		 grep -q 'hwt_cmdq_options_default' '$out'"
else
	tap_skip "man hwt_cmdq_destroy shows hwt_cmdq_create(3)" "no mandoc (make deps)"
fi
tap_ok "make uninstall removes the pages and the links" sh -c \
	"make -s uninstall DESTDIR='$root' PREFIX=/usr > '$out' 2>&1 &&
	 ! ls '$man'/man*/hwt* '$man'/man*/hwtune* > '$out' 2>/dev/null"
tap_end
