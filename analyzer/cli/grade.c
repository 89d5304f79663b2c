/* grade.c - `qptrace grade --rubric FILE CAPTURE...`
 *
 * Grades lab captures against a rubric (a GLib key file, see
 * rubrics/README.md).  Each capture is read once: every frame goes through
 * the decoder and the flow engine, and a small record of each RoCE/IB
 * frame is kept (what the engine does not keep: which frames carried
 * immediate data, FIRST/MIDDLE/LAST packets, CM messages, AETHs, the
 * out-of-band TCP frames, ...).  Each check then looks at the engine's
 * conversations and at those records, and says PASS or FAIL with the
 * frame numbers that prove it.
 *
 * Exit status: 0 when every capture passes every check, 1 when any check
 * fails, 2 on bad input (invalid rubric, or a capture that could not be
 * read: the others are still graded).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "qpt_flow.h"

/* ---- the rubric ---------------------------------------------------------- */

enum kind {
	K_OPS,
	K_MULTI_PACKET,
	K_CM_HANDSHAKE,
	K_PAIRED,
	K_TRANSPORT,
	K_ACKS,
	K_NO_RETRANSMISSIONS,
	K_NO_GAPS,
	K_PATH_MTU,
	K_IMMEDIATE,
	K_ATOMIC,
	K_MIN_QPS,
	K_OOB_TCP,
	K_HEADER,
	K_COUNT
};

/* Keys every check may have: kind, points, explain.  Then per kind the
 * keys it knows (space separated) and the ones it requires. */
static const struct {
	const char *name;
	const char *keys;
	const char *required;
	const char *what; /* one line for the error message and README */
} kinds[K_COUNT] = {
	[K_OPS] = { "ops", "transport op min_count max_count size min_packets_per_message",
		    "op", "messages of one operation" },
	[K_MULTI_PACKET] = { "multi_packet", "transport op middle", "",
			     "FIRST/MIDDLE/LAST packets seen" },
	[K_CM_HANDSHAKE] = { "cm_handshake", "teardown min_connections all", "",
			     "CM REQ->REP->RTU (and DREQ->DREP)" },
	[K_PAIRED] = { "paired", "by min_conversations", "", "conversations paired" },
	[K_TRANSPORT] = { "transport", "transport only", "transport",
			  "transport service present" },
	[K_ACKS] = { "acks", "present", "", "ACKs (AETH) present or absent" },
	[K_NO_RETRANSMISSIONS] = { "no_retransmissions", "", "", "no retransmitted packet" },
	[K_NO_GAPS] = { "no_gaps", "", "", "no PSN gap" },
	[K_PATH_MTU] = { "path_mtu", "value transport", "value", "path MTU" },
	[K_IMMEDIATE] = { "immediate", "op min_count transport", "",
			  "packets with immediate data" },
	[K_ATOMIC] = { "atomic", "op min_count acks", "", "atomic requests and atomic ACKs" },
	[K_MIN_QPS] = { "min_qps", "min_qps min_conversations transport", "",
			"distinct QPs / conversations" },
	[K_OOB_TCP] = { "oob_tcp", "port min_frames", "port", "out-of-band TCP exchange" },
	[K_HEADER] = { "header", "header min_count transport", "header",
		       "packets carrying an extended header" },
};

enum { BY_ANY, BY_CM, BY_TRAFFIC };

struct check {
	char *name;
	enum kind kind;
	int line;
	long points;
	char *explain;
	char transport[4]; /* "" any */
	int op;		   /* enum qpt_op, -1 any */
	long min_count, max_count, size, min_packets, min_connections,
		min_conversations, min_qps, value, min_frames;
	bool teardown, only, present, all, middle, acks;
	int by;
	unsigned header; /* QPT_H_* bit */
	char *bpf;	 /* oob_tcp */
};

struct rubric {
	char *file;
	char *name, *description;
	GPtrArray *checks; /* struct check * */
	long max_points;
};

struct lines {
	GHashTable *at; /* "group\001key" or "group" -> line */
	GString *errors;
	const char *file;
	int nerrors;
};

static void rerr(struct lines *L, int line, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void rerr(struct lines *L, int line, const char *fmt, ...)
{
	va_list ap;

	if (line > 0)
		g_string_append_printf(L->errors, "%s:%d: ", L->file, line);
	else
		g_string_append_printf(L->errors, "%s: ", L->file);
	va_start(ap, fmt);
	g_string_append_vprintf(L->errors, fmt, ap);
	va_end(ap);
	g_string_append_c(L->errors, '\n');
	L->nerrors++;
}

static int line_of(struct lines *L, const char *group, const char *key)
{
	char *k = key ? g_strconcat(group, "\001", key, NULL) : g_strdup(group);
	gpointer v = g_hash_table_lookup(L->at, k);

	g_free(k);
	return GPOINTER_TO_INT(v);
}

/* Scans the text as GKeyFile would, remembering where each group and key
 * is (GKeyFile does not say) and reporting what it would reject. */
static void scan_lines(struct lines *L, const char *text)
{
	gchar **lines = g_strsplit(text, "\n", -1);
	char *group = NULL;

	for (int i = 0; lines[i]; i++) {
		int ln = i + 1;
		char *s = lines[i];
		size_t n;

		if (!g_utf8_validate(s, -1, NULL)) {
			rerr(L, ln, "line is not valid UTF-8");
			continue;
		}
		n = strlen(s);
		if (n && s[n - 1] == '\r')
			s[--n] = '\0';
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			continue;
		if (*s == '[') {
			char *end = strrchr(s, ']');

			if (!end || end[1] != '\0' || end == s + 1) {
				rerr(L, ln, "bad group header '%s' (expected [rubric] or [check NAME])", s);
				continue;
			}
			g_free(group);
			group = g_strndup(s + 1, (gsize)(end - s - 1));
			if (g_hash_table_contains(L->at, group))
				rerr(L, ln, "group [%s] appears twice (first on line %d)", group,
				     GPOINTER_TO_INT(g_hash_table_lookup(L->at, group)));
			else
				g_hash_table_insert(L->at, g_strdup(group), GINT_TO_POINTER(ln));
			continue;
		}
		{
			char *eq = strchr(s, '=');
			char *key, *k;

			if (!eq) {
				rerr(L, ln, "'%s' is not a key=value pair, a [group] or a # comment", s);
				continue;
			}
			key = g_strstrip(g_strndup(s, (gsize)(eq - s)));
			if (!*key) {
				rerr(L, ln, "key name missing before '='");
			} else if (!group) {
				rerr(L, ln, "key '%s' is outside any group", key);
			} else {
				k = g_strconcat(group, "\001", key, NULL);
				if (g_hash_table_contains(L->at, k)) {
					rerr(L, ln, "key '%s' appears twice in [%s] (first on line %d)",
					     key, group, GPOINTER_TO_INT(g_hash_table_lookup(L->at, k)));
					g_free(k);
				} else {
					g_hash_table_insert(L->at, k, GINT_TO_POINTER(ln));
				}
			}
			g_free(key);
		}
	}
	g_free(group);
	g_strfreev(lines);
}

static bool has_word(const char *list, const char *w)
{
	gchar **v = g_strsplit(list, " ", -1);
	bool found = false;

	for (gchar **p = v; *p && !found; p++)
		found = **p && !strcmp(*p, w);
	g_strfreev(v);
	return found;
}

/* A value, stripped; NULL (and an error) when GKeyFile cannot give it. */
static char *get_str(struct lines *L, GKeyFile *kf, const char *group, const char *key)
{
	GError *e = NULL;
	char *v = g_key_file_get_string(kf, group, key, &e);

	/* GLib returns a partial string AND an error for a bad escape (\C). */
	if (!v || e) {
		rerr(L, line_of(L, group, key), "%s: %s", key, e ? e->message : "no value");
		g_clear_error(&e);
		g_free(v);
		return NULL;
	}
	return g_strstrip(v);
}

static bool get_long(struct lines *L, GKeyFile *kf, const char *group, const char *key,
		     long min, long max, long *out)
{
	char *v = get_str(L, kf, group, key);
	guint64 n;
	bool ok;

	if (!v)
		return false;
	ok = g_ascii_string_to_unsigned(v, 10, (guint64)min, (guint64)max, &n, NULL);
	if (!ok)
		rerr(L, line_of(L, group, key), "%s: '%s' is not a whole number from %ld to %ld",
		     key, v, min, max);
	else
		*out = (long)n;
	g_free(v);
	return ok;
}

static bool get_bool(struct lines *L, GKeyFile *kf, const char *group, const char *key,
		     bool *out)
{
	char *v = get_str(L, kf, group, key);
	bool ok = true;

	if (!v)
		return false;
	if (!g_ascii_strcasecmp(v, "true") || !g_ascii_strcasecmp(v, "yes") || !strcmp(v, "1"))
		*out = true;
	else if (!g_ascii_strcasecmp(v, "false") || !g_ascii_strcasecmp(v, "no") ||
		 !strcmp(v, "0"))
		*out = false;
	else {
		rerr(L, line_of(L, group, key), "%s: '%s' is not true or false", key, v);
		ok = false;
	}
	g_free(v);
	return ok;
}

static int op_by_name(const char *s)
{
	for (int op = 1; op < QPT_OP_COUNT; op++)
		if (!g_ascii_strcasecmp(s, qpt_op_name(op)))
			return op;
	return -1;
}

static GString *op_names(void)
{
	GString *g = g_string_new("");

	for (int op = 1; op < QPT_OP_COUNT; op++)
		g_string_append_printf(g, "%s%s", op > 1 ? ", " : "", qpt_op_name(op));
	return g;
}

static void check_free(gpointer p)
{
	struct check *c = p;

	g_free(c->name);
	g_free(c->explain);
	g_free(c->bpf);
	g_free(c);
}

static void parse_check(struct lines *L, GKeyFile *kf, const char *group,
			struct rubric *rb)
{
	int gline = line_of(L, group, NULL);
	struct check *c = g_new0(struct check, 1);
	gchar **keys = g_key_file_get_keys(kf, group, NULL, NULL);
	int before = L->nerrors;
	char *v;

	c->name = g_strstrip(g_strdup(group + strlen("check")));
	c->line = gline;
	c->points = 1;
	c->op = -1;
	c->min_count = 1;
	c->max_count = -1;
	c->size = -1;
	c->min_packets = 0;
	c->min_connections = 1;
	c->min_conversations = 1;
	c->min_frames = 1;
	c->present = true;
	c->middle = true;
	c->acks = true;
	c->by = BY_ANY;
	if (!*c->name)
		rerr(L, gline, "[check] needs a name: [check NAME]");
	if (!g_key_file_has_key(kf, group, "kind", NULL)) {
		rerr(L, gline, "[%s] has no kind= (one of ops, multi_packet, cm_handshake, paired, "
			       "transport, acks, no_retransmissions, no_gaps, path_mtu, immediate, "
			       "atomic, min_qps, oob_tcp, header)", group);
		goto out;
	}
	v = get_str(L, kf, group, "kind");
	if (!v)
		goto out;
	c->kind = K_COUNT;
	for (int k = 0; k < K_COUNT; k++)
		if (!strcmp(v, kinds[k].name))
			c->kind = (enum kind)k;
	if (c->kind == K_COUNT) {
		GString *known = g_string_new("");

		for (int k = 0; k < K_COUNT; k++)
			g_string_append_printf(known, "%s%s", k ? ", " : "", kinds[k].name);
		rerr(L, line_of(L, group, "kind"), "kind: unknown kind '%s' (known: %s)", v,
		     known->str);
		g_string_free(known, TRUE);
		g_free(v);
		goto out;
	}
	g_free(v);
	for (gchar **k = keys; k && *k; k++) {
		const char *key = *k;
		int kl = line_of(L, group, key);

		if (!strcmp(key, "kind"))
			continue;
		if (!strcmp(key, "points")) {
			get_long(L, kf, group, key, 0, 1000000, &c->points);
			continue;
		}
		if (!strcmp(key, "explain")) {
			c->explain = get_str(L, kf, group, key);
			continue;
		}
		if (!has_word(kinds[c->kind].keys, key)) {
			gchar **kw = g_strsplit(kinds[c->kind].keys, " ", -1);
			gchar *known = g_strjoinv(", ", kw);

			rerr(L, kl, "key '%s' is not known for kind=%s (known: kind, points, explain%s%s)",
			     key, kinds[c->kind].name, *known ? ", " : "", known);
			g_free(known);
			g_strfreev(kw);
			continue;
		}
		if (!strcmp(key, "transport")) {
			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			if (!strcmp(v, "RC") || !strcmp(v, "UC") || !strcmp(v, "UD") ||
			    !strcmp(v, "XRC") || !strcmp(v, "RD"))
				g_strlcpy(c->transport, v, sizeof(c->transport));
			else if (strcmp(v, "any") || c->kind == K_TRANSPORT)
				rerr(L, kl, "transport: '%s' is not RC, UC, UD, XRC or RD%s", v,
				     c->kind == K_TRANSPORT ? "" : " (or any)");
			g_free(v);
		} else if (!strcmp(key, "op")) {
			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			c->op = op_by_name(v);
			if (c->op < 0 && (strcmp(v, "any") || c->kind == K_OPS)) {
				GString *names = op_names();

				rerr(L, kl, "op: unknown operation '%s' (known: %s%s)", v, names->str,
				     c->kind == K_OPS ? "" : ", any");
				g_string_free(names, TRUE);
			} else if (c->kind == K_ATOMIC && c->op >= 0 &&
				   c->op != QPT_OP_CMP_SWAP && c->op != QPT_OP_FETCH_ADD) {
				rerr(L, kl, "op: '%s' is not an atomic operation (CMP_SWAP, FETCH_ADD or any)", v);
			} else if (c->kind == K_IMMEDIATE && c->op >= 0 &&
				   c->op != QPT_OP_SEND_IMM && c->op != QPT_OP_WRITE_IMM) {
				rerr(L, kl, "op: '%s' carries no immediate data (SEND_IMM, WRITE_IMM or any)", v);
			}
			g_free(v);
		} else if (!strcmp(key, "min_count")) {
			get_long(L, kf, group, key, 0, G_MAXINT, &c->min_count);
		} else if (!strcmp(key, "max_count")) {
			get_long(L, kf, group, key, 0, G_MAXINT, &c->max_count);
		} else if (!strcmp(key, "size")) {
			get_long(L, kf, group, key, 0, 2147483647L, &c->size);
		} else if (!strcmp(key, "min_packets_per_message")) {
			get_long(L, kf, group, key, 1, G_MAXINT, &c->min_packets);
		} else if (!strcmp(key, "min_connections")) {
			get_long(L, kf, group, key, 1, G_MAXINT, &c->min_connections);
		} else if (!strcmp(key, "min_conversations")) {
			get_long(L, kf, group, key, 1, G_MAXINT, &c->min_conversations);
		} else if (!strcmp(key, "min_qps")) {
			get_long(L, kf, group, key, 1, G_MAXINT, &c->min_qps);
		} else if (!strcmp(key, "min_frames")) {
			get_long(L, kf, group, key, 1, G_MAXINT, &c->min_frames);
		} else if (!strcmp(key, "port")) {
			get_long(L, kf, group, key, 1, 65535, &c->value);
		} else if (!strcmp(key, "value")) {
			long mtu = 0;

			if (get_long(L, kf, group, key, 0, 4096, &mtu)) {
				if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 &&
				    mtu != 4096)
					rerr(L, kl, "value: %ld is not a path MTU (256, 512, 1024, 2048 or 4096)",
					     mtu);
				c->value = mtu;
			}
		} else if (!strcmp(key, "teardown")) {
			get_bool(L, kf, group, key, &c->teardown);
		} else if (!strcmp(key, "only")) {
			get_bool(L, kf, group, key, &c->only);
		} else if (!strcmp(key, "present")) {
			get_bool(L, kf, group, key, &c->present);
		} else if (!strcmp(key, "all")) {
			get_bool(L, kf, group, key, &c->all);
		} else if (!strcmp(key, "middle")) {
			get_bool(L, kf, group, key, &c->middle);
		} else if (!strcmp(key, "acks")) {
			get_bool(L, kf, group, key, &c->acks);
		} else if (!strcmp(key, "by")) {
			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			if (!strcmp(v, "cm"))
				c->by = BY_CM;
			else if (!strcmp(v, "traffic"))
				c->by = BY_TRAFFIC;
			else if (!strcmp(v, "any"))
				c->by = BY_ANY;
			else
				rerr(L, kl, "by: '%s' is not cm, traffic or any", v);
			g_free(v);
		} else if (!strcmp(key, "header")) {
			GString *names;

			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			names = g_string_new("");
			for (unsigned b = 0; b < QPT_H_COUNT; b++) {
				g_string_append_printf(names, "%s%s", b ? ", " : "",
						       qpt_hdr_name(1u << b));
				if (!g_ascii_strcasecmp(v, qpt_hdr_name(1u << b)))
					c->header = 1u << b;
			}
			if (!c->header)
				rerr(L, kl, "header: unknown extended header '%s' (known: %s)", v,
				     names->str);
			g_string_free(names, TRUE);
			g_free(v);
		}
	}
	{
		gchar **req = g_strsplit(kinds[c->kind].required, " ", -1);

		for (gchar **r = req; *r; r++)
			if (**r && !g_key_file_has_key(kf, group, *r, NULL))
				rerr(L, gline, "[%s]: kind=%s needs %s=", group, kinds[c->kind].name,
				     *r);
		g_strfreev(req);
	}
	if (c->kind == K_MIN_QPS && !g_key_file_has_key(kf, group, "min_qps", NULL) &&
	    !g_key_file_has_key(kf, group, "min_conversations", NULL))
		rerr(L, gline, "[%s]: kind=min_qps needs min_qps= or min_conversations=", group);
	if (c->max_count >= 0 && c->max_count < c->min_count)
		rerr(L, line_of(L, group, "max_count"), "max_count: %ld is below min_count %ld",
		     c->max_count, c->min_count);
	if (c->kind == K_OOB_TCP)
		c->bpf = g_strdup_printf("tcp port %ld", c->value);
out:
	g_strfreev(keys);
	if (L->nerrors == before) {
		g_ptr_array_add(rb->checks, c);
		rb->max_points += c->points;
	} else {
		check_free(c);
	}
}

static void rubric_free(struct rubric *rb)
{
	if (!rb)
		return;
	g_free(rb->file);
	g_free(rb->name);
	g_free(rb->description);
	g_ptr_array_free(rb->checks, TRUE);
	g_free(rb);
}

/* Loads and validates the rubric; on error prints every problem (one a
 * line, FILE:LINE: what is wrong) and returns NULL. */
static struct rubric *rubric_load(const char *file)
{
	struct lines L = { .file = file };
	GKeyFile *kf = NULL;
	struct rubric *rb = NULL;
	GError *e = NULL;
	gchar *text = NULL;
	gsize len;
	gchar **groups;
	bool have_rubric = false;

	L.errors = g_string_new("");
	L.at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	if (!g_file_get_contents(file, &text, &len, &e)) {
		rerr(&L, 0, "cannot read rubric: %s", e->message);
		g_error_free(e);
		goto out;
	}
	if (memchr(text, '\0', len)) {
		rerr(&L, 0, "not a text file (contains NUL bytes)");
		goto out;
	}
	scan_lines(&L, text);
	if (L.nerrors)
		goto out;
	kf = g_key_file_new();
	if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &e)) {
		rerr(&L, 0, "%s", e->message);
		g_error_free(e);
		goto out;
	}
	rb = g_new0(struct rubric, 1);
	rb->file = g_strdup(file);
	rb->checks = g_ptr_array_new_with_free_func(check_free);
	groups = g_key_file_get_groups(kf, NULL);
	for (gchar **g = groups; *g; g++) {
		int gl = line_of(&L, *g, NULL);

		if (!strcmp(*g, "rubric")) {
			gchar **keys = g_key_file_get_keys(kf, *g, NULL, NULL);

			have_rubric = true;
			for (gchar **k = keys; *k; k++) {
				if (!strcmp(*k, "name"))
					rb->name = get_str(&L, kf, *g, *k);
				else if (!strcmp(*k, "description"))
					rb->description = get_str(&L, kf, *g, *k);
				else
					rerr(&L, line_of(&L, *g, *k),
					     "key '%s' is not known in [rubric] (known: name, description)",
					     *k);
			}
			g_strfreev(keys);
		} else if (g_str_has_prefix(*g, "check") &&
			   (!(*g)[5] || (*g)[5] == ' ' || (*g)[5] == '\t')) {
			parse_check(&L, kf, *g, rb);
		} else {
			rerr(&L, gl, "unknown group [%s] (expected [rubric] or [check NAME])", *g);
		}
	}
	g_strfreev(groups);
	if (!have_rubric)
		rerr(&L, 0, "no [rubric] group (it names the rubric: name=, description=)");
	else if (!rb->name)
		rerr(&L, line_of(&L, "rubric", NULL), "[rubric] has no name=");
	if (!L.nerrors && !rb->checks->len)
		rerr(&L, 0, "no [check NAME] group: nothing to grade");
	{
		/* Check names must be unique once stripped. */
		GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);

		for (guint i = 0; i < rb->checks->len; i++) {
			struct check *c = g_ptr_array_index(rb->checks, i);

			if (g_hash_table_contains(seen, c->name))
				rerr(&L, c->line, "check name '%s' is used twice", c->name);
			g_hash_table_add(seen, c->name);
		}
		g_hash_table_destroy(seen);
	}
out:
	if (L.nerrors) {
		g_printerr("qptrace grade: invalid rubric:\n%s", L.errors->str);
		rubric_free(rb);
		rb = NULL;
	}
	if (kf)
		g_key_file_free(kf);
	g_free(text);
	g_string_free(L.errors, TRUE);
	g_hash_table_destroy(L.at);
	return rb;
}

/* ---- one pass over a capture ------------------------------------------- */

struct frec {
	uint64_t frame;
	uint64_t original_frame; /* retransmission: first sight */
	uint64_t read_request_frame;
	int32_t conv;
	int8_t dir;
	uint8_t opcode;
	bool mad;
	uint16_t cm_msg;
	uint16_t cm_reason;
	uint32_t vflags;
	uint32_t payload_len;
	uint32_t psn, gap_psns, gap_first_psn;
};

struct mrec {
	uint64_t first, last;
	int32_t conv;
	uint8_t op, opcode;
	uint32_t len, packets;
};

struct convspan {
	uint64_t first[2], last[2], n;
};

struct capture {
	const char *file;
	struct qpt_flow *fl;
	GPtrArray *convs;
	GArray *frames; /* struct frec, RoCE/IB frames only */
	GArray *msgs;	/* struct mrec */
	GArray *spans;	/* struct convspan by conversation id */
	GArray **tcp;	/* per check: frame numbers matching its BPF */
	char **tcp_err; /* per check: why the BPF could not be applied */
	uint64_t nframes, iba;
	uint32_t linktype;
	char *error; /* the file could not be read (fully) */
	bool opened;
};

/* The reader's message without the file name it starts with (the report
 * names the file already). */
static char *take_error(const char *file, GError *e)
{
	const char *m = e ? e->message : "read error";
	size_t n = strlen(file);
	char *s;

	if (!strncmp(m, file, n) && m[n] == ':' && m[n + 1] == ' ')
		m += n + 2;
	s = g_strdup(m);
	g_clear_error(&e);
	return s;
}

static void compile_bpfs(struct capture *cap, const struct rubric *rb, uint32_t linktype,
			 struct bpf_program *progs, bool *ok)
{
	pcap_t *dead = pcap_open_dead((int)linktype, 262144);

	for (guint i = 0; i < rb->checks->len; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);

		ok[i] = false;
		if (!c->bpf)
			continue;
		if (!dead) {
			cap->tcp_err[i] = g_strdup("libpcap cannot open a filter for this link type");
			continue;
		}
		if (pcap_compile(dead, &progs[i], c->bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			const char *name = pcap_datalink_val_to_name((int)linktype);

			cap->tcp_err[i] = g_strdup_printf("'%s' cannot be applied to link type %u (%s): %s",
							  c->bpf, linktype, name ? name : "?",
							  pcap_geterr(dead));
			continue;
		}
		ok[i] = true;
	}
	if (dead)
		pcap_close(dead);
}

static struct convspan *span_of(struct capture *cap, int32_t conv)
{
	if (conv < 0)
		return NULL;
	if ((guint)conv >= cap->spans->len)
		g_array_set_size(cap->spans, (guint)conv + 1);
	return &g_array_index(cap->spans, struct convspan, conv);
}

static void read_capture(struct capture *cap, const struct opts *o, const struct rubric *rb)
{
	struct qpt_flow_opts fo = { 0 };
	struct qpt_reader *rd;
	struct qpt_frame f;
	struct qpt_pkt pkt;
	struct qpt_verdict v;
	guint nc = rb->checks->len;
	struct bpf_program *progs = g_new0(struct bpf_program, nc);
	bool *prog_ok = g_new0(bool, nc);
	bool compiled = false;
	GHashTable *read_resp = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	GError *rerr = NULL;
	int rc;

	cap->frames = g_array_new(FALSE, TRUE, sizeof(struct frec));
	cap->msgs = g_array_new(FALSE, TRUE, sizeof(struct mrec));
	cap->spans = g_array_new(FALSE, TRUE, sizeof(struct convspan));
	cap->tcp = g_new0(GArray *, nc);
	cap->tcp_err = g_new0(char *, nc);
	for (guint i = 0; i < nc; i++)
		cap->tcp[i] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	cap->fl = qpt_flow_new(&fo);

	rd = qpt_reader_open(cap->file, o->filter, &rerr);
	if (!rd) {
		cap->error = take_error(cap->file, rerr);
		goto out;
	}
	cap->opened = true;
	for (;;) {
		struct frec r = { 0 };
		const struct qpt_opcode_info *oi;
		int64_t ns;

		rc = qpt_reader_next(rd, &f, &rerr);
		if (rc <= 0)
			break;
		cap->nframes++;
		if (!compiled) {
			cap->linktype = f.linktype;
			compile_bpfs(cap, rb, f.linktype, progs, prog_ok);
			compiled = true;
		}
		if (!f.matched)
			continue;
		for (guint i = 0; i < nc; i++) {
			struct pcap_pkthdr h = { .caplen = f.caplen, .len = f.wirelen };

			if (prog_ok[i] && pcap_offline_filter(&progs[i], &h, f.data))
				g_array_append_val(cap->tcp[i], f.number);
		}
		ns = f.ts_sec * 1000000000 + f.ts_nsec;
		qpt_decode(&pkt, f.linktype, f.data, f.caplen, f.wirelen, &o->dec);
		qpt_flow_packet(cap->fl, f.number, ns, &pkt, &v);
		if (pkt.transport == QPT_TR_NONE || !(pkt.flags & QPT_HAS_BTH))
			continue;
		cap->iba++;
		oi = &qpt_opcodes[pkt.bth.opcode];
		r.frame = f.number;
		r.conv = v.conv;
		r.dir = v.dir;
		r.opcode = pkt.bth.opcode;
		r.mad = (pkt.flags & QPT_HAS_MAD) != 0;
		if (pkt.flags & QPT_HAS_CM) {
			r.cm_msg = pkt.cm.msg;
			r.cm_reason = pkt.cm.reason;
		}
		r.vflags = v.flags;
		r.payload_len = pkt.payload_len;
		r.psn = pkt.bth.psn;
		r.original_frame = v.original_frame;
		r.gap_psns = v.gap_psns;
		r.gap_first_psn = v.gap_first_psn;
		r.read_request_frame = v.read_request_frame;
		g_array_append_val(cap->frames, r);
		if (v.conv >= 0 && v.dir >= 0) {
			struct convspan *s = span_of(cap, v.conv);

			if (!s->first[v.dir])
				s->first[v.dir] = f.number;
			s->last[v.dir] = f.number;
			s->n++;
		}
		if (v.msg_first_frame) {
			struct mrec m = {
				.first = v.msg_first_frame, .last = f.number, .conv = v.conv,
				.op = v.msg_op, .opcode = pkt.bth.opcode, .len = v.msg_len,
				.packets = v.msg_packets,
			};
			g_array_append_val(cap->msgs, m);
		}
		/* READ responses: count them against their request. */
		if ((oi->flags & QPT_O_READ) && (oi->flags & QPT_O_RESP) && v.read_request_frame &&
		    !(v.flags & (QPT_V(RETRANSMISSION) | QPT_V(DUPLICATE)))) {
			uint64_t *cnt = g_hash_table_lookup(read_resp, &v.read_request_frame);

			if (!cnt) {
				gint64 *k = g_new(gint64, 1);

				*k = (gint64)v.read_request_frame;
				cnt = g_new0(uint64_t, 2);
				g_hash_table_insert(read_resp, k, cnt);
			}
			cnt[0]++;
			cnt[1] = f.number;
		}
	}
	if (rc < 0)
		cap->error = take_error(cap->file, rerr);
	qpt_reader_close(rd);
	/* A READ's packets are its response packets. */
	for (guint i = 0; i < cap->msgs->len; i++) {
		struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);
		gint64 k = (gint64)m->last;
		uint64_t *cnt;

		if (m->op != QPT_OP_READ)
			continue;
		cnt = g_hash_table_lookup(read_resp, &k);
		if (cnt) {
			m->packets = (uint32_t)cnt[0];
			m->last = cnt[1];
		}
	}
out:
	qpt_flow_finish(cap->fl);
	cap->convs = qpt_flow_conversations(cap->fl);
	for (guint i = 0; i < nc; i++)
		if (prog_ok[i])
			pcap_freecode(&progs[i]);
	g_free(progs);
	g_free(prog_ok);
	g_hash_table_destroy(read_resp);
}

static void capture_free(struct capture *cap, guint nc)
{
	if (cap->convs)
		g_ptr_array_free(cap->convs, TRUE);
	if (cap->fl)
		qpt_flow_free(cap->fl);
	if (cap->frames)
		g_array_free(cap->frames, TRUE);
	if (cap->msgs)
		g_array_free(cap->msgs, TRUE);
	if (cap->spans)
		g_array_free(cap->spans, TRUE);
	for (guint i = 0; cap->tcp && i < nc; i++) {
		g_array_free(cap->tcp[i], TRUE);
		g_free(cap->tcp_err[i]);
	}
	g_free(cap->tcp);
	g_free(cap->tcp_err);
	g_free(cap->error);
}

/* ---- checks -------------------------------------------------------------- */

struct result {
	bool pass;
	GString *reason;
	GArray *frames; /* uint64_t, the proof */
};

static void add_frame(struct result *r, uint64_t f)
{
	if (f)
		g_array_append_val(r->frames, f);
}

static gint cmp_u64(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void sort_unique(GArray *a)
{
	guint j = 0;

	g_array_sort(a, cmp_u64);
	for (guint i = 0; i < a->len; i++)
		if (!j || g_array_index(a, uint64_t, i) != g_array_index(a, uint64_t, j - 1))
			g_array_index(a, uint64_t, j++) = g_array_index(a, uint64_t, i);
	g_array_set_size(a, j);
}

/* "frame 4", "frames 4-6, 9", or "frames 4-18" when the list is long. */
static void fmt_frames(GString *o, GArray *in)
{
	GArray *a = g_array_copy(in);
	guint runs = 0;

	sort_unique(a);
	if (!a->len) {
		g_array_free(a, TRUE);
		return;
	}
	for (guint i = 0; i < a->len; i++)
		if (!i || g_array_index(a, uint64_t, i) != g_array_index(a, uint64_t, i - 1) + 1)
			runs++;
	if (a->len == 1) {
		g_string_append_printf(o, "frame %" PRIu64, g_array_index(a, uint64_t, 0));
	} else if (runs > 6) {
		g_string_append_printf(o, "frames %" PRIu64 "-%" PRIu64,
				       g_array_index(a, uint64_t, 0),
				       g_array_index(a, uint64_t, a->len - 1));
	} else {
		g_string_append(o, "frames ");
		for (guint i = 0; i < a->len;) {
			guint j = i;

			while (j + 1 < a->len &&
			       g_array_index(a, uint64_t, j + 1) == g_array_index(a, uint64_t, j) + 1)
				j++;
			if (i)
				g_string_append(o, ", ");
			if (j == i)
				g_string_append_printf(o, "%" PRIu64, g_array_index(a, uint64_t, i));
			else
				g_string_append_printf(o, "%" PRIu64 "-%" PRIu64,
						       g_array_index(a, uint64_t, i),
						       g_array_index(a, uint64_t, j));
			i = j + 1;
		}
	}
	g_array_free(a, TRUE);
}

static void fmt_ep(const struct qpt_endpoint *e, char *buf, size_t len)
{
	char a[64];

	if (e->family == 'L')
		g_snprintf(a, sizeof(a), "LID %u", e->addr[0] << 8 | e->addr[1]);
	else if (e->family == 4)
		inet_ntop(AF_INET, e->addr + 12, a, sizeof(a));
	else
		inet_ntop(AF_INET6, e->addr, a, sizeof(a));
	if (e->qpn_known)
		g_snprintf(buf, len, "%s QP 0x%06x", a, e->qpn);
	else
		g_snprintf(buf, len, "%s QP ?", a);
}

static void conv_frames(const struct capture *cap, const struct qpt_conv *c, struct result *r)
{
	if (c->id >= 0 && (guint)c->id < cap->spans->len) {
		const struct convspan *s = &g_array_index(cap->spans, struct convspan, c->id);

		for (int d = 0; d < 2; d++) {
			add_frame(r, s->first[d]);
			add_frame(r, s->last[d]);
		}
	}
}

static void conv_range(GString *o, const struct capture *cap, const struct qpt_conv *c)
{
	uint64_t lo = 0, hi = 0;

	if (c->id >= 0 && (guint)c->id < cap->spans->len) {
		const struct convspan *s = &g_array_index(cap->spans, struct convspan, c->id);

		for (int d = 0; d < 2; d++) {
			if (s->first[d] && (!lo || s->first[d] < lo))
				lo = s->first[d];
			if (s->last[d] > hi)
				hi = s->last[d];
		}
	}
	if (lo && hi > lo)
		g_string_append_printf(o, "frames %" PRIu64 "-%" PRIu64, lo, hi);
	else if (lo)
		g_string_append_printf(o, "frame %" PRIu64, lo);
	else
		g_string_append(o, "no data packets");
}

static bool tr_match(const struct check *c, const char *tr)
{
	return !c->transport[0] || !strcmp(c->transport, tr);
}

static const char *tr_label(const struct check *c)
{
	return c->transport[0] ? c->transport : "";
}

/* "24 WRITE_ONLY_IMM, 8 WRITE_LAST_IMM" for a list of frame records. */
static void opcode_breakdown(GString *o, GPtrArray *recs)
{
	unsigned counts[256] = { 0 };
	bool first = true;

	for (guint i = 0; i < recs->len; i++)
		counts[((const struct frec *)g_ptr_array_index(recs, i))->opcode]++;
	for (int op = 0; op < 256; op++) {
		if (!counts[op])
			continue;
		g_string_append_printf(o, "%s%u %s %s", first ? "" : ", ", counts[op],
				       qpt_service_name((uint8_t)op),
				       qpt_opcodes[op].short_name ? qpt_opcodes[op].short_name : "?");
		first = false;
	}
}

static void recs_frames(struct result *r, GPtrArray *recs)
{
	for (guint i = 0; i < recs->len; i++)
		add_frame(r, ((const struct frec *)g_ptr_array_index(recs, i))->frame);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void desc_msgs(GString *o, const struct check *c, uint64_t n)
{
	g_string_append_printf(o, "%" PRIu64 " %s%s%s %s", n, tr_label(c),
			       c->transport[0] ? " " : "", qpt_op_name(c->op),
			       plural(n, "message", "messages"));
}

static gint cmp_ptr_uint(gconstpointer a, gconstpointer b)
{
	guint x = GPOINTER_TO_UINT(a), y = GPOINTER_TO_UINT(b);

	return x < y ? -1 : x > y;
}

/* Sizes seen among messages: "5 of 3000 bytes, 2 of 64 bytes". */
static void size_breakdown(GString *o, GArray *ms)
{
	GHashTable *h = g_hash_table_new(g_direct_hash, g_direct_equal);
	GList *keys, *l;
	bool first = true;

	for (guint i = 0; i < ms->len; i++) {
		const struct mrec *m = g_array_index(ms, const struct mrec *, i);
		gpointer k = GUINT_TO_POINTER(m->len + 1);

		g_hash_table_insert(h, k,
				    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(h, k)) + 1));
	}
	keys = g_list_sort(g_hash_table_get_keys(h), cmp_ptr_uint);
	for (l = keys; l; l = l->next) {
		guint n = GPOINTER_TO_UINT(g_hash_table_lookup(h, l->data));

		g_string_append_printf(o, "%s%u of %u bytes", first ? "" : ", ", n,
				       GPOINTER_TO_UINT(l->data) - 1);
		first = false;
	}
	g_list_free(keys);
	g_hash_table_destroy(h);
}

static void msgs_frames(struct result *r, GArray *ms)
{
	for (guint i = 0; i < ms->len; i++) {
		const struct mrec *m = g_array_index(ms, const struct mrec *, i);

		add_frame(r, m->first);
		add_frame(r, m->last);
	}
}

static void msgs_range(GString *o, GArray *ms)
{
	uint64_t lo = 0, hi = 0;

	for (guint i = 0; i < ms->len; i++) {
		const struct mrec *m = g_array_index(ms, const struct mrec *, i);

		if (!lo || m->first < lo)
			lo = m->first;
		if (m->last > hi)
			hi = m->last;
	}
	if (lo == hi)
		g_string_append_printf(o, "frame %" PRIu64, lo);
	else
		g_string_append_printf(o, "frames %" PRIu64 "-%" PRIu64, lo, hi);
}

static void check_ops(const struct check *c, const struct capture *cap, struct result *r)
{
	GArray *by_op = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
	GArray *by_size = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
	GArray *ok = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
	GString *o = r->reason;
	uint32_t pmin = 0, pmax = 0;
	long n;

	for (guint i = 0; i < cap->msgs->len; i++) {
		const struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);

		if (m->op != c->op || !tr_match(c, qpt_service_name(m->opcode)))
			continue;
		g_array_append_val(by_op, m);
		if (c->size >= 0 && m->len != (uint32_t)c->size)
			continue;
		g_array_append_val(by_size, m);
		if (m->packets < (uint32_t)c->min_packets)
			continue;
		g_array_append_val(ok, m);
		pmin = ok->len == 1 ? m->packets : MIN(pmin, m->packets);
		pmax = MAX(pmax, m->packets);
	}
	n = (long)ok->len;
	r->pass = n >= c->min_count && (c->max_count < 0 || n <= c->max_count);
	if (r->pass || (c->max_count >= 0 && n > c->max_count)) {
		desc_msgs(o, c, ok->len);
		if (c->size >= 0)
			g_string_append_printf(o, " of %ld bytes", c->size);
		if (ok->len) {
			if (pmin == pmax)
				g_string_append_printf(o, " in %u %s%s", pmin, plural(pmin, "packet", "packets"),
						       ok->len > 1 ? " each" : "");
			else
				g_string_append_printf(o, " in %u-%u packets", pmin, pmax);
		}
		if (!r->pass)
			g_string_append_printf(o, ", expected at most %ld", c->max_count);
		if (ok->len) {
			g_string_append(o, " (");
			msgs_range(o, ok);
			g_string_append_c(o, ')');
		}
		msgs_frames(r, ok);
	} else if ((long)by_op->len < c->min_count) {
		GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		GArray *others = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
		GList *keys;

		g_string_append(o, by_op->len ? "only " : "");
		desc_msgs(o, c, by_op->len);
		g_string_append_printf(o, ", expected at least %ld", c->min_count);
		if (by_op->len) {
			g_string_append(o, " (");
			msgs_range(o, by_op);
			if (c->size >= 0) {
				g_string_append(o, "; sizes seen: ");
				size_breakdown(o, by_op);
			}
			g_string_append_c(o, ')');
			msgs_frames(r, by_op);
		}
		for (guint i = 0; i < cap->msgs->len; i++) {
			const struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);
			char *k;

			if (m->op == c->op && tr_match(c, qpt_service_name(m->opcode)))
				continue;
			g_array_append_val(others, m);
			k = g_strdup_printf("%s %s", qpt_service_name(m->opcode), qpt_op_name(m->op));
			g_hash_table_insert(seen, k,
					    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(seen, k)) + 1));
		}
		keys = g_hash_table_get_keys(seen);
		if (keys) {
			keys = g_list_sort(keys, (GCompareFunc)strcmp);
			g_string_append(o, "; other messages seen:");
			for (GList *l = keys; l; l = l->next)
				g_string_append_printf(o, "%s %u %s", l == keys ? "" : ",",
						       GPOINTER_TO_UINT(g_hash_table_lookup(seen, l->data)),
						       (const char *)l->data);
			g_string_append(o, " (");
			msgs_range(o, others);
			g_string_append_c(o, ')');
			if (!by_op->len)
				msgs_frames(r, others);
		} else if (!by_op->len) {
			g_string_append(o, "; no RDMA messages at all");
		}
		g_list_free(keys);
		g_hash_table_destroy(seen);
		g_array_free(others, TRUE);
	} else if ((long)by_size->len < c->min_count) {
		g_string_append_printf(o, "only %u of %u %s%s%s messages are %ld bytes, expected at least %ld (sizes seen: ",
				       by_size->len, by_op->len, tr_label(c), c->transport[0] ? " " : "",
				       qpt_op_name(c->op), c->size, c->min_count);
		size_breakdown(o, by_op);
		g_string_append(o, "; ");
		msgs_range(o, by_op);
		g_string_append_c(o, ')');
		msgs_frames(r, by_op);
	} else {
		uint32_t most = 0;

		for (guint i = 0; i < by_size->len; i++)
			most = MAX(most, g_array_index(by_size, const struct mrec *, i)->packets);
		g_string_append_printf(o, "only %u of %u %s%s%s messages", ok->len, by_size->len,
				       tr_label(c), c->transport[0] ? " " : "", qpt_op_name(c->op));
		if (c->size >= 0)
			g_string_append_printf(o, " of %ld bytes", c->size);
		g_string_append_printf(o, " span at least %ld packets, expected %ld (largest: %u %s; ",
				       c->min_packets, c->min_count, most, plural(most, "packet", "packets"));
		msgs_range(o, by_size);
		g_string_append_c(o, ')');
		msgs_frames(r, by_size);
	}
	g_array_free(by_op, TRUE);
	g_array_free(by_size, TRUE);
	g_array_free(ok, TRUE);
}

static bool rec_op_match(const struct check *c, const struct frec *f)
{
	return c->op < 0 || qpt_opcodes[f->opcode].op == c->op;
}

static void check_multi_packet(const struct check *c, const struct capture *cap,
			       struct result *r)
{
	GPtrArray *pos[3] = { g_ptr_array_new(), g_ptr_array_new(), g_ptr_array_new() };
	GPtrArray *only = g_ptr_array_new();
	static const char *const names[3] = { "FIRST", "MIDDLE", "LAST" };
	GString *o = r->reason;
	GString *missing = g_string_new("");

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		uint32_t fl = qpt_opcodes[f->opcode].flags;

		if (f->mad || !tr_match(c, qpt_service_name(f->opcode)) || !rec_op_match(c, f) ||
		    !(fl & QPT_O_PAYLOAD || fl & QPT_O_READ) || f->vflags & QPT_V(RETRANSMISSION))
			continue;
		if ((fl & QPT_O_ONLY) == QPT_O_ONLY)
			g_ptr_array_add(only, (gpointer)f);
		else if (fl & QPT_O_FIRST)
			g_ptr_array_add(pos[0], (gpointer)f);
		else if (fl & QPT_O_MIDDLE)
			g_ptr_array_add(pos[1], (gpointer)f);
		else if (fl & QPT_O_LAST)
			g_ptr_array_add(pos[2], (gpointer)f);
	}
	for (int p = 0; p < 3; p++)
		if (!pos[p]->len && (p != 1 || c->middle))
			g_string_append_printf(missing, "%s%s", missing->len ? "/" : "", names[p]);
	r->pass = !missing->len;
	if (r->pass) {
		for (int p = 0; p < 3; p++) {
			const struct frec *f;

			if (!pos[p]->len)
				continue;
			f = g_ptr_array_index(pos[p], 0);
			g_string_append_printf(o, "%s%s frame %" PRIu64, p ? ", " : "",
					       qpt_opcodes[f->opcode].short_name, f->frame);
			add_frame(r, f->frame);
		}
		g_string_append_printf(o, " (%u FIRST, %u MIDDLE, %u LAST)", pos[0]->len,
				       pos[1]->len, pos[2]->len);
	} else {
		bool any = pos[0]->len || pos[1]->len || pos[2]->len;

		g_string_append_printf(o, "no %s%s%s%s%s packet", tr_label(c), c->transport[0] ? " " : "",
				       c->op >= 0 ? qpt_op_name(c->op) : "", c->op >= 0 ? " " : "",
				       missing->str);
		if (!any && only->len) {
			g_string_append(o, ": every message fits in one packet (");
			opcode_breakdown(o, only);
			g_string_append(o, ", ");
			{
				struct result tmp = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };

				recs_frames(&tmp, only);
				fmt_frames(o, tmp.frames);
				g_array_free(tmp.frames, TRUE);
			}
			g_string_append_c(o, ')');
			recs_frames(r, only);
		} else if (any) {
			g_string_append(o, " (seen: ");
			for (int p = 0, k = 0; p < 3; p++) {
				if (!pos[p]->len)
					continue;
				g_string_append_printf(o, "%s%u %s", k++ ? ", " : "", pos[p]->len, names[p]);
				recs_frames(r, pos[p]);
			}
			g_string_append(o, "; ");
			fmt_frames(o, r->frames);
			g_string_append_c(o, ')');
		} else {
			g_string_append(o, ": no such messages at all");
		}
	}
	for (int p = 0; p < 3; p++)
		g_ptr_array_free(pos[p], TRUE);
	g_ptr_array_free(only, TRUE);
	g_string_free(missing, TRUE);
}

static void cm_seen(GString *o, const struct capture *cap, struct result *r)
{
	bool first = true;

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		const char *n;

		if (!f->cm_msg)
			continue;
		n = qpt_cm_msg_name(f->cm_msg);
		g_string_append_printf(o, "%s%s frame %" PRIu64, first ? "" : ", ", n ? n : "CM?",
				       f->frame);
		add_frame(r, f->frame);
		first = false;
	}
}

static void check_cm(const struct check *c, const struct capture *cap, struct result *r)
{
	GString *good = g_string_new(""), *bad = g_string_new("");
	GArray *bad_frames = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	struct result br = { .frames = bad_frames };
	long complete = 0, total = 0;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv *cv = g_ptr_array_index(cap->convs, i);
		const struct qpt_cm_info *m = &cv->cm;
		GString *why;
		GString *s;

		if (!cv->has_cm)
			continue;
		why = g_string_new("");
		total++;
		if (!m->req_frame)
			g_string_append(why, "no CM REQ");
		else if (m->rej_frame)
			g_string_append_printf(why, "CM REJ in frame %" PRIu64 " (reason %u, %s) after REQ in frame %" PRIu64,
					       m->rej_frame, m->rej_reason,
					       qpt_cm_rej_reason_text(m->rej_reason), m->req_frame);
		else if (!m->rep_frame || m->rep_frame < m->req_frame)
			g_string_append_printf(why, "no CM REP after REQ in frame %" PRIu64, m->req_frame);
		else if (!m->rtu_frame || m->rtu_frame < m->rep_frame)
			g_string_append_printf(why, "no CM RTU after REP in frame %" PRIu64, m->rep_frame);
		else if (c->teardown && !m->dreq_frame)
			g_string_append_printf(why, "no CM DREQ (teardown) after RTU in frame %" PRIu64,
					       m->rtu_frame);
		else if (c->teardown && (!m->drep_frame || m->drep_frame < m->dreq_frame))
			g_string_append_printf(why, "no CM DREP after DREQ in frame %" PRIu64, m->dreq_frame);
		s = why->len ? bad : good;
		if (why->len) {
			g_string_append_printf(s, "%sconversation %d: %s", s->len ? "; " : "", cv->id,
					       why->str);
			add_frame(&br, m->req_frame);
			add_frame(&br, m->rep_frame);
			add_frame(&br, m->rtu_frame);
			add_frame(&br, m->rej_frame);
			add_frame(&br, m->dreq_frame);
		} else {
			complete++;
			g_string_append_printf(s, "%sREQ frame %" PRIu64 " -> REP frame %" PRIu64
					       " -> RTU frame %" PRIu64,
					       s->len ? "; " : "", m->req_frame, m->rep_frame, m->rtu_frame);
			add_frame(r, m->req_frame);
			add_frame(r, m->rep_frame);
			add_frame(r, m->rtu_frame);
			if (c->teardown) {
				g_string_append_printf(s, ", DREQ frame %" PRIu64 " -> DREP frame %" PRIu64,
						       m->dreq_frame, m->drep_frame);
				add_frame(r, m->dreq_frame);
				add_frame(r, m->drep_frame);
			}
		}
		g_string_free(why, TRUE);
	}
	r->pass = complete >= c->min_connections && (!c->all || complete == total);
	if (r->pass) {
		g_string_append_printf(r->reason, "%ld CM %s complete%s: %s", complete,
				       plural((uint64_t)complete, "connection", "connections"),
				       c->teardown ? " with teardown" : "", good->str);
	} else if (!total) {
		struct result tmp = { .frames = r->frames };
		GString *seen = g_string_new("");

		cm_seen(seen, cap, &tmp);
		if (seen->len)
			g_string_append_printf(r->reason, "no CM connection: no REQ/REP pair (CM messages: %s)",
					       seen->str);
		else
			g_string_append_printf(r->reason, "no CM messages in the capture (%" PRIu64
					       " frames, %" PRIu64 " RoCE/IB)",
					       cap->nframes, cap->iba);
		g_string_free(seen, TRUE);
	} else {
		g_string_append(r->reason, bad->str);
		if (complete < c->min_connections)
			g_string_append_printf(r->reason, " (%ld of %ld %s complete, expected at least %ld)",
					       complete, total, plural((uint64_t)total, "connection", "connections"),
					       c->min_connections);
		g_array_append_vals(r->frames, bad_frames->data, bad_frames->len);
	}
	g_string_free(good, TRUE);
	g_string_free(bad, TRUE);
	g_array_free(bad_frames, TRUE);
}

static void conv_desc(GString *o, const struct capture *cap, const struct qpt_conv *cv)
{
	char a[96], b[96];

	fmt_ep(&cv->ep[0], a, sizeof(a));
	fmt_ep(&cv->ep[1], b, sizeof(b));
	g_string_append_printf(o, "conversation %d %s %s <-> %s, ", cv->id,
			       cv->transport[0] ? cv->transport : "?", a, b);
	conv_range(o, cap, cv);
}

static void check_paired(const struct check *c, const struct capture *cap, struct result *r)
{
	static const char *const want[] = { "cm or traffic", "cm", "traffic" };
	GString *others = g_string_new("");
	long n = 0;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv *cv = g_ptr_array_index(cap->convs, i);
		bool ok = c->by == BY_ANY ? cv->paired_by != QPT_PAIR_NONE :
			  c->by == BY_CM  ? cv->paired_by == QPT_PAIR_CM :
					    cv->paired_by == QPT_PAIR_TRAFFIC;
		GString *s = ok ? r->reason : others;

		if (ok)
			n++;
		if (s->len)
			g_string_append(s, "; ");
		conv_desc(s, cap, cv);
		g_string_append_printf(s, ": paired by %s", qpt_paired_by_name(cv->paired_by));
		if (cv->pair_evidence && cv->pair_evidence[0])
			g_string_append_printf(s, " (%s", cv->pair_evidence);
		else
			g_string_append(s, " (");
		if (cv->paired_by == QPT_PAIR_CM && cv->cm.req_frame)
			g_string_append_printf(s, "%sREQ frame %" PRIu64 ", REP frame %" PRIu64,
					       cv->pair_evidence && cv->pair_evidence[0] ? ": " : "",
					       cv->cm.req_frame, cv->cm.rep_frame);
		g_string_append_c(s, ')');
		if (g_str_has_suffix(s->str, " ()"))
			g_string_truncate(s, s->len - 3);
		if (ok) {
			if (cv->paired_by == QPT_PAIR_CM) {
				add_frame(r, cv->cm.req_frame);
				add_frame(r, cv->cm.rep_frame);
			} else {
				conv_frames(cap, cv, r);
			}
		}
	}
	r->pass = n >= c->min_conversations;
	if (!r->pass) {
		GString *head = g_string_new("");

		g_string_append_printf(head, "%ld %s paired by %s, expected at least %ld", n,
				       plural((uint64_t)n, "conversation", "conversations"),
				       want[c->by], c->min_conversations);
		if (r->reason->len)
			g_string_append_printf(head, " (%s)", r->reason->str);
		if (others->len)
			g_string_append_printf(head, "; %s", others->str);
		else if (!cap->convs->len)
			g_string_append(head, "; no QP conversation in the capture");
		g_string_assign(r->reason, head->str);
		g_string_free(head, TRUE);
		for (guint i = 0; i < cap->convs->len; i++)
			conv_frames(cap, g_ptr_array_index(cap->convs, i), r);
	}
	g_string_free(others, TRUE);
}

static void check_transport(const struct check *c, const struct capture *cap, struct result *r)
{
	GString *have = g_string_new(""), *other = g_string_new("");
	struct result orr = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	long n = 0;
	GHashTable *other_tr = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv *cv = g_ptr_array_index(cap->convs, i);
		const char *tr = cv->transport[0] ? cv->transport : "?";

		if (!strcmp(tr, c->transport)) {
			n++;
			g_string_append_printf(have, "%sconversation %d, ", have->len ? "; " : "", cv->id);
			conv_range(have, cap, cv);
			conv_frames(cap, cv, r);
		} else {
			g_hash_table_add(other_tr, (gpointer)tr);
			g_string_append_printf(other, "%s%s conversation %d, ", other->len ? "; " : "",
					       tr, cv->id);
			conv_range(other, cap, cv);
			conv_frames(cap, cv, &orr);
		}
	}
	r->pass = n > 0 && (!c->only || !other->len);
	if (c->only && other->len) {
		GList *trs = g_list_sort(g_hash_table_get_keys(other_tr), (GCompareFunc)strcmp);
		GString *names = g_string_new("");

		for (GList *l = trs; l; l = l->next)
			g_string_append_printf(names, "%s%s", l == trs ? "" : "/", (const char *)l->data);
		g_string_append_printf(r->reason, "transport %s present, expected only %s (%s)",
				       names->str, c->transport, other->str);
		if (!n)
			g_string_append_printf(r->reason, "; no %s conversation at all", c->transport);
		g_list_free(trs);
		g_string_free(names, TRUE);
		g_array_set_size(r->frames, 0);
		g_array_append_vals(r->frames, orr.frames->data, orr.frames->len);
	} else if (!n) {
		g_string_append_printf(r->reason, "no %s conversation", c->transport);
		if (other->len)
			g_string_append_printf(r->reason, " (seen: %s)", other->str);
		else
			g_string_append(r->reason, " (no QP conversation in the capture)");
		g_array_append_vals(r->frames, orr.frames->data, orr.frames->len);
	} else {
		g_string_append_printf(r->reason, "%ld %s %s%s: %s", n, c->transport,
				       plural((uint64_t)n, "conversation", "conversations"),
				       c->only ? " and no other transport" : "", have->str);
	}
	g_hash_table_destroy(other_tr);
	g_array_free(orr.frames, TRUE);
	g_string_free(have, TRUE);
	g_string_free(other, TRUE);
}

static void check_acks(const struct check *c, const struct capture *cap, struct result *r)
{
	GPtrArray *acks = g_ptr_array_new();
	GPtrArray *reqs = g_ptr_array_new();

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		const struct qpt_opcode_info *oi = &qpt_opcodes[f->opcode];

		if (oi->hdrs & QPT_H_AETH)
			g_ptr_array_add(acks, (gpointer)f);
		else if (!f->mad && oi->flags & QPT_O_REQ)
			g_ptr_array_add(reqs, (gpointer)f);
	}
	r->pass = c->present ? acks->len > 0 : acks->len == 0;
	if (acks->len) {
		if (!c->present)
			g_string_append(r->reason, "ACKs present: ");
		g_string_append_printf(r->reason, "%u %s with an AETH (", acks->len,
				       plural(acks->len, "frame", "frames"));
		opcode_breakdown(r->reason, acks);
		g_string_append(r->reason, "; ");
		recs_frames(r, acks);
		fmt_frames(r->reason, r->frames);
		g_string_append_c(r->reason, ')');
		if (!c->present)
			g_string_append(r->reason, ", expected none");
	} else {
		struct result tmp = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };

		g_string_append_printf(r->reason, "no ACK: no AETH in %" PRIu64 " RoCE/IB packets",
				       cap->iba);
		if (reqs->len) {
			g_string_append_printf(r->reason, " (%u requests: ", reqs->len);
			opcode_breakdown(r->reason, reqs);
			g_string_append(r->reason, "; ");
			recs_frames(&tmp, reqs);
			fmt_frames(r->reason, tmp.frames);
			g_string_append_c(r->reason, ')');
			if (c->present)
				recs_frames(r, reqs);
		}
		g_array_free(tmp.frames, TRUE);
		if (c->present)
			g_string_append(r->reason, ", expected ACKs");
	}
	g_ptr_array_free(acks, TRUE);
	g_ptr_array_free(reqs, TRUE);
}

static void check_no_retrans(const struct check *c, const struct capture *cap,
			     struct result *r)
{
	const uint32_t mask = QPT_V(RETRANSMISSION) | QPT_V(TIMEOUT_RESEND) |
			      QPT_V(READ_RETRY) | QPT_V(RNR_RETRY);
	unsigned n = 0, shown = 0;

	(void)c;
	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (!(f->vflags & mask))
			continue;
		n++;
		add_frame(r, f->frame);
		if (shown++ < 5) {
			g_string_append_printf(r->reason, "%sframe %" PRIu64 " resends PSN %u", shown > 1 ? ", " : "(",
					       f->frame, f->psn);
			if (f->original_frame)
				g_string_append_printf(r->reason, " of frame %" PRIu64, f->original_frame);
		}
	}
	r->pass = !n;
	if (n) {
		GString *h = g_string_new("");

		g_string_printf(h, "%u retransmitted %s ", n, plural(n, "packet", "packets"));
		g_string_prepend(r->reason, h->str);
		g_string_append(r->reason, n > 5 ? ", ...)" : ")");
		g_string_free(h, TRUE);
	} else {
		g_string_append_printf(r->reason, "no retransmitted packet among %" PRIu64 " RoCE/IB packets",
				       cap->iba);
	}
}

static void check_no_gaps(const struct check *c, const struct capture *cap, struct result *r)
{
	unsigned n = 0, shown = 0;
	uint64_t missing = 0;

	(void)c;
	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (!(f->vflags & QPT_V(PSN_GAP)))
			continue;
		n++;
		missing += f->gap_psns;
		add_frame(r, f->frame);
		if (shown++ < 5)
			g_string_append_printf(r->reason, "%sbefore frame %" PRIu64 ": %u %s missing from PSN %u",
					       shown > 1 ? "; " : " (", f->frame, f->gap_psns,
					       plural(f->gap_psns, "PSN", "PSNs"), f->gap_first_psn);
	}
	r->pass = !n;
	if (n) {
		GString *h = g_string_new("");

		g_string_printf(h, "%u PSN %s, %" PRIu64 " PSNs missing", n, plural(n, "gap", "gaps"),
				missing);
		g_string_prepend(r->reason, h->str);
		g_string_append(r->reason, n > 5 ? "; ...)" : ")");
		g_string_free(h, TRUE);
	} else {
		g_string_append_printf(r->reason, "no PSN gap among %" PRIu64 " RoCE/IB packets", cap->iba);
	}
}

/* Where the engine's MTU of a conversation comes from. */
static void mtu_evidence(GString *o, const struct capture *cap, const struct qpt_conv *cv,
			 struct result *r)
{
	if (cv->has_cm && cv->cm.path_mtu && cv->cm.path_mtu == cv->mtu && cv->cm.req_frame) {
		g_string_append_printf(o, "from CM REQ frame %" PRIu64, cv->cm.req_frame);
		add_frame(r, cv->cm.req_frame);
		return;
	}
	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		uint32_t fl = qpt_opcodes[f->opcode].flags;

		if (f->conv == cv->id && (fl & (QPT_O_FIRST | QPT_O_MIDDLE)) && !(fl & QPT_O_LAST) &&
		    f->payload_len == cv->mtu) {
			g_string_append_printf(o, "full %u-byte %s payload in frame %" PRIu64, f->payload_len,
					       qpt_opcodes[f->opcode].short_name, f->frame);
			add_frame(r, f->frame);
			return;
		}
	}
	g_string_append(o, "learned by the engine");
}

static void check_path_mtu(const struct check *c, const struct capture *cap, struct result *r)
{
	GString *good = g_string_new(""), *bad = g_string_new("");
	struct result br = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	unsigned known = 0, wrong = 0;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv *cv = g_ptr_array_index(cap->convs, i);
		GString *s;

		if (!cv->mtu || !tr_match(c, cv->transport))
			continue;
		known++;
		if (cv->mtu != (uint32_t)c->value)
			wrong++;
		s = cv->mtu == (uint32_t)c->value ? good : bad;
		g_string_append_printf(s, "%spath MTU %u in conversation %d (", s->len ? "; " : "",
				       cv->mtu, cv->id);
		mtu_evidence(s, cap, cv, s == good ? r : &br);
		g_string_append_c(s, ')');
	}
	r->pass = known && !wrong;
	if (r->pass) {
		g_string_append(r->reason, good->str);
	} else if (!known) {
		g_string_append_printf(r->reason, "path MTU unknown: no %s%smulti-packet message and no CM REQ to learn it from, expected %ld",
				       tr_label(c), c->transport[0] ? " " : "", c->value);
	} else {
		g_string_append_printf(r->reason, "%s, expected %ld", bad->str, c->value);
		g_array_set_size(r->frames, 0);
		g_array_append_vals(r->frames, br.frames->data, br.frames->len);
	}
	g_array_free(br.frames, TRUE);
	g_string_free(good, TRUE);
	g_string_free(bad, TRUE);
}

/* Packets carrying header hdr (ImmDt for kind=immediate). */
static void check_header(const struct check *c, const struct capture *cap, struct result *r,
			 unsigned hdr, const char *what)
{
	GPtrArray *hit = g_ptr_array_new();

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (f->mad || !(qpt_opcodes[f->opcode].hdrs & hdr) ||
		    !tr_match(c, qpt_service_name(f->opcode)) || !rec_op_match(c, f))
			continue;
		g_ptr_array_add(hit, (gpointer)f);
	}
	GString *label = g_string_new("");

	if (c->transport[0])
		g_string_append_printf(label, "%s ", c->transport);
	if (c->op >= 0)
		g_string_append_printf(label, "%s ", qpt_op_name(c->op));
	r->pass = (long)hit->len >= c->min_count && hit->len > 0;
	if (hit->len) {
		g_string_append_printf(r->reason, "%s%u %s%s %s (", r->pass ? "" : "only ",
				       hit->len, label->str, plural(hit->len, "packet", "packets"), what);
		opcode_breakdown(r->reason, hit);
		g_string_append(r->reason, "; ");
		recs_frames(r, hit);
		fmt_frames(r->reason, r->frames);
		g_string_append_c(r->reason, ')');
		if (!r->pass)
			g_string_append_printf(r->reason, ", expected at least %ld", c->min_count);
	} else {
		g_string_append_printf(r->reason, "no %spacket %s among %" PRIu64 " RoCE/IB packets",
				       label->str, what, cap->iba);
	}
	g_string_free(label, TRUE);
	g_ptr_array_free(hit, TRUE);
}

static void check_atomic(const struct check *c, const struct capture *cap, struct result *r)
{
	GPtrArray *req = g_ptr_array_new(), *ack = g_ptr_array_new();

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		const struct qpt_opcode_info *oi = &qpt_opcodes[f->opcode];

		if (f->vflags & (QPT_V(RETRANSMISSION) | QPT_V(DUPLICATE)))
			continue;
		if ((oi->flags & QPT_O_REQ) && (oi->hdrs & QPT_H_ATOMICETH) && rec_op_match(c, f))
			g_ptr_array_add(req, (gpointer)f);
		else if (oi->hdrs & QPT_H_ATOMICACKETH)
			g_ptr_array_add(ack, (gpointer)f);
	}
	r->pass = req->len && (long)req->len >= c->min_count && (!c->acks || ack->len >= req->len);
	if (!req->len) {
		g_string_append_printf(r->reason, "no %s atomic request among %" PRIu64 " RoCE/IB packets",
				       c->op >= 0 ? qpt_op_name(c->op) : "CMP_SWAP/FETCH_ADD", cap->iba);
	} else {
		struct result tmp = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };

		g_string_append_printf(r->reason, "%u atomic %s (", req->len,
				       plural(req->len, "request", "requests"));
		opcode_breakdown(r->reason, req);
		g_string_append(r->reason, "; ");
		recs_frames(&tmp, req);
		fmt_frames(r->reason, tmp.frames);
		g_string_append(r->reason, ")");
		g_array_set_size(tmp.frames, 0);
		if (ack->len) {
			g_string_append_printf(r->reason, ", %u atomic %s (", ack->len,
					       plural(ack->len, "ACK", "ACKs"));
			recs_frames(&tmp, ack);
			fmt_frames(r->reason, tmp.frames);
			g_string_append(r->reason, ")");
		} else {
			g_string_append(r->reason, ", no atomic ACK");
		}
		g_array_free(tmp.frames, TRUE);
		recs_frames(r, req);
		recs_frames(r, ack);
		if ((long)req->len < c->min_count)
			g_string_append_printf(r->reason, "; expected at least %ld requests", c->min_count);
		else if (c->acks && ack->len < req->len)
			g_string_append_printf(r->reason, "; %u %s unanswered",
					       req->len - ack->len,
					       plural(req->len - ack->len, "request", "requests"));
	}
	g_ptr_array_free(req, TRUE);
	g_ptr_array_free(ack, TRUE);
}

static void check_min_qps(const struct check *c, const struct capture *cap, struct result *r)
{
	GHashTable *qps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GString *list = g_string_new("");
	long nconv = 0, nqp;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv *cv = g_ptr_array_index(cap->convs, i);

		if (!tr_match(c, cv->transport))
			continue;
		nconv++;
		for (int e = 0; e < 2; e++) {
			char buf[96];

			if (!cv->ep[e].qpn_known || cv->ep[e].qpn <= 1 || cv->ep[e].qpn == 0xffffff)
				continue;
			fmt_ep(&cv->ep[e], buf, sizeof(buf));
			g_hash_table_add(qps, g_strdup(buf));
		}
		if (list->len)
			g_string_append(list, "; ");
		conv_desc(list, cap, cv);
		conv_frames(cap, cv, r);
	}
	nqp = (long)g_hash_table_size(qps);
	r->pass = nqp >= c->min_qps && nconv >= c->min_conversations;
	g_string_append_printf(r->reason, "%ld distinct %s%sQPs in %ld %s", nqp, tr_label(c),
			       c->transport[0] ? " " : "", nconv,
			       plural((uint64_t)nconv, "conversation", "conversations"));
	if (!r->pass) {
		g_string_append(r->reason, ", expected at least");
		if (c->min_qps)
			g_string_append_printf(r->reason, " %ld QPs", c->min_qps);
		if (c->min_conversations > 1 || !c->min_qps)
			g_string_append_printf(r->reason, "%s %ld conversations", c->min_qps ? " and" : "",
					       c->min_conversations);
	}
	if (list->len)
		g_string_append_printf(r->reason, " (%s)", list->str);
	g_string_free(list, TRUE);
	g_hash_table_destroy(qps);
}

static void check_oob_tcp(const struct check *c, guint idx, const struct capture *cap,
			  struct result *r)
{
	GArray *hit = cap->tcp[idx];

	if (cap->tcp_err[idx]) {
		r->pass = false;
		g_string_append_printf(r->reason, "no TCP on port %ld can be looked for: %s", c->value,
				       cap->tcp_err[idx]);
		return;
	}
	r->pass = (long)hit->len >= c->min_frames;
	if (!hit->len) {
		g_string_append_printf(r->reason, "no TCP frame on port %ld among %" PRIu64 " frames",
				       c->value, cap->nframes);
		return;
	}
	g_string_append_printf(r->reason, "%s%u TCP %s on port %ld (", r->pass ? "" : "only ",
			       hit->len, plural(hit->len, "frame", "frames"), c->value);
	g_array_append_vals(r->frames, hit->data, hit->len);
	fmt_frames(r->reason, r->frames);
	g_string_append_c(r->reason, ')');
	if (!r->pass)
		g_string_append_printf(r->reason, ", expected at least %ld", c->min_frames);
}

static void run_check(const struct check *c, guint idx, const struct capture *cap,
		      struct result *r)
{
	r->reason = g_string_new("");
	r->frames = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	switch (c->kind) {
	case K_OPS: check_ops(c, cap, r); break;
	case K_MULTI_PACKET: check_multi_packet(c, cap, r); break;
	case K_CM_HANDSHAKE: check_cm(c, cap, r); break;
	case K_PAIRED: check_paired(c, cap, r); break;
	case K_TRANSPORT: check_transport(c, cap, r); break;
	case K_ACKS: check_acks(c, cap, r); break;
	case K_NO_RETRANSMISSIONS: check_no_retrans(c, cap, r); break;
	case K_NO_GAPS: check_no_gaps(c, cap, r); break;
	case K_PATH_MTU: check_path_mtu(c, cap, r); break;
	case K_IMMEDIATE: check_header(c, cap, r, QPT_H_IMMDT, "with immediate data"); break;
	case K_ATOMIC: check_atomic(c, cap, r); break;
	case K_MIN_QPS: check_min_qps(c, cap, r); break;
	case K_OOB_TCP: check_oob_tcp(c, idx, cap, r); break;
	case K_HEADER: {
		char *what = g_strdup_printf("with a %s", qpt_hdr_name(c->header));

		check_header(c, cap, r, c->header, what);
		g_free(what);
		break;
	}
	case K_COUNT: break;
	}
	sort_unique(r->frames);
}

/* ---- output -------------------------------------------------------------- */

struct graded {
	char *file;
	char *error;
	bool graded; /* checks ran (the file opened) */
	long score;
	guint passed;
	bool pass;
};

static void json_frames(GString *o, GArray *f)
{
	g_string_append(o, "[");
	for (guint i = 0; i < f->len && i < 1000; i++)
		g_string_append_printf(o, "%s%" PRIu64, i ? "," : "", g_array_index(f, uint64_t, i));
	g_string_append(o, "]");
}

static void json_str(GString *o, const char *s)
{
	if (s)
		qpt_json_escape(o, s);
	else
		g_string_append(o, "null");
}

static void grade_one(const struct rubric *rb, const struct opts *o, const char *file,
		      struct graded *g, GString *out, bool first)
{
	struct capture cap = { .file = file };
	guint nc = rb->checks->len;

	g->file = g_strdup(file);
	read_capture(&cap, o, rb);
	if (cap.error)
		g->error = g_strdup(cap.error);
	if (o->json) {
		g_string_append_printf(out, "%s{\"file\":", first ? "" : ",");
		json_str(out, file);
	} else {
		g_string_append_printf(out, "== %s\n", file);
	}
	if (!cap.opened) {
		if (o->json) {
			g_string_append(out, ",\"result\":\"error\",\"error\":");
			json_str(out, cap.error);
			g_string_append_printf(out, ",\"score\":null,\"max_score\":%ld,\"checks\":[]}",
					       rb->max_points);
		} else {
			g_string_append_printf(out, "  ERROR  cannot read the capture: %s\n\n", cap.error);
		}
		capture_free(&cap, nc);
		return;
	}
	g->graded = true;
	if (o->json)
		g_string_append_printf(out, ",\"frames\":%" PRIu64 ",\"roce_ib_packets\":%" PRIu64
				       ",\"conversations\":%u,\"checks\":[",
				       cap.nframes, cap.iba, cap.convs->len);
	for (guint i = 0; i < nc; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);
		struct result r = { 0 };
		long got;

		run_check(c, i, &cap, &r);
		got = r.pass ? c->points : 0;
		g->score += got;
		g->passed += r.pass;
		if (o->json) {
			g_string_append_printf(out, "%s{\"name\":", i ? "," : "");
			json_str(out, c->name);
			g_string_append_printf(out, ",\"kind\":\"%s\",\"result\":\"%s\",\"points\":%ld,\"max_points\":%ld,\"reason\":",
					       kinds[c->kind].name, r.pass ? "pass" : "fail", got,
					       c->points);
			json_str(out, r.reason->str);
			g_string_append(out, ",\"frames\":");
			json_frames(out, r.frames);
			g_string_append(out, ",\"explain\":");
			json_str(out, c->explain);
			g_string_append_c(out, '}');
		} else {
			g_string_append_printf(out, "  %s  %ld/%ld  %s: %s\n", r.pass ? "PASS" : "FAIL",
					       got, c->points, c->name, r.reason->str);
			if (!r.pass && c->explain)
				g_string_append_printf(out, "              why it matters: %s\n", c->explain);
		}
		g_string_free(r.reason, TRUE);
		g_array_free(r.frames, TRUE);
	}
	g->pass = g->passed == nc && !cap.error;
	if (o->json) {
		g_string_append_printf(out, "],\"score\":%ld,\"max_score\":%ld,\"checks_passed\":%u,\"checks_total\":%u,\"result\":\"%s\",\"error\":",
				       g->score, rb->max_points, g->passed, nc,
				       cap.error ? "error" : g->pass ? "pass" : "fail");
		json_str(out, cap.error);
		g_string_append_c(out, '}');
	} else {
		if (cap.error)
			g_string_append_printf(out, "  ERROR  the capture was not read to its end: %s\n",
					       cap.error);
		g_string_append_printf(out, "  score %ld/%ld, %u of %u checks passed: %s\n\n", g->score,
				       rb->max_points, g->passed, nc,
				       cap.error ? "ERROR" : g->pass ? "PASS" : "FAIL");
	}
	capture_free(&cap, nc);
}

static bool is_capture_name(const char *n)
{
	return g_str_has_suffix(n, ".pcap") || g_str_has_suffix(n, ".pcapng") ||
	       g_str_has_suffix(n, ".PCAP") || g_str_has_suffix(n, ".PCAPNG");
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Expands directories into their captures, sorted.  Empty or unreadable
 * directories are reported and make *bad true. */
static GPtrArray *expand(gchar **files, bool *bad)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (gchar **f = files; *f; f++) {
		GPtrArray *dir;
		GDir *d;
		GError *e = NULL;
		const char *n;

		if (!g_file_test(*f, G_FILE_TEST_IS_DIR)) {
			g_ptr_array_add(out, g_strdup(*f));
			continue;
		}
		d = g_dir_open(*f, 0, &e);
		if (!d) {
			g_printerr("qptrace grade: %s: %s\n", *f, e->message);
			g_error_free(e);
			*bad = true;
			continue;
		}
		dir = g_ptr_array_new();
		while ((n = g_dir_read_name(d)))
			if (is_capture_name(n))
				g_ptr_array_add(dir, g_build_filename(*f, n, NULL));
		g_dir_close(d);
		if (!dir->len) {
			g_printerr("qptrace grade: %s: no *.pcap or *.pcapng file in this directory\n", *f);
			*bad = true;
		}
		g_ptr_array_sort(dir, cmp_str);
		for (guint i = 0; i < dir->len; i++)
			g_ptr_array_add(out, g_ptr_array_index(dir, i));
		g_ptr_array_free(dir, TRUE);
	}
	return out;
}

int cmd_grade(struct opts *o)
{
	struct rubric *rb;
	GPtrArray *files;
	GArray *gs;
	GString *out;
	bool bad = false;
	guint npass = 0, nfail = 0, nerr = 0;
	size_t w = 7;

	if (!o->rubric) {
		g_printerr("qptrace grade: no rubric given: --rubric FILE (see rubrics/)\n");
		return 2;
	}
	rb = rubric_load(o->rubric);
	g_free(o->rubric); /* the option is grade's own: main() does not free it */
	o->rubric = NULL;
	if (!rb)
		return 2;
	out = g_string_sized_new(1 << 14); /* after the early returns: no leak */
	files = expand(o->files, &bad);
	gs = g_array_new(FALSE, TRUE, sizeof(struct graded));
	g_array_set_size(gs, files->len);
	if (o->json) {
		g_string_append(out, "{\"rubric\":{\"file\":");
		json_str(out, rb->file);
		g_string_append(out, ",\"name\":");
		json_str(out, rb->name);
		g_string_append(out, ",\"description\":");
		json_str(out, rb->description);
		g_string_append_printf(out, ",\"max_score\":%ld,\"checks\":%u},\"captures\":[",
				       rb->max_points, rb->checks->len);
	} else {
		g_string_append_printf(out, "rubric %s: %s (%u checks, %ld points)\n", rb->file,
				       rb->name, rb->checks->len, rb->max_points);
		if (rb->description && *rb->description)
			g_string_append_printf(out, "  %s\n", rb->description);
		g_string_append_c(out, '\n');
	}
	for (guint i = 0; i < files->len; i++) {
		struct graded *g = &g_array_index(gs, struct graded, i);

		grade_one(rb, o, g_ptr_array_index(files, i), g, out, i == 0);
		if (g->error)
			nerr++;
		else if (g->pass)
			npass++;
		else
			nfail++;
		fwrite(out->str, 1, out->len, stdout);
		fflush(stdout); /* keep the order of stdout and stderr */
		g_string_truncate(out, 0);
		if (g->error && !o->quiet)
			g_printerr("qptrace grade: %s: %s\n", g->file, g->error);
		w = MAX(w, strlen(g->file));
	}
	if (o->json) {
		g_string_append_printf(out, "],\"totals\":{\"captures\":%u,\"passed\":%u,\"failed\":%u,\"errors\":%u}}\n",
				       files->len, npass, nfail, nerr);
	} else {
		g_string_append_printf(out, "totals (%s):\n  %-*s  %9s  %7s  %s\n", rb->name, (int)w,
				       "capture", "score", "checks", "result");
		for (guint i = 0; i < gs->len; i++) {
			struct graded *g = &g_array_index(gs, struct graded, i);
			char score[32] = "-", checks[32] = "-";

			if (g->graded) {
				g_snprintf(score, sizeof(score), "%ld/%ld", g->score, rb->max_points);
				g_snprintf(checks, sizeof(checks), "%u/%u", g->passed, rb->checks->len);
			}
			g_string_append_printf(out, "  %-*s  %9s  %7s  %s%s%s\n", (int)w, g->file, score,
					       checks,
					       g->error ? "ERROR" : g->pass ? "PASS" : "FAIL",
					       g->error ? ": " : "", g->error ? g->error : "");
		}
		g_string_append_printf(out, "  %u %s: %u passed, %u failed, %u unreadable\n",
				       files->len, plural(files->len, "capture", "captures"), npass,
				       nfail, nerr);
	}
	fwrite(out->str, 1, out->len, stdout);
	fflush(stdout);
	for (guint i = 0; i < gs->len; i++) {
		g_free(g_array_index(gs, struct graded, i).file);
		g_free(g_array_index(gs, struct graded, i).error);
	}
	g_array_free(gs, TRUE);
	g_ptr_array_free(files, TRUE);
	g_string_free(out, TRUE);
	rubric_free(rb);
	if (bad || nerr)
		return 2;
	return nfail ? 1 : 0;
}
