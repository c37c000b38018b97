#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# spdx.sh - an SPDX licence line at the top of every source file.
#
#	scripts/spdx.sh [TOP]           add the line where it is missing
#	scripts/spdx.sh --check [TOP]   list the files without it; exit 1 if any
#
# The files are those git tracks under TOP (new files: `git add` them first),
# less the ones listed in spdx_skip below.  The line goes first, in the
# file's comment syntax, after a "#!" line where there is one; adding is
# idempotent.  A tracked file of a type this script does not know is an
# error in both modes, so that a new kind of file is decided on, not missed.
ID="SPDX-License-Identifier: BSD-3-Clause"
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
top=${1:-.}
cd "$top" || exit 2
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "spdx: $top is not a git checkout (the file list is git's)" >&2
	exit 2
}

# Files that carry no licence line, and why.
spdx_skip() {
	case "$1" in
	LICENSE) return 0 ;;                    # the licence itself
	*.md) return 0 ;;                       # documentation, prose
	*.png) return 0 ;;                      # images (notebook/img)
	*.gitignore) return 0 ;;                # git settings, not source
	notebook/*) return 0 ;;                 # the lab notebook: raw measurement records, kept as the runs wrote them
	test/topology/fixtures/*.expected) return 0 ;; # compared byte for byte with krex-topo's output
	test/unit/conf_pin.expected) return 0 ;; # compared line by line with conf_pin_test's output
	test/topology/fixtures/*.xml) return 0 ;; # hwloc XML as lstopo / mkxml.py wrote it (data)
	test/fuzz/corpus/*) return 0 ;;         # binary seed frames for the fuzzer (data)
	test/unit/proto_golden.txt) return 0 ;; # wire bytes the packer wrote, compared byte for byte (data)
	test/perf/stubs/planted-*.txt) return 0 ;; # log excerpts as krexd and the gate write them, for krexlog.py (data)
	debian/changelog | debian/source/format) return 0 ;; # dpkg formats without comments
	debian/copyright) return 0 ;;           # the licence statement itself (DEP-5)
	m4/libtool.m4 | m4/ltoptions.m4 | m4/ltsugar.m4 | m4/ltversion.m4 | m4/lt~obsolete.m4)
		return 0 ;;                     # libtool's own files (libtoolize), under libtool's licence
	esac
	return 1
}

# The comment that carries ID in file $1, or nothing for an unknown type.
spdx_comment() {
	case "$1" in
	*.c | *.h | *.cu | *.def | *.map) echo "/* $ID */" ;;
	*.m4 | configure.ac) echo "dnl $ID" ;;
	*.lua) echo "-- $ID" ;;
	*.[1-8]) printf "%s\n" ".\\\" $ID" ;;
	*.sh | *.py | *.am | *.mk | *.pc.in | *.conf | *.krex | *.service | *.cases | .clang-format | */hook_exempt.txt | \
		debian/control | debian/*.install | *.spec)
		echo "# $ID" ;;
	*.in) spdx_comment "${1%.in}" ;; # a template: its output's syntax
	*)
		# Scripts without an extension (.ci/run, test/perf/stubs/*).
		if head -c 2 "$1" 2>/dev/null | grep -q '^#!'; then
			echo "# $ID"
		fi
		;;
	esac
}

has_id() { head -n 5 "$1" | grep -q "SPDX-License-Identifier:"; }

# Insert line $2 into file $1: after a "#!" first line, else first.
add_id() {
	tmp=$1.spdx.$$
	if head -n 1 "$1" | grep -q '^#!'; then
		{ head -n 1 "$1"; printf "%s\n" "$2"; tail -n +2 "$1"; } >"$tmp"
	else
		{ printf "%s\n" "$2"; cat "$1"; } >"$tmp"
	fi
	chmod --reference="$1" "$tmp" 2>/dev/null
	mv "$tmp" "$1"
}

bad=0
missing=0
for f in $(git ls-files); do
	[ -f "$f" ] || continue
	spdx_skip "$f" && continue
	has_id "$f" && continue
	c=$(spdx_comment "$f")
	if [ -z "$c" ]; then
		echo "spdx: $f: no comment syntax known for this file (add it to scripts/spdx.sh)"
		bad=1
		continue
	fi
	if [ $check = 1 ]; then
		echo "spdx: $f: no SPDX-License-Identifier line (run scripts/spdx.sh)"
		missing=$((missing + 1))
	else
		add_id "$f" "$c"
		echo "spdx: added to $f"
	fi
done
[ $missing = 0 ] && [ $bad = 0 ] && [ $check = 1 ] && echo "spdx: every source file has its licence line"
[ $missing = 0 ] && [ $bad = 0 ]
