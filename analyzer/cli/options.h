/* options.h - the command line's options, filled by qptrace.c's option table and passed down */
#ifndef QPT_OPTIONS_H
#define QPT_OPTIONS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "qpt_decode.h"
#include "qpt_verdict.h"

enum { QPT_TIME_REL, QPT_TIME_ABS, QPT_TIME_DELTA };

/* qptrace monitor (monitor.c): a live interface or a directory of
 * rotating capture files, events as they happen, a summary every interval,
 * Prometheus metrics.  Its options, filled by qptrace.c's option table. */
struct qpt_monitor_opts {
	gchar *iface;	     /* -i IFACE */
	gchar *dir;	     /* -r DIR */
	gboolean follow;     /* --follow: wait for DIR's files to grow and rotate */
	gdouble interval;    /* --interval S: the periodic summary (0: none) */
	gdouble idle;	     /* --idle S: a conversation idle that long expires */
	gchar *metrics;	     /* --metrics ADDR:PORT */
	gchar *metrics_auth; /* --metrics-auth FILE: USER:PASSWORD */
	gint metrics_max;    /* --metrics-max-conversations N */
	gint metrics_max_links; /* --metrics-max-links N: link series */
	gint max_convs;	     /* --max-conversations N: the engine is renewed past it */
	gdouble duration;    /* --duration S: stop after S seconds (0: never) */
	gboolean no_events;  /* --no-events */
};
/* The monitor's defaults (monitor.c). */
void qpt_monitor_opts_init(struct qpt_monitor_opts *mo);

struct opts {
	gboolean verbose, json, quiet, no_crc;
	gboolean long_report; /* summary -l: the tcptrace block per conversation */
	gchar *filter;
	gchar *rubric; /* grade: --rubric FILE */
	gchar *command;		/* grade: --command 'TOOL ARGS' */
	gchar **sets;		/* grade: --set NAME=VALUE */
	gchar *gradebook;	/* grade: --gradebook FILE.csv */
	gchar *feedback;	/* grade: --feedback DIR */
	gchar *student_pattern; /* grade: --student-pattern REGEX */
	gchar *lint;		/* grade: --lint RUBRIC */
	gchar *init_from;	/* grade: --init-from REF.pcap */
	gchar *html;		/* grade: --html FILE.html */
	gchar **ports;
	gchar **files;
	gint conv; /* --conv, -1 for all */
	gint64 qp; /* --qp QPN: conversations with this QP at either end, -1 all */
	gchar *addr; /* --addr: conversations with this endpoint address */
	gboolean each; /* analyse each file on its own */
	gchar *from, *to; /* time window */
	gchar *output; /* plot: -o FILE */
	gint count;	  /* -c N: stop after N frames (0: no limit) */
	gchar *write_file; /* packets -w FILE: the frames shown, as a pcap */
	gchar **read_files; /* -r FILE (repeatable), before the operands */
	gint top;      /* plot, summary: --top N */
	gint fail_on;  /* summary --fail-on: exit 1 at a finding this severe (-1: never) */
	gint time_mode; /* events --time: QPT_TIME_REL (default), _ABS, _DELTA */
	gdouble interval; /* summary --interval S: a table per S seconds (0: none) */
	gboolean timeline; /* plot --timeline: the --interval table as an SVG */
	guint32 max_qps; /* --max-qps N: the engine's max_halves (0: no limit) */
	guint32 cold_every; /* QPTRACE_COLD_EVERY: the engine's cold_every (0: its default) */
	gint jobs;     /* -j N: analysis threads (summary, events, packets; 0: one) */
	struct qpt_decode_opts dec;
	uint16_t port_buf[64];
	/* --cnp-dscp, --cnp-priority (-1: any), --ecn-window (ns): the
	 * engine's qpt_flow_opts (qpt_flow_qos.c); set by qptrace.c */
	gint cnp_dscp, cnp_pcp;
	gint64 ecn_window_ns;
	/* --link-speed SPEED (summary): bits per second, "100G", "25G",
	 * "400Gb/s"; PFC/PAUSE quanta become pause times.  0: not given. */
	gdouble link_bps;
	/* --vxlan-port N (repeatable, or N,M): UDP ports decoded as VXLAN
	 * beside 4789, put into dec by qpt_vxlan_ports_to() */
	uint16_t vxlan_ports[16];
	unsigned n_vxlan_ports;
	struct qpt_monitor_opts mon; /* monitor's */
};

/* --vxlan-port N (repeatable, or N,M) and --link-speed SPEED: option
 * callbacks, data the struct opts (the option group's user data). */
gboolean qpt_opt_vxlan_port(const gchar *name, const gchar *value, gpointer data,
			    GError **error);
void qpt_vxlan_ports_to(const struct opts *o, struct qpt_decode_opts *dec);
gboolean qpt_opt_link_speed(const gchar *name, const gchar *value, gpointer data,
			    GError **error);

/* --conv/--qp/--addr: is any given; parse --addr into addr_text (false
 * after a message); does a conversation (NULL: none) pass them. */
bool qpt_selecting(const struct opts *o);
bool qpt_selection_init(const struct opts *o, char addr_text[QPT_ADDR_STRLEN]);
bool qpt_conv_matches(const struct opts *o, const char *addr_text, const struct qpt_conv_ident *c);

#endif
