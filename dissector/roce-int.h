/* roce-int.h - what the parts of the roce plugin share
 *
 *   packet-roce.c   registration, preferences, the post-dissector (finds
 *                   the packet the built-in infiniband dissector decoded,
 *                   gives it to the engine), the UDP source-port guard
 *   roce-tree.c     header fields and the protocol tree of a decoded record
 *   roce-analysis.c the engine's flow analysis: fed on the first pass, its
 *                   verdicts shown from the verdict table (qpt_verdict.h)
 *   roce-stats.c    -z roce,qp, the GUI statistics table, the conversation
 *                   filter
 *   roce-text.c     texts made without printf
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ROCE_INT_H
#define ROCE_INT_H

#include <wireshark.h>

#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>

#include "qpt_decode.h"
#include "qpt_flow.h"
#include "ws_compat.h"

/* The engine's name tables are value_strings as they are. */
G_STATIC_ASSERT(sizeof(struct qpt_name) == sizeof(value_string));
G_STATIC_ASSERT(offsetof(struct qpt_name, name) == offsetof(value_string, strptr));
#define QPT_VALS(t) VALS((const value_string *)(t))

extern int proto_roce;
extern int roce_tap;
extern qpt_ws_bool roce_pref_check_icrc;
extern qpt_ws_bool roce_pref_analyze;

/* ---- roce-analysis.c ------------------------------------------------------ */

/* A verdict's value for one kind whose field is not a flag (a PSN gap's
 * missing PSNs, a go-back-N episode's number, a REJ reason). */
typedef struct {
	guint8 kind; /* QPT_VB_* */
	guint32 value;
} roce_val_t;

/* What the engine said about one frame on the first pass, kept for every
 * pass: the verdict flags, the values of the kinds that have one, and the
 * links Wireshark shows.  Frame numbers are Wireshark's (32 bits). */
typedef struct {
	gint32 conv;	   /* conversation id then, -1 none */
	gint8 dir;	   /* 0: a->b, 1: b->a, -1 none */
	guint8 trigger;	   /* GBN_START: enum qpt_trigger */
	guint8 msg_op;	   /* enum qpt_op of the message this packet completes */
	guint8 nvals;
	guint32 flags;	   /* QPT_V() bits */
	guint32 original_frame;	    /* RETRANSMISSION/DUPLICATE: first sight */
	guint32 gap_first_psn;	    /* PSN_GAP */
	guint32 nak_frame;	    /* GBN_START: the NAK that triggered it */
	guint32 acks_frame;	    /* the request this ACK/response answers */
	guint32 acked_by;	    /* a later ACK/response that answers this request */
	guint32 read_request_frame; /* READ response: its request */
	guint32 msg_first_frame, msg_len, msg_packets;
	gint64 ack_rtt_ns;	    /* -1 when none */
	const char *ulp;	    /* the upper layer its CM service ID names, or NULL */
	roce_val_t *vals;	    /* nvals of them, file scope; NULL when none */
} roce_frame_t;

void roce_analysis_register(void);
/* Group, severity and text of a verdict kind's expert info, from its row. */
void roce_expert_of_verdict(expert_field_info *e, unsigned kind);
void roce_analysis_init(void);
void roce_analysis_cleanup(void);
/* The frame's record: made on the first pass (the packet fed to the
 * engine), looked up on the others; NULL when the analysis is off.  A
 * frame with no verdict or link stores no record (roce-analysis.c, per-frame
 * storage): what is returned for it lives in the packet's scope. */
roce_frame_t *roce_analyse(packet_info *pinfo, const struct qpt_pkt *pkt);
const roce_frame_t *roce_frame_info(packet_info *pinfo);
/* The frame's stream and analysis items; lean: roce_lean() of this frame,
 * worked out once by roce_show() (its hidden items are left out). */
void roce_show_analysis(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			proto_item *top, const roce_frame_t *fi, gboolean lean);
/* The file's engine (NULL before the first file), finished once asked. */
struct qpt_flow *roce_flow(void);
void roce_flow_finish(void);
/* Wireshark's expert severity of an engine severity. */
int roce_pi_severity(enum qpt_severity s);
/* roce-findings.c: the engine's findings on the frames they name, after
 * the first sequential pass; the verdicts of the first pass note their
 * events' frames. */
void roce_findings_register(void);
void roce_findings_note(const struct qpt_verdict *v);
void roce_show_findings(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree);
/* The id conversation conv has now (it may have been folded into another). */
gint32 roce_conv_id(gint32 conv);
/* Where frame num's IBA packet is (packet-roce.c), stored in its slot for
 * the file: put once, on the first pass that locates it. */
void roce_loc_put(guint32 num, guint ds_index, gint32 off);
gboolean roce_loc_get(guint32 num, guint *ds_index, gint32 *off);
/* Whether this frame's hidden items can be left out: nothing would print
 * or look them up (tshark -V, nothing referenced; packet-roce.c).  Asked
 * once a frame (roce_show()). */
gboolean roce_lean(void);

/* ---- roce-tree.c ---------------------------------------------------------- */

extern int hf_roce_ulp; /* roce.ulp: the upper layer a CM service ID names */

void roce_tree_register(void);
int roce_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
	      const struct qpt_pkt *pkt);
proto_item *roce_add_gen(proto_tree *t, int hf, tvbuff_t *tvb, guint64 v);
void roce_tree_handoff(void);

/* ---- roce-text.c ---------------------------------------------------------- */

/* Text without printf (the top line and the stream's line are made on every
 * frame: printf's conversions cost more than the rest of the line).  Each
 * writes at p, NUL-terminates and returns p's end; the callers' buffers
 * hold the longest text. */
static inline char *roce_put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	*p = '\0';
	return p;
}

static inline char *roce_put_dec(char *p, guint32 v)
{
	char t[10];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = t[--n];
	*p = '\0';
	return p;
}

static inline char *roce_put_hex6(char *p, guint32 v) /* as %06x */
{
	static const char hex[] = "0123456789abcdef";
	char t[8];
	int n = 0;

	do
		t[n++] = hex[v & 0xf];
	while ((v >>= 4) != 0);
	while (n < 6)
		t[n++] = '0';
	while (n)
		*p++ = t[--n];
	*p = '\0';
	return p;
}

/* p <- "V (S)" (decimal); p holds 13 + strlen(s). */
static inline char *roce_put_dec_paren(char *p, guint32 v, const char *s)
{
	return roce_put_str(roce_put_str(roce_put_str(roce_put_dec(p, v), " ("), s), ")");
}

/* The buffer of it's text (ITEM_LABEL_LENGTH bytes, empty), to be written
 * without printf instead of proto_item_set_text(); NULL when Wireshark would
 * make no text (the tree not visible, the item hidden). */
char *roce_label(proto_item *it);

/* ---- roce-pfc.c ----------------------------------------------------------- */

/* Fields, expert info, the link_speed preference (on the roce module m). */
void roce_pfc_register(module_t *m);
/* A MAC control frame (macc decoded it): the engine's PFC/PAUSE analysis. */
int roce_pfc_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree);

/* ---- roce-stats.c --------------------------------------------------------- */

void roce_stats_register(void);

#endif
