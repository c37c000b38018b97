# SPDX-License-Identifier: BSD-3-Clause
# Files made from FILE.in at make time with configure's paths, fully
# expanded (${prefix} resolved), as the autoconf manual advises for
# installation directories.  Include it, then per file:
#	krexd.8: krexd.8.in $(krex_subst_deps)
#		$(krex_subst_rule)
# A placeholder left unsubstituted fails the build (the test
# test/integration/install-files.sh checks the installed files too).
krex_subst = $(SED) \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	-e 's|@KREX_RELEASE_DATE[@]|$(KREX_RELEASE_DATE)|g' \
	-e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@sbindir[@]|$(sbindir)|g' \
	-e 's|@libdir[@]|$(libdir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|@krex_rundir[@]|$(krex_rundir)|g' \
	-e 's|@krex_runtime_directory[@]|$(krex_runtime_directory)|g' \
	-e 's|@spank_plugindir[@]|$(spank_plugindir)|g' \
	-e 's|@plugstackdir[@]|$(plugstackdir)|g'
krex_subst_deps = $(top_srcdir)/subst.mk $(top_builddir)/config.status
krex_subst_rule = $(AM_V_GEN)$(MKDIR_P) $(@D) && $(krex_subst) $(srcdir)/$@.in >$@.tmp && \
	if grep -n '@[A-Za-z_]*@' $@.tmp >&2; then \
		echo "$@: a placeholder of $@.in is not substituted (subst.mk)" >&2; rm -f $@.tmp; exit 1; \
	fi && mv $@.tmp $@
