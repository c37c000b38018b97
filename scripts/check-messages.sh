#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check-messages.sh - every message on one source line, so that grep finds it.
#
#	scripts/check-messages.sh [TOP]
#
# A message is split when a string literal that does not end in "\n" is
# continued by another literal on the next line ("a "\n "b" in C): grep
# for the text a user saw then finds nothing.  A literal that ends in "\n"
# may be followed by the next output line's literal (usage texts), and
# JSON templates (literals holding \") are machine output, not messages.
# Prints each split as FILE:LINE and exits 1 if there is one.
top=${1:-.}
cd "$top" || exit 2
files=
# git's list where this is the top of a checkout; else (a dist tarball, also
# one unpacked inside another checkout, as make distcheck does) every file
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	files=$(git ls-files '*.c' '*.h' '*.cu')
fi
[ -n "$files" ] || files=$(find . -name '*.[ch]' -o -name '*.cu')
[ -n "$files" ] || { echo "check-messages: no C files under $top"; exit 2; }
# shellcheck disable=SC2086
awk '
FNR == 1 { prev = "" }
{
	if (prev ~ /"[ \t]*$/ && prev !~ /\\n"[ \t]*$/ && prev !~ /\\"/ &&
	    prev !~ /^[ \t]*#/ && $0 ~ /^[ \t]*"/) {
		printf "check-messages: %s:%d: message split across lines\n", FILENAME, FNR - 1
		bad = 1
	}
	prev = $0
}
END { exit bad }' $files || exit 1
echo "check-messages: every message on one line"
