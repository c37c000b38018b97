#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# deps-dir.sh - where the sources the registries lack are (Slurm 25.11,
# pyxis, enroot: ../shared/deps next to the checkout, HACKING.md).  Prints
# the first directory that exists of: $KREX_DEPS_DIR; the checkout's
# ../shared/deps; for a git worktree, its main checkout's; for a clone of
# a checkout on this machine (`git clone /work/main /tmp/x`, as a fresh-
# clone CI run here is made), the origin's.  Else the checkout's, which
# does not exist (the callers skip with its name).
top=$(cd "$(dirname "$0")/.." && pwd)
want=$top/../shared/deps
if [ -n "${KREX_DEPS_DIR:-}" ]; then
	echo "$KREX_DEPS_DIR"
	exit 0
fi
for d in "$want" \
	"$(dirname "$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)")/../shared/deps" \
	"$(git -C "$top" config --get remote.origin.url 2>/dev/null)/../shared/deps"; do
	case $d in /?*) ;; *) continue ;; esac
	[ -d "$d" ] && { (cd "$d" && pwd); exit 0; }
done
echo "$want"
