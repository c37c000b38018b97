#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Regenerate the build system from configure.ac and the Makefile.am files.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf --force --install --verbose
