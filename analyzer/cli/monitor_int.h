/* monitor_int.h - what the parts of qptrace monitor share: monitor.c
 * (options, the frame loop, live capture), monitor_table.c (the
 * conversation table, links and their series, engine renewal),
 * monitor_out.c (events and periodic summaries), monitor_metrics.c
 * (Prometheus metrics), monitor_dir.c (-r DIR [--follow]). */
#ifndef QPT_MONITOR_INT_H
#define QPT_MONITOR_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "driver.h"
#include "monitor_http.h"
#include "options.h"
#include "qpt_findings.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"
#include "qpt_verdict.h"

/* The values kept per conversation direction: counters, then the ACK RTT
 * and READ latency histograms (cumulative buckets, seconds). */
extern const double mon_lat_le[15]; /* (monitor_table.c) */
#define N_LE G_N_ELEMENTS(mon_lat_le)
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

static inline int64_t now_ns(const struct mon *m)
{
	return m->live ? g_get_real_time() * 1000 : m->last_ns;
}

/* Direction d's value k; mv(): both directions'. */
static inline uint64_t mvd(const struct mconv *e, int d, int k)
{
	return e->carry[d][k] + e->cur[d][k];
}

static inline uint64_t mv(const struct mconv *e, int k)
{
	return mvd(e, 0, k) + mvd(e, 1, k);
}

/* every JSON line names its schema (docs/schema/qptrace-monitor-1.json) */
#define MON_SCHEMA "\"schema\":\"" QPT_SCHEMA_BASE "monitor-" QPT_SCHEMA_VERSION "\","

/* monitor.c: Ctrl-C / SIGTERM, and the status they end a run with */
extern volatile sig_atomic_t mon_stop_signal;
int mon_stopped_status(void);
void mon_on_frame(struct mon *m, uint32_t linktype, int64_t ns, const uint8_t *data,
		  uint32_t caplen, uint32_t wirelen);
void mon_tick(struct mon *m, int64_t *next_interval_us);

/* monitor_table.c */
uint16_t mon_link_index(struct mon *m, const char *name);
uint16_t mon_frame_link(struct mon *m, const struct qpt_pkt *pkt);
void mon_free_link(gpointer p);
struct acct *mon_acct_of(struct mon *m, int32_t id);
void mon_refresh(struct mon *m);
void mon_end_engine(struct mon *m);
void mon_renew_engine(struct mon *m);

/* monitor_out.c */
void mon_flush_out(struct mon *m);
void mon_event_line(struct mon *m, const struct qpt_event *ev);
void mon_diagnosis(struct mon *m, bool final);
GPtrArray *mon_entries_sorted(struct mon *m, GCompareFunc cmp);
void mon_conv_lines(struct mon *m, bool final);

/* monitor_metrics.c */
void mon_publish_metrics(struct mon *m);
void mon_metrics_on_demand(struct mon *m);

/* monitor_dir.c */
int mon_run_dir(struct mon *m, int64_t deadline_us);

#endif
