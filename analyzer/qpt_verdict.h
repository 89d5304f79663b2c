/* qpt_verdict.h - what the analysis says about a packet, described once
 *
 * Every verdict kind is one row of QPT_VERDICTS below: its JSON name (also
 * the Wireshark field suffix, roce.analysis.<key>), its field label, its
 * expert-info text, group and severity, its Info-column tag, how its value
 * and details print, its plot series, and the per-direction counter that
 * counts it.  Every front end (summary, events, packets, plot, grade, the
 * plugin's hf[]/ei[] and tree) iterates this table: adding a verdict is
 * adding a row here and setting it where the engine decides it.
 *
 * Every per-direction counter is one row of QPT_DIR_COUNTERS: JSON key,
 * text row label, column title of `-z roce,qp`.
 */
#ifndef QPT_VERDICT_H
#define QPT_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qpt_names.h" /* the name tables, apart */

/* Expert-info group and severity, as Wireshark's PI_* (the plugin maps
 * them one to one). */
enum qpt_group { QPT_GRP_SEQUENCE, QPT_GRP_CHECKSUM, QPT_GRP_MALFORMED,
		 QPT_GRP_RESPONSE_CODE, QPT_GRP_PROTOCOL };
enum qpt_severity { QPT_SEV_CHAT, QPT_SEV_NOTE, QPT_SEV_WARN, QPT_SEV_ERROR };

/* What a verdict's Wireshark field holds. */
enum qpt_vvalue {
	QPT_VAL_FLAG,	 /* boolean: the verdict applies */
	QPT_VAL_COUNT,	 /* the event's count (PSN gap: missing PSNs) */
	QPT_VAL_EPISODE, /* the event's count: the 1-based episode number */
	QPT_VAL_CODE,	 /* the event's code (REJ reason) */
};

/* How the event's code prints in `events` text and JSON. */
enum qpt_vcode {
	QPT_CODE_NONE,
	QPT_CODE_NAK,	   /* text " NAME", JSON "nak":"NAME" (qpt_nak_names) */
	QPT_CODE_RNR_NAK,  /* text " timer N (D us)", JSON "rnr_timer":N */
	QPT_CODE_RNR_TIMER, /* text " timer N", JSON "rnr_timer":N */
	QPT_CODE_REASON,   /* text " reason N", JSON "reason":N */
};

/* X(ID, key, label, expert text, group, severity, Info tag, value,
 *   count key, code, detail in text, plot series, counter key, in plugin)
 *
 * key:     JSON event kind and roce.analysis.<key>
 * label:   the Wireshark field's name, also the legend/gradebook word
 * expert:  the constant expert-info text (details are in fields)
 * info:    appended to the Info column ("" for none)
 * count:   the JSON/text key of the event's count, NULL for none
 * detail:  the event's detail prints in text (a NAK's is its name, shown)
 * plot:    the series of `qptrace plot` (its data-series name), NULL for none
 * counter: the per-direction counter (QPT_DIR_COUNTERS key) or totals key
 *          ("totals." prefix) that counts events of this kind
 * plugin:  the plugin shows it on the frame (false: Wireshark itself does
 *          better, e.g. it reassembles the IPv4 fragments qptrace names)
 */
#define QPT_VERDICTS(X)                                                                  \
	X(RETRANSMISSION, "retransmission", "Retransmission",                            \
	  "Retransmission", SEQUENCE, NOTE, " [Retransmission]", FLAG, NULL, NONE, true, \
	  "retransmissions", "retransmitted_packets", true)                                    \
	X(DUPLICATE, "duplicate", "Duplicate (capture)",                                 \
	  "Duplicate packet (same PSN and contents, seen twice by the capture)",        \
	  SEQUENCE, NOTE, " [Duplicate]", FLAG, NULL, NONE, true, "duplicates",          \
	  "duplicates", true)                                                                  \
	X(PSN_GAP, "psn_gap", "PSN gap (missing PSNs)", "PSN gap", SEQUENCE, WARN,       \
	  " [PSN gap]", COUNT, "missing", NONE, true, "psn_gaps", "psn_gaps", true)            \
	X(OUT_OF_ORDER, "out_of_order", "Out of order", "Out-of-order packet", SEQUENCE, \
	  WARN, " [Out-of-order]", FLAG, NULL, NONE, true, NULL, "out_of_order", true)         \
	X(NAK, "nak", "NAK", "NAK", SEQUENCE, WARN, " [NAK]", FLAG, NULL, NAK, false,    \
	  "naks", "naks", true)                                                                \
	X(RNR_NAK, "rnr_nak", "RNR NAK", "RNR NAK (receiver not ready)", SEQUENCE, WARN, \
	  " [RNR NAK]", FLAG, NULL, RNR_NAK, true, "rnr_naks", "rnr_naks", true)               \
	X(RNR_RETRY, "rnr_retry", "Resend after RNR NAK", "Resend after an RNR NAK",     \
	  SEQUENCE, NOTE, "", FLAG, NULL, RNR_TIMER, true, NULL,             \
	  "rnr_retries", true)                                                                 \
	X(GBN_START, "gbn_episode", "Go-back-N episode", "Go-back-N episode starts",     \
	  SEQUENCE, WARN, " [Go-back-N]", EPISODE, NULL, NONE, true, "gbn_episodes",     \
	  "gbn_episodes", true)                                                                \
	X(TIMEOUT_RESEND, "timeout_resend", "Resend after a timeout",                    \
	  "Resend after a silence (local ACK timeout)", SEQUENCE, WARN, "",    \
	  FLAG, NULL, NONE, true, NULL, "timeouts", true)                                      \
	X(READ_RETRY, "read_retry", "READ retry", "READ request retried", SEQUENCE,      \
	  NOTE, "", FLAG, NULL, NONE, true, NULL, "read_retries", true)           \
	X(DUP_ACK, "duplicate_ack", "Duplicate ACK", "Duplicate ACK", SEQUENCE, NOTE,    \
	  " [Dup ACK]", FLAG, NULL, NONE, true, NULL, "dup_acks", true)                        \
	X(COALESCED_ACK, "coalesced_ack", "Coalesced ACK",                               \
	  "ACK covering several requests that asked for one", SEQUENCE, CHAT, "", FLAG,  \
	  NULL, NONE, true, NULL, "coalesced_acks", true)                                      \
	X(CNP, "cnp", "Congestion notification", "Congestion Notification Packet",       \
	  SEQUENCE, NOTE, "", FLAG, NULL, NONE, true, "cnps", "cnps", true)                    \
	X(ECN_CE, "ecn_ce", "ECN Congestion Experienced", "ECN Congestion Experienced",  \
	  SEQUENCE, NOTE, "", FLAG, NULL, NONE, true, "ecn_ce", "ecn_ce", true)                \
	X(BAD_ICRC, "bad_icrc", "Bad ICRC", "Bad ICRC", CHECKSUM, ERROR, "", FLAG, NULL, \
	  NONE, true, NULL, "bad_icrc", true)                                                  \
	X(MALFORMED, "malformed", "Malformed", "Malformed RoCE/IB packet", MALFORMED,    \
	  ERROR, "", FLAG, NULL, NONE, true, NULL, "totals.malformed", true)                   \
	X(CM_UNKNOWN, "cm_unknown_comm_id", "CM message for an unknown communication ID", \
	  "CM message for an unknown communication ID", SEQUENCE, NOTE, "", FLAG, NULL,  \
	  NONE, true, NULL, "totals.cm_unknown_comm_id", true)                                 \
	X(CM_REJECT, "cm_reject", "CM connection request rejected (reason)",             \
	  "CM connection request rejected", RESPONSE_CODE, WARN, "", CODE,      \
	  NULL, REASON, true, NULL, "totals.cm_rejects", true)                                 \
	X(IP_FRAGMENT, "ip_fragment", "IP fragment of a RoCEv2 packet",                  \
	  "RoCEv2 packet fragmented by IP (v4 or v6, not reassembled): an IP MTU below the RoCE MTU", \
	  PROTOCOL, WARN, "", FLAG, NULL, NONE, true, NULL,                              \
	  "totals.fragmented_roce_packets", false)                                 \
	X(RESPONSE_GAP, "response_gap", "READ response PSNs missing",                    \
	  "READ response PSN gap (responses lost before the capture point)", SEQUENCE,   \
	  WARN, " [Response gap]", COUNT, "missing", NONE, true, NULL, "response_gaps", true)  \
	X(NEW_SEQUENCE, "new_sequence", "New PSN sequence (QPN reused)",                 \
	  "New PSN sequence: far outside the window after a silence (QPN reused)",       \
	  SEQUENCE, NOTE, " [New sequence]", FLAG, NULL, NONE, true, NULL,               \
	  "new_sequences", true)                                                               \
	X(TIME_BACKWARDS, "time_backwards", "Timestamp before the previous frame's",     \
	  "Capture timestamp goes backwards (clock step or unsorted merge)", SEQUENCE,   \
	  WARN, " [Time backwards]", FLAG, NULL, NONE, true, NULL, "time_backwards", true) \
	X(ECN_NO_CNP, "ecn_no_cnp", "ECN-CE mark no CNP answered",                        \
	  "ECN-CE marked packet: no CNP came back for its QP within the ECN window",     \
	  SEQUENCE, WARN, " [No CNP]", FLAG, NULL, NONE, true, NULL, "ce_without_cnp", true) \
	X(CNP_PRIORITY, "cnp_priority", "CNP on an unexpected DSCP or priority",          \
	  "CNP on another DSCP or 802.1Q priority than CNPs are expected on",            \
	  PROTOCOL, WARN, " [CNP priority]", FLAG, NULL, NONE, true, NULL,               \
	  "cnp_unexpected", true)

enum {
#define QPT_V_BIT(id, ...) QPT_VB_##id,
	QPT_VERDICTS(QPT_V_BIT)
#undef QPT_V_BIT
	QPT_VB_COUNT
};
#define QPT_V(id) (1u << QPT_VB_##id)

struct qpt_verdict_info {
	const char *key, *label, *expert;
	enum qpt_group group;
	enum qpt_severity severity;
	const char *info;
	enum qpt_vvalue value;
	const char *count_key;
	enum qpt_vcode code;
	bool detail_in_text;
	const char *plot;
	const char *counter;
	bool in_plugin;
};
extern const struct qpt_verdict_info qpt_verdicts[QPT_VB_COUNT];
const char *qpt_verdict_name(unsigned kind); /* the key, "?" out of range */

/* One anomaly found in a packet. */
struct qpt_event {
	uint64_t frame;
	int64_t time_ns;
	int32_t conv;
	int8_t dir;
	unsigned kind; /* a QPT_VB_* index */
	uint32_t psn;
	uint64_t original_frame; /* first sight; trigger frame (GBN); REQ (REJ) */
	uint32_t count;	 /* PSN_GAP: missing PSNs; GBN: the episode number */
	uint32_t code;	 /* NAK code, RNR timer, REJ reason */
	int64_t duration_ns; /* GBN: time since its trigger; RNR NAK: the timer's
			      * wait; RNR retry: the wait seen; time backwards:
			      * how far before the previous frame */
	const char *detail;
};

#define QPT_MAX_EVENTS 8 /* more than a packet can have (one per kind group) */

/* The engine's answer for one packet: its conversation, its verdict flags,
 * the events (in the order found), and the links that Wireshark shows. */
struct qpt_verdict {
	uint64_t frame;	   /* the frame it is for; an event whose frame differs
			    * revises an earlier frame's verdict (see below) */
	int32_t conv;	   /* conversation id, -1 when none */
	int8_t dir;	   /* 0: a->b, 1: b->a, -1 none */
	uint32_t flags;	   /* QPT_V(...) of the events */
	uint8_t nevents;
	struct qpt_event ev[QPT_MAX_EVENTS];
	uint64_t original_frame; /* RETRANSMISSION/DUPLICATE: first sight, 0 unknown */
	uint32_t gap_psns;	 /* PSN_GAP: PSNs skipped before this one */
	uint32_t gap_first_psn;
	uint64_t acks_frame;	 /* ACK/response: the request frame it answers (RTT) */
	int64_t ack_rtt_ns;	 /* -1 when none */
	uint64_t read_request_frame; /* READ response: its request */
	uint32_t episode;	     /* 1-based go-back-N episode of the direction, 0 none */
	uint8_t trigger;	     /* GBN_START: enum qpt_trigger */
	uint64_t msg_first_frame;    /* on the packet completing a message */
	uint32_t msg_len, msg_packets;
	uint8_t msg_op; /* enum qpt_op */
	uint64_t nak_frame; /* GBN_START/RNR_RETRY: the frame that triggered it */
};
/* Events of earlier frames: a verdict may carry events whose frame is an
 * earlier one's, when what came after decided it (a PSN gap filler judged
 * out of order or the start of a go-back-N by the packet after it), and
 * the verdicts of no frame (frame UINT64_MAX) that the end of the input
 * gives (qpt_flow_end: what nothing after decided).  Their flags are not
 * in v->flags, which are the frame's own.  Front ends show them on that
 * frame (the plugin, packets, grade) or in the order given (events,
 * monitor). */

/* The event of that kind in v, or NULL. */
const struct qpt_event *qpt_verdict_event(const struct qpt_verdict *v, unsigned kind);

/* ---- per-direction counters -------------------------------------------- */

/* X(field, JSON key, text row label, a column of -z roce,qp (titled with
 * the row label's words, as summary --long names the row), text: shown even
 * when zero in both directions, where the engine keeps it: dir (each
 * direction) or rare (zero in a healthy conversation: qpt_flow_int.h)) in
 * the order they
 * print; a NULL key or
 * label is not printed there (the counter is still merged and kept). */
#define QPT_DIR_COUNTERS(X)                                                                     \
	X(packets, "packets", "packets:", true, true, dir)                                      \
	X(payload_bytes, "payload_bytes", "payload bytes:", true, true, dir)                    \
	X(bytes, NULL, NULL, false, false, dir) /* wire bytes: not printed */                   \
	X(req_packets, "request_packets", "request packets:", false, true, dir)                 \
	X(resp_packets, "response_packets", "response/ack packets:", false, true, dir)          \
	X(retransmitted_packets, "retransmitted_packets", "retransmitted packets:", true, true, rare) \
	X(psn_gaps, "psn_gaps", "PSN gaps:", true, true, rare)                                  \
	X(missing_psns, "missing_psns", "missing PSNs:", false, true, rare)                     \
	X(duplicates, "duplicates", "duplicates (capture):", false, true, rare)                 \
	X(out_of_order, "out_of_order", "out of order:", false, true, rare)                     \
	X(rnr_naks, "rnr_naks", "RNR NAKs:", true, true, rare)                                  \
	X(rnr_retries, "rnr_retries", "RNR retries:", false, false, rare)                       \
	X(read_retries, "read_retries", "READ retries:", false, false, rare)                    \
	X(gbn_episodes, "gbn_episodes", "go-back-N episodes:", true, true, rare)                \
	X(timeouts, "timeouts", "  of them timeouts:", false, true, rare)                       \
	X(acks, "acks", NULL, false, false, dir)                                                \
	X(coalesced_acks, "coalesced_acks", "coalesced ACKs:", false, true, dir)                \
	X(dup_acks, "dup_acks", "duplicate ACKs:", false, true, rare)                           \
	X(cnps, "cnps", "CNPs sent:", true, true, rare)                                         \
	X(ecn_ce, "ecn_ce", "ECN-CE packets:", true, true, rare)                                \
	X(ce_without_cnp, "ce_without_cnp", "ECN-CE without CNP:", true, false, rare)           \
	X(cnp_unexpected, "cnp_unexpected", "CNPs on unexpected DSCP/PCP:", false, false, rare) \
	X(fecn, "fecn", "FECN packets:", false, false, rare)                                    \
	X(becn, "becn", "BECN packets:", false, false, rare)                                    \
	X(bad_icrc, "bad_icrc", "bad ICRC:", true, false, dir)                                  \
	X(response_gaps, "response_gaps", "READ response gaps:", false, false, rare)            \
	X(missing_responses, "missing_responses", "missing READ responses:", false, false, rare) \
	X(new_sequences, "new_sequences", "new PSN sequences:", false, false, rare)             \
	X(time_backwards, "time_backwards", "timestamps backwards:", false, false, rare)        \
	X(malformed, NULL, NULL, false, false, rare)

struct qpt_counter_info {
	const char *key, *label;
	bool column; /* a column of -z roce,qp, titled with the label's words */
	size_t offset; /* of the uint64_t in struct qpt_dir_stats (qpt_flow.h) */
	bool always;
};
enum {
#define QPT_C_IDX(f, ...) QPT_C_##f,
	QPT_DIR_COUNTERS(QPT_C_IDX)
#undef QPT_C_IDX
	QPT_C_COUNT
};
extern const struct qpt_counter_info qpt_counters[QPT_C_COUNT];
struct qpt_dir_stats;
uint64_t qpt_counter(const struct qpt_dir_stats *d, unsigned c);

struct qpt_conv_ident;
/* The upper layer its CM service ID names, or NULL (qpt_ulp.c, qpt_ulp.h). */
const char *qpt_conv_ulp(const struct qpt_conv_ident *c);

/* ---- endpoints --------------------------------------------------------- */

struct qpt_endpoint {
	uint8_t addr[16];
	uint32_t qpn;
	uint8_t family; /* 4, 6 (IP/GID) or 'L' (LID) */
	bool qpn_known;
};
#define QPT_ADDR_STRLEN 64
/* "10.0.0.1" (IPv4, or an IPv4-mapped GID), "fe80::1" (IPv6/GID),
 * "LID 5".  Returns buf. */
char *qpt_endpoint_addr(const struct qpt_endpoint *e, char buf[QPT_ADDR_STRLEN]);
/* An endpoint with its QP: "10.0.0.1 QP 0x000011", "LID 5 QP ?" (the
 * address as qpt_endpoint_addr() writes it).  Returns buf. */
#define QPT_ENDPOINT_QP_STRLEN 96
char *qpt_format_endpoint_qp(const struct qpt_endpoint *e, char buf[QPT_ENDPOINT_QP_STRLEN]);
/* An address of 16 bytes in the family's form, as above. */
char *qpt_addr_format(const uint8_t addr[16], uint8_t family, char buf[QPT_ADDR_STRLEN]);

#endif
