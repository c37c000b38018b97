/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * text.h - the one rule for names that reach logs and terminals (labels,
 * CPU lists, GPU names): well-formed UTF-8 (RFC 3629) with no control
 * character (C0, DEL, C1, the line and paragraph separators, the
 * bidirectional overrides and isolates).  krexd refuses what breaks it
 * (text_check); a client makes its own names obey it (text_clean).
 */
#ifndef KREX_TEXT_H
#define KREX_TEXT_H

#include <stddef.h>

/* 0 when s obeys the rule, else -1 with the reason (naming what) in err. */
int text_check(const char *what, const char *s, char *err, size_t len);

/* Make s obey the rule in place: every byte of a control character or of
 * a malformed (or cut) UTF-8 sequence becomes '?'. */
void text_clean(char *s);

#endif
