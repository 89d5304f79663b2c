/* qpt_findings_groups.c - the roll-up: findings grouped by kind, with
 * their hosts and conversations (see qpt_findings.h) */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpt_findings.h"
#include "qpt_findings_int.h"
#include "qpt_flow.h"
#include "qpt_rank.h"

/* ---- the roll-up ---------------------------------------------------------- */

/* Adds addr to a group's hosts (counted in seen, addr -> count). */
static void group_host(GHashTable *seen, const char *addr)
{
	gpointer n = g_hash_table_lookup(seen, addr);

	g_hash_table_insert(seen, g_strdup(addr), GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
}

static gint host_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct qpt_group_host *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return strcmp(a->addr, b->addr);
}

/* The most named hosts of seen into top (QPT_GROUP_HOSTS), their number. */
static uint32_t group_hosts(GHashTable *seen, struct qpt_group_host *top)
{
	GArray *all = g_array_new(FALSE, TRUE, sizeof(struct qpt_group_host));
	GHashTableIter it;
	gpointer k, v;
	uint32_t n;

	g_hash_table_iter_init(&it, seen);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct qpt_group_host h = { .n = GPOINTER_TO_UINT(v) };

		g_strlcpy(h.addr, k, sizeof(h.addr));
		g_array_append_val(all, h);
	}
	g_array_sort(all, host_cmp);
	memset(top, 0, QPT_GROUP_HOSTS * sizeof(*top));
	for (guint i = 0; i < all->len && i < QPT_GROUP_HOSTS; i++)
		top[i] = g_array_index(all, struct qpt_group_host, i);
	n = all->len;
	g_array_free(all, TRUE);
	return n;
}

struct member_key {
	guint index;
	struct qpt_rank_key rank;
};

static gint member_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct member_key *a = pa, *b = pb;
	int k = qpt_rank_key_cmp(&a->rank, &b->rank, true);

	return k ? k : (a->index > b->index) - (a->index < b->index);
}

static gint group_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct qpt_finding_group *a = pa, *b = pb;

	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	if (a->pcp != b->pcp)
		return a->pcp - b->pcp;
	/* two capture-wide ones of a kind: their first finding's order */
	return (int)g_array_index(a->members, guint, 0) - (int)g_array_index(b->members, guint, 0);
}

GArray *qpt_findings_groups(struct qpt_flow *fl, const GArray *fs)
{
	return qpt_findings_groups_view(fl, fs, NULL);
}

GArray *qpt_findings_groups_view(struct qpt_flow *fl, const GArray *fs,
				 const struct qpt_findings_view *view)
{
	GArray *groups = g_array_new(FALSE, TRUE, sizeof(struct qpt_finding_group));
	/* "kind/pcp/session" -> index into groups + 1 */
	GHashTable *at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < fs->len; i++) {
		const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);
		bool wide = f->conv < 0 || f->dir < 0;
		gchar *key = g_strdup_printf("%d/%d/%p", (int)f->kind, f->pcp, (const void *)f->tunnel);
		guint gi = wide ? 0 : GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
		struct qpt_finding_group *g;

		if (!gi) {
			struct qpt_finding_group ng = {
				.kind = f->kind, .severity = f->severity, .pcp = f->pcp,
				.tunnel = f->tunnel, .capture_wide = wide,
				.members = g_array_new(FALSE, FALSE, sizeof(guint)),
			};

			g_array_append_val(groups, ng);
			gi = groups->len;
			if (!wide) {
				g_hash_table_insert(at, key, GUINT_TO_POINTER(gi));
				key = NULL; /* the table's */
			}
		}
		g_free(key);
		g = &g_array_index(groups, struct qpt_finding_group, gi - 1);
		g_array_append_val(g->members, i);
		g->tunnel_several |= f->tunnel_several;
		if (f->severity > g->severity)
			g->severity = f->severity;
		g->weight += f->weight;
		g->part += f->part;
		g->whole += f->whole;
		if (f->has_time) {
			if (!g->has_time || f->first_ns < g->first_ns)
				g->first_ns = f->first_ns;
			if (!g->has_time || f->last_ns > g->last_ns)
				g->last_ns = f->last_ns;
			g->has_time = true;
		}
	}
	g_hash_table_destroy(at);
	for (guint gi = 0; gi < groups->len; gi++) {
		struct qpt_finding_group *g = &g_array_index(groups, struct qpt_finding_group, gi);
		GHashTable *snd = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		GHashTable *rcv = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		GHashTable *convs = g_hash_table_new(g_direct_hash, g_direct_equal);
		GArray *keys = g_array_sized_new(FALSE, FALSE, sizeof(struct member_key),
						 g->members->len);
		struct qpt_conv_stats cs;

		for (guint m = 0; m < g->members->len; m++) {
			guint i = g_array_index(g->members, guint, m);
			const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);
			const struct qpt_conv_stats *c =
				f->conv >= 0 ? qpt_flow_conv_stats(fl, f->conv, &cs) : NULL;
			struct member_key k = { .index = i };

			if (f->from[0])
				group_host(snd, f->from);
			if (f->to[0])
				group_host(rcv, f->to);
			if (f->conv >= 0)
				g_hash_table_add(convs, GINT_TO_POINTER(f->conv));
			if (c && view && view->conv)
				c = view->conv(c, view->data);
			if (c)
				qpt_conv_rank_key(c, &k.rank);
			else
				k.rank.id = INT32_MAX;
			g_array_append_val(keys, k);
		}
		g_array_sort(keys, member_cmp);
		for (guint m = 0; m < keys->len; m++)
			g_array_index(g->members, guint, m) = g_array_index(keys, struct member_key, m).index;
		g->nsenders = group_hosts(snd, g->senders);
		g->nreceivers = group_hosts(rcv, g->receivers);
		g->nconvs = g_hash_table_size(convs);
		g_array_free(keys, TRUE);
		g_hash_table_destroy(snd);
		g_hash_table_destroy(rcv);
		g_hash_table_destroy(convs);
	}
	g_array_sort(groups, group_cmp);
	return groups;
}

void qpt_findings_groups_free(GArray *groups)
{
	if (!groups)
		return;
	for (guint i = 0; i < groups->len; i++)
		g_array_free(g_array_index(groups, struct qpt_finding_group, i).members, TRUE);
	g_array_free(groups, TRUE);
}
