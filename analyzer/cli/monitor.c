/* monitor.c - qptrace monitor: live capture, events as they happen,
 * periodic summaries, Prometheus metrics; and --vxlan-port for every
 * reading command. */
#include <string.h>

#include "cli.h"

/* ---- --vxlan-port ---------------------------------------------------- */

static uint16_t vxlan_ports[16];
static unsigned n_vxlan_ports;

gboolean qpt_opt_vxlan_port(const gchar *name, const gchar *value, gpointer data,
			    GError **error)
{
	gchar **parts = g_strsplit(value, ",", -1);
	gboolean ok = TRUE;

	(void)data;
	for (gchar **q = parts; ok && *q; q++) {
		guint64 v;

		if (!g_ascii_string_to_unsigned(*q, 10, 1, 65535, &v, NULL) ||
		    n_vxlan_ports >= G_N_ELEMENTS(vxlan_ports)) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "bad %s '%s': a UDP port (1-65535, at most %zu)", name, *q,
				    G_N_ELEMENTS(vxlan_ports));
			ok = FALSE;
		} else {
			vxlan_ports[n_vxlan_ports++] = (uint16_t)v;
		}
	}
	g_strfreev(parts);
	return ok;
}

void qpt_vxlan_ports_to(struct qpt_decode_opts *dec)
{
	dec->vxlan_ports = vxlan_ports;
	dec->n_vxlan_ports = n_vxlan_ports;
}

/* ---- qptrace monitor ---------------------------------------------------
 *
 *   qptrace monitor -i IFACE [-f BPF] [--json] [--interval S] [--idle S]
 *                   [--metrics ADDR:PORT] [--metrics-max-conversations N]
 *   qptrace monitor -r DIR [--follow] ...
 *
 * Frames go through the same decoder and engine as `qptrace events`;
 * events are written as they happen, a line per active conversation every
 * --interval seconds (the worst first), the final summary at the end
 * (Ctrl-C, SIGTERM, --duration, or the end of DIR without --follow).
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
#include <sys/socket.h>

#include "qpt_flow.h"
#include "qpt_rank.h"
#include "qpt_verdict.h"

struct qpt_monitor_opts qpt_monitor_opts = {
	.interval = 10, .idle = 300, .metrics_max = 100, .max_convs = 4096,
};

/* The values kept per conversation: counters, then the ACK RTT histogram. */
static const double rtt_le[] = { 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4,
				 1e-3, 2e-3, 5e-3, 1e-2, 1e-1, 1 };
#define N_LE G_N_ELEMENTS(rtt_le)
enum {
	MV_PACKETS, MV_PAYLOAD, MV_RETRANS, MV_GAPS, MV_GBN, MV_GBN_LOST_NS, MV_RNR, MV_CNPS,
	MV_ECN_CE, MV_DUPS, MV_RTT_N, MV_RTT_SUM_NS,
	MV_NAKS,		   /* QPT_NAK_KINDS of them */
	MV_RTT_LE = MV_NAKS + QPT_NAK_KINDS, /* N_LE cumulative buckets */
	MV_N = MV_RTT_LE + 15,
};
G_STATIC_ASSERT(N_LE == 15);

struct mconv {
	char key[256];
	char local[QPT_ADDR_STRLEN], remote[QPT_ADDR_STRLEN];
	char lqpn[12], rqpn[12], transport[8];
	int32_t id;	      /* as shown: the engine's id plus its generation's base */
	uint64_t carry[MV_N]; /* from engines renewed before */
	uint64_t cur[MV_N];   /* from the current engine */
	uint64_t shown[MV_N]; /* at the last periodic summary */
	int64_t last_ns;
	uint64_t trouble;
	bool seen, labelled, other; /* labelled: a metrics series of its own */
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
	int32_t id_base, next_base;
	GHashTable *convs; /* key -> struct mconv */
	struct mtot retired, now;
	uint64_t other_prev[MV_N];
	uint64_t frame_no;
	int64_t t0_ns, last_ns;
	bool have_t0, live;
	uint64_t cap_recv, cap_drop, cap_ifdrop;
	GString *out;
	bool write_failed;
	unsigned renewals;
	uint64_t untabled; /* active conversations past the table's bound */
	struct qpt_http *http; /* --metrics */
	size_t metrics_len;    /* the last rendering's */
	bool failed;	       /* -r: a bad filter (exit status 2) */
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

/* Both directions' values of one engine conversation. */
static void conv_values(const struct qpt_conv *c, uint64_t v[MV_N])
{
	memset(v, 0, sizeof(uint64_t) * MV_N);
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir *x = c->dir[d];

		v[MV_PACKETS] += x->packets;
		v[MV_PAYLOAD] += x->payload_bytes;
		v[MV_RETRANS] += x->r->retransmitted_packets;
		v[MV_GAPS] += x->r->psn_gaps;
		v[MV_GBN] += x->r->gbn_episodes;
		v[MV_RNR] += x->r->rnr_naks;
		v[MV_CNPS] += x->r->cnps;
		v[MV_ECN_CE] += x->r->ecn_ce;
		v[MV_DUPS] += x->r->duplicates;
		for (int k = 0; k < QPT_NAK_KINDS; k++)
			v[MV_NAKS + k] += x->r->naks[k];
		for (guint i = 0; x->r->episodes && i < x->r->episodes->len; i++) {
			const struct qpt_episode *e =
				&g_array_index(x->r->episodes, struct qpt_episode, i);

			if (e->end_ns > e->start_ns)
				v[MV_GBN_LOST_NS] += (uint64_t)(e->end_ns - e->start_ns);
		}
		v[MV_RTT_N] += x->ack_rtt->n;
		v[MV_RTT_SUM_NS] += (uint64_t)llround(x->ack_rtt->sum_us * 1000.0);
		if (x->ack_rtt->bins) {
			/* bin i holds [0.01 us * 10^(i/100), 0.01 us * 10^((i+1)/100)) */
			int nb = QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES;
			uint64_t seen = 0;
			size_t le = 0;

			for (int i = 0; i < nb && le < N_LE; i++) {
				double upper_us = 0.01 * pow(10, (i + 1.0) / QPT_LAT_BINS_PER_DECADE);

				while (le < N_LE && upper_us > rtt_le[le] * 1e6 * 1.0000001)
					v[MV_RTT_LE + le++] += seen;
				seen += qpt_lat_bin(x->ack_rtt, (unsigned)i);
			}
			while (le < N_LE)
				v[MV_RTT_LE + le++] += seen;
		}
	}
}

static int64_t conv_last_ns(const struct qpt_conv *c)
{
	int64_t a = c->dir[0]->packets ? c->dir[0]->last_ns : INT64_MIN;
	int64_t b = c->dir[1]->packets ? c->dir[1]->last_ns : INT64_MIN;

	return a > b ? a : b;
}

static void conv_key(const struct qpt_conv *c, struct mconv *e)
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
}

/* The engine's conversations into the monitor's table; idle ones leave it.
 * m->now: the totals of every engine so far. */
static void refresh(struct mon *m)
{
	GPtrArray *all = qpt_flow_conversations(m->fl);
	const struct qpt_totals *t = qpt_flow_totals(m->fl);
	int64_t idle_before = now_ns(m) - (int64_t)(m->mo->idle * 1e9);
	GHashTableIter it;
	gpointer val;
	uint64_t v[MV_N];

	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		((struct mconv *)val)->seen = false;
	m->untabled = 0;
	m->now = m->retired;
	m->now.frames += t->frames;
	m->now.iba += t->iba_packets;
	m->now.management += t->management;
	m->now.malformed += t->malformed;
	m->now.untracked += t->untracked;
	m->now.cut += t->cut_by_snaplen;
	m->now.conversations += all->len;
	for (guint i = 0; i < all->len; i++) {
		const struct qpt_conv *c = g_ptr_array_index(all, i);
		struct mconv probe = { 0 }, *e;
		int64_t last = conv_last_ns(c);

		if (c->id + m->id_base >= m->next_base)
			m->next_base = c->id + m->id_base + 1;
		conv_values(c, v);
		for (int k = 0; k < MV_N; k++)
			m->now.v[k] += v[k];
		conv_key(c, &probe);
		e = g_hash_table_lookup(m->convs, probe.key);
		if (m->mo->idle > 0 && last < idle_before) {
			if (e)
				g_hash_table_remove(m->convs, probe.key); /* expired */
			continue;
		}
		if (!e && g_hash_table_size(m->convs) >= (guint)m->mo->max_convs) {
			m->untabled++; /* counted in the totals and `other` only */
			continue;
		}
		if (!e) {
			e = g_new0(struct mconv, 1);
			*e = probe;
			memset(e->carry, 0, sizeof(e->carry));
			g_hash_table_insert(m->convs, e->key, e);
		}
		if (e->seen) { /* two engine conversations, one key: add */
			for (int k = 0; k < MV_N; k++)
				e->cur[k] += v[k];
		} else {
			memcpy(e->cur, v, sizeof(v));
		}
		e->seen = true;
		e->id = c->id + m->id_base;
		e->last_ns = last > e->last_ns ? last : e->last_ns;
		e->trouble = qpt_conv_trouble(c);
	}
	/* Keys no engine conversation has now (folded into another, or from a
	 * renewed engine) keep what they carry, until they are idle. */
	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct mconv *e = val;

		if (!e->seen) {
			memset(e->cur, 0, sizeof(e->cur));
			if (m->mo->idle > 0 && e->last_ns < idle_before)
				g_hash_table_iter_remove(&it);
		}
	}
	g_ptr_array_free(all, TRUE);
}

/* every JSON line names its schema (docs/schema/qptrace-monitor-1.json) */
#define MON_SCHEMA "\"schema\":\"" QPT_SCHEMA_BASE "monitor-" QPT_SCHEMA_VERSION "\","

static void event_line(struct mon *m, const struct qpt_event *ev);

/* The end's events (of earlier frames), as they come: the engine's ids. */
static void end_events(void *data, const struct qpt_verdict *v)
{
	struct mon *m = data;

	for (unsigned i = 0; !m->mo->no_events && i < v->nevents; i++)
		event_line(m, &v->ev[i]);
}

/* The engine's end: the events it still held, its results final. */
static void end_engine(struct mon *m)
{
	qpt_flow_end(m->fl, end_events, m);
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

		for (int k = 0; k < MV_N; k++)
			e->carry[k] += e->cur[k];
		memset(e->cur, 0, sizeof(e->cur));
	}
	qpt_flow_free(m->fl);
	{
		struct qpt_flow_opts fo;

		qpt_flow_opts_from(m->o, &fo);
		m->fl = qpt_flow_new(&fo);
	}
	m->id_base = m->next_base;
	m->renewals++;
}

static uint64_t mv(const struct mconv *e, int k)
{
	return e->carry[k] + e->cur[k];
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

static void event_line(struct mon *m, const struct qpt_event *ev)
{
	const struct qpt_verdict_info *vi = &qpt_verdicts[ev->kind];
	GString *o = m->out;
	int32_t conv = ev->conv >= 0 ? ev->conv + m->id_base : -1;

	if (m->o->json) {
		g_string_append_printf(o, "{" MON_SCHEMA "\"type\":\"event\",\"frame\":%" PRIu64
				       ",\"time\":%" PRId64 ".%06d,\"conv\":%d,\"dir\":%d,"
				       "\"kind\":\"%s\",\"psn\":%u",
				       ev->frame, ev->time_ns / 1000000000,
				       (int)(ev->time_ns % 1000000000 / 1000), conv, ev->dir,
				       vi->key, ev->psn);
		if (ev->original_frame)
			g_string_append_printf(o, ",\"original_frame\":%" PRIu64, ev->original_frame);
		if (vi->count_key)
			g_string_append_printf(o, ",\"%s\":%u", vi->count_key, ev->count);
		if (vi->code == QPT_CODE_NAK)
			g_string_append_printf(o, ",\"nak\":\"%s\"", qpt_nak_name(ev->code));
		if (ev->duration_ns)
			g_string_append_printf(o, ",\"duration_us\":%.3f", ev->duration_ns / 1000.0);
		if (ev->detail) {
			g_string_append(o, ",\"detail\":");
			qpt_json_escape(o, ev->detail);
		}
		g_string_append(o, "}\n");
		return;
	}
	{
		time_t sec = (time_t)(ev->time_ns / 1000000000);
		struct tm tm;
		char ts[32];

		gmtime_r(&sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		g_string_append_printf(o, "%s.%06dZ frame %" PRIu64 " conv %d %s PSN %u", ts,
				       (int)(ev->time_ns % 1000000000 / 1000), ev->frame, conv,
				       vi->key, ev->psn);
	}
	if (ev->original_frame)
		g_string_append_printf(o, " (original frame %" PRIu64 ")", ev->original_frame);
	if (vi->count_key)
		g_string_append_printf(o, " %s %u", vi->count_key, ev->count);
	if (vi->code == QPT_CODE_NAK)
		g_string_append_printf(o, " %s", qpt_nak_name(ev->code));
	if (ev->duration_ns)
		g_string_append_printf(o, " after %.1f us", ev->duration_ns / 1000.0);
	if (ev->detail && vi->detail_in_text)
		g_string_append_printf(o, ": %s", ev->detail);
	g_string_append_c(o, '\n');
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

static GPtrArray *entries_worst_first(struct mon *m)
{
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		g_ptr_array_add(a, val);
	g_ptr_array_sort(a, cmp_worst_entry);
	return a;
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

		if (m->o->json) {
			g_string_append_printf(m->out,
				"{" MON_SCHEMA "\"type\":\"%s\",\"time\":%" PRId64 ".%06d,\"conv\":%d,"
				"\"transport\":\"%s\",\"local\":\"%s\",\"local_qpn\":\"%s\","
				"\"remote\":\"%s\",\"remote_qpn\":\"%s\",\"packets\":%" PRIu64
				",\"packets_delta\":%" PRIu64 ",\"retransmitted_packets\":%" PRIu64
				",\"retransmitted_delta\":%" PRIu64 ",\"psn_gaps\":%" PRIu64
				",\"gbn_episodes\":%" PRIu64 ",\"gbn_time_lost_us\":%.3f,\"naks\":%" PRIu64
				",\"rnr_naks\":%" PRIu64 ",\"cnps\":%" PRIu64 ",\"ecn_ce\":%" PRIu64
				",\"idle_s\":%.3f}\n",
				type, t / 1000000000, (int)(t % 1000000000 / 1000), e->id, e->transport,
				e->local, e->lqpn, e->remote, e->rqpn, mv(e, MV_PACKETS), d_pk,
				mv(e, MV_RETRANS), d_rt, mv(e, MV_GAPS), mv(e, MV_GBN),
				mv(e, MV_GBN_LOST_NS) / 1000.0, naks_of(e, NULL), mv(e, MV_RNR),
				mv(e, MV_CNPS), mv(e, MV_ECN_CE), (t - e->last_ns) / 1e9);
		} else {
			g_string_append_printf(m->out,
				"%s conv %d %s %s QP %s <-> %s QP %s: %" PRIu64 " packets (+%" PRIu64
				"), %" PRIu64 " retransmitted (+%" PRIu64 "), %" PRIu64 " PSN gaps, %"
				PRIu64 " go-back-N (%.1f us lost), %" PRIu64 " NAKs, %" PRIu64
				" RNR NAKs, %" PRIu64 " CNPs, %" PRIu64 " ECN-CE\n",
				type, e->id, e->transport, e->local, e->lqpn, e->remote, e->rqpn,
				mv(e, MV_PACKETS), d_pk, mv(e, MV_RETRANS), d_rt, mv(e, MV_GAPS),
				mv(e, MV_GBN), mv(e, MV_GBN_LOST_NS) / 1000.0, naks_of(e, NULL),
				mv(e, MV_RNR), mv(e, MV_CNPS), mv(e, MV_ECN_CE));
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

/* ---- Prometheus text exposition format --------------------------------- */

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

static void prom_labels(GString *o, const struct mconv *e, const char *extra_k,
			const char *extra_v)
{
	g_string_append(o, "{local=\"");
	prom_label_value(o, e->local);
	g_string_append(o, "\",remote=\"");
	prom_label_value(o, e->remote);
	g_string_append_printf(o, "\",local_qpn=\"%s\",remote_qpn=\"%s\",transport=\"%s\"",
			       e->lqpn, e->rqpn, e->transport);
	if (extra_k)
		g_string_append_printf(o, ",%s=\"%s\"", extra_k, extra_v);
	g_string_append_c(o, '}');
}

struct series {
	const char *name, *help, *type;
	int k;		/* MV_* */
	double scale;	/* value = v[k] * scale */
};

static const struct series conv_series[] = {
	{ "qptrace_packets_total", "RoCE/IB packets of the conversation, both directions", "counter", MV_PACKETS, 1 },
	{ "qptrace_payload_bytes_total", "Payload bytes of the conversation, both directions", "counter", MV_PAYLOAD, 1 },
	{ "qptrace_retransmitted_packets_total", "Request packets sent again (go-back-N resends, RNR retries, timeouts)", "counter", MV_RETRANS, 1 },
	{ "qptrace_psn_gaps_total", "PSN gaps: packets lost before the capture point", "counter", MV_GAPS, 1 },
	{ "qptrace_gbn_episodes_total", "Go-back-N episodes", "counter", MV_GBN, 1 },
	{ "qptrace_gbn_time_lost_seconds_total", "Time lost in go-back-N episodes (trigger to recovery)", "counter", MV_GBN_LOST_NS, 1e-9 },
	{ "qptrace_rnr_naks_total", "RNR NAKs", "counter", MV_RNR, 1 },
	{ "qptrace_cnps_total", "Congestion notification packets (RoCEv2 CNP)", "counter", MV_CNPS, 1 },
	{ "qptrace_ecn_ce_packets_total", "Packets marked ECN Congestion Experienced", "counter", MV_ECN_CE, 1 },
	{ "qptrace_capture_duplicates_total", "Capture copies (the same packet seen twice by the capture)", "counter", MV_DUPS, 1 },
};

/* One value of a series: a conversation of its own, or NULL for `other`. */
static void prom_value(GString *o, const char *name, const struct mconv *e,
		       const uint64_t *other, int k, double scale, const char *ek, const char *ev)
{
	static const struct mconv other_labels = {
		.local = "other", .remote = "other", .lqpn = "other", .rqpn = "other",
		.transport = "other",
	};
	uint64_t v = e ? mv(e, k) : other[k];

	g_string_append(o, name);
	prom_labels(o, e ? e : &other_labels, ek, ev);
	if (scale == 1)
		g_string_append_printf(o, " %" PRIu64 "\n", v);
	else
		g_string_append_printf(o, " %.9f\n", (double)v * scale);
}

static void render_metrics(struct mon *m, GString *o)
{
	GPtrArray *a = entries_worst_first(m);
	GPtrArray *lab = g_ptr_array_new();
	uint64_t other[MV_N];
	unsigned nlab = 0;
	char kb[32];

	/* A conversation keeps its series while active; new ones get one while
	 * fewer than --metrics-max-conversations have one, the rest are summed
	 * into the `other` series (with everything expired). */
	for (guint i = 0; i < a->len; i++)
		nlab += ((struct mconv *)g_ptr_array_index(a, i))->labelled;
	for (guint i = 0; i < a->len; i++) {
		struct mconv *e = g_ptr_array_index(a, i);

		if (!e->labelled && !e->other && nlab < (unsigned)m->mo->metrics_max) {
			e->labelled = true;
			nlab++;
		} else if (!e->labelled) {
			e->other = true;
		}
		if (e->labelled)
			g_ptr_array_add(lab, e);
	}
	memcpy(other, m->now.v, sizeof(other));
	for (guint i = 0; i < lab->len; i++)
		for (int k = 0; k < MV_N; k++) {
			uint64_t x = mv(g_ptr_array_index(lab, i), k);

			other[k] = other[k] >= x ? other[k] - x : 0;
		}
	/* counters never go down: a conversation given its own series takes
	 * its first values out of `other`; they stay counted there */
	for (int k = 0; k < MV_N; k++) {
		if (other[k] < m->other_prev[k])
			other[k] = m->other_prev[k];
		m->other_prev[k] = other[k];
	}

	for (size_t s = 0; s < G_N_ELEMENTS(conv_series); s++) {
		const struct series *x = &conv_series[s];

		g_string_append_printf(o, "# HELP %s %s.\n# TYPE %s %s\n", x->name, x->help,
				       x->name, x->type);
		for (guint i = 0; i < lab->len; i++)
			prom_value(o, x->name, g_ptr_array_index(lab, i), NULL, x->k, x->scale, NULL,
				   NULL);
		prom_value(o, x->name, NULL, other, x->k, x->scale, NULL, NULL);
	}
	g_string_append(o, "# HELP qptrace_naks_total NAKs by kind (AETH NAK code).\n"
			   "# TYPE qptrace_naks_total counter\n");
	for (int k = 0; k < QPT_NAK_KINDS; k++) {
		for (guint i = 0; i < lab->len; i++)
			prom_value(o, "qptrace_naks_total", g_ptr_array_index(lab, i), NULL,
				   MV_NAKS + k, 1, "kind", qpt_nak_name((unsigned)k));
		prom_value(o, "qptrace_naks_total", NULL, other, MV_NAKS + k, 1, "kind",
			   qpt_nak_name((unsigned)k));
	}
	g_string_append(o, "# HELP qptrace_ack_rtt_seconds ACK round-trip time at the capture "
			   "point (request with the A bit to the ACK covering it; Karn: never "
			   "from a resend); bucket edges within 1 %.\n"
			   "# TYPE qptrace_ack_rtt_seconds histogram\n");
	for (guint i = 0; i <= lab->len; i++) {
		const struct mconv *e = i < lab->len ? g_ptr_array_index(lab, i) : NULL;

		for (size_t b = 0; b < N_LE; b++) {
			g_snprintf(kb, sizeof(kb), "%g", rtt_le[b]);
			prom_value(o, "qptrace_ack_rtt_seconds_bucket", e, other, MV_RTT_LE + (int)b, 1,
				   "le", kb);
		}
		prom_value(o, "qptrace_ack_rtt_seconds_bucket", e, other, MV_RTT_N, 1, "le", "+Inf");
		prom_value(o, "qptrace_ack_rtt_seconds_sum", e, other, MV_RTT_SUM_NS, 1e-9, NULL, NULL);
		prom_value(o, "qptrace_ack_rtt_seconds_count", e, other, MV_RTT_N, 1, NULL, NULL);
	}
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
		"# HELP qptrace_metrics_conversations Conversations with series of their own (at most --metrics-max-conversations; the rest are in the series labelled other).\n"
		"# TYPE qptrace_metrics_conversations gauge\nqptrace_metrics_conversations %u\n"
		"# HELP qptrace_capture_received_packets_total Packets the capture received (pcap_stats ps_recv).\n"
		"# TYPE qptrace_capture_received_packets_total counter\nqptrace_capture_received_packets_total %" PRIu64 "\n"
		"# HELP qptrace_capture_dropped_packets_total Packets the capture dropped (pcap_stats: ps_drop, buffer full; ps_ifdrop, by the interface).\n"
		"# TYPE qptrace_capture_dropped_packets_total counter\n"
		"qptrace_capture_dropped_packets_total{where=\"buffer\"} %" PRIu64 "\n"
		"qptrace_capture_dropped_packets_total{where=\"interface\"} %" PRIu64 "\n"
		"# HELP qptrace_engine_renewals_total Times the engine was renewed to bound its memory (--max-conversations).\n"
		"# TYPE qptrace_engine_renewals_total counter\nqptrace_engine_renewals_total %u\n",
		m->now.frames, m->now.iba, m->now.management, m->now.malformed, m->now.cut,
		m->now.untracked, a->len, lab->len, m->cap_recv, m->cap_drop, m->cap_ifdrop,
		m->renewals);
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
	g_ptr_array_free(lab, TRUE);
	g_ptr_array_free(a, TRUE);
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
	qpt_flow_packet(m->fl, m->frame_no, ns, &pkt, &v);
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
	GPtrArray *all;

	refresh(m);
	all = qpt_flow_conversations(m->fl);
	if ((gint)all->len > m->mo->max_convs)
		renew_engine(m);
	g_ptr_array_free(all, TRUE);
	if (m->mo->interval > 0 && now >= *next_interval_us) {
		conv_lines(m, false);
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
	if (pcap_set_snaplen(p, 262144) || pcap_set_promisc(p, 1) ||
	    pcap_set_immediate_mode(p, 1) || pcap_set_timeout(p, 100) ||
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
	m->live = true;
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
	/* what is still in the buffer */
	while (pcap_dispatch(p, 1024, on_live, (u_char *)&l) > 0)
		;
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
	struct qpt_monitor_opts *mo = &qpt_monitor_opts;
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
	if (mo->metrics_max < 0 || mo->max_convs < 1 || mo->interval < 0 || mo->idle < 0 ||
	    mo->duration < 0) {
		g_printerr("qptrace monitor: --interval, --idle, --duration, "
			   "--metrics-max-conversations and --max-conversations take numbers "
			   "of 0 or more (--max-conversations: 1 or more)\n");
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
	{
		struct qpt_flow_opts fo;

		qpt_flow_opts_from(o, &fo);
		m.fl = qpt_flow_new(&fo);
	}
	m.convs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
	m.out = g_string_sized_new(1 << 16);
	if (mo->duration > 0)
		deadline = g_get_monotonic_time() + (int64_t)(mo->duration * 1e6);
	status = mo->iface ? run_live(&m, deadline) : run_dir(&m, deadline);
	end_engine(&m); /* live or -r DIR: the events the end decides */
	refresh(&m);
	if (m.http && qpt_http_wanted(m.http))
		publish_metrics(&m); /* the last numbers, to a scrape waiting for them */
	conv_lines(&m, true); /* the final summary */
	flush_out(&m);
	qpt_http_stop(m.http);
	qpt_flow_free(m.fl);
	g_hash_table_destroy(m.convs);
	g_string_free(m.out, TRUE);
	return m.write_failed ? 2 : status;
}
