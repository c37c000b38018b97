#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Check every C file of the project against .clang-format; print the files
# that differ and exit 1 if any does.
top=${1:-.}
cd "$top" || exit 2
command -v clang-format >/dev/null 2>&1 || { echo "check-format: clang-format not installed, skipped"; exit 0; }
bad=0
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]'); do
	case "$f" in *.def) continue ;; esac
	if ! clang-format --style=file "$f" | cmp -s - "$f"; then
		echo "check-format: $f is not formatted (clang-format -i $f)"
		bad=1
	fi
done
[ $bad = 0 ] && echo "check-format: all files formatted"
exit $bad
