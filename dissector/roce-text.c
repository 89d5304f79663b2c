/* roce-text.c - the plugin's few texts made without printf
 *
 * The top line and the stream's line are made on every frame: printf's
 * conversions cost more than the rest of the line.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include "roce-int.h"

/* Text without printf (the top line is made on every frame: printf's
 * conversions cost more than the rest of the line): p's end, NUL-terminated.
 * The callers' buffers hold the longest line. */
char *roce_put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	*p = '\0';
	return p;
}

char *roce_put_dec(char *p, guint32 v)
{
	char t[10];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = t[--n];
	*p = '\0';
	return p;
}

char *roce_put_hex6(char *p, guint32 v) /* as %06x */
{
	static const char hex[] = "0123456789abcdef";
	char t[8];
	int n = 0;

	do
		t[n++] = hex[v & 0xf];
	while ((v >>= 4) != 0);
	while (n < 6)
		t[n++] = '0';
	while (n)
		*p++ = t[--n];
	*p = '\0';
	return p;
}

/* "%u (%s)" of roce-analysis.c's stream line, without printf. */
char *roce_put_dec_paren(char *p, guint32 v, const char *s)
{
	p = roce_put_dec(p, v);
	p = roce_put_str(p, " (");
	p = roce_put_str(p, s);
	return roce_put_str(p, ")");
}
