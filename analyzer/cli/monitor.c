/* monitor.c - qptrace monitor: live capture, events as they happen,
 * periodic summaries, Prometheus metrics; and --vxlan-port for every
 * reading command. */
#include <string.h>

#include "commands.h"
#include "driver.h"
#include "monitor_http.h"
#include "options.h"
#include "output.h"

/* ---- --vxlan-port ---------------------------------------------------- */

gboolean qpt_opt_vxlan_port(const gchar *name, const gchar *value, gpointer data,
			    GError **error)
{
	struct opts *o = data;
	gchar **parts = g_strsplit(value, ",", -1);
	gboolean ok = TRUE;

	for (gchar **q = parts; ok && *q; q++) {
		guint64 v;

		if (!g_ascii_string_to_unsigned(*q, 10, 1, 65535, &v, NULL) ||
		    o->n_vxlan_ports >= G_N_ELEMENTS(o->vxlan_ports)) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "bad %s '%s': a UDP port (1-65535, at most %zu)", name, *q,
				    G_N_ELEMENTS(o->vxlan_ports));
			ok = FALSE;
		} else {
			o->vxlan_ports[o->n_vxlan_ports++] = (uint16_t)v;
		}
	}
	g_strfreev(parts);
	return ok;
}

void qpt_vxlan_ports_to(const struct opts *o, struct qpt_decode_opts *dec)
{
	dec->vxlan_ports = o->vxlan_ports;
	dec->n_vxlan_ports = o->n_vxlan_ports;
}

/* ---- qptrace monitor ---------------------------------------------------
 *
 *   qptrace monitor -i IFACE [-f BPF] [--json] [--interval S] [--idle S]
 *                   [--metrics ADDR:PORT] [--metrics-max-conversations N]
 *                   [--metrics-max-links N]
 *   qptrace monitor -r DIR [--follow] ...
 *
 * Frames go through the same decoder and engine as `qptrace events`;
 * events are written as they happen (in `events`' words: qpt_event_words),
 * a line per active conversation every --interval seconds (the worst
 * first) and `summary`'s diagnosis (qpt_diagnosis_text / qpt_diagnosis_json),
 * the final summary and diagnosis at the end (Ctrl-C, SIGTERM, --duration,
 * or the end of DIR without --follow).
 *
 * Memory.  The engine keeps state per QP half and never forgets one (it
 * has no call to drop a conversation; it stops tracking new QPs past
 * 65,536 halves).  So the monitor bounds what it keeps itself: a
 * conversation idle for --idle seconds leaves its tables and metrics, and
 * when the engine holds more than --max-conversations conversations the
 * monitor renews it: the totals of the old one are kept as sums, the
 * active conversations go on in the new one (as a capture starting
 * mid-stream: their open go-back-N episodes are closed, an ACK of a request
 * sent before is not timed), under new ids.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <math.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "qpt_findings.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"
#include "qpt_rank.h"
#include "qpt_verdict.h"

void qpt_monitor_opts_init(struct qpt_monitor_opts *mo)
{
	*mo = (struct qpt_monitor_opts){
		.interval = 10, .idle = 300, .metrics_max = 100, .metrics_max_links = 256,
		.max_convs = 4096,
	};
}

/* The values kept per conversation direction: counters, then the ACK RTT
 * and READ latency histograms (cumulative buckets, seconds). */
static const double lat_le[] = { 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4,
				 1e-3, 2e-3, 5e-3, 1e-2, 1e-1, 1 };
#define N_LE G_N_ELEMENTS(lat_le)
enum {
	MV_PACKETS, MV_PAYLOAD, MV_RETRANS, MV_GAPS, MV_GBN, MV_GBN_LOST_NS, MV_RNR,
	MV_RNR_RETRIES, MV_TIMEOUTS, MV_OOO, MV_BAD_ICRC, MV_CNPS, MV_ECN_CE, MV_CE_NO_CNP,
	MV_DUPS, MV_RTT_N, MV_RTT_SUM_NS, MV_READ_N, MV_READ_SUM_NS,
	MV_NAKS,		   /* QPT_NAK_KINDS of them */
	MV_RTT_LE = MV_NAKS + QPT_NAK_KINDS, /* N_LE cumulative buckets */
	MV_READ_LE = MV_RTT_LE + 15,	     /* N_LE cumulative buckets */
	MV_N = MV_READ_LE + 15,
};
G_STATIC_ASSERT(N_LE == 15);

/* The half-life of a conversation's recent trouble (which ones get series
 * of their own), in the monitor's clock (the capture's with -r). */
#define RECENT_HALF_LIFE_S 300.0
/* Links (mirror sessions, tunnel sources, the interface) told apart; more
 * are labelled "other". */
#define MAX_LINKS 64

struct mconv {
	char key[256];
	char local[QPT_ADDR_STRLEN], remote[QPT_ADDR_STRLEN];
	char lqpn[12], rqpn[12], transport[8];
	uint32_t qpn[2];      /* ep[0]'s and ep[1]'s, when known */
	bool qpn_known[2];
	int32_t id;	      /* as shown: the engine's id plus its generation's base */
	uint8_t from[2];      /* direction d: from ep[from[d]] (0 local, 1 remote) */
	uint16_t link[2];     /* direction d's link (an index into mon.links) */
	int8_t prio[2];	      /* direction d's 802.1Q priority (0 untagged) */
	uint64_t carry[2][MV_N]; /* from engines renewed before */
	uint64_t cur[2][MV_N];	 /* from the current engine */
	uint64_t shown[MV_N];	 /* at the last periodic summary (both directions) */
	int64_t last_ns, recent_ns;
	uint64_t trouble;	 /* the engine's qpt_conv_trouble() (worst first) */
	uint64_t trouble_seen[2]; /* trouble_of() per direction, at recent_ns */
	double recent_d[2];	  /* decayed trouble per direction */
	double recent;		  /* of both: the series of its own go by it */
	bool seen, labelled;	 /* labelled: metrics series of its own */
};

/* What a link series (link, source, destination, priority) has added up:
 * every packet of every conversation direction, exactly. */
struct lser {
	char key[256];
	uint16_t link;
	int8_t prio;
	char src[QPT_ADDR_STRLEN], dst[QPT_ADDR_STRLEN];
	uint64_t v[MV_N];
};

/* What of an engine conversation's directions the link series have: by
 * the engine's id, for the current engine. */
struct acct {
	uint64_t v[2][MV_N];
	struct lser *to[2]; /* the series it went to last */
	uint16_t link[2];   /* the link of the direction's last frame */
	bool used, has_link[2];
};

/* Per link: frames, the last one's time, PFC/PAUSE frames per priority. */
struct mlink {
	gchar *name;
	uint64_t frames;
	int64_t last_ns;
	uint64_t pause[QPT_PFC_PRIOS], xoff[QPT_PFC_PRIOS];
};

/* Engine-wide counts that are not per conversation. */
struct mtot {
	uint64_t frames, iba, management, malformed, untracked, cut, conversations;
	uint64_t v[MV_N]; /* sums over the conversations */
};

struct mon {
	struct opts *o;
	struct qpt_monitor_opts *mo;
	struct qpt_flow *fl;
	guint fl_convs; /* its conversations at the last refresh */
	int32_t id_base, next_base;
	GHashTable *convs; /* key -> struct mconv */
	struct mtot retired, now;
	GHashTable *lsers; /* key -> struct lser: the link series */
	GArray *acct;	   /* struct acct by the engine's conversation id */
	GPtrArray *links;  /* struct mlink; [0]: the capture's own (-i IFACE, -r DIR) */
	GHashTable *link_ix; /* name -> index + 1 */
	struct qpt_tunnel last_tun; /* the last frame's tunnel, and its link */
	uint16_t last_tun_link;
	bool have_last_tun;
	uint64_t frame_no;
	int64_t t0_ns, last_ns;
	bool have_t0, live;
	uint64_t cap_recv, cap_drop, cap_ifdrop;
	GString *out;
	bool write_failed;
	unsigned renewals;
	uint64_t untabled; /* active conversations past the table's bound */
	struct qpt_findings_frames *ff; /* the frames the diagnosis names */
	struct qpt_http *http; /* --metrics */
	size_t metrics_len;    /* the last rendering's */
	bool failed;	       /* -r: a bad filter (exit status 2) */
	bool started;	       /* the interface or folder opened: totals follow */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	if (sig == SIGINT && stop_signal == SIGINT) {
		/* the second Ctrl-C: die of it, as without the handler */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	stop_signal = sig;
}

/* How a run that ended without an error exits: 130 after Ctrl-C (as every
 * command: the input was cut short), 0 at the end of -r DIR, --duration or
 * SIGTERM (a service manager's stop). */
static int stopped_status(void)
{
	return stop_signal == SIGINT ? 130 : 0;
}

static int64_t now_ns(const struct mon *m)
{
	return m->live ? g_get_real_time() * 1000 : m->last_ns;
}

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

		while (le < N_LE && upper_us > lat_le[le] * 1e6 * 1.0000001)
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

/* Direction d's value k; mv(): both directions'. */
static uint64_t mvd(const struct mconv *e, int d, int k)
{
	return e->carry[d][k] + e->cur[d][k];
}

static uint64_t mv(const struct mconv *e, int k)
{
	return mvd(e, 0, k) + mvd(e, 1, k);
}

/* ---- links and their series ------------------------------------------------ */

/* The index of link name (MAX_LINKS of them, then "other"). */
static uint16_t link_index(struct mon *m, const char *name)
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
static uint16_t frame_link(struct mon *m, const struct qpt_pkt *pkt)
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
	m->last_tun_link = link_index(m, name);
	return m->last_tun_link;
}

static void free_link(gpointer p)
{
	struct mlink *l = p;

	g_free(l->name);
	g_free(l);
}

static struct acct *acct_of(struct mon *m, int32_t id)
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
	struct acct *a = acct_of(m, c->id);
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
static void refresh(struct mon *m)
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

/* every JSON line names its schema (docs/schema/qptrace-monitor-1.json) */
#define MON_SCHEMA "\"schema\":\"" QPT_SCHEMA_BASE "monitor-" QPT_SCHEMA_VERSION "\","

static void event_line(struct mon *m, const struct qpt_event *ev);

/* The end's events (of earlier frames), as they come: the engine's ids. */
static void end_events(void *data, const struct qpt_verdict *v)
{
	struct mon *m = data;

	if (v->nevents)
		qpt_findings_frames_add(m->ff, v);
	for (unsigned i = 0; !m->mo->no_events && i < v->nevents; i++)
		event_line(m, &v->ev[i]);
}

/* The engine's end: the events it still held, its results final. */
static void end_engine(struct mon *m)
{
	qpt_drive_end(m->fl, end_events, m);
}

/* A new engine when the current one holds too many conversations. */
static void renew_engine(struct mon *m)
{
	GHashTableIter it;
	gpointer val;

	end_engine(m); /* under the old engine's ids (id_base) */
	refresh(m);
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


/* ---- output --------------------------------------------------------------- */

static void flush_out(struct mon *m)
{
	if (m->out->len && !m->write_failed) {
		if (qpt_write_out(m->out, "standard output"))
			m->write_failed = true;
		fflush(stdout);
	}
	g_string_truncate(m->out, 0);
}

/* An event as `events` writes it (qpt_event_words), after its frame and
 * time: JSON "type":"event" first, the wall-clock (ISO 8601) time in text. */
static void event_line(struct mon *m, const struct qpt_event *ev)
{
	GString *o = m->out;
	int32_t conv = ev->conv >= 0 ? ev->conv + m->id_base : -1;

	if (m->o->json) {
		g_string_append_printf(o, "{" MON_SCHEMA "\"type\":\"event\",\"frame\":%" PRIu64 ",\"time\":",
				       ev->frame);
		qpt_format_epoch(o, ev->time_ns);
	} else {
		time_t sec = (time_t)(ev->time_ns / 1000000000);
		struct tm tm;
		char ts[32];

		gmtime_r(&sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		g_string_append_printf(o, "%s.%06dZ frame %" PRIu64, ts,
				       (int)(ev->time_ns % 1000000000 / 1000), ev->frame);
	}
	qpt_event_words(o, ev, conv, m->o->json);
}

/* summary's diagnosis of the current engine (qpt_findings_walk, written by
 * qpt_diagnosis_text / qpt_diagnosis_json): every interval and at the end. */
static void diagnosis(struct mon *m, bool final)
{
	GPtrArray *att = qpt_flow_cm_attempts(m->fl);
	GArray *fs = qpt_findings_walk(m->fl, NULL, NULL, att, true, m->ff);
	GArray *groups = qpt_findings_groups(m->fl, fs);
	int64_t t = now_ns(m);

	if (m->o->json) {
		g_string_append_printf(m->out, "{" MON_SCHEMA "\"type\":\"%s\",\"time\":",
				       final ? "final_diagnosis" : "diagnosis");
		qpt_format_epoch(m->out, t);
		qpt_diagnosis_json(m->out, fs, groups);
		g_string_append(m->out, "}\n");
	} else {
		struct qpt_diag_opts dopt = { .verbose = m->o->verbose, .top = m->o->top };

		g_string_append(m->out, final ? "final " : "");
		qpt_diagnosis_text(m->out, fs, groups, &dopt);
	}
	qpt_findings_groups_free(groups);
	g_array_free(fs, TRUE);
	g_ptr_array_free(att, TRUE);
}

static gint cmp_worst_entry(gconstpointer a, gconstpointer b)
{
	const struct mconv *x = *(struct mconv *const *)a, *y = *(struct mconv *const *)b;
	uint64_t tx = x->trouble, ty = y->trouble;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	if (mv(x, MV_PACKETS) != mv(y, MV_PACKETS))
		return mv(x, MV_PACKETS) > mv(y, MV_PACKETS) ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The table's conversations, sorted by cmp. */
static GPtrArray *entries_sorted(struct mon *m, GCompareFunc cmp)
{
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		g_ptr_array_add(a, val);
	g_ptr_array_sort(a, cmp);
	return a;
}

static GPtrArray *entries_worst_first(struct mon *m)
{
	return entries_sorted(m, cmp_worst_entry);
}

static uint64_t naks_of(const struct mconv *e, const uint64_t *base)
{
	uint64_t n = 0;

	for (int k = 0; k < QPT_NAK_KINDS; k++)
		n += mv(e, MV_NAKS + k) - (base ? base[MV_NAKS + k] : 0);
	return n;
}

/* One line per active conversation, the worst first; final: the whole run. */
static void conv_lines(struct mon *m, bool final)
{
	GPtrArray *a = entries_worst_first(m);
	int64_t t = now_ns(m);
	const char *type = final ? "final" : "interval";
	GString *limit = g_string_new("");

	for (guint i = 0; i < a->len; i++) {
		struct mconv *e = g_ptr_array_index(a, i);
		uint64_t d_pk = mv(e, MV_PACKETS) - e->shown[MV_PACKETS];
		uint64_t d_rt = mv(e, MV_RETRANS) - e->shown[MV_RETRANS];

		char lost[32];

		/* summary's keys (a conversation object's "id", "endpoints",
		 * "time_lost_us"), its units in text */
		if (m->o->json) {
			g_string_append_printf(m->out, "{" MON_SCHEMA "\"type\":\"%s\",\"time\":", type);
			qpt_format_epoch(m->out, t);
			g_string_append_printf(m->out, ",\"id\":%d,\"transport\":\"%s\",\"endpoints\":[",
					       e->id, e->transport);
			for (int k = 0; k < 2; k++) {
				g_string_append_printf(m->out, "%s{\"addr\":\"%s\",\"qpn\":", k ? "," : "",
						       k ? e->remote : e->local);
				if (e->qpn_known[k])
					g_string_append_printf(m->out, "%u}", e->qpn[k]);
				else
					g_string_append(m->out, "null}");
			}
			g_string_append_printf(m->out,
				"],\"packets\":%" PRIu64 ",\"packets_delta\":%" PRIu64
				",\"retransmitted_packets\":%" PRIu64 ",\"retransmitted_delta\":%" PRIu64
				",\"psn_gaps\":%" PRIu64 ",\"gbn_episodes\":%" PRIu64
				",\"time_lost_us\":%.3f,\"naks\":%" PRIu64 ",\"rnr_naks\":%" PRIu64
				",\"cnps\":%" PRIu64 ",\"ecn_ce\":%" PRIu64 ",\"idle_s\":%.3f}\n",
				mv(e, MV_PACKETS), d_pk, mv(e, MV_RETRANS), d_rt, mv(e, MV_GAPS),
				mv(e, MV_GBN), mv(e, MV_GBN_LOST_NS) / 1000.0, naks_of(e, NULL),
				mv(e, MV_RNR), mv(e, MV_CNPS), mv(e, MV_ECN_CE), (t - e->last_ns) / 1e9);
		} else {
			g_string_append_printf(m->out,
				"%s conv %d %s %s QP %s <-> %s QP %s: %" PRIu64 " packets (+%" PRIu64
				"), %" PRIu64 " retransmitted (+%" PRIu64 "), %" PRIu64 " PSN gaps, %"
				PRIu64 " go-back-N (%s lost), %" PRIu64 " NAKs, %" PRIu64
				" RNR NAKs, %" PRIu64 " CNPs, %" PRIu64 " ECN-CE\n",
				type, e->id, e->transport, e->local, e->lqpn, e->remote, e->rqpn,
				mv(e, MV_PACKETS), d_pk, mv(e, MV_RETRANS), d_rt, mv(e, MV_GAPS),
				mv(e, MV_GBN),
				qpt_format_duration((int64_t)mv(e, MV_GBN_LOST_NS), lost, sizeof(lost)),
				naks_of(e, NULL), mv(e, MV_RNR), mv(e, MV_CNPS), mv(e, MV_ECN_CE));
		}
		for (int k = 0; k < MV_N; k++)
			e->shown[k] = mv(e, k);
	}
	/* --max-qps: what it left out (the metric counts it too) */
	if (m->o->max_qps && m->o->json)
		g_string_printf(limit, ",\"untracked\":%" PRIu64 ",\"max_qps\":%u",
				m->now.untracked, m->o->max_qps);
	else if (m->o->max_qps && m->now.untracked)
		g_string_printf(limit, "; %" PRIu64 " packets not analysed: more QPs than --max-qps %u",
				m->now.untracked, m->o->max_qps);
	if (m->o->json)
		g_string_append_printf(m->out,
			"{" MON_SCHEMA "\"type\":\"%s_totals\",\"time\":%" PRId64 ".%06d,\"frames\":%" PRIu64
			",\"iba_packets\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"cut_by_capture\":%" PRIu64
			",\"active_conversations\":%u,\"conversations\":%" PRIu64
			",\"retransmitted_packets\":%" PRIu64 ",\"gbn_episodes\":%" PRIu64
			",\"capture_dropped\":%" PRIu64 ",\"engine_renewals\":%u"
			",\"not_listed\":%" PRIu64 "%s}\n",
			type, t / 1000000000, (int)(t % 1000000000 / 1000), m->now.frames, m->now.iba,
			m->now.malformed, m->now.cut, a->len, m->now.conversations,
			m->now.v[MV_RETRANS], m->now.v[MV_GBN], m->cap_drop + m->cap_ifdrop,
			m->renewals, m->untabled, limit->str);
	else
		g_string_append_printf(m->out,
			"%s totals: %" PRIu64 " frames, %" PRIu64 " RoCE/IB (%" PRIu64 " malformed, %"
			PRIu64 " cut by the capture), %u active conversations (%" PRIu64
			" seen), %" PRIu64 " retransmitted, %" PRIu64 " go-back-N; capture dropped %"
			PRIu64 "%s%s%s\n",
			type, m->now.frames, m->now.iba, m->now.malformed, m->now.cut, a->len,
			m->now.conversations, m->now.v[MV_RETRANS], m->now.v[MV_GBN],
			m->cap_drop + m->cap_ifdrop,
			m->renewals ? " (engine renewed: conversation ids restart higher)" : "",
			m->untabled ? "; more active conversations than --max-conversations: "
				      "the rest are in the totals only" : "", limit->str);
	g_string_free(limit, TRUE);
	g_ptr_array_free(a, TRUE);
}

/* ---- Prometheus text exposition format ---------------------------------
 *
 * Series (docs/monitoring.md, "Metrics"):
 *  - by link and direction, every packet (exact totals): labels link,
 *    host_a, host_b (the two hosts, host_a the lower address as text),
 *    direction (a_to_b, b_to_a) and priority, at most
 *    --metrics-max-links of them, then one labelled "other";
 *  - by QP pair and direction, the --metrics-max-conversations
 *    conversations with the most recent trouble (calm ones hold the
 *    places left, and give them up to troubled ones): the link series'
 *    labels and transport, qpn_a, qpn_b;
 *  - per link: the last frame's time, PFC/PAUSE frames per priority;
 *  - the whole capture, the endpoint, build and process. */

static void prom_label_value(GString *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			g_string_append_c(o, '\\');
		if (*s == '\n')
			g_string_append(o, "\\n");
		else
			g_string_append_c(o, *s);
	}
}

static void prom_label(GString *o, const char *k, const char *v)
{
	g_string_append_printf(o, "%s%s=\"", o->str[o->len - 1] == '{' ? "" : ",", k);
	prom_label_value(o, v);
	g_string_append_c(o, '"');
}

static const char *link_name(const struct mon *m, uint16_t link)
{
	return link < m->links->len ? ((struct mlink *)g_ptr_array_index(m->links, link))->name
				    : "other";
}

/* The labels of a direction from src to dst: link, host_a, host_b,
 * direction, priority. */
static void dir_labels(GString *o, const struct mon *m, uint16_t link, int prio, const char *src,
		       const char *dst)
{
	bool ab = strcmp(src, dst) <= 0, other = !strcmp(src, "other");
	char p[8];

	g_snprintf(p, sizeof(p), "%d", prio);
	prom_label(o, "link", link_name(m, link));
	prom_label(o, "host_a", ab ? src : dst);
	prom_label(o, "host_b", ab ? dst : src);
	prom_label(o, "direction", other ? "other" : ab ? "a_to_b" : "b_to_a");
	prom_label(o, "priority", prio < 0 ? "other" : p);
}

/* A series kept per link direction (and per QP pair when qp_name). */
struct series {
	const char *name, *qp_name, *help, *type;
	int k;	      /* MV_* */
	double scale; /* value = v[k] * scale */
};

static const struct series dir_series[] = {
	{ "qptrace_packets_total", "qptrace_qp_packets_total", "RoCE/IB packets sent in this direction", "counter", MV_PACKETS, 1 },
	{ "qptrace_payload_bytes_total", NULL, "Payload bytes sent in this direction", "counter", MV_PAYLOAD, 1 },
	{ "qptrace_retransmitted_packets_total", "qptrace_qp_retransmitted_packets_total", "Request packets sent again (go-back-N resends, RNR retries, timeouts)", "counter", MV_RETRANS, 1 },
	{ "qptrace_psn_gaps_total", "qptrace_qp_psn_gaps_total", "PSN gaps at the capture point: runs of one or more PSNs skipped, each a loss before the capture point (not a count of packets)", "counter", MV_GAPS, 1 },
	{ "qptrace_gbn_episodes_total", NULL, "Go-back-N episodes (a NAK or a timeout, then resends)", "counter", MV_GBN, 1 },
	{ "qptrace_gbn_time_lost_seconds_total", "qptrace_qp_gbn_time_lost_seconds_total", "Time lost in go-back-N episodes, trigger to recovery (the first 1,024 episodes per QP direction and engine)", "counter", MV_GBN_LOST_NS, 1e-9 },
	{ "qptrace_timeouts_total", "qptrace_qp_timeouts_total", "Resends after a silence (the requester's ACK timeout)", "counter", MV_TIMEOUTS, 1 },
	{ "qptrace_rnr_naks_total", "qptrace_qp_rnr_naks_total", "RNR NAKs sent in this direction (receiver not ready)", "counter", MV_RNR, 1 },
	{ "qptrace_rnr_retries_total", NULL, "Requests sent again after an RNR NAK", "counter", MV_RNR_RETRIES, 1 },
	{ "qptrace_out_of_order_packets_total", NULL, "Packets that arrived after a later PSN of the same direction (filled a PSN gap without a resend)", "counter", MV_OOO, 1 },
	{ "qptrace_bad_icrc_packets_total", "qptrace_qp_bad_icrc_packets_total", "Packets whose ICRC is wrong (corrupted)", "counter", MV_BAD_ICRC, 1 },
	{ "qptrace_cnps_total", NULL, "Congestion notification packets (RoCEv2 CNP) sent in this direction", "counter", MV_CNPS, 1 },
	{ "qptrace_ecn_ce_packets_total", NULL, "Packets marked ECN Congestion Experienced", "counter", MV_ECN_CE, 1 },
	{ "qptrace_ecn_ce_without_cnp_total", "qptrace_qp_ecn_ce_without_cnp_total", "ECN-CE marks that no CNP from the receiver answered within the ECN window (100 us)", "counter", MV_CE_NO_CNP, 1 },
	{ "qptrace_capture_duplicates_total", NULL, "Capture copies (the same packet seen twice by the capture, not re-sent)", "counter", MV_DUPS, 1 },
};

struct hist {
	const char *name, *help;
	int n, sum, le; /* MV_* of the count, the sum (ns), the first bucket */
};

static const struct hist dir_hists[] = {
	{ "qptrace_ack_rtt_seconds", "ACK round-trip time at the capture point, of the requests sent in this direction (request with the A bit to the ACK covering it; Karn: never from a resend); bucket edges within 1 %", MV_RTT_N, MV_RTT_SUM_NS, MV_RTT_LE },
	{ "qptrace_read_latency_seconds", "RDMA READ latency at the capture point, of the READs requested in this direction (request to its last response); bucket edges within 1 %", MV_READ_N, MV_READ_SUM_NS, MV_READ_LE },
};

static void prom_head(GString *o, const char *name, const char *help, const char *type)
{
	g_string_append_printf(o, "# HELP %s %s.\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_num(GString *o, uint64_t v, double scale)
{
	if (scale == 1)
		g_string_append_printf(o, "} %" PRIu64 "\n", v);
	else
		g_string_append_printf(o, "} %.9f\n", (double)v * scale);
}

/* A link series' value k (the labels of l, with extra ones). */
static void lser_value(GString *o, const struct mon *m, const char *name, const struct lser *l,
		       const char *ek, const char *ev, uint64_t v, double scale)
{
	g_string_append_printf(o, "%s{", name);
	dir_labels(o, m, l->link, l->prio, l->src, l->dst);
	if (ek)
		prom_label(o, ek, ev);
	prom_num(o, v, scale);
}

/* A QP pair's direction d: the link series' labels, transport and QPNs
 * (the closing brace left to the value). */
static void qp_labels(GString *o, const struct mon *m, const char *name, const struct mconv *e,
		      int d)
{
	const char *src = e->from[d] ? e->remote : e->local, *dst = e->from[d] ? e->local : e->remote;
	const char *sq = e->from[d] ? e->rqpn : e->lqpn, *dq = e->from[d] ? e->lqpn : e->rqpn;
	bool ab = strcmp(src, dst) <= 0;

	g_string_append_printf(o, "%s{", name);
	dir_labels(o, m, e->link[d], e->prio[d], src, dst);
	prom_label(o, "transport", e->transport);
	prom_label(o, "qpn_a", ab ? sq : dq);
	prom_label(o, "qpn_b", ab ? dq : sq);
}

static void qp_value(GString *o, const struct mon *m, const char *name, const struct mconv *e,
		     int d, uint64_t v, double scale)
{
	qp_labels(o, m, name, e, d);
	prom_num(o, v, scale);
}

static gint cmp_recent(gconstpointer a, gconstpointer b)
{
	const struct mconv *x = *(struct mconv *const *)a, *y = *(struct mconv *const *)b;

	if (x->recent != y->recent)
		return x->recent > y->recent ? -1 : 1;
	if (x->labelled != y->labelled) /* a tie keeps the series there are */
		return x->labelled ? -1 : 1;
	if (x->trouble != y->trouble)
		return x->trouble > y->trouble ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The --metrics-max-conversations with the most recent trouble. */
static GPtrArray *pick_qps(struct mon *m)
{
	GPtrArray *a = entries_sorted(m, cmp_recent);

	for (guint i = 0; i < a->len; i++)
		((struct mconv *)g_ptr_array_index(a, i))->labelled = i < (guint)m->mo->metrics_max;
	if (a->len > (guint)m->mo->metrics_max)
		g_ptr_array_set_size(a, (guint)m->mo->metrics_max);
	return a;
}

static gint cmp_lser(gconstpointer a, gconstpointer b)
{
	return strcmp((*(struct lser *const *)a)->key, (*(struct lser *const *)b)->key);
}

/* The process's own (as the Prometheus client libraries export them). */
static void process_metrics(GString *o)
{
	gchar *stat = NULL, *pstat = NULL;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	GDir *fds;
	unsigned nfd = 0;

	if (g_file_get_contents("/proc/self/stat", &pstat, NULL, NULL) &&
	    g_file_get_contents("/proc/stat", &stat, NULL, NULL) && tck > 0) {
		/* the fields after the command's closing parenthesis: 3 state,
		 * ... 14 utime, 15 stime, 22 starttime, 23 vsize, 24 rss */
		const char *p = strrchr(pstat, ')'), *bt = strstr(stat, "\nbtime ");
		gchar **f = p ? g_strsplit(p + 2, " ", 0) : NULL;

		if (f && g_strv_length(f) > 21 && bt) {
			double cpu = (g_ascii_strtod(f[11], NULL) + g_ascii_strtod(f[12], NULL)) / tck;
			double start = g_ascii_strtod(bt + 7, NULL) + g_ascii_strtod(f[19], NULL) / tck;

			prom_head(o, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds", "counter");
			g_string_append_printf(o, "process_cpu_seconds_total %.2f\n", cpu);
			prom_head(o, "process_start_time_seconds", "Start time of the process since unix epoch in seconds", "gauge");
			g_string_append_printf(o, "process_start_time_seconds %.2f\n", start);
			prom_head(o, "process_virtual_memory_bytes", "Virtual memory size in bytes", "gauge");
			g_string_append_printf(o, "process_virtual_memory_bytes %s\n", f[20]);
			prom_head(o, "process_resident_memory_bytes", "Resident memory size in bytes", "gauge");
			g_string_append_printf(o, "process_resident_memory_bytes %.0f\n",
					       g_ascii_strtod(f[21], NULL) * page);
		}
		g_strfreev(f);
	}
	g_free(stat);
	g_free(pstat);
	if ((fds = g_dir_open("/proc/self/fd", 0, NULL))) {
		while (g_dir_read_name(fds))
			nfd++;
		g_dir_close(fds);
		prom_head(o, "process_open_fds", "Number of open file descriptors", "gauge");
		g_string_append_printf(o, "process_open_fds %u\n", nfd > 0 ? nfd - 1 : 0);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		prom_head(o, "process_max_fds", "Maximum number of open file descriptors", "gauge");
		g_string_append_printf(o, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	}
}

/* A PFC counter per link and priority: the uint64_t[QPT_PFC_PRIOS] at
 * offset off of struct mlink. */
static void pfc_family(GString *o, const struct mon *m, const char *name, const char *help,
		       size_t off)
{
	char p[8];

	prom_head(o, name, help, "counter");
	for (guint i = 0; i < m->links->len; i++)
		for (int k = 0; k < QPT_PFC_PRIOS; k++) {
			const struct mlink *l = g_ptr_array_index(m->links, i);

			g_snprintf(p, sizeof(p), "%d", k);
			g_string_append_printf(o, "%s{", name);
			prom_label(o, "link", l->name);
			prom_label(o, "priority", p);
			prom_num(o, ((const uint64_t *)((const char *)l + off))[k], 1);
		}
}

static void render_metrics(struct mon *m, GString *o)
{
	GPtrArray *lab = pick_qps(m);
	GPtrArray *ls = g_ptr_array_new();
	GHashTableIter it;
	gpointer val;
	char kb[32];

	g_hash_table_iter_init(&it, m->lsers);
	while (g_hash_table_iter_next(&it, NULL, &val))
		g_ptr_array_add(ls, val);
	g_ptr_array_sort(ls, cmp_lser);

	for (size_t s = 0; s < G_N_ELEMENTS(dir_series); s++) {
		const struct series *x = &dir_series[s];

		prom_head(o, x->name, x->help, x->type);
		for (guint i = 0; i < ls->len; i++) {
			const struct lser *l = g_ptr_array_index(ls, i);

			lser_value(o, m, x->name, l, NULL, NULL, l->v[x->k], x->scale);
		}
	}
	prom_head(o, "qptrace_naks_total", "NAKs by kind (AETH NAK code) sent in this direction", "counter");
	for (int k = 0; k < QPT_NAK_KINDS; k++)
		for (guint i = 0; i < ls->len; i++) {
			const struct lser *l = g_ptr_array_index(ls, i);

			lser_value(o, m, "qptrace_naks_total", l, "kind", qpt_nak_name((unsigned)k),
				   l->v[MV_NAKS + k], 1);
		}
	for (size_t h = 0; h < G_N_ELEMENTS(dir_hists); h++) {
		const struct hist *x = &dir_hists[h];
		gchar *b = g_strconcat(x->name, "_bucket", NULL), *sum = g_strconcat(x->name, "_sum", NULL),
		      *cnt = g_strconcat(x->name, "_count", NULL);

		prom_head(o, x->name, x->help, "histogram");
		for (guint i = 0; i < ls->len; i++) {
			const struct lser *l = g_ptr_array_index(ls, i);

			for (size_t e = 0; e < N_LE; e++) {
				g_snprintf(kb, sizeof(kb), "%g", lat_le[e]);
				lser_value(o, m, b, l, "le", kb, l->v[x->le + (int)e], 1);
			}
			lser_value(o, m, b, l, "le", "+Inf", l->v[x->n], 1);
			lser_value(o, m, sum, l, NULL, NULL, l->v[x->sum], 1e-9);
			lser_value(o, m, cnt, l, NULL, NULL, l->v[x->n], 1);
		}
		g_free(b);
		g_free(sum);
		g_free(cnt);
	}

	/* the worst QP pairs */
	for (size_t s = 0; s < G_N_ELEMENTS(dir_series); s++) {
		const struct series *x = &dir_series[s];

		if (!x->qp_name)
			continue;
		prom_head(o, x->qp_name, x->help, x->type);
		for (guint i = 0; i < lab->len; i++)
			for (int d = 0; d < 2; d++) {
				const struct mconv *e = g_ptr_array_index(lab, i);

				if (mvd(e, d, MV_PACKETS))
					qp_value(o, m, x->qp_name, e, d, mvd(e, d, x->k), x->scale);
			}
	}
	prom_head(o, "qptrace_qp_naks_total", "NAKs of every kind sent in this direction of the QP pair", "counter");
	for (guint i = 0; i < lab->len; i++)
		for (int d = 0; d < 2; d++) {
			const struct mconv *e = g_ptr_array_index(lab, i);
			uint64_t n = 0;

			for (int k = 0; k < QPT_NAK_KINDS; k++)
				n += mvd(e, d, MV_NAKS + k);
			if (mvd(e, d, MV_PACKETS))
				qp_value(o, m, "qptrace_qp_naks_total", e, d, n, 1);
		}
	prom_head(o, "qptrace_qp_recent_trouble", "Recent trouble of this direction of the QP pair: resends, PSN gaps, NAKs, RNR NAKs, timeouts, bad ICRCs and ECN-CE marks without CNP, halved every 300 s of capture time (the pairs with the most, both directions, have series of their own)", "gauge");
	for (guint i = 0; i < lab->len; i++)
		for (int d = 0; d < 2; d++) {
			const struct mconv *e = g_ptr_array_index(lab, i);

			if (!mvd(e, d, MV_PACKETS))
				continue;
			qp_labels(o, m, "qptrace_qp_recent_trouble", e, d);
			g_string_append_printf(o, "} %.3f\n", e->recent_d[d]);
		}

	/* per link */
	prom_head(o, "qptrace_link_frames_total", "Frames read from the link (mirror session, tunnel source, or the capture's own interface or directory), RoCE or not", "counter");
	for (guint i = 0; i < m->links->len; i++) {
		const struct mlink *l = g_ptr_array_index(m->links, i);

		g_string_append(o, "qptrace_link_frames_total{");
		prom_label(o, "link", l->name);
		prom_num(o, l->frames, 1);
	}
	prom_head(o, "qptrace_last_packet_timestamp_seconds", "Capture time of the link's last frame, seconds since the epoch (a silent mirror stops moving it)", "gauge");
	for (guint i = 0; i < m->links->len; i++) {
		const struct mlink *l = g_ptr_array_index(m->links, i);

		if (!l->frames)
			continue;
		g_string_append(o, "qptrace_last_packet_timestamp_seconds{");
		prom_label(o, "link", l->name);
		g_string_append_printf(o, "} %.6f\n", l->last_ns / 1e9);
	}
	pfc_family(o, m, "qptrace_pfc_pause_frames_total", "PFC frames pausing or resuming the priority (its class-enable bit set), and 802.3x PAUSE frames (every priority)", offsetof(struct mlink, pause));
	pfc_family(o, m, "qptrace_pfc_xoff_frames_total", "PFC and PAUSE frames with a pause time above 0 for the priority (XOFF; the rest resume it)", offsetof(struct mlink, xoff));

	g_string_append_printf(o,
		"# HELP qptrace_frames_total Frames read (all of them, RoCE or not).\n"
		"# TYPE qptrace_frames_total counter\nqptrace_frames_total %" PRIu64 "\n"
		"# HELP qptrace_iba_packets_total RoCE/IB frames decoded.\n"
		"# TYPE qptrace_iba_packets_total counter\nqptrace_iba_packets_total %" PRIu64 "\n"
		"# HELP qptrace_management_packets_total Management datagrams (QP0/QP1), in no conversation.\n"
		"# TYPE qptrace_management_packets_total counter\nqptrace_management_packets_total %" PRIu64 "\n"
		"# HELP qptrace_malformed_packets_total RoCE/IB frames truncated inside a header or invalid.\n"
		"# TYPE qptrace_malformed_packets_total counter\nqptrace_malformed_packets_total %" PRIu64 "\n"
		"# HELP qptrace_cut_by_capture_packets_total Frames whose payload or ICRC the snap length cut (analysed, ICRC not checked).\n"
		"# TYPE qptrace_cut_by_capture_packets_total counter\nqptrace_cut_by_capture_packets_total %" PRIu64 "\n"
		"# HELP qptrace_untracked_packets_total Packets of QPs past the engine's limit, not analysed.\n"
		"# TYPE qptrace_untracked_packets_total counter\nqptrace_untracked_packets_total %" PRIu64 "\n"
		"# HELP qptrace_conversations Conversations active (not idle for --idle seconds).\n"
		"# TYPE qptrace_conversations gauge\nqptrace_conversations %u\n"
		"# HELP qptrace_metrics_conversations Conversations with series of their own (qptrace_qp_*: at most --metrics-max-conversations, the most recent trouble first).\n"
		"# TYPE qptrace_metrics_conversations gauge\nqptrace_metrics_conversations %u\n"
		"# HELP qptrace_metrics_link_series Link series (at most --metrics-max-links, then one labelled other).\n"
		"# TYPE qptrace_metrics_link_series gauge\nqptrace_metrics_link_series %u\n"
		"# HELP qptrace_capture_received_packets_total Packets the capture received (pcap_stats ps_recv).\n"
		"# TYPE qptrace_capture_received_packets_total counter\nqptrace_capture_received_packets_total %" PRIu64 "\n"
		"# HELP qptrace_capture_dropped_packets_total Packets the capture dropped (pcap_stats: ps_drop, buffer full; ps_ifdrop, by the interface).\n"
		"# TYPE qptrace_capture_dropped_packets_total counter\n"
		"qptrace_capture_dropped_packets_total{where=\"buffer\"} %" PRIu64 "\n"
		"qptrace_capture_dropped_packets_total{where=\"interface\"} %" PRIu64 "\n"
		"# HELP qptrace_engine_renewals_total Times the engine was renewed to bound its memory (--max-conversations).\n"
		"# TYPE qptrace_engine_renewals_total counter\nqptrace_engine_renewals_total %u\n"
		"# HELP qptrace_build_info The qptrace that serves these metrics (value 1).\n"
		"# TYPE qptrace_build_info gauge\nqptrace_build_info{version=\"%s\"} 1\n",
		m->now.frames, m->now.iba, m->now.management, m->now.malformed, m->now.cut,
		m->now.untracked, g_hash_table_size(m->convs), lab->len, g_hash_table_size(m->lsers),
		m->cap_recv, m->cap_drop, m->cap_ifdrop, m->renewals, QPT_VERSION);
	if (m->http) {
		struct qpt_http_stats st;

		qpt_http_get_stats(m->http, &st);
		g_string_append_printf(o,
			"# HELP qptrace_metrics_scrapes_total Scrapes of /metrics served.\n"
			"# TYPE qptrace_metrics_scrapes_total counter\nqptrace_metrics_scrapes_total %" PRIu64 "\n"
			"# HELP qptrace_metrics_renderings_total Times the exposition was rendered (once per scrape interval, shared by the scrapes of that interval).\n"
			"# TYPE qptrace_metrics_renderings_total counter\nqptrace_metrics_renderings_total %" PRIu64 "\n"
			"# HELP qptrace_metrics_connections_cut_total Connections to the metrics endpoint cut: request headers not in within 5 s, a response not taken within 30 s, or the slot given to a newer connection when all 64 were taken.\n"
			"# TYPE qptrace_metrics_connections_cut_total counter\n"
			"qptrace_metrics_connections_cut_total{reason=\"headers_deadline\"} %" PRIu64 "\n"
			"qptrace_metrics_connections_cut_total{reason=\"send_deadline\"} %" PRIu64 "\n"
			"qptrace_metrics_connections_cut_total{reason=\"slots_full\"} %" PRIu64 "\n",
			st.scrapes, st.renderings + 1, st.headers_deadline, st.send_deadline, st.evicted);
	}
	process_metrics(o);
	g_ptr_array_free(ls, TRUE);
	g_ptr_array_free(lab, TRUE);
}

/* A scrape waits for a rendering: the engine's view into the tables, then
 * the text, handed to the endpoint (which shares it among its readers). */
static void publish_metrics(struct mon *m)
{
	GString *s;

	if (!m->http)
		return;
	s = g_string_sized_new(m->metrics_len + 4096);
	render_metrics(m, s);
	m->metrics_len = s->len;
	{
		size_t len = s->len;
		/* the text outlives the GString: the endpoint takes it (glib
		 * 2.76+ warns when g_string_free(s, FALSE)'s result is unused) */
		char *text = g_string_free(s, FALSE);

		qpt_http_publish(m->http, text, len);
	}
}

static void metrics_on_demand(struct mon *m)
{
	if (m->http && qpt_http_wanted(m->http)) {
		refresh(m);
		publish_metrics(m);
	}
}

/* ---- the frames ------------------------------------------------------------ */

static void on_frame(struct mon *m, uint32_t linktype, int64_t ns, const uint8_t *data,
		     uint32_t caplen, uint32_t wirelen)
{
	struct qpt_pkt pkt;
	struct qpt_verdict v;

	if (!m->have_t0) {
		m->t0_ns = ns;
		m->have_t0 = true;
	}
	if (ns > m->last_ns)
		m->last_ns = ns;
	m->frame_no++;
	qpt_decode(&pkt, linktype, data, caplen, wirelen, &m->o->dec);
	qpt_drive_packet(m->fl, QPT_DRIVE_NO_TAP, m->frame_no, ns, &pkt, &v);
	if (v.nevents)
		qpt_findings_frames_add(m->ff, &v);
	{
		uint16_t li = frame_link(m, &pkt);
		struct mlink *l = g_ptr_array_index(m->links, li);

		l->frames++;
		if (ns > l->last_ns)
			l->last_ns = ns;
		if (v.conv >= 0 && v.dir >= 0 && v.dir < 2) {
			struct acct *a = acct_of(m, v.conv);

			a->link[v.dir] = li;
			a->has_link[v.dir] = true;
		}
		if ((pkt.flags & QPT_HAS_MACC) && pkt.macc.error == QPT_E_OK &&
		    (pkt.macc.opcode == QPT_MACC_PFC || pkt.macc.opcode == QPT_MACC_PAUSE))
			for (int p = 0; p < QPT_PFC_PRIOS; p++) {
				bool pfc = pkt.macc.opcode == QPT_MACC_PFC;

				if (pfc && !(pkt.macc.cev & (1u << p)))
					continue;
				l->pause[p]++;
				l->xoff[p] += (pfc ? pkt.macc.quanta[p] : pkt.macc.quanta[0]) > 0;
			}
	}
	/* the engine's memory: renewed past --max-conversations (checked
	 * here, not only every second: a file is read much faster) */
	if (qpt_flow_totals(m->fl)->conversations > (uint64_t)m->mo->max_convs) {
		for (unsigned i = 0; !m->mo->no_events && i < v.nevents; i++)
			event_line(m, &v.ev[i]);
		renew_engine(m);
		return;
	}
	if (!m->mo->no_events)
		for (unsigned i = 0; i < v.nevents; i++)
			event_line(m, &v.ev[i]);
	if (m->out->len > 1 << 16)
		flush_out(m);
}

struct live {
	struct mon *m;
	uint32_t linktype;
};

static void on_live(u_char *user, const struct pcap_pkthdr *h, const u_char *data)
{
	struct live *l = (struct live *)user;

	on_frame(l->m, l->linktype, (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec * 1000,
		 data, h->caplen, h->len);
}

/* Every second: the engine's view into the tables; every interval: the
 * periodic summary.  (The metrics are rendered when a scrape asks:
 * metrics_on_demand in the reading loops.) */
static void tick(struct mon *m, int64_t *next_interval_us)
{
	int64_t now = g_get_monotonic_time();

	refresh(m);
	if ((gint)m->fl_convs > m->mo->max_convs)
		renew_engine(m);
	if (m->mo->interval > 0 && now >= *next_interval_us) {
		conv_lines(m, false);
		diagnosis(m, false);
		*next_interval_us = now + (int64_t)(m->mo->interval * 1e6);
	}
	flush_out(m);
}

static int run_live(struct mon *m, int64_t deadline_us)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_create(m->mo->iface, err);
	struct bpf_program prog;
	struct live l = { .m = m };
	int64_t next_tick = 0, next_interval = g_get_monotonic_time() +
					       (int64_t)(m->mo->interval * 1e6);
	int rc;

	if (!p) {
		g_printerr("qptrace monitor: %s: %s\n", m->mo->iface, err);
		return 2;
	}
	/* set before activation: each fails only on an activated handle */
	/* not immediate mode: on Linux that takes TPACKET_V2, a ring of
	 * fixed slots of the interface's MTU (64 MiB / 9 KB: 7,000 frames,
	 * 70 ms at 100,000 packets/s), where TPACKET_V3's blocks hold the
	 * frames as long as they are (70,000 of 900 bytes); the 100 ms
	 * timeout delivers what came within it (tools/bench/README.md) */
	if (pcap_set_snaplen(p, 262144) || pcap_set_promisc(p, 1) || pcap_set_timeout(p, 100) ||
	    pcap_set_buffer_size(p, 64 << 20)) {
		g_printerr("qptrace monitor: %s: cannot set the capture options: %s\n",
			   m->mo->iface, pcap_geterr(p));
		pcap_close(p);
		return 2;
	}
	rc = pcap_activate(p);
	if (rc < 0) {
		g_printerr("qptrace monitor: %s: %s\n", m->mo->iface, pcap_geterr(p));
		pcap_close(p);
		return 2;
	}
	l.linktype = (uint32_t)pcap_datalink(p);
	if (!qpt_linktype_supported(l.linktype)) {
		g_printerr("qptrace monitor: %s: link type %u carries no RoCE/IB qptrace decodes\n",
			   m->mo->iface, l.linktype);
		pcap_close(p);
		return 2;
	}
	if (m->o->filter) {
		if (pcap_compile(p, &prog, m->o->filter, 1, PCAP_NETMASK_UNKNOWN) < 0 ||
		    pcap_setfilter(p, &prog) < 0) {
			g_printerr("qptrace monitor: bad filter '%s': %s\n", m->o->filter, pcap_geterr(p));
			pcap_close(p);
			return 2;
		}
		pcap_freecode(&prog);
	}
	if (pcap_setnonblock(p, 1, err) < 0) {
		g_printerr("qptrace monitor: %s: %s\n", m->mo->iface, err);
		pcap_close(p);
		return 2;
	}
	m->live = m->started = true;
	while (!stop_signal && !m->write_failed) {
		struct pollfd pfd = { .fd = pcap_get_selectable_fd(p), .events = POLLIN };
		int64_t now;

		if (pfd.fd >= 0)
			poll(&pfd, 1, 100);
		rc = pcap_dispatch(p, 1024, on_live, (u_char *)&l);
		if (rc < 0 && rc != PCAP_ERROR_BREAK) {
			g_printerr("qptrace monitor: %s: %s\n", m->mo->iface, pcap_geterr(p));
			break;
		}
		metrics_on_demand(m);
		now = g_get_monotonic_time();
		if (now >= next_tick) {
			struct pcap_stat st;

			if (pcap_stats(p, &st) == 0) {
				m->cap_recv = st.ps_recv;
				m->cap_drop = st.ps_drop;
				m->cap_ifdrop = st.ps_ifdrop;
			}
			tick(m, &next_interval);
			next_tick = now + 1000000;
		}
		if (deadline_us && now >= deadline_us)
			break;
	}
	/* what is still in the buffer: the kernel hands over a block of
	 * frames when it is full or after the 100 ms timeout, so for 250 ms */
	if (rc >= 0 || rc == PCAP_ERROR_BREAK) {
		int64_t end = g_get_monotonic_time() + 250000;

		while (g_get_monotonic_time() < end) {
			struct pollfd pfd = { .fd = pcap_get_selectable_fd(p), .events = POLLIN };

			if (pfd.fd >= 0)
				poll(&pfd, 1, 50);
			if (pcap_dispatch(p, 1024, on_live, (u_char *)&l) < 0)
				break;
		}
	}
	pcap_close(p);
	return rc < 0 && rc != PCAP_ERROR_BREAK ? 2 : stopped_status();
}

/* ---- -r DIR [--follow]: rotating capture files (tcpdump -w -G / -C) ----
 *
 * A file is known by its identity (device, inode), not its name: tcpdump
 * -C N -W M writes a ring of M names, truncating each and writing it
 * again in turn, and -G S without a time in the name truncates its one
 * name every S seconds.  Kept for each file read: how far (whole
 * records), its size and modification time then, its first record's
 * header.  A file found again in DIR is
 *   - unchanged (the same size and time): left;
 *   - grown (larger, the same first record): with --follow read on from
 *     where it was left (without it, a file is read as it was when its end
 *     was reached);
 *   - rewritten (smaller, another first record, or the same size at
 *     another time): read again from its start, and a line says so.
 * The file being read is checked the same way before each batch of
 * records (truncated, or another first record: from its start again).
 * A known file gone from DIR is forgotten.
 */

struct fid {
	dev_t dev;
	ino_t ino;
};

static guint fid_hash(gconstpointer p)
{
	const struct fid *x = p;
	uint64_t h = (uint64_t)x->ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)x->dev;

	return (guint)(h ^ h >> 32);
}

static gboolean fid_equal(gconstpointer a, gconstpointer b)
{
	const struct fid *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

struct known {
	struct fid id;		/* the table's key */
	int64_t pos;		/* read up to here (whole records) */
	int64_t size, mtime_ns; /* the file's, as it was left */
	uint8_t first[16];	/* its first record's header */
	bool has_first;
	bool skipped; /* not a pcap file, or corrupt: not read on while it grows */
	bool seen;    /* in the last look at DIR */
};

struct follow {
	gchar *path;
	int fd; /* -1: no file being read */
	struct fid id;
	bool swap, nsec, header;
	uint32_t linktype;
	int64_t pos;		/* the next record */
	int64_t resume;		/* a grown file: where to go on from */
	int64_t size, mtime_ns; /* at the last look */
	uint8_t first[16];
	bool has_first, skipped;
	bool have_prog;
	struct bpf_program prog;
	GHashTable *known; /* struct fid -> struct known */
	uint8_t *buf;	   /* bytes [bstart, bstart + blen) of the file */
	size_t cap, blen;
	int64_t bstart;
};

static uint32_t rd32(const uint8_t *b, bool swap)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return swap ? GUINT32_SWAP_LE_BE(v) : v;
}

static int64_t mtime_ns_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Bytes [pos, pos + n) of the file being read; NULL when it has fewer. */
static const uint8_t *fget(struct follow *f, int64_t pos, uint32_t n)
{
	if (pos < f->bstart || pos + n > f->bstart + (int64_t)f->blen) {
		size_t want = n > (1u << 20) ? n : (1u << 20);
		ssize_t r;

		if (want > f->cap) {
			f->buf = g_realloc(f->buf, want);
			f->cap = want;
		}
		r = pread(f->fd, f->buf, want, pos);
		f->bstart = pos;
		f->blen = r > 0 ? (size_t)r : 0;
		if (f->blen < n)
			return NULL;
	}
	return f->buf + (pos - f->bstart);
}

/* The header of the first record of path, when it has one. */
static bool read_first(const char *path, uint8_t h[16])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, h, 16, 24) == 16;
	close(fd);
	return ok;
}

struct dent {
	gchar *path;
	struct fid id;
	int64_t mtime_ns, size;
	int64_t resume;	  /* grown: read on from here */
	int64_t was_read; /* rewritten: how far it had been read */
	bool rewritten;
};

static gint cmp_dent(gconstpointer a, gconstpointer b)
{
	const struct dent *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The files of DIR to read: new, grown (with --follow) or rewritten, the
 * one being read left out; oldest first (tcpdump -G names by time, -C
 * numbers them, and a ring rewrites the oldest: their modification times
 * order all of them). */
static GArray *pending_files(struct follow *f, const char *dir, bool follow)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct dent));
	GDir *d = g_dir_open(dir, 0, NULL);
	GHashTableIter it;
	gpointer val;
	const char *n;

	if (!d)
		return a;
	g_hash_table_iter_init(&it, f->known);
	while (g_hash_table_iter_next(&it, NULL, &val))
		((struct known *)val)->seen = false;
	while ((n = g_dir_read_name(d))) {
		struct dent e = { 0 };
		struct stat st;
		struct known *k;

		if (n[0] == '.')
			continue;
		e.path = g_build_filename(dir, n, NULL);
		if (stat(e.path, &st) || !S_ISREG(st.st_mode)) {
			g_free(e.path);
			continue;
		}
		e.id.dev = st.st_dev;
		e.id.ino = st.st_ino;
		e.mtime_ns = mtime_ns_of(&st);
		e.size = st.st_size;
		k = g_hash_table_lookup(f->known, &e.id);
		if (k)
			k->seen = true;
		if ((f->fd >= 0 && fid_equal(&e.id, &f->id)) ||
		    (k && k->size == e.size && k->mtime_ns == e.mtime_ns)) {
			g_free(e.path); /* being read, or unchanged */
			continue;
		}
		if (k) {
			uint8_t h[16];
			bool same = k->has_first && read_first(e.path, h) && !memcmp(h, k->first, 16);

			if (e.size > k->size && (same || !k->has_first)) {
				if (!follow || k->skipped) { /* grown: left as it was */
					k->size = e.size;
					k->mtime_ns = e.mtime_ns;
					g_free(e.path);
					continue;
				}
				e.resume = k->pos;
			} else {
				e.rewritten = k->has_first;
				e.was_read = k->pos;
			}
		}
		g_array_append_val(a, e);
	}
	g_dir_close(d);
	/* forget the files gone */
	g_hash_table_iter_init(&it, f->known);
	while (g_hash_table_iter_next(&it, NULL, &val))
		if (!((struct known *)val)->seen)
			g_hash_table_iter_remove(&it);
	g_array_sort(a, cmp_dent);
	return a;
}

static void free_dents(GArray *a)
{
	for (guint i = 0; i < a->len; i++)
		g_free(g_array_index(a, struct dent, i).path);
	g_array_free(a, TRUE);
}

/* From the start of the file again (or of a new one). */
static void follow_restart(struct follow *f)
{
	if (f->have_prog)
		pcap_freecode(&f->prog);
	f->have_prog = false;
	f->header = false;
	f->pos = 0;
	f->resume = 0;
	f->has_first = false;
	f->skipped = false;
	f->blen = 0;
}

/* What was read of the current file, kept by its identity. */
static void remember(struct follow *f)
{
	struct known *k = g_hash_table_lookup(f->known, &f->id);

	if (!k) {
		k = g_new0(struct known, 1);
		k->id = f->id;
		g_hash_table_insert(f->known, &k->id, k);
	}
	k->pos = f->pos;
	k->size = f->size;
	k->mtime_ns = f->mtime_ns;
	k->has_first = f->has_first;
	memcpy(k->first, f->first, sizeof(k->first));
	k->skipped = f->skipped;
	k->seen = true;
}

/* Done with the file for now. */
static void follow_close(struct follow *f)
{
	if (f->fd >= 0) {
		remember(f);
		close(f->fd);
		f->fd = -1;
	}
	follow_restart(f);
	g_free(f->path);
	f->path = NULL;
}

static void follow_open(struct follow *f, const struct dent *e)
{
	struct stat st;

	f->path = g_strdup(e->path);
	f->id = e->id;
	f->size = e->size;
	f->mtime_ns = e->mtime_ns;
	follow_restart(f);
	if (e->rewritten)
		g_printerr("qptrace monitor: %s: rewritten since it was read (%" PRId64 " bytes "
			   "read, %" PRId64 " now): read again from its start\n", e->path,
			   e->was_read, e->size);
	f->fd = open(e->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		g_printerr("qptrace monitor: %s: %s\n", e->path, g_strerror(errno));
		f->skipped = true; /* known as it is: tried again when rewritten */
		remember(f);
		follow_close(f);
		return;
	}
	if (fstat(f->fd, &st) == 0) {
		f->id.dev = st.st_dev; /* replaced since the look at DIR: this one */
		f->id.ino = st.st_ino;
	}
	if (e->resume) {
		const struct known *k = g_hash_table_lookup(f->known, &f->id);

		if (k) {
			f->resume = e->resume;
			memcpy(f->first, k->first, sizeof(f->first));
			f->has_first = k->has_first;
		}
	}
}

/* Reads the complete records of the current file; false when none was
 * there (the file is at its end for now). */
static bool follow_read(struct mon *m, struct follow *f, int max)
{
	struct stat st;
	const uint8_t *h;
	uint8_t first[16];
	int n = 0;

	if (fstat(f->fd, &st))
		return false;
	f->blen = 0; /* what the buffer holds may have been rewritten since */
	f->size = st.st_size;
	f->mtime_ns = mtime_ns_of(&st);
	if (f->header && (st.st_size < f->pos ||
			  (f->has_first && (pread(f->fd, first, 16, 24) != 16 ||
					    memcmp(first, f->first, 16))))) {
		g_printerr("qptrace monitor: %s: truncated or rewritten while it was read (%" PRId64
			   " bytes read, %" PRId64 " now): read again from its start\n", f->path,
			   f->pos, (int64_t)st.st_size);
		follow_restart(f);
	}
	if (!f->header) {
		uint32_t magic;

		if (st.st_size < 24 || !(h = fget(f, 0, 24)))
			return false;
		memcpy(&magic, h, 4);
		f->swap = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
		f->nsec = magic == 0xa1b23c4d || magic == 0x4d3cb2a1;
		if (!f->swap && magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
			g_printerr("qptrace monitor: %s: not a pcap file (pcapng files are not "
				   "followed): skipped\n", f->path);
			f->skipped = true;
			follow_close(f);
			return true;
		}
		f->linktype = rd32(h + 20, f->swap) & 0x0fffffff;
		f->header = true;
		f->pos = f->resume > 24 ? f->resume : 24;
		f->resume = 0;
		if (m->o->filter) {
			pcap_t *dead = pcap_open_dead((int)f->linktype, 262144);

			if (pcap_compile(dead, &f->prog, m->o->filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
				g_printerr("qptrace monitor: bad filter '%s': %s\n", m->o->filter,
					   pcap_geterr(dead));
				pcap_close(dead);
				m->failed = true;
				return false;
			}
			f->have_prog = true;
			pcap_close(dead);
		}
		if (!qpt_linktype_supported(f->linktype))
			g_printerr("qptrace monitor: %s: link type %u: no RoCE/IB in it\n", f->path,
				   f->linktype);
	}
	while (n < max && st.st_size - f->pos >= 16) {
		const uint8_t *rh = fget(f, f->pos, 16), *data;
		uint32_t incl, orig, sec, frac;

		if (!rh)
			break;
		sec = rd32(rh, f->swap);
		frac = rd32(rh + 4, f->swap);
		incl = rd32(rh + 8, f->swap);
		orig = rd32(rh + 12, f->swap);
		if (incl > 262144) {
			g_printerr("qptrace monitor: %s: a record of %u bytes: the file is "
				   "corrupt, left\n", f->path, incl);
			f->skipped = true;
			follow_close(f);
			return true;
		}
		if (st.st_size - f->pos - 16 < incl)
			break; /* still being written */
		if (f->pos == 24) {
			memcpy(f->first, rh, 16);
			f->has_first = true;
		}
		if (!(data = fget(f, f->pos + 16, incl)))
			break;
		f->pos += 16 + (int64_t)incl;
		n++;
		if (f->have_prog) {
			struct pcap_pkthdr ph = { .caplen = incl, .len = orig };

			if (!pcap_offline_filter(&f->prog, &ph, data))
				continue;
		}
		on_frame(m, f->linktype,
			 (int64_t)sec * 1000000000 + (f->nsec ? frac : (int64_t)frac * 1000),
			 data, incl, orig);
	}
	return n > 0;
}

static int run_dir(struct mon *m, int64_t deadline_us)
{
	struct follow f = { .fd = -1,
			    .known = g_hash_table_new_full(fid_hash, fid_equal, NULL, g_free) };
	int64_t next_tick = 0, next_interval = g_get_monotonic_time() +
					       (int64_t)(m->mo->interval * 1e6);

	if (!g_file_test(m->mo->dir, G_FILE_TEST_IS_DIR)) {
		g_printerr("qptrace monitor: -r %s: not a directory\n", m->mo->dir);
		g_hash_table_destroy(f.known);
		return 2;
	}
	m->started = true;
	while (!stop_signal && !m->write_failed && !m->failed) {
		bool progress = false;
		int64_t now;

		if (f.fd < 0) {
			GArray *p = pending_files(&f, m->mo->dir, m->mo->follow);

			if (p->len) {
				follow_open(&f, &g_array_index(p, struct dent, 0));
				progress = true;
			}
			free_dents(p);
		}
		if (f.fd >= 0) {
			progress |= follow_read(m, &f, 4096);
			if (!progress && f.fd >= 0) {
				/* at its end: finished when another file is to be read
				 * (the rotation closed this one), or without --follow */
				GArray *p = pending_files(&f, m->mo->dir, m->mo->follow);
				bool other = p->len > 0;

				free_dents(p);
				if (other || !m->mo->follow) {
					follow_read(m, &f, INT32_MAX);
					follow_close(&f);
					progress = true;
				}
			}
		}
		if (!progress && f.fd < 0 && !m->mo->follow)
			break; /* every file read */
		metrics_on_demand(m);
		now = g_get_monotonic_time();
		if (now >= next_tick) {
			tick(m, &next_interval);
			next_tick = now + 1000000;
		}
		if (deadline_us && now >= deadline_us)
			break;
		if (!progress)
			g_usleep(100000);
	}
	follow_close(&f);
	g_free(f.buf);
	g_hash_table_destroy(f.known);
	return m->failed ? 2 : stopped_status();
}

int cmd_monitor(struct opts *o)
{
	struct qpt_monitor_opts *mo = &o->mon;
	struct mon m = { .o = o, .mo = mo };
	struct sigaction sa = { .sa_handler = on_signal };
	int64_t deadline = 0;
	int status;

	if (!mo->iface == !mo->dir) {
		g_printerr("qptrace monitor: give -i IFACE (a live capture) or -r DIR (rotating "
			   "capture files), one of them\n");
		return 2;
	}
	if (mo->follow && !mo->dir) {
		g_printerr("qptrace monitor: --follow goes with -r DIR\n");
		return 2;
	}
	if (mo->metrics_max < 0 || mo->metrics_max_links < 1 || mo->max_convs < 1 || mo->interval < 0 || mo->idle < 0 ||
	    mo->duration < 0) {
		g_printerr("qptrace monitor: --interval, --idle, --duration, "
			   "--metrics-max-conversations, --metrics-max-links and "
			   "--max-conversations take numbers of 0 or more (--max-conversations "
			   "and --metrics-max-links: 1 or more)\n");
		return 2;
	}
	if (mo->metrics_auth && !mo->metrics) {
		g_printerr("qptrace monitor: --metrics-auth goes with --metrics\n");
		return 2;
	}
	if (mo->metrics && !(m.http = qpt_http_start(mo->metrics, mo->metrics_auth)))
		return 2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	m.fl = qpt_drive_new(o);
	m.convs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	m.ff = qpt_findings_frames_new();
	m.lsers = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	m.acct = g_array_new(FALSE, TRUE, sizeof(struct acct));
	m.links = g_ptr_array_new_with_free_func(free_link);
	m.link_ix = g_hash_table_new(g_str_hash, g_str_equal);
	{
		gchar *base = mo->dir ? g_path_get_basename(mo->dir) : NULL;

		link_index(&m, mo->iface ? mo->iface : base); /* [0]: the capture's own */
		g_free(base);
	}
	m.out = g_string_sized_new(1 << 16);
	if (mo->duration > 0)
		deadline = g_get_monotonic_time() + (int64_t)(mo->duration * 1e6);
	status = mo->iface ? run_live(&m, deadline) : run_dir(&m, deadline);
	end_engine(&m); /* live or -r DIR: the events the end decides */
	refresh(&m);
	/* nothing opened (no such interface or folder): the error alone */
	if (m.started && m.http && qpt_http_wanted(m.http))
		publish_metrics(&m); /* the last numbers, to a scrape waiting for them */
	if (m.started) {
		conv_lines(&m, true); /* the final summary */
		diagnosis(&m, true);
	}
	flush_out(&m);
	qpt_http_stop(m.http);
	qpt_drive_free(m.fl);
	g_hash_table_destroy(m.convs);
	g_hash_table_destroy(m.lsers);
	qpt_findings_frames_free(m.ff);
	g_array_free(m.acct, TRUE);
	g_hash_table_destroy(m.link_ix);
	g_ptr_array_free(m.links, TRUE);
	g_string_free(m.out, TRUE);
	return m.write_failed ? 2 : status;
}
