/* monitor_metrics.c - qptrace monitor --metrics: the Prometheus text
 * exposition of the conversation table and the link series, rendered when
 * a scrape asks and handed to the endpoint (monitor_http.c; monitor.c;
 * monitor_int.h). */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "monitor_int.h"
#include "output.h"

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
	GPtrArray *a = mon_entries_sorted(m, cmp_recent);

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
				g_snprintf(kb, sizeof(kb), "%g", mon_lat_le[e]);
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
void mon_publish_metrics(struct mon *m)
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

void mon_metrics_on_demand(struct mon *m)
{
	if (m->http && qpt_http_wanted(m->http)) {
		mon_refresh(m);
		mon_publish_metrics(m);
	}
}
