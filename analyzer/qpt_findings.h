/* qpt_findings.h - the diagnosis: what went wrong, worst first, in words
 *
 * From the conversations and totals the engine kept, findings say what an
 * operator should look at: which conversation and direction, the numbers
 * (re-sent share, time lost, NAKs, CNPs), where the loss happened (a PSN
 * gap seen at the capture point means the packet was lost before it; a
 * NAK or a resend without a gap means it was lost after it), and the
 * frames to open.  Every kind is one row of QPT_FINDINGS (key, severity,
 * title); the words of each finding are made here, the front ends print
 * them.  No I/O.
 */
#ifndef QPT_FINDINGS_H
#define QPT_FINDINGS_H

#include <glib.h>
#include <stdint.h>

#include "qpt_verdict.h"

/* X(ID, key, severity, title) in no particular order: findings are sorted
 * by severity, then by how many packets they concern. */
#define QPT_FINDINGS(X)                                                                  \
	X(LOSS_BEFORE_TAP, "loss_before_capture", WARN,                                  \
	  "packets lost between the sender and the capture point, then re-sent")         \
	X(LOSS_AFTER_TAP, "loss_after_capture", WARN,                                    \
	  "packets lost between the capture point and the receiver (NAKs, no PSN gap here)") \
	X(TIMEOUTS, "timeouts", WARN,                                                     \
	  "re-sent after a silence (ACK timeout) with no PSN gap or NAK here")           \
	X(RESENDS, "resends", WARN, "re-sent with no PSN gap, NAK or silence seen here") \
	X(UNRECOVERED_LOSS, "unrecovered_loss", WARN,                                    \
	  "PSNs missing on a transport that does not re-send (UC, UD)")                  \
	X(CAPTURE_GAPS, "capture_gaps", NOTE,                                            \
	  "PSNs missing from the capture, never NAKed or re-sent: the capture dropped them") \
	X(ERROR_NAKS, "error_naks", ERROR, "error NAKs: requests the responder refused") \
	X(RNR, "rnr", WARN, "receiver not ready (RNR NAKs): no receive posted in time")  \
	X(CONGESTION, "congestion", NOTE, "congestion: ECN-CE marks and CNPs")            \
	X(BAD_ICRC, "bad_icrc", ERROR, "packets with a bad ICRC (corrupted)")            \
	X(CAPTURE_COPIES, "capture_copies", CHAT,                                        \
	  "packets seen twice by the capture (not re-sent)")                             \
	X(CM_FAILED, "cm_failed", WARN, "connection requests that made no connection")   \
	X(TIME_BACKWARDS, "time_backwards", NOTE,                                        \
	  "timestamps going backwards (clock step or unsorted merge)")                   \
	X(MALFORMED, "malformed", WARN, "malformed RoCE/IB packets")                     \
	X(UNTRACKED, "untracked", WARN, "packets not analysed: more QPs than --max-qps")  \
	X(FRAGMENTED, "fragmented", WARN,                                                \
	  "RoCEv2 packets fragmented by IP (an IP MTU below the RoCE MTU)")              \
	X(PFC_PRIORITY_MISMATCH, "pfc_priority_mismatch", WARN,                          \
	  "PFC pauses only on priorities without RoCE data, none on the RoCE priority")  \
	X(PFC_STALLS, "pfc_stalls", NOTE,                                                \
	  "RoCE conversations that stopped sending during a PFC/PAUSE pause")                  \
	X(CNP_PRIORITY, "cnp_priority", WARN,                                            \
	  "CNPs on more than one DSCP or priority, or on another than expected")        \
	X(ECN_NO_CNP, "ecn_no_cnp", WARN, "ECN-CE marks that no CNP answered")            \
	X(MTU_MISMATCH, "mtu_mismatch", WARN,                                            \
	  "payloads larger than the CM path MTU, or the two sides' MTUs differ")        \
	X(CAPTURE_INCOMPLETE, "capture_incomplete", WARN,                                \
	  "the capture misses packets: a direction never seen, PSN gaps both ways that nothing re-sent, interface drops")

enum qpt_finding_kind {
#define QPT_F_ENUM(id, ...) QPT_F_##id,
	QPT_FINDINGS(QPT_F_ENUM)
#undef QPT_F_ENUM
	QPT_F_COUNT
};

struct qpt_finding_info {
	const char *key;
	enum qpt_severity severity;
	const char *title;
};
extern const struct qpt_finding_info qpt_finding_kinds[QPT_F_COUNT];
const char *qpt_severity_name(enum qpt_severity s); /* "error", "warning", ... */

#define QPT_FINDING_FRAMES 4
#define QPT_FINDING_NUMBERS 8
struct qpt_finding_number {
	const char *key; /* JSON key: "resent_packets", "time_lost_us", ... */
	double value;
};
struct qpt_finding {
	enum qpt_finding_kind kind;
	enum qpt_severity severity; /* the row's, raised when it is large */
	int32_t conv;		    /* -1: the capture as a whole */
	int8_t dir;		    /* 0 a->b, 1 b->a, -1 none */
	uint64_t weight;	    /* packets it concerns: the order within a severity */
	unsigned nframes;
	uint64_t frames[QPT_FINDING_FRAMES]; /* where to look, in frame order */
	unsigned nnumbers;
	struct qpt_finding_number numbers[QPT_FINDING_NUMBERS];
	char text[640];
};

/* Frames to name: the first few of each kind of event per conversation
 * and direction, gathered from the verdicts as the analysis goes. */
struct qpt_findings_frames;
struct qpt_findings_frames *qpt_findings_frames_new(void);
void qpt_findings_frames_free(struct qpt_findings_frames *ff);
void qpt_findings_frames_add(struct qpt_findings_frames *ff, const struct qpt_verdict *v);

struct qpt_flow;
/* The findings of the analysis, worst first (an array of struct
 * qpt_finding, the caller's).  convs: the conversations to consider
 * (struct qpt_conv *, e.g. from qpt_flow_conversations(), possibly
 * filtered); attempts: CM attempts (may be NULL); capture_wide: add the
 * findings about the capture as a whole (totals); ff may be NULL. */
GArray *qpt_findings(struct qpt_flow *fl, GPtrArray *convs, GPtrArray *attempts,
		     bool capture_wide, const struct qpt_findings_frames *ff);
/* The same over every conversation of fl that shown(c, data) accepts
 * (shown NULL: all), read one at a time without thawing any
 * (qpt_conv_walk): what a report of a million conversations uses. */
struct qpt_conv;
GArray *qpt_findings_walk(struct qpt_flow *fl,
			  bool (*shown)(const struct qpt_conv *c, void *data), void *data,
			  GPtrArray *attempts, bool capture_wide,
			  const struct qpt_findings_frames *ff);

/* Numbers as text reports write them. */
/* A duration with three significant digits in µs, ms or s: "24.0 µs",
 * "215 ms", "1.20 s". Returns buf. */
char *qpt_format_duration(int64_t ns, char *buf, size_t len);
/* The same from microseconds. */
char *qpt_format_duration_us(double us, char *buf, size_t len);
/* Bits per second with three significant digits: "3.70 Gbit/s". */
char *qpt_format_rate(double bps, char *buf, size_t len);

/* A conversation's own numbers, for the one-line-per-conversation table. */
struct qpt_conv_numbers {
	uint64_t packets, bytes, resent, episodes, cnps, ecn_ce;
	int64_t duration_ns, time_lost_ns;
	bool episodes_truncated; /* more episodes than kept: time lost is a floor */
	double throughput_bps;	 /* payload bits over the conversation's duration */
	double rtt_p50_us, rtt_p99_us; /* < 0 when no sample */
};
struct qpt_conv;
void qpt_conv_numbers(const struct qpt_conv *c, struct qpt_conv_numbers *n);
/* The table's RTT cell: "p50/p99" of n (three significant digits each,
 * "98.9 µs/214 µs"), "-" without a sample. */
char *qpt_format_rtt_p50_p99(const struct qpt_conv_numbers *n, char *buf, size_t len);
/* Time lost in go-back-N episodes of one direction (the kept episodes). */
int64_t qpt_dir_time_lost(const struct qpt_dir *d);

#endif
