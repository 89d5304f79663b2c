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

struct qpt_tunnel_id;

/* X(ID, key, severity, title, next step) in no particular order: findings
 * are sorted by severity, then by how many packets they concern.  The next
 * step is the one thing to check first, printed with the finding (text,
 * JSON) and listed in the man page. */
#define QPT_FINDINGS(X)                                                                  \
	X(LOSS_BEFORE_TAP, "loss_before_capture", WARN,                                  \
	  "packets lost between the sender and the capture point, then re-sent",        \
	  "read the discard and error counters (switch ports, the sender's NIC: ethtool -S) " \
	  "on the path from the sending hosts to the capture point, and the PFC/ECN setting " \
	  "of the RoCE priority on it")                                                   \
	X(LOSS_AFTER_TAP, "loss_after_capture", WARN,                                    \
	  "packets lost between the capture point and the receiver (NAKs, no PSN gap here)", \
	  "read the discard and error counters on the path from the capture point to the " \
	  "receiving hosts (their switch ports; the NIC's rx_discards, out_of_buffer)")    \
	X(TIMEOUTS, "timeouts", WARN,                                                     \
	  "re-sent after a silence (ACK timeout) with no PSN gap or NAK here",           \
	  "read the receiver's NIC counters (out_of_sequence, local_ack_timeout_err, "     \
	  "rx_discards) and the ports after the capture point, both ways (an ACK lost "    \
	  "on the way back times out too)")                                               \
	X(RESENDS, "resends", WARN, "re-sent with no PSN gap, NAK or silence seen here", \
	  "capture nearer the receiver, or read its NIC counters (out_of_sequence, "      \
	  "rx_discards): the NAKs that asked for these resends were not seen here")       \
	X(UNRECOVERED_LOSS, "unrecovered_loss", WARN,                                    \
	  "PSNs missing on a transport that does not re-send (UC, UD)",                  \
	  "read the discard and error counters between the sender and the capture point; " \
	  "UC and UD do not re-send: the application lost those messages")                \
	X(CAPTURE_GAPS, "capture_gaps", NOTE,                                            \
	  "PSNs missing from the capture, never NAKed or re-sent: the capture dropped them", \
	  "check the capture path: the capturing NIC's drops (ethtool -S), the mirror "   \
	  "session's drops, pcapng statistics; a larger buffer (-B), a filter or a snap length") \
	X(ERROR_NAKS, "error_naks", ERROR, "error NAKs: requests the responder refused", \
	  "check the responder's memory registrations and QP attributes (access flags, " \
	  "R_Key, lengths) for the refused operations: an application error, not the network") \
	X(RNR, "rnr", WARN, "receiver not ready (RNR NAKs): no receive posted in time",  \
	  "post receive buffers earlier on the receiver (a deeper receive queue, an SRQ), " \
	  "or raise its min_rnr_timer")                                                   \
	X(CONGESTION, "congestion", NOTE, "congestion: ECN-CE marks and CNPs",            \
	  "read the ECN marking thresholds and DCQCN settings of the RoCE priority on the " \
	  "switches towards the receivers; look for an incast onto them")                 \
	X(BAD_ICRC, "bad_icrc", ERROR, "packets with a bad ICRC (corrupted)",            \
	  "read the FCS and symbol error counters of the links before the capture point " \
	  "(cables, optics); when every ICRC is bad, the capture path strips or rewrites " \
	  "them: run with --no-crc")                                                      \
	X(CAPTURE_COPIES, "capture_copies", CHAT,                                        \
	  "packets seen twice by the capture (not re-sent)",                             \
	  "nothing to fix: the capture sees packets twice (a mirror of both directions, " \
	  "merged captures); the counts leave the copies out")                            \
	X(CM_FAILED, "cm_failed", WARN, "connection requests that made no connection",   \
	  "read the REJ reasons (qptrace events) and check the listener on the responder " \
	  "(its service ID and port, the rdma_cm logs)")                                  \
	X(TIME_BACKWARDS, "time_backwards", NOTE,                                        \
	  "timestamps going backwards (clock step or unsorted merge)",                   \
	  "merge the captures sorted by time (mergecap), or check the capture host's "   \
	  "clock (PTP/NTP steps)")                                                        \
	X(MALFORMED, "malformed", WARN, "malformed RoCE/IB packets",                     \
	  "open the frames (qptrace events, qptrace packets -v): a snap length cutting " \
	  "them, or a sender writing bad headers")                                        \
	X(UNTRACKED, "untracked", WARN, "packets not analysed: more QPs than --max-qps", \
	  "run again with a larger --max-qps, or without it")                            \
	X(FRAGMENTED, "fragmented", WARN,                                                \
	  "RoCEv2 packets fragmented by IP (an IP MTU below the RoCE MTU)",              \
	  "raise the IP MTU on the path above the RoCE MTU plus headers, or lower the RoCE MTU") \
	X(PFC_PRIORITY_MISMATCH, "pfc_priority_mismatch", WARN,                          \
	  "PFC pauses only on priorities without RoCE data, none on the RoCE priority",  \
	  "enable PFC on the RoCE priority on the hosts and the switch (mlnx_qos --pfc, " \
	  "dcb pfc), and agree on which priority RoCE uses")                              \
	X(PFC_STALLS, "pfc_stalls", NOTE,                                                \
	  "RoCE conversations that stopped sending during a PFC/PAUSE pause",            \
	  "read the PFC pause counters of that priority (ethtool -S rx_prio*_pause, the " \
	  "switch ports) to find the congested receiver behind the pauses")               \
	X(CNP_PRIORITY, "cnp_priority", WARN,                                            \
	  "CNPs on more than one DSCP or priority, or on another than expected",        \
	  "set the same CNP DSCP and priority on every host (the NIC's cnp_dscp, "        \
	  "cnp_802p_prio) as the switches expect")                                        \
	X(ECN_NO_CNP, "ecn_no_cnp", WARN, "ECN-CE marks that no CNP answered",            \
	  "enable ECN notification (DCQCN) on the receiving hosts' NICs for the marked "  \
	  "priority")                                                                     \
	X(MTU_MISMATCH, "mtu_mismatch", WARN,                                            \
	  "payloads larger than the CM path MTU, or the two sides' MTUs differ",        \
	  "set the same path MTU on both sides (rdma_cm, ibv_modify_qp path_mtu), no "   \
	  "larger than the link's")                                                       \
	X(FILTER_MATCHED_NOTHING, "filter_matched_nothing", WARN,                        \
	  "the -f filter (BPF) matched no frame of the capture",                         \
	  "-f sees the outer headers of a mirror or tunnel (ERSPAN, GRE, VXLAN): select " \
	  "the inner hosts with --addr, or filter on the outer addresses")                \
	X(ROCE_OTHER_PORT, "roce_other_port", WARN,                                       \
	  "UDP datagrams that read as RoCEv2 on a port other than 4791, not decoded",     \
	  "run again with -p PORT, the port named, to decode them as RoCEv2")            \
	X(CAPTURE_INCOMPLETE, "capture_incomplete", WARN,                                \
	  "the capture misses packets: a direction never seen, PSN gaps both ways that nothing re-sent, interface drops", \
	  "capture both directions (mirror ingress and egress, or both hosts) and check " \
	  "the capture's drops (pcapng statistics, the capturing NIC's counters)")

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
	const char *next_step; /* what to check first */
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
	/* when: the first and last event it counts (ns since the epoch) */
	bool has_time;
	int64_t first_ns, last_ns;
	/* the share it states: part of whole packets (whole 0: none); whole
	 * counts sendings, each packet seen once (capture copies left out) */
	uint64_t part, whole;
	/* where: the sending and receiving host of a conversation's finding
	 * ("" for one about the capture), the 802.1Q priority of its data
	 * (-1 untagged, -2 none or several) */
	char from[QPT_ADDR_STRLEN], to[QPT_ADDR_STRLEN];
	int16_t pcp;
	/* the mirror or tunnel session of the conversation's frames (the
	 * engine's, qpt_flow_conv_tunnel()), NULL: none; several: it came
	 * under more than one */
	const struct qpt_tunnel_id *tunnel;
	bool tunnel_several;
	char text[640];
};

/* The findings rolled up: those of one kind, one 802.1Q priority and one
 * mirror or tunnel session (or none), from
 * any number of conversations, as one group, with the hosts they point to
 * and the worst of them first (qpt_rank.h's order); a finding about the
 * capture as a whole is a group of its own.  Worst first, as findings. */
#define QPT_GROUP_HOSTS 4
struct qpt_group_host {
	char addr[QPT_ADDR_STRLEN];
	uint32_t n; /* findings that name it */
};
struct qpt_finding_group {
	enum qpt_finding_kind kind;
	enum qpt_severity severity; /* the worst of its findings */
	int16_t pcp;
	const struct qpt_tunnel_id *tunnel; /* its session, NULL: none */
	bool tunnel_several; /* a conversation of it came in another too */
	bool capture_wide; /* one finding about the capture */
	uint64_t weight, part, whole;
	bool has_time;
	int64_t first_ns, last_ns;
	uint32_t nconvs; /* distinct conversations */
	/* distinct sending and receiving hosts, the most named first (at
	 * most QPT_GROUP_HOSTS kept) */
	uint32_t nsenders, nreceivers;
	struct qpt_group_host senders[QPT_GROUP_HOSTS], receivers[QPT_GROUP_HOSTS];
	GArray *members; /* guint indexes into the findings, worst first */
};
/* A finding about the capture that a front end makes (what the engine
 * cannot see: the BPF filter, the frames it never decoded), added to fs in
 * its place (worst first). */
void qpt_findings_add_capture(GArray *fs, enum qpt_finding_kind kind, const char *text,
			      uint64_t weight);

struct qpt_flow;
struct qpt_conv_stats;
struct qpt_totals;
/* What a front end counts itself (summary --from/--to: a time window's
 * numbers): conv(c, data) gives the conversation as the findings and the
 * ranking read it (the result is valid until the next call), totals
 * those of the capture-wide findings (NULL: the engine's). */
struct qpt_findings_view {
	const struct qpt_conv_stats *(*conv)(const struct qpt_conv_stats *c, void *data);
	void *data;
	const struct qpt_totals *totals;
};
/* fs: qpt_findings()' (kept as is); fl ranks the conversations (through
 * view, which may be NULL). */
GArray *qpt_findings_groups(struct qpt_flow *fl, const GArray *fs);
GArray *qpt_findings_groups_view(struct qpt_flow *fl, const GArray *fs,
				 const struct qpt_findings_view *view);
void qpt_findings_groups_free(GArray *groups);

/* Frames to name: the first few of each kind of event per conversation
 * and direction, gathered from the verdicts as the analysis goes. */
struct qpt_findings_frames;
struct qpt_findings_frames *qpt_findings_frames_new(void);
void qpt_findings_frames_free(struct qpt_findings_frames *ff);
void qpt_findings_frames_add(struct qpt_findings_frames *ff, const struct qpt_verdict *v);

struct qpt_flow;
/* The findings of the analysis, worst first (an array of struct
 * qpt_finding, the caller's).  convs: the conversations to consider
 * (struct qpt_conv_stats *, e.g. from qpt_flow_conversations(), possibly
 * filtered); attempts: CM attempts (may be NULL); capture_wide: add the
 * findings about the capture as a whole (totals); ff may be NULL. */
GArray *qpt_findings(struct qpt_flow *fl, GPtrArray *convs, GPtrArray *attempts,
		     bool capture_wide, const struct qpt_findings_frames *ff);
/* The same over every conversation of fl that shown(c, data) accepts
 * (shown NULL: all), read one at a time without thawing any
 * (qpt_conv_walk): what a report of a million conversations uses. */
struct qpt_conv_stats;
GArray *qpt_findings_walk(struct qpt_flow *fl,
			  bool (*shown)(const struct qpt_conv_ident *c, void *data), void *data,
			  GPtrArray *attempts, bool capture_wide,
			  const struct qpt_findings_frames *ff);
/* The same with each conversation and the totals read through view. */
GArray *qpt_findings_walk_view(struct qpt_flow *fl,
			       bool (*shown)(const struct qpt_conv_ident *c, void *data), void *data,
			       GPtrArray *attempts, bool capture_wide,
			       const struct qpt_findings_frames *ff,
			       const struct qpt_findings_view *view);

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
struct qpt_conv_stats;
void qpt_conv_numbers(const struct qpt_conv_stats *c, struct qpt_conv_numbers *n);
/* The table's RTT cell: "p50/p99" of n (three significant digits each,
 * "98.9 µs/214 µs"), "-" without a sample. */
char *qpt_format_rtt_p50_p99(const struct qpt_conv_numbers *n, char *buf, size_t len);
/* The table's time-lost cell: n's time lost with three significant digits
 * ("1.03 ms"), "-" when none. */
char *qpt_format_time_lost(const struct qpt_conv_numbers *n, char *buf, size_t len);
/* Time lost in go-back-N episodes of one direction (the kept episodes). */
int64_t qpt_dir_time_lost(const struct qpt_dir_stats *d);

#endif
