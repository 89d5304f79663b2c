/* cli.h - the qptrace command line front end */
#ifndef QPT_CLI_H
#define QPT_CLI_H

#include <glib.h>
#include <stdio.h>

#include "qpt_decode.h"
#include "qpt_verdict.h"

/* One capture file being read, frame by frame. */
struct qpt_reader;

struct qpt_frame {
	const char *file;
	uint64_t number; /* 1-based, as Wireshark numbers frames */
	int64_t ts_sec;
	uint32_t ts_nsec;
	uint32_t linktype;
	const uint8_t *data;
	uint32_t caplen, wirelen;
	bool matched; /* passed the BPF filter and (unless window_selects)
		       * the time window; from qpt_input_next(), data is NULL
		       * for the others */
	bool in_window; /* inside --from/--to (true without them) */
	/* Set when the reading thread has decoded the frame already (see
	 * qpt_input_opts.decode); data is then NULL. */
	const struct qpt_pkt *pkt;
	uint64_t file_number; /* number inside its own file */
	uint32_t file_index;  /* which of the files (0 first): its capture point */
};

/* Errors of the reader: one message naming the file and the problem. */
#define QPT_READER_ERROR qpt_reader_error_quark()
GQuark qpt_reader_error_quark(void);
enum qpt_reader_error {
	QPT_READER_ERROR_OPEN,	   /* cannot open (missing, permissions, ...) */
	QPT_READER_ERROR_FORMAT,   /* not a capture libpcap reads */
	QPT_READER_ERROR_LINKTYPE, /* a link type without RoCE/IB */
	QPT_READER_ERROR_FILTER,   /* the BPF expression does not compile */
	QPT_READER_ERROR_READ,	   /* cut or corrupt mid-file */
};
/* Adds e to errors (a GPtrArray of GError, or NULL: e is freed). */
void qpt_errors_add(GPtrArray *errors, GError *e);
/* Prints each error as one "qptrace: MESSAGE" line on stderr and empties
 * the array; 2 when there was any, else 0. */
int qpt_errors_print(GPtrArray *errors);

/* Opens file ("-" for stdin); NULL and *error set on failure. */
struct qpt_reader *qpt_reader_open(const char *file, const char *bpf, GError **error);
/* 1 with a frame, 0 at the end, -1 on a read error (*error set). */
int qpt_reader_next(struct qpt_reader *r, struct qpt_frame *f, GError **error);
void qpt_reader_close(struct qpt_reader *r);
/* Bytes read so far and the file's size (0 when unknown, e.g. stdin). */
void qpt_reader_position(struct qpt_reader *r, uint64_t *done, uint64_t *size);

/* Several files read as one timeline, merged by timestamp as mergecap
 * does; frames are numbered along the timeline (frame.number) and keep
 * their number in their own file (file_number). */
struct qpt_input;
struct qpt_input_opts {
	const char *bpf;
	bool progress;	     /* a progress line on stderr (only on a tty) */
	bool has_from, has_to; /* time window; from/to in ns since the epoch, */
	int64_t from_ns, to_ns; /* or relative to the first frame when < 1e18 */
	bool from_rel, to_rel;
	/* The window selects what is shown, not what is analysed: frames
	 * outside it stay matched, with in_window false. */
	bool window_selects;
	/* When set, the reading thread may decode frames with these options
	 * itself, while the analysing thread is behind: see qpt_frame.pkt. */
	const struct qpt_decode_opts *decode;
};
/* Opens every file; those that fail are skipped, their errors added to
 * errors (see qpt_errors_add).  NULL when none could be opened. */
struct qpt_input *qpt_input_open(gchar **files, const struct qpt_input_opts *o,
				 GPtrArray *errors);
/* 1 with a frame, 0 at the end of every file; a read error ends that file
 * only and is added to errors (by the end of the input at the latest). */
int qpt_input_next(struct qpt_input *in, struct qpt_frame *f, GPtrArray *errors);
void qpt_input_close(struct qpt_input *in);
/* A plain (uncompressed) pcapng file's Interface Statistics Blocks: the
 * latest isb_ifdrop / isb_osdrop of each interface of each section (any
 * number of them, each section in its own byte order), summed.  False when
 * the file is not such a file or has none.  An ISB naming an interface its
 * section does not describe is not counted; *note (when note is not NULL;
 * g_free it) then says so, once, naming the file. */
bool qpt_pcapng_drops(const char *path, uint64_t *ifdrop, uint64_t *osdrop, gchar **note);
/* The names of the files that could be opened, joined by " + ". */
gchar *qpt_input_label(const struct qpt_input *in);
/* Parses --from/--to: seconds since the epoch, +seconds from the first
 * frame, or an ISO 8601 date and time. */
bool qpt_parse_time(const char *s, int64_t *ns, bool *relative);

enum { QPT_TIME_REL, QPT_TIME_ABS, QPT_TIME_DELTA };

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
	 * engine's qpt_flow_opts (qpt_ecn.c); set by qptrace.c */
	gint cnp_dscp, cnp_pcp;
	gint64 ecn_window_ns;
};
/* The engine's options from the command line's (ECN/CNP ones). */
struct qpt_flow_opts;
void qpt_flow_opts_from(const struct opts *o, struct qpt_flow_opts *fo);

/* --vxlan-port N (repeatable, or N,M): UDP ports decoded as VXLAN beside
 * 4789; qpt_vxlan_ports_to() puts them into the decoding options (monitor.c). */
gboolean qpt_opt_vxlan_port(const gchar *name, const gchar *value, gpointer data,
			    GError **error);
void qpt_vxlan_ports_to(struct qpt_decode_opts *dec);

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
extern struct qpt_monitor_opts qpt_monitor_opts;
int cmd_monitor(struct opts *o);

/* The metrics endpoint (monitor_http.c, with libmicrohttpd): deadlines,
 * connection caps, one shared rendering per scrape interval.  The
 * monitor's thread renders when qpt_http_wanted() says a scrape waits for
 * it and hands the text over with qpt_http_publish(). */
struct qpt_http;
struct qpt_http_stats {
	uint64_t scrapes, renderings;
	uint64_t headers_deadline, send_deadline, evicted; /* connections cut */
};
/* NULL after a message on stderr (a bad address, a port in use, an
 * unreadable --metrics-auth file). */
struct qpt_http *qpt_http_start(const char *listen, const char *auth_file);
bool qpt_http_wanted(struct qpt_http *h);
/* Takes text (g_malloc'd): shared by every reader until the next one is
 * published and its last reader is done. */
void qpt_http_publish(struct qpt_http *h, char *text, size_t len);
void qpt_http_get_stats(struct qpt_http *h, struct qpt_http_stats *st);
void qpt_http_stop(struct qpt_http *h);

int cmd_summary(struct opts *o);
/* An event after its frame and time, as `events` writes it (report.c):
 * JSON keys from ",\"conv\"" to the closing brace, or the text from
 * " conv" to the newline; conv: the id to show.  The monitor's too. */
struct qpt_event;
void qpt_event_words(GString *o, const struct qpt_event *ev, int32_t conv, bool json);

/* Every JSON document names its schema, docs/schema/<name>.json: "schema":
 * "qptrace-summary-1".  The version goes up when a member is removed or
 * changes meaning; new members may come within a version (README). */
#define QPT_SCHEMA_BASE "qptrace-"
#define QPT_SCHEMA_VERSION "1"

/* The diagnosis as text, for summary and monitor: the findings rolled up
 * (qpt_findings_groups()), a group a line with the conversations it names
 * and the next step.  verbose: every group, every conversation, then every
 * finding; else at most max_lines lines (0: no limit; the groups that do
 * not fit are counted, "and N more groups (-v)") and top conversations a
 * group (0: 5).  Returns the lines written. */
struct qpt_diag_opts {
	bool verbose;
	int top;
	unsigned max_lines;
};
guint qpt_diagnosis_text(GString *o, const GArray *fs, const GArray *groups,
			 const struct qpt_diag_opts *d);
/* The same as JSON members: ,"groups":[...],"findings":[...] */
void qpt_diagnosis_json(GString *o, const GArray *fs, const GArray *groups);
/* ns since the epoch in ISO 8601 UTC with microseconds:
 * "2024-01-01T00:00:00.000001Z", or (date false) "00:00:00.000001". */
void qpt_format_iso(GString *o, int64_t ns, bool date);
/* --link-speed SPEED (summary): bits per second, "100G", "25G", "400Gb/s";
 * PFC/PAUSE quanta become pause times (report.c).  0: not given. */
extern double qpt_link_bps;
gboolean qpt_opt_link_speed(const gchar *name, const gchar *value, gpointer data,
			    GError **error);
bool qpt_input_opts_from(const struct opts *o, struct qpt_input_opts *io);

/* The reading loop of summary, events and plot: the files as one timeline,
 * every matched frame decoded and fed to fl, then fn (may be NULL) with the
 * verdict.  *t0 is the first frame's time (matched or not), set before the
 * engine sees a frame.  Returns 0, or 2 when a file could not be read (the
 * others are).  With progress, a progress line unless --quiet.  Errors are
 * printed on stderr, or with keep_errors added there instead. */
struct qpt_flow;
struct qpt_conv_ident;
typedef void (*qpt_frame_fn)(void *user, const struct qpt_frame *f, int64_t ns,
			     const struct qpt_pkt *pkt, const struct qpt_verdict *v);
struct qpt_analysis {
	int64_t t0;	/* time of the first frame read (ns), when have_t0 */
	bool have_t0;
	bool opened; /* some file could be opened (and label is set) */
	gchar *label; /* the files opened, joined by " + " (the caller frees) */
	bool stop;    /* set by the frame function: read no further (a write failed) */
	/* --from/--to select what is shown; everything is analysed (the
	 * frame function sees qpt_frame.in_window) */
	bool window_selects;
	bool need_data; /* the frame function needs the frame's bytes (-w) */
	bool own_count; /* the frame function applies -c itself (packets) */
	uint64_t frames_read; /* every frame read, matched or not */
	uint64_t frames_matched; /* those -f matched (what -c counts) */
	bool count_reached; /* -c N stopped the reading */
	bool interrupted;   /* Ctrl-C stopped the reading: results are partial */
};
int qpt_analyse_files(const struct opts *o, gchar **files, bool progress,
		      struct qpt_flow *fl, struct qpt_analysis *an,
		      qpt_frame_fn fn, void *user, GPtrArray *keep_errors);
int cmd_events(struct opts *o);
int cmd_packets(struct opts *o);

/* --conv/--qp/--addr: is any given; parse --addr into addr_text (false
 * after a message); does a conversation (NULL: none) pass them. */
bool qpt_selecting(const struct opts *o);
bool qpt_selection_init(const struct opts *o, char addr_text[QPT_ADDR_STRLEN]);
bool qpt_conv_matches(const struct opts *o, const char *addr_text, const struct qpt_conv_ident *c);
int cmd_grade(struct opts *o);
int cmd_plot(struct opts *o);
/* plot --timeline: the files' interval table (summary --interval; without
 * it, intervals that double until at most 512 cover the capture) drawn as
 * an SVG into svg.  0, or 2 after a message (a file not read). */
int qpt_timeline_svg(struct opts *o, GString *svg);

/* Output of one decoded frame. */
enum qpt_print_mode { QPT_PRINT_LINE, QPT_PRINT_VERBOSE, QPT_PRINT_JSON };
void qpt_print_pkt(GString *out, const struct qpt_frame *f,
		   const struct qpt_pkt *pkt, enum qpt_print_mode mode,
		   double t0);
/* The same with the analysis' verdict v (may be NULL): the Info column's
 * tags in text, conv, dir, the verdict kinds and the ACK RTT sample in
 * JSON; -v names each verdict's linked frame as events does. */
void qpt_print_pkt_v(GString *out, const struct qpt_frame *f, const struct qpt_pkt *pkt,
		     enum qpt_print_mode mode, double t0, const struct qpt_verdict *v);
/* What an event's original_frame is to events of kind: "trigger" (go-back-N,
 * timeout resend), "REQ" (REJ), "RNR NAK" (RNR retry), else "original". */
const char *qpt_event_link_name(unsigned kind);
/* Address of the IBA packet's source/destination: IP, GID or LID. */
void qpt_format_addr(const struct qpt_pkt *pkt, bool src, char *buf, size_t len);
void qpt_json_escape(GString *out, const char *s);
/* g_string_append_printf() without its allocation (GLib formats into a
 * new string, then copies it) for what fits in 256 bytes: a summary of a
 * million conversations makes a hundred million such calls. */
void qpt_appendf(GString *out, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Writes out to standard output and empties it; 0, or 2 after one line on
 * stderr naming what (e.g. "standard output") and the error. */
int qpt_write_out(GString *out, const char *what);

/* Output files (outfile.c).  The files a command reads, by device and
 * inode; "-" is standard input when it is a file.  Files that do not
 * exist are left out (the reader reports them). */
struct qpt_inputs;
struct qpt_inputs *qpt_inputs_new(void);
void qpt_inputs_add(struct qpt_inputs *in, const char *file);
void qpt_inputs_add_all(struct qpt_inputs *in, gchar **files);
void qpt_inputs_free(struct qpt_inputs *in);
/* True, after one line on stderr naming both ("qptrace CMD: OPT OUTPUT is
 * the input IN ..."), when output is one of the inputs: the same file, a
 * symbolic link to it or a hard link.  Called before anything is opened
 * for writing. */
bool qpt_output_names_input(const struct qpt_inputs *in, const char *cmd, const char *opt,
			    const char *output);
/* An output file written to a temporary file beside it and renamed into
 * place by qpt_outfile_commit() once complete, flushed and synced: a
 * failed write leaves no file and an older one intact.  "-" is standard
 * output.  NULL and *error (the reason, e.g. "No space left on device")
 * when it cannot be made. */
struct qpt_outfile;
struct qpt_outfile *qpt_outfile_open(const char *path, GError **error);
FILE *qpt_outfile_stream(const struct qpt_outfile *f);
/* Whether a write into the stream failed (its error kept for the commit):
 * a writer may stop early. */
bool qpt_outfile_failed(struct qpt_outfile *f);
/* Ends the file: in place, or false, *error set and nothing left behind.
 * Frees f either way. */
bool qpt_outfile_commit(struct qpt_outfile *f, GError **error);
/* Drops the file (the temporary file removed); frees f. */
void qpt_outfile_abort(struct qpt_outfile *f);
/* The whole of data as path, through the above. */
bool qpt_write_file(const char *path, const void *data, size_t len, GError **error);
/* Temporary files removed when a signal (SIGTERM, SIGHUP, SIGQUIT, and
 * SIGINT, SIGPIPE, SIGXFSZ when not handled or ignored) ends qptrace:
 * path kept until qpt_tmp_unguard(slot); qpt_tmp_remove_all() is
 * async-signal-safe (the second Ctrl-C calls it). */
int qpt_tmp_guard(const char *path);
void qpt_tmp_unguard(int slot);
void qpt_tmp_remove_all(void);

/* qpt_format_endpoint_qp(): qpt_verdict.h */

/* Nanoseconds since the epoch as seconds with six decimals, the sign in
 * front of the whole ("-0.000001", never "-1.999999"). */
void qpt_format_epoch(GString *out, int64_t ns);
/* Seconds the nanosecond arithmetic holds (int64: about +-292 years). */
#define QPT_MAX_SECONDS 9223372035LL
/* A frame's time in nanoseconds; false when it does not fit. */
bool qpt_frame_ns(int64_t sec, uint32_t nsec, int64_t *ns);

/* Compressed captures (decompress.c): what the first bytes say; whether
 * this build reads it; a stream reading fd decompressed, the prefix bytes
 * (already read from fd) first.  *handle gives the compressed position. */
enum qpt_compression { QPT_COMP_NONE, QPT_COMP_GZIP, QPT_COMP_ZSTD, QPT_COMP_XZ,
		       QPT_COMP_BZIP2, QPT_COMP_LZ4 };
enum qpt_compression qpt_compression_of(const uint8_t *magic, size_t n);
const char *qpt_compression_name(enum qpt_compression c);
bool qpt_compression_supported(enum qpt_compression c);
FILE *qpt_decompress_open(int fd, const uint8_t *prefix, size_t nprefix,
			  enum qpt_compression kind, void **handle);
uint64_t qpt_decompress_raw_pos(const void *handle);
/* Why the stream ended before the end of a clean compressed file, or NULL
 * (g_free it): "trailing data at offset N (...)", "corrupt gzip data found
 * at offset N (zlib: ...)", "truncated ...".  Every byte decoded before it was
 * read first.  file_size: the compressed file's, when known (else 0). */
gchar *qpt_decompress_error(const void *handle, uint64_t file_size);

/* Ctrl-C (interrupt.c): set by the first SIGINT once installed; the
 * reading thread stops at it, and QPT_WAKE_SIGNAL wakes it from a blocked
 * read.  A second SIGINT quits at once. */
#include <signal.h>
extern volatile sig_atomic_t qpt_interrupted;
#define QPT_WAKE_SIGNAL SIGUSR2
void qpt_interrupt_install(void);


/* Hand-offs between threads through a GAsyncQueue.  ThreadSanitizer does
 * not see GLib's futex-based GMutex (every hand-off looks like a race), so
 * a -Db_sanitize=thread build tells it: what is pushed was released by the
 * pusher and is acquired by the popper. */
#if defined(__SANITIZE_THREAD__)
#define QPT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QPT_TSAN 1
#endif
#endif
#ifdef QPT_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static inline void qpt_queue_push(GAsyncQueue *q, gpointer p)
{
	__tsan_release(p);
	g_async_queue_push(q, p);
}
static inline gpointer qpt_queue_got(gpointer p)
{
	if (p)
		__tsan_acquire(p);
	return p;
}
#define qpt_queue_pop(q) qpt_queue_got(g_async_queue_pop(q))
#define qpt_queue_timeout_pop(q, us) qpt_queue_got(g_async_queue_timeout_pop(q, us))
#define qpt_queue_try_pop(q) qpt_queue_got(g_async_queue_try_pop(q))
#else
#define qpt_queue_push g_async_queue_push
#define qpt_queue_pop g_async_queue_pop
#define qpt_queue_timeout_pop g_async_queue_timeout_pop
#define qpt_queue_try_pop g_async_queue_try_pop
#endif

#endif
