/* monitor_table.c - qptrace monitor's view of its engine: the
 * conversation table (idle ones leave it), the links and their series,
 * the engine's end and its renewal past --max-conversations (the monitor
 * itself: monitor.c; what the parts share: monitor_int.h). */
#include <math.h>
#include <string.h>

#include "monitor_int.h"
#include "qpt_rank.h"

/* The upper edges of the latency histograms' buckets (seconds). */
const double mon_lat_le[] = { 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4,
			      1e-3, 2e-3, 5e-3, 1e-2, 1e-1, 1 };

/* The half-life of a conversation's recent trouble (which ones get series
 * of their own), in the monitor's clock (the capture's with -r). */
#define RECENT_HALF_LIFE_S 300.0
/* Links (mirror sessions, tunnel sources, the interface) told apart; more
 * are labelled "other". */
#define MAX_LINKS 64

/* A latency into cumulative buckets (seconds) at v[le0 ..]. */
static void lat_buckets(const struct qpt_lat *l, uint64_t *v)
{
	/* bin i holds [0.01 us * 10^(i/100), 0.01 us * 10^((i+1)/100)) */
	int nb = QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES;
	uint64_t seen = 0;
	size_t le = 0;

	if (!l->bins)
		return;
	for (int i = 0; i < nb && le < N_LE; i++) {
		double upper_us = 0.01 * pow(10, (i + 1.0) / QPT_LAT_BINS_PER_DECADE);

		while (le < N_LE && upper_us > mon_lat_le[le] * 1e6 * 1.0000001)
			v[le++] = seen;
		seen += qpt_lat_bin(l, (unsigned)i);
	}
	while (le < N_LE)
		v[le++] = seen;
}

/* The values of one direction of an engine conversation. */
static void dir_values(const struct qpt_dir_stats *x, uint64_t v[MV_N])
{
	memset(v, 0, sizeof(uint64_t) * MV_N);
	v[MV_PACKETS] = x->packets;
	v[MV_PAYLOAD] = x->payload_bytes;
	v[MV_RETRANS] = x->retransmitted_packets;
	v[MV_GAPS] = x->psn_gaps;
	v[MV_GBN] = x->gbn_episodes;
	v[MV_RNR] = x->rnr_naks;
	v[MV_RNR_RETRIES] = x->rnr_retries;
	v[MV_TIMEOUTS] = x->timeouts;
	v[MV_OOO] = x->out_of_order;
	v[MV_BAD_ICRC] = x->bad_icrc;
	v[MV_CNPS] = x->cnps;
	v[MV_ECN_CE] = x->ecn_ce;
	v[MV_CE_NO_CNP] = x->ce_without_cnp;
	v[MV_DUPS] = x->duplicates;
	for (int k = 0; k < QPT_NAK_KINDS; k++)
		v[MV_NAKS + k] = x->naks[k];
	for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		if (e->end_ns > e->start_ns)
			v[MV_GBN_LOST_NS] += (uint64_t)(e->end_ns - e->start_ns);
	}
	v[MV_RTT_N] = x->ack_rtt->n;
	v[MV_RTT_SUM_NS] = (uint64_t)llround(x->ack_rtt->sum_us * 1000.0);
	lat_buckets(x->ack_rtt, &v[MV_RTT_LE]);
	v[MV_READ_N] = x->read_lat->n;
	v[MV_READ_SUM_NS] = (uint64_t)llround(x->read_lat->sum_us * 1000.0);
	lat_buckets(x->read_lat, &v[MV_READ_LE]);
}

/* What a conversation's recent trouble counts: resends, PSN gaps, NAKs,
 * RNR NAKs, timeouts, bad ICRCs, ECN-CE marks no CNP answered. */
static uint64_t trouble_of(const uint64_t *v)
{
	uint64_t t = v[MV_RETRANS] + v[MV_GAPS] + v[MV_RNR] + v[MV_TIMEOUTS] + v[MV_BAD_ICRC] +
		     v[MV_CE_NO_CNP];

	for (int k = 0; k < QPT_NAK_KINDS; k++)
		t += v[MV_NAKS + k];
	return t;
}

static int64_t conv_last_ns(const struct qpt_conv_stats *c)
{
	int64_t a = c->dir[0].packets ? c->dir[0].last_ns : INT64_MIN;
	int64_t b = c->dir[1].packets ? c->dir[1].last_ns : INT64_MIN;

	return a > b ? a : b;
}

static void conv_key(const struct qpt_conv_stats *c, struct mconv *e)
{
	qpt_endpoint_addr(&c->ep[0], e->local);
	qpt_endpoint_addr(&c->ep[1], e->remote);
	if (c->ep[0].qpn_known)
		g_snprintf(e->lqpn, sizeof(e->lqpn), "0x%06x", c->ep[0].qpn);
	else
		g_strlcpy(e->lqpn, "?", sizeof(e->lqpn));
	if (c->ep[1].qpn_known)
		g_snprintf(e->rqpn, sizeof(e->rqpn), "0x%06x", c->ep[1].qpn);
	else
		g_strlcpy(e->rqpn, "?", sizeof(e->rqpn));
	g_strlcpy(e->transport, c->transport[0] ? c->transport : "?", sizeof(e->transport));
	g_snprintf(e->key, sizeof(e->key), "%s|%s|%s|%s|%s", e->transport, e->local, e->lqpn,
		   e->remote, e->rqpn);
	for (int d = 0; d < 2; d++) {
		e->from[d] = c->dir[d].from ? 1 : 0;
		e->qpn[d] = c->ep[d].qpn;
		e->qpn_known[d] = c->ep[d].qpn_known;
	}
}

/* ---- links and their series ------------------------------------------------ */

/* The index of link name (MAX_LINKS of them, then "other"). */
uint16_t mon_link_index(struct mon *m, const char *name)
{
	gpointer ix = g_hash_table_lookup(m->link_ix, name);
	struct mlink *l;

	if (ix)
		return (uint16_t)(GPOINTER_TO_UINT(ix) - 1);
	if (m->links->len >= MAX_LINKS)
		name = "other";
	if ((ix = g_hash_table_lookup(m->link_ix, name)))
		return (uint16_t)(GPOINTER_TO_UINT(ix) - 1);
	l = g_new0(struct mlink, 1);
	l->name = g_strdup(name);
	g_ptr_array_add(m->links, l);
	g_hash_table_insert(m->link_ix, l->name, GUINT_TO_POINTER(m->links->len));
	return (uint16_t)(m->links->len - 1);
}

/* The link a frame came on: its mirror session or tunnel (by the outer
 * source address), else the capture's own interface or directory. */
uint16_t mon_frame_link(struct mon *m, const struct qpt_pkt *pkt)
{
	const struct qpt_tunnel *t = &pkt->tunnel;
	char src[QPT_ADDR_STRLEN], name[128];

	if (!(pkt->flags & QPT_HAS_TUNNEL))
		return 0;
	if (m->have_last_tun && t->kind == m->last_tun.kind && t->session_id == m->last_tun.session_id &&
	    t->vni == m->last_tun.vni && t->gre_key == m->last_tun.gre_key &&
	    !memcmp(t->src, m->last_tun.src, sizeof(t->src)))
		return m->last_tun_link;
	qpt_addr_format(t->src, t->ip_version == 6 ? 6 : 4, src);
	if (t->kind == QPT_TUN_ERSPAN2 || t->kind == QPT_TUN_ERSPAN3)
		g_snprintf(name, sizeof(name), "erspan %s session %u", src, t->session_id);
	else if (t->kind == QPT_TUN_VXLAN)
		g_snprintf(name, sizeof(name), "vxlan %s vni %u", src, t->vni);
	else if (t->has_key)
		g_snprintf(name, sizeof(name), "%s %s key %u", qpt_tunnel_name(t->kind), src, t->gre_key);
	else
		g_snprintf(name, sizeof(name), "%s %s", qpt_tunnel_name(t->kind), src);
	m->last_tun = *t;
	m->have_last_tun = true;
	m->last_tun_link = mon_link_index(m, name);
	return m->last_tun_link;
}

void mon_free_link(gpointer p)
{
	struct mlink *l = p;

	g_free(l->name);
	g_free(l);
}

struct acct *mon_acct_of(struct mon *m, int32_t id)
{
	if ((guint)id >= m->acct->len)
		g_array_set_size(m->acct, (guint)id + 1);
	return &g_array_index(m->acct, struct acct, id);
}

/* A direction's priority: the 802.1Q PCP most of its data packets carry
 * (untagged: 0, as a switch port's default priority and the PFC analysis
 * take it). */
static int8_t dir_prio(const struct qpt_dir_stats *x)
{
	int top = -1;

	if (!qpt_qos_values(x, QPT_QOS_DATA, false, &top))
		qpt_qos_values(x, QPT_QOS_ACK, false, &top);
	return (int8_t)(top < 0 ? 0 : top);
}

/* The link series of (link, src, dst, prio); past --metrics-max-links
 * series, the one labelled "other". */
static struct lser *lser_of(struct mon *m, uint16_t link, int8_t prio, const char *src,
			    const char *dst)
{
	char key[256];
	struct lser *l;

	g_snprintf(key, sizeof(key), "%u|%d|%s|%s", link, prio, src, dst);
	l = g_hash_table_lookup(m->lsers, key);
	if (l)
		return l;
	if (g_hash_table_size(m->lsers) >= (guint)m->mo->metrics_max_links) {
		if ((l = g_hash_table_lookup(m->lsers, "other")))
			return l;
		g_strlcpy(key, "other", sizeof(key));
		link = UINT16_MAX;
		prio = -1;
		src = dst = "other";
	}
	l = g_new0(struct lser, 1);
	g_strlcpy(l->key, key, sizeof(l->key));
	l->link = link;
	l->prio = prio;
	g_strlcpy(l->src, src, sizeof(l->src));
	g_strlcpy(l->dst, dst, sizeof(l->dst));
	g_hash_table_insert(m->lsers, l->key, l);
	return l;
}

/* Conversations folded into another since the last look: what they gave
 * the link series is taken back (the one they were folded into gives it
 * again, its values now having theirs). */
static void acct_unfold(struct mon *m)
{
	for (guint id = 0; id < m->acct->len; id++) {
		struct acct *a = &g_array_index(m->acct, struct acct, id);

		if (!a->used || qpt_flow_conv_id(m->fl, (int32_t)id) == (int32_t)id)
			continue;
		for (int d = 0; d < 2; d++)
			for (int k = 0; a->to[d] && k < MV_N; k++)
				a->to[d]->v[k] -= MIN(a->to[d]->v[k], a->v[d][k]);
		memset(a, 0, sizeof(*a));
	}
}

/* What a direction added since the last look, to its link series. */
static void acct_add(struct mon *m, const struct qpt_conv_stats *c, int d, const uint64_t *v,
		     uint16_t *link, int8_t *prio)
{
	struct acct *a = mon_acct_of(m, c->id);
	const struct qpt_dir_stats *x = &c->dir[d];
	char src[QPT_ADDR_STRLEN], dst[QPT_ADDR_STRLEN];
	struct lser *l;

	a->used = true;
	*link = a->has_link[d] ? a->link[d] : a->has_link[1 - d] ? a->link[1 - d] : 0;
	*prio = dir_prio(x);
	if (!memcmp(a->v[d], v, sizeof(a->v[d])))
		return;
	qpt_endpoint_addr(&c->ep[x->from], src);
	qpt_endpoint_addr(&c->ep[x->to], dst);
	l = lser_of(m, *link, *prio, src, dst);
	for (int k = 0; k < MV_N; k++)
		if (v[k] > a->v[d][k])
			l->v[k] += v[k] - a->v[d][k];
	memcpy(a->v[d], v, sizeof(a->v[d]));
	a->to[d] = l;
}

/* The engine's conversations into the monitor's table and the link
 * series; idle ones leave the table.  m->now: the totals of every engine
 * so far. */
void mon_refresh(struct mon *m)
{
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	const struct qpt_totals *t = qpt_flow_totals(m->fl);
	int64_t now = now_ns(m);
	int64_t idle_before = now - (int64_t)(m->mo->idle * 1e9);
	GHashTableIter it;
	gpointer val;
	uint64_t v[2][MV_N];

	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		((struct mconv *)val)->seen = false;
	acct_unfold(m);
	m->untabled = 0;
	m->now = m->retired;
	m->now.frames += t->frames;
	m->now.iba += t->iba_packets;
	m->now.management += t->management;
	m->now.malformed += t->malformed;
	m->now.untracked += t->untracked;
	m->now.cut += t->cut_by_snaplen;
	m->fl_convs = 0;
	/* read one at a time, none thawed */
	for (qpt_conv_walk_start(&w, m->fl, NULL, NULL); (c = qpt_conv_walk_next(&w));) {
		struct mconv probe = { 0 }, *e;
		int64_t last = conv_last_ns(c);
		uint16_t link[2];
		int8_t prio[2];

		m->fl_convs++;
		if (c->id + m->id_base >= m->next_base)
			m->next_base = c->id + m->id_base + 1;
		for (int d = 0; d < 2; d++) {
			dir_values(&c->dir[d], v[d]);
			for (int k = 0; k < MV_N; k++)
				m->now.v[k] += v[d][k];
			acct_add(m, c, d, v[d], &link[d], &prio[d]);
		}
		conv_key(c, &probe);
		e = g_hash_table_lookup(m->convs, probe.key);
		if (m->mo->idle > 0 && last < idle_before) {
			if (e)
				g_hash_table_remove(m->convs, probe.key); /* expired */
			continue;
		}
		if (!e && g_hash_table_size(m->convs) >= (guint)m->mo->max_convs) {
			m->untabled++; /* counted in the totals and link series only */
			continue;
		}
		if (!e) {
			e = g_new0(struct mconv, 1);
			*e = probe;
			e->recent_ns = now;
			g_hash_table_insert(m->convs, e->key, e);
		}
		if (e->seen) { /* two engine conversations, one key: add */
			for (int d = 0; d < 2; d++)
				for (int k = 0; k < MV_N; k++)
					e->cur[d][k] += v[d][k];
		} else {
			memcpy(e->cur, v, sizeof(v));
		}
		for (int d = 0; d < 2; d++) {
			e->link[d] = link[d];
			e->prio[d] = prio[d];
		}
		e->seen = true;
		e->id = c->id + m->id_base;
		e->last_ns = last > e->last_ns ? last : e->last_ns;
		e->trouble = qpt_conv_trouble(c);
	}
	qpt_conv_walk_end(&w);
	m->now.conversations += m->fl_convs;
	/* Keys no engine conversation has now (folded into another, or from a
	 * renewed engine) keep what they carry, until they are idle.  Every
	 * one's recent trouble: what it had before, halved every
	 * RECENT_HALF_LIFE_S, and what came since. */
	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct mconv *e = val;
		double decay = now > e->recent_ns
				       ? exp2(-(now - e->recent_ns) / (RECENT_HALF_LIFE_S * 1e9)) : 1;

		if (!e->seen) {
			memset(e->cur, 0, sizeof(e->cur));
			if (m->mo->idle > 0 && e->last_ns < idle_before) {
				g_hash_table_iter_remove(&it);
				continue;
			}
		}
		e->recent_ns = MAX(now, e->recent_ns);
		for (int d = 0; d < 2; d++) {
			uint64_t tot[MV_N], tr;

			for (int k = 0; k < MV_N; k++)
				tot[k] = mvd(e, d, k);
			tr = trouble_of(tot);
			e->recent_d[d] *= decay;
			if (tr > e->trouble_seen[d])
				e->recent_d[d] += (double)(tr - e->trouble_seen[d]);
			e->trouble_seen[d] = tr;
		}
		e->recent = e->recent_d[0] + e->recent_d[1];
	}
}

/* The end's events (of earlier frames), as they come: the engine's ids. */
static void end_events(void *data, const struct qpt_verdict *v)
{
	struct mon *m = data;

	if (v->nevents)
		qpt_findings_frames_add(m->ff, v);
	for (unsigned i = 0; !m->mo->no_events && i < v->nevents; i++)
		mon_event_line(m, &v->ev[i]);
}

/* The engine's end: the events it still held, its results final. */
void mon_end_engine(struct mon *m)
{
	qpt_drive_end(m->fl, end_events, m);
}

/* A new engine when the current one holds too many conversations. */
void mon_renew_engine(struct mon *m)
{
	GHashTableIter it;
	gpointer val;

	mon_end_engine(m); /* under the old engine's ids (id_base) */
	mon_refresh(m);
	m->retired = m->now;
	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct mconv *e = val;

		for (int d = 0; d < 2; d++)
			for (int k = 0; k < MV_N; k++)
				e->carry[d][k] += e->cur[d][k];
		memset(e->cur, 0, sizeof(e->cur));
	}
	g_array_set_size(m->acct, 0); /* the new engine's ids start again */
	qpt_findings_frames_free(m->ff);
	m->ff = qpt_findings_frames_new();
	qpt_drive_free(m->fl);
	m->fl = qpt_drive_new(m->o);
	m->id_base = m->next_base;
	m->renewals++;
}
