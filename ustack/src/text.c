// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where names from a trace become text for the files
 * report writes: comms, paths and symbols may hold any byte, but pprof's
 * string_table must be UTF-8 and the flame graph's names go into a
 * <script>.  views.c cleans every string it interns with text_utf8(), so
 * that --pprof and --flamegraph show the same names; flame.c writes them
 * with text_js().
 */
#include <glib.h>

#include "ustack.h"

/* A copy of s as valid UTF-8: each byte that is not becomes U+FFFD */
char *text_utf8(const char *s)
{
	gchar *valid = g_utf8_make_valid(s, -1);
	char *copy = xstrdup(valid);

	g_free(valid);
	return copy;
}

/*
 * A valid UTF-8 string as a JS string literal, in ASCII, that cannot end
 * the <script> it is in: quotes and backslashes are escaped, and so are
 * controls, '<', '>', '&' and every code point past ASCII, as \uXXXX
 * (UTF-16, so with surrogate pairs past U+FFFF).
 */
void text_js(FILE *out, const char *s)
{
	const char *p;

	fputc('"', out);
	for (p = s; *p; p = g_utf8_next_char(p)) {
		gunichar c = g_utf8_get_char(p);

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", (char)c);
		else if (c > 0xffff)
			fprintf(out, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
				0xdc00 + ((c - 0x10000) & 0x3ff));
		else if (c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&')
			fprintf(out, "\\u%04x", (unsigned int)c);
		else
			fputc((int)c, out);
	}
	fputc('"', out);
}
