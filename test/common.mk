# SPDX-License-Identifier: BSD-3-Clause
# Shared settings for every test tier's Makefile.am (include $(top_srcdir)/test/common.mk).
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TEST_EXTENSIONS = .sh
SH_LOG_DRIVER = $(LOG_DRIVER)
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(abs_top_srcdir)'; top_builddir='$(abs_top_builddir)'; \
	export top_srcdir top_builddir;
AM_CPPFLAGS = -I$(top_srcdir)/common -I$(top_srcdir)/include -I$(top_builddir) \
	-I$(top_srcdir)/test/unit
AM_CFLAGS = $(KREX_CFLAGS) -Wno-missing-prototypes -Wno-unused-result
COMMON = $(top_builddir)/common/libkrexcommon.la
