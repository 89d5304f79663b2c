/* grade_rubric.c - the rubric of `qptrace grade`: a GLib key file
 * (rubrics/README.md) read, checked line by line and turned into checks
 */
#include <string.h>

#include "grade.h"
#include "qpt_findings.h"

const struct grade_kind grade_kinds[K_COUNT] = {
	[K_OPS] = { "ops", "transport op min_count max_count size min_packets_per_message",
		    "op", "messages of one operation" },
	[K_MULTI_PACKET] = { "multi_packet", "transport op middle", "",
			     "FIRST/MIDDLE/LAST packets seen" },
	[K_CM_HANDSHAKE] = { "cm_handshake", "teardown min_connections all port", "",
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
	[K_PRIORITY] = { "priority", "class pcp dscp transport", "",
			 "the 802.1Q priority / DSCP of data, ACK or CNP packets" },
	[K_NO_FINDING] = { "no_finding", "finding", "finding",
			   "no finding of a kind in the diagnosis" },
	[K_NO_VERDICT] = { "no_verdict", "verdict", "verdict",
			   "no frame with a verdict of a kind" },
};


struct lines {
	GHashTable *at; /* "group\001key" or "group" -> line */
	GString *errors;
	GString *opt_errors; /* of --command and --set: no rubric line */
	const char *file;
	int nerrors;
	const struct grade_params *ps; /* NULL while [params] is read */
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

static char *get_raw(struct lines *L, GKeyFile *kf, const char *group, const char *key)
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

/* A value, stripped, its ${...} replaced by the parameters; NULL (and an
 * error) when GKeyFile cannot give it or a ${...} is wrong. */
static char *get_str(struct lines *L, GKeyFile *kf, const char *group, const char *key)
{
	char *v = get_raw(L, kf, group, key), *s;
	GString *err;

	if (!v || !strstr(v, "${"))
		return v;
	err = g_string_new("");
	s = grade_subst(v, L->ps, err);
	if (!s)
		rerr(L, line_of(L, group, key), "%s: %s", key, err->str);
	g_string_free(err, TRUE);
	g_free(v);
	return s;
}

/* An expression rather than a plain (mis)typed number: it has a ${...},
 * an operator or a function call. */
static bool is_expr(const char *raw, const char *v)
{
	return strstr(raw, "${") || strpbrk(v + (*v == '-' || *v == '+'), "+-*/%()");
}

static bool get_long(struct lines *L, GKeyFile *kf, const char *group, const char *key,
		     long min, long max, long *out)
{
	char *raw = get_raw(L, kf, group, key);
	char *v = raw ? get_str(L, kf, group, key) : NULL;
	guint64 n;
	bool ok;

	if (!v) {
		g_free(raw);
		return false;
	}
	if (is_expr(raw, v)) {
		GString *err = g_string_new("");
		int64_t x = 0;

		ok = grade_eval(raw, L->ps, &x, err); /* the parameters' own words */
		if (!ok)
			rerr(L, line_of(L, group, key), "%s: '%s': %s", key, raw, err->str);
		else if (x < min || x > max)
			rerr(L, line_of(L, group, key), "%s: '%s' is %" G_GINT64_FORMAT
			     ", not a whole number from %ld to %ld", key, raw, (gint64)x, min, max);
		ok = ok && x >= min && x <= max;
		if (ok)
			*out = (long)x;
		g_string_free(err, TRUE);
	} else {
		ok = g_ascii_string_to_unsigned(v, 10, (guint64)min, (guint64)max, &n, NULL);
		if (!ok)
			rerr(L, line_of(L, group, key), "%s: '%s' is not a whole number from %ld to %ld",
			     key, v, min, max);
		else
			*out = (long)n;
	}
	g_free(v);
	g_free(raw);
	return ok;
}

static bool get_missing(struct lines *L, GKeyFile *kf, const char *group, int *out)
{
	char *v = get_str(L, kf, group, "missing");
	bool ok = true;

	if (!v)
		return false;
	if (!strcmp(v, "fail"))
		*out = MISSING_FAIL;
	else if (!strcmp(v, "skip"))
		*out = MISSING_SKIP;
	else {
		rerr(L, line_of(L, group, "missing"), "missing: '%s' is not fail or skip", v);
		ok = false;
	}
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

/* Operations by the engine's names (qpt_op_names), without NONE. */
static int op_by_name(const char *s)
{
	for (const struct qpt_name *n = qpt_op_names; n->name; n++)
		if (n->value != QPT_OP_NONE && !g_ascii_strcasecmp(s, n->name))
			return (int)n->value;
	return -1;
}

static GString *op_names(void)
{
	GString *g = g_string_new("");

	for (const struct qpt_name *n = qpt_op_names; n->name; n++)
		if (n->value != QPT_OP_NONE)
			g_string_append_printf(g, "%s%s", g->len ? ", " : "", n->name);
	return g;
}

/* "ops, multi_packet, ..., header": the kinds of grade_kinds[]. */
static GString *kind_names(void)
{
	GString *g = g_string_new("");

	for (int k = 0; k < K_COUNT; k++)
		g_string_append_printf(g, "%s%s", k ? ", " : "", grade_kinds[k].name);
	return g;
}

static void check_free(gpointer p)
{
	struct check *c = p;

	g_free(c->name);
	g_free(c->explain);
	g_free(c->bpf);
	g_free(c->when);
	g_free(c->requires);
	if (c->req)
		g_array_free(c->req, TRUE);
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
	c->pcp = c->dscp = -1;
	c->finding = -1;
	c->verdict = -1;
	c->missing = rb->missing;
	if (!*c->name)
		rerr(L, gline, "[check] needs a name: [check NAME]");
	if (!g_key_file_has_key(kf, group, "kind", NULL)) {
		GString *known = kind_names();

		rerr(L, gline, "[%s] has no kind= (one of %s)", group, known->str);
		g_string_free(known, TRUE);
		goto out;
	}
	v = get_str(L, kf, group, "kind");
	if (!v)
		goto out;
	c->kind = K_COUNT;
	for (int k = 0; k < K_COUNT; k++)
		if (!strcmp(v, grade_kinds[k].name))
			c->kind = (enum kind)k;
	if (c->kind == K_COUNT) {
		GString *known = kind_names();

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
		if (!strcmp(key, "missing")) {
			get_missing(L, kf, group, &c->missing);
			continue;
		}
		if (!strcmp(key, "requires")) {
			c->requires = get_str(L, kf, group, key);
			c->requires_line = kl;
			continue;
		}
		if (!strcmp(key, "when")) {
			char *raw = get_raw(L, kf, group, key);
			GString *err = g_string_new("");
			int64_t on = 0;

			if (raw && !grade_eval(raw, L->ps, &on, err))
				rerr(L, kl, "when: '%s': %s", raw, err->str);
			else if (raw && !on)
				c->when = g_strdup(raw);
			g_string_free(err, TRUE);
			g_free(raw);
			continue;
		}
		if (!has_word(grade_kinds[c->kind].keys, key)) {
			gchar **kw = g_strsplit(grade_kinds[c->kind].keys, " ", -1);
			gchar *known = g_strjoinv(", ", kw);

			rerr(L, kl, "key '%s' is not known for kind=%s (known: kind, points, explain, missing, when, requires%s%s)",
			     key, grade_kinds[c->kind].name, *known ? ", " : "", known);
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
		} else if (!strcmp(key, "pcp")) {
			get_long(L, kf, group, key, 0, 7, &c->pcp);
		} else if (!strcmp(key, "dscp")) {
			get_long(L, kf, group, key, 0, 63, &c->dscp);
		} else if (!strcmp(key, "class")) {
			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			c->qos_class = -1;
			for (unsigned q = 0; q < QPT_QOS_CLASSES; q++)
				if (!strcmp(v, qpt_qos_class_name(q)))
					c->qos_class = (int)q;
			if (c->qos_class < 0) {
				rerr(L, kl, "class: '%s' is not data, ack or cnp", v);
				c->qos_class = 0;
			}
			g_free(v);
		} else if (!strcmp(key, "finding")) {
			GString *names;

			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			names = g_string_new("");
			for (unsigned f = 0; f < QPT_F_COUNT; f++) {
				g_string_append_printf(names, "%s%s", f ? ", " : "",
						       qpt_finding_kinds[f].key);
				if (!strcmp(v, qpt_finding_kinds[f].key))
					c->finding = (int)f;
			}
			if (c->finding < 0)
				rerr(L, kl, "finding: unknown finding '%s' (known: %s)", v, names->str);
			g_string_free(names, TRUE);
			g_free(v);
		} else if (!strcmp(key, "verdict")) {
			GString *names;

			v = get_str(L, kf, group, key);
			if (!v)
				continue;
			names = g_string_new("");
			for (unsigned vb = 0; vb < QPT_VB_COUNT; vb++) {
				g_string_append_printf(names, "%s%s", vb ? ", " : "",
						       qpt_verdicts[vb].key);
				if (!strcmp(v, qpt_verdicts[vb].key))
					c->verdict = (int)vb;
			}
			if (c->verdict < 0)
				rerr(L, kl, "verdict: unknown verdict '%s' (known: %s)", v, names->str);
			g_string_free(names, TRUE);
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
		gchar **req = g_strsplit(grade_kinds[c->kind].required, " ", -1);

		for (gchar **r = req; *r; r++)
			if (**r && !g_key_file_has_key(kf, group, *r, NULL))
				rerr(L, gline, "[%s]: kind=%s needs %s=", group, grade_kinds[c->kind].name,
				     *r);
		g_strfreev(req);
	}
	if (c->kind == K_PRIORITY && !g_key_file_has_key(kf, group, "pcp", NULL) &&
	    !g_key_file_has_key(kf, group, "dscp", NULL))
		rerr(L, gline, "[%s]: kind=priority needs pcp= or dscp=", group);
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
	if (L->nerrors == before && c->when) {
		/* when= is false for these parameters: not part of this grading */
		g_string_append_printf(rb->not_checked, "%s%s (when %s)", rb->not_checked->len ? ", " : "",
				       c->name, c->when);
		check_free(c);
	} else if (L->nerrors == before) {
		g_ptr_array_add(rb->checks, c);
		rb->max_points += c->points;
	} else {
		check_free(c);
	}
}

/* requires=NAME ...: each an earlier check (so there is no cycle); one
 * left out by its when= is no requirement. */
static void resolve_requires(struct lines *L, GKeyFile *kf, struct rubric *rb)
{
	for (guint i = 0; i < rb->checks->len; i++) {
		struct check *c = g_ptr_array_index(rb->checks, i);
		gchar **names;

		if (!c->requires)
			continue;
		c->req = g_array_new(FALSE, FALSE, sizeof(guint));
		names = g_strsplit_set(c->requires, " ,", -1);
		for (gchar **n = names; *n; n++) {
			char *group = g_strconcat("check ", *n, NULL);
			guint j;

			if (!**n) {
				g_free(group);
				continue;
			}
			for (j = 0; j < i; j++)
				if (!strcmp(((struct check *)g_ptr_array_index(rb->checks, j))->name, *n))
					break;
			if (j < i)
				g_array_append_val(c->req, j);
			else if (!strcmp(*n, c->name))
				rerr(L, c->requires_line, "requires: a check cannot require itself");
			else if (!g_key_file_has_group(kf, group) || line_of(L, group, NULL) > c->line)
				rerr(L, c->requires_line,
				     "requires: '%s' is not a check above this one (a check requires earlier checks)",
				     *n);
			g_free(group);
		}
		g_strfreev(names);
	}
}

void grade_rubric_free(struct rubric *rb)
{
	if (!rb)
		return;
	g_free(rb->file);
	g_free(rb->name);
	g_free(rb->description);
	g_free(rb->tool);
	g_free(rb->command);
	g_ptr_array_free(rb->checks, TRUE);
	grade_params_clear(&rb->params);
	if (rb->not_checked)
		g_string_free(rb->not_checked, TRUE);
	g_free(rb);
}

/* [params]: NAME=DEFAULT, a whole number or a word. */
static void parse_params(struct lines *L, GKeyFile *kf, struct rubric *rb)
{
	gchar **keys = g_key_file_get_keys(kf, "params", NULL, NULL);

	for (gchar **k = keys; k && *k; k++) {
		int ln = line_of(L, "params", *k);
		char *v;

		if (!grade_name_ok(*k) || strlen(*k) > 64) {
			rerr(L, ln, "parameter name '%s' is not a name (letters, digits and _, not starting with a digit)",
			     *k);
			continue;
		}
		v = get_raw(L, kf, "params", *k);
		if (!v)
			continue;
		if (!grade_value_ok(v))
			rerr(L, ln, "%s: '%s' is not a whole number or a word (letters, digits, _ . -)", *k, v);
		else
			grade_param_add(&rb->params, *k, v, "rubric")->line = ln;
		g_free(v);
	}
	g_strfreev(keys);
}

static void opt_err(struct lines *L, const char *what, const char *msg)
{
	g_string_append_printf(L->opt_errors, "qptrace grade: %s: %s\n", what, msg);
	L->nerrors++;
}

/* command= of the rubric, then --command, then every --set. */
static void apply_overrides(struct lines *L, struct rubric *rb, int cmd_line,
			    const struct grade_overrides *ov)
{
	GString *err = g_string_new("");

	if (rb->command) {
		char *tool = NULL;

		if (!grade_command_params(rb->command, rb->tool, &rb->params, "rubric command", &tool, err))
			rerr(L, cmd_line, "command: %s", err->str);
		if (tool && !rb->tool)
			rb->tool = tool;
		else
			g_free(tool);
		g_string_truncate(err, 0);
	}
	if (ov && ov->command) {
		char *what = g_strdup_printf("--command '%s'", ov->command);

		if (!grade_command_params(ov->command, rb->tool, &rb->params, "--command", NULL, err))
			opt_err(L, what, err->str);
		g_free(what);
		g_string_truncate(err, 0);
		g_free(rb->command);
		rb->command = g_strdup(ov->command);
	}
	for (gchar **s = ov ? ov->sets : NULL; s && *s; s++) {
		char *eq = strchr(*s, '=');
		char *what = g_strdup_printf("--set %s", *s);
		char *name = eq ? g_strndup(*s, (gsize)(eq - *s)) : g_strdup(*s);
		struct grade_param *p = grade_param_find(&rb->params, name);

		if (!eq) {
			opt_err(L, what, "expected NAME=VALUE");
		} else if (!p) {
			GString *known = g_string_new("");

			for (guint i = 0; i < rb->params.list->len; i++)
				g_string_append_printf(known, "%s%s", i ? ", " : "",
						       ((struct grade_param *)g_ptr_array_index(rb->params.list, i))->name);
			g_string_printf(err, "the rubric has no parameter '%s' (%s%s)", name,
					known->len ? "its parameters: " : "it has no [params]", known->str);
			opt_err(L, what, err->str);
			g_string_free(known, TRUE);
		} else if (!grade_value_ok(eq + 1)) {
			opt_err(L, what, "the value is not a whole number or a word (letters, digits, _ . -)");
		} else {
			grade_param_assign(p, eq + 1, "--set");
		}
		g_free(name);
		g_free(what);
	}
	g_string_free(err, TRUE);
}

/* Loads and validates the rubric; on error prints every problem (one a
 * line, FILE:LINE: what is wrong) and returns NULL. */
struct rubric *grade_rubric_load(const char *file, const struct grade_overrides *ov)
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
	L.opt_errors = g_string_new("");
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
	rb->not_checked = g_string_new("");
	grade_params_init(&rb->params);
	/* The parameters first: every other value may use them. */
	if (g_key_file_has_group(kf, "params"))
		parse_params(&L, kf, rb);
	if (g_key_file_has_group(kf, "rubric")) {
		gchar **keys = g_key_file_get_keys(kf, "rubric", NULL, NULL);
		int cmd_line = 0;

		have_rubric = true;
		for (gchar **k = keys; *k; k++) {
			if (!strcmp(*k, "name") || !strcmp(*k, "description")) {
				continue; /* below, with the parameters set */
			} else if (!strcmp(*k, "command")) {
				rb->command = get_raw(&L, kf, "rubric", *k);
				cmd_line = line_of(&L, "rubric", *k);
			} else if (!strcmp(*k, "tool")) {
				rb->tool = get_raw(&L, kf, "rubric", *k);
			} else if (!strcmp(*k, "missing")) {
				get_missing(&L, kf, "rubric", &rb->missing);
			} else {
				rerr(&L, line_of(&L, "rubric", *k),
				     "key '%s' is not known in [rubric] (known: name, description, command, tool, missing)",
				     *k);
			}
		}
		g_strfreev(keys);
		if (!L.nerrors)
			apply_overrides(&L, rb, cmd_line, ov);
		L.ps = &rb->params;
		if (g_key_file_has_key(kf, "rubric", "name", NULL))
			rb->name = get_str(&L, kf, "rubric", "name");
		if (g_key_file_has_key(kf, "rubric", "description", NULL))
			rb->description = get_str(&L, kf, "rubric", "description");
	}
	L.ps = &rb->params;
	groups = g_key_file_get_groups(kf, NULL);
	for (gchar **g = groups; *g; g++) {
		int gl = line_of(&L, *g, NULL);

		if (!strcmp(*g, "rubric") || !strcmp(*g, "params")) {
			continue;
		} else if (g_str_has_prefix(*g, "check") &&
			   (!(*g)[5] || (*g)[5] == ' ' || (*g)[5] == '\t')) {
			parse_check(&L, kf, *g, rb);
		} else {
			rerr(&L, gl, "unknown group [%s] (expected [rubric], [params] or [check NAME])", *g);
		}
	}
	g_strfreev(groups);
	if (!have_rubric)
		rerr(&L, 0, "no [rubric] group (it names the rubric: name=, description=)");
	else if (!rb->name)
		rerr(&L, line_of(&L, "rubric", NULL), "[rubric] has no name=");
	if (!L.nerrors && !rb->checks->len)
		rerr(&L, 0, "no [check NAME] group%s: nothing to grade",
		     rb->not_checked->len ? " whose when= holds" : "");
	resolve_requires(&L, kf, rb);
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
		if (L.errors->len)
			g_printerr("qptrace grade: invalid rubric:\n%s", L.errors->str);
		if (L.opt_errors->len)
			g_printerr("%s", L.opt_errors->str);
		grade_rubric_free(rb);
		rb = NULL;
	}
	if (kf)
		g_key_file_free(kf);
	g_free(text);
	g_string_free(L.errors, TRUE);
	g_string_free(L.opt_errors, TRUE);
	g_hash_table_destroy(L.at);
	return rb;
}
