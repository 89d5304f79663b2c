/* monitor.c - qptrace monitor: live capture, events as they happen,
 * periodic summaries, Prometheus metrics; and --vxlan-port for every
 * reading command.  This file: the options, the frame loop, the live
 * capture; the rest in monitor_table.c (the conversation table, links,
 * engine renewal), monitor_out.c (events, periodic summaries),
 * monitor_metrics.c (Prometheus), monitor_dir.c (-r DIR), monitor_http.c
 * (the endpoint); what they share in monitor_int.h. */
#include <string.h>

#include "commands.h"
#include "driver.h"
#include "monitor_http.h"
#include "monitor_int.h"
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
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>

#include "qpt_findings.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"
#include "qpt_verdict.h"

void qpt_monitor_opts_init(struct qpt_monitor_opts *mo)
{
	*mo = (struct qpt_monitor_opts){
		.interval = 10, .idle = 300, .metrics_max = 100, .metrics_max_links = 256,
		.max_convs = 4096,
	};
}

volatile sig_atomic_t mon_stop_signal;

static void on_signal(int sig)
{
	if (sig == SIGINT && mon_stop_signal == SIGINT) {
		/* the second Ctrl-C: die of it, as without the handler */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	mon_stop_signal = sig;
}

/* How a run that ended without an error exits: 130 after Ctrl-C (as every
 * command: the input was cut short), 0 at the end of -r DIR, --duration or
 * SIGTERM (a service manager's stop). */
int mon_stopped_status(void)
{
	return mon_stop_signal == SIGINT ? 130 : 0;
}

/* ---- the frames ------------------------------------------------------------ */

void mon_on_frame(struct mon *m, uint32_t linktype, int64_t ns, const uint8_t *data,
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
		uint16_t li = mon_frame_link(m, &pkt);
		struct mlink *l = g_ptr_array_index(m->links, li);

		l->frames++;
		if (ns > l->last_ns)
			l->last_ns = ns;
		if (v.conv >= 0 && v.dir >= 0 && v.dir < 2) {
			struct acct *a = mon_acct_of(m, v.conv);

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
			mon_event_line(m, &v.ev[i]);
		mon_renew_engine(m);
		return;
	}
	if (!m->mo->no_events)
		for (unsigned i = 0; i < v.nevents; i++)
			mon_event_line(m, &v.ev[i]);
	if (m->out->len > 1 << 16)
		mon_flush_out(m);
}

struct live {
	struct mon *m;
	uint32_t linktype;
};

static void on_live(u_char *user, const struct pcap_pkthdr *h, const u_char *data)
{
	struct live *l = (struct live *)user;

	mon_on_frame(l->m, l->linktype, (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec * 1000,
		     data, h->caplen, h->len);
}

/* Every second: the engine's view into the tables; every interval: the
 * periodic summary.  (The metrics are rendered when a scrape asks:
 * mon_metrics_on_demand in the reading loops.) */
void mon_tick(struct mon *m, int64_t *next_interval_us)
{
	int64_t now = g_get_monotonic_time();

	mon_refresh(m);
	if ((gint)m->fl_convs > m->mo->max_convs)
		mon_renew_engine(m);
	if (m->mo->interval > 0 && now >= *next_interval_us) {
		mon_conv_lines(m, false);
		mon_diagnosis(m, false);
		*next_interval_us = now + (int64_t)(m->mo->interval * 1e6);
	}
	mon_flush_out(m);
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
	while (!mon_stop_signal && !m->write_failed) {
		struct pollfd pfd = { .fd = pcap_get_selectable_fd(p), .events = POLLIN };
		int64_t now;

		if (pfd.fd >= 0)
			poll(&pfd, 1, 100);
		rc = pcap_dispatch(p, 1024, on_live, (u_char *)&l);
		if (rc < 0 && rc != PCAP_ERROR_BREAK) {
			g_printerr("qptrace monitor: %s: %s\n", m->mo->iface, pcap_geterr(p));
			break;
		}
		mon_metrics_on_demand(m);
		now = g_get_monotonic_time();
		if (now >= next_tick) {
			struct pcap_stat st;

			if (pcap_stats(p, &st) == 0) {
				m->cap_recv = st.ps_recv;
				m->cap_drop = st.ps_drop;
				m->cap_ifdrop = st.ps_ifdrop;
			}
			mon_tick(m, &next_interval);
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
	return rc < 0 && rc != PCAP_ERROR_BREAK ? 2 : mon_stopped_status();
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
	m.links = g_ptr_array_new_with_free_func(mon_free_link);
	m.link_ix = g_hash_table_new(g_str_hash, g_str_equal);
	{
		gchar *base = mo->dir ? g_path_get_basename(mo->dir) : NULL;

		mon_link_index(&m, mo->iface ? mo->iface : base); /* [0]: the capture's own */
		g_free(base);
	}
	m.out = g_string_sized_new(1 << 16);
	if (mo->duration > 0)
		deadline = g_get_monotonic_time() + (int64_t)(mo->duration * 1e6);
	status = mo->iface ? run_live(&m, deadline) : mon_run_dir(&m, deadline);
	mon_end_engine(&m); /* live or -r DIR: the events the end decides */
	mon_refresh(&m);
	/* nothing opened (no such interface or folder): the error alone */
	if (m.started && m.http && qpt_http_wanted(m.http))
		mon_publish_metrics(&m); /* the last numbers, to a scrape waiting for them */
	if (m.started) {
		mon_conv_lines(&m, true); /* the final summary */
		mon_diagnosis(&m, true);
	}
	mon_flush_out(&m);
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
