/* grade_proof.c - the proof of a check: the frames that show it and the
 * words around them ("frames 4-6, 9", "conversation 0 RC ...") */
#include <inttypes.h>
#include <string.h>

#include "grade.h"

void grade_add_frame(struct result *r, uint64_t f)
{
	if (f)
		g_array_append_val(r->frames, f);
}

static gint cmp_u64(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void grade_sort_unique(GArray *a)
{
	guint j = 0;

	g_array_sort(a, cmp_u64);
	for (guint i = 0; i < a->len; i++)
		if (!j || g_array_index(a, uint64_t, i) != g_array_index(a, uint64_t, j - 1))
			g_array_index(a, uint64_t, j++) = g_array_index(a, uint64_t, i);
	g_array_set_size(a, j);
}

/* "frame 4", "frames 4-6, 9", or "frames 4-18" when the list is long. */
void grade_fmt_frames(GString *o, GArray *in)
{
	GArray *a = g_array_copy(in);
	guint runs = 0;

	grade_sort_unique(a);
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

void grade_conv_frames(const struct capture *cap, const struct qpt_conv_stats *c, struct result *r)
{
	if (c->id >= 0 && (guint)c->id < cap->spans->len) {
		const struct convspan *s = &g_array_index(cap->spans, struct convspan, c->id);

		for (int d = 0; d < 2; d++) {
			grade_add_frame(r, s->first[d]);
			grade_add_frame(r, s->last[d]);
		}
	}
}

void grade_conv_range(GString *o, const struct capture *cap, const struct qpt_conv_stats *c)
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

bool grade_tr_match(const struct check *c, const char *tr)
{
	return !c->transport[0] || !strcmp(c->transport, tr);
}

const char *grade_tr_label(const struct check *c)
{
	return c->transport[0] ? c->transport : "";
}

/* "24 WRITE_ONLY_IMM, 8 WRITE_LAST_IMM" for a list of frame records. */
void grade_opcode_breakdown(GString *o, GPtrArray *recs)
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

void grade_recs_frames(struct result *r, GPtrArray *recs)
{
	for (guint i = 0; i < recs->len; i++)
		grade_add_frame(r, ((const struct frec *)g_ptr_array_index(recs, i))->frame);
}

const char *grade_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void grade_desc_msgs(GString *o, const struct check *c, uint64_t n)
{
	g_string_append_printf(o, "%" PRIu64 " %s%s%s %s", n, grade_tr_label(c),
			       c->transport[0] ? " " : "", qpt_op_name(c->op),
			       grade_plural(n, "message", "messages"));
}

static gint cmp_ptr_uint(gconstpointer a, gconstpointer b)
{
	guint x = GPOINTER_TO_UINT(a), y = GPOINTER_TO_UINT(b);

	return x < y ? -1 : x > y;
}

/* Sizes seen among messages: "5 of 3000 bytes, 2 of 64 bytes". */
void grade_size_breakdown(GString *o, GArray *ms)
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

void grade_msgs_frames(struct result *r, GArray *ms)
{
	for (guint i = 0; i < ms->len; i++) {
		const struct mrec *m = g_array_index(ms, const struct mrec *, i);

		grade_add_frame(r, m->first);
		grade_add_frame(r, m->last);
	}
}

void grade_msgs_range(GString *o, GArray *ms)
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

/* An endpoint as qpt_format_endpoint_qp writes it, "QP ?" (a QP whose
 * number no packet showed) in words. */
static void endpoint_words(GString *o, const char *ep)
{
	size_t n = strlen(ep);

	if (n >= 5 && !strcmp(ep + n - 5, " QP ?"))
		g_string_append_printf(o, "%.*s QP (its number not in the capture)", (int)(n - 5), ep);
	else
		g_string_append(o, ep);
}

void grade_conv_desc(GString *o, const struct capture *cap, const struct qpt_conv_stats *cv)
{
	char a[QPT_ENDPOINT_QP_STRLEN], b[QPT_ENDPOINT_QP_STRLEN];

	qpt_format_endpoint_qp(&cv->ep[0], a);
	qpt_format_endpoint_qp(&cv->ep[1], b);
	g_string_append_printf(o, "conversation %d %s ", cv->id,
			       cv->transport[0] ? cv->transport : "(transport unknown)");
	endpoint_words(o, a);
	g_string_append(o, " <-> ");
	endpoint_words(o, b);
	g_string_append(o, ", ");
	grade_conv_range(o, cap, cv);
}
