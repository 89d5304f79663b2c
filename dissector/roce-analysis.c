/* roce-analysis.c - the engine's sequence analysis inside Wireshark
 *
 * On the first pass every RoCE/IB packet is fed, in frame order, to one
 * qpt_flow per file (the code of `qptrace summary` / `qptrace events`).
 * What it says about a packet is kept per frame (a 16-byte slot, and a
 * roce_frame_t only for frames with a verdict or a link: see "per-frame
 * storage") and shown on every pass.  The roce.analysis.<key> expert infos
 * and value fields are made from the engine's verdict table (qpt_verdicts[],
 * qpt_verdict.h): name, label, value type, expert text, group, severity and
 * Info-column tag all come from its row, so a new verdict needs no code here.  The expert
 * text is the row's constant text, so `-z expert` has one row per kind (as
 * TCP's analysis); what differs per packet is in fields.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/proto.h>

#include "qpt_attr.h"
#include "qpt_flow.h"
#include "qpt_ulp.h"
#include "qpt_verdict.h"
#include "roce-int.h"

#include <string.h>

/* ---- per-file engine state ------------------------------------------------ */

static struct qpt_flow *flow;
static gboolean flow_finished;

/* ---- per-frame storage ------------------------------------------------------
 *
 * What later passes need of a frame, found by its number: one 16-byte slot
 * per frame, in chunks of SLOT_CHUNK frames allocated only for the numbers
 * that hold a RoCE/IB frame (a file of other traffic stores nothing).  A
 * slot says where the frame's IBA packet is (packet-roce.c: later passes
 * need not have the built-in dissector's item in their tree), and the
 * frame's conversation and direction.  The rest of roce_frame_t (verdict
 * flags, values, links, message) is stored only for the frames that have
 * any, packed: a word saying which fields are there, then those fields, a
 * 32-bit word each (two for the RTT and the pointers), in an arena of
 * 32-bit words; the slot holds the record's offset.  A frame of a WRITE
 * stream without verdicts is its slot alone; its ACK stores 16 bytes (the
 * request it answers, the RTT), the last packet of a message 24 (its
 * message, the ACK that answers it).  A record that changes size (a
 * revision from a later packet, acked_by) is written again at the end of
 * the arena; the old words stay unused until the file closes. */
#define SLOT_CHUNK_SHIFT 12
#define SLOT_CHUNK (1u << SLOT_CHUNK_SHIFT)
#define ARENA_CHUNK_SHIFT 16
#define ARENA_CHUNK (1u << ARENA_CHUNK_SHIFT)

enum { SLOT_LOC = 1, SLOT_ANALYSED = 2 };

typedef struct {
	gint32 conv;	/* the engine's conversation id then, -1 none */
	gint32 loc_off; /* SLOT_LOC: offset of the IBA packet in its data source */
	guint32 rec;	/* offset of the frame's record in the arena, 0 none */
	guint16 loc_ds; /* SLOT_LOC: index of that data source in the frame's list */
	guint8 bits;	/* SLOT_* */
	gint8 dir;
} roce_slot_t;
G_STATIC_ASSERT(sizeof(roce_slot_t) == 16);

/* The fields of a record, in the order they are packed: the 32-bit ones
 * of roce_frame_t, then R_SMALL (trigger, msg_op, nvals in one word), the
 * RTT and the two pointers (two words each). */
enum {
	R_FLAGS, R_ORIG, R_GAP, R_NAK, R_ACKS, R_ACKED_BY, R_READREQ, R_MSG_FIRST,
	R_MSG_LEN, R_MSG_PACKETS, R_U32_END = R_MSG_PACKETS,
	R_SMALL, R_RTT, R_ULP, R_VALS, R_FIELDS
};
static const size_t r_u32[R_U32_END + 1] = {
	[R_FLAGS] = offsetof(roce_frame_t, flags),
	[R_ORIG] = offsetof(roce_frame_t, original_frame),
	[R_GAP] = offsetof(roce_frame_t, gap_first_psn),
	[R_NAK] = offsetof(roce_frame_t, nak_frame),
	[R_ACKS] = offsetof(roce_frame_t, acks_frame),
	[R_ACKED_BY] = offsetof(roce_frame_t, acked_by),
	[R_READREQ] = offsetof(roce_frame_t, read_request_frame),
	[R_MSG_FIRST] = offsetof(roce_frame_t, msg_first_frame),
	[R_MSG_LEN] = offsetof(roce_frame_t, msg_len),
	[R_MSG_PACKETS] = offsetof(roce_frame_t, msg_packets),
};
G_STATIC_ASSERT(R_FIELDS <= 32);
G_STATIC_ASSERT(sizeof(gint64) == 8 && sizeof(void *) <= 8);

/* acked_by stored before the ACK comes (a request asking for one), so that
 * the ACK writes it in place; read as 0.  Frame numbers are below it. */
#define ACKED_BY_LATER G_MAXUINT32

static wmem_array_t *slot_chunks;  /* roce_slot_t *, by frame number >> SLOT_CHUNK_SHIFT */
static wmem_array_t *arena_chunks; /* guint32 *, by offset >> ARENA_CHUNK_SHIFT */
static guint32 arena_used;	   /* words handed out (offsets below it) */

static void storage_init(void)
{
	slot_chunks = wmem_array_new(wmem_file_scope(), sizeof(roce_slot_t *));
	arena_chunks = wmem_array_new(wmem_file_scope(), sizeof(guint32 *));
	arena_used = 0;
}

/* The frame's slot; with create, made (zeroed) when missing. */
static QPT_HOT roce_slot_t *slot_of(guint32 num, gboolean create)
{
	guint32 c = num >> SLOT_CHUNK_SHIFT;
	roce_slot_t **chunk;

	if (!slot_chunks)
		return NULL;
	if (c >= wmem_array_get_count(slot_chunks)) {
		roce_slot_t *none = NULL;

		if (!create)
			return NULL;
		while (wmem_array_get_count(slot_chunks) <= c)
			wmem_array_append_one(slot_chunks, none);
	}
	chunk = (roce_slot_t **)wmem_array_index(slot_chunks, c);
	if (!*chunk) {
		if (!create)
			return NULL;
		*chunk = wmem_alloc0_array(wmem_file_scope(), roce_slot_t, SLOT_CHUNK);
	}
	return &(*chunk)[num & (SLOT_CHUNK - 1)];
}

static guint32 *arena_at(guint32 off)
{
	return *(guint32 **)wmem_array_index(arena_chunks, off >> ARENA_CHUNK_SHIFT) +
	       (off & (ARENA_CHUNK - 1));
}

/* n words in one chunk; 0 when the arena's 32-bit offsets are used up (16
 * GiB of records: Wireshark's own frame data would need far more first). */
static guint32 arena_alloc(guint n)
{
	guint32 off;

	if ((arena_used & (ARENA_CHUNK - 1)) + n > ARENA_CHUNK)
		arena_used = (arena_used | (ARENA_CHUNK - 1)) + 1; /* the next chunk */
	if (!arena_used && wmem_array_get_count(arena_chunks))
		return 0; /* wrapped */
	if ((arena_used >> ARENA_CHUNK_SHIFT) >= wmem_array_get_count(arena_chunks)) {
		guint32 *chunk = wmem_alloc_array(wmem_file_scope(), guint32, ARENA_CHUNK);

		wmem_array_append_one(arena_chunks, chunk);
	}
	if (!arena_used)
		arena_used = 1; /* offset 0: no record */
	off = arena_used;
	arena_used += n;
	return off;
}

static guint32 rec_small(const roce_frame_t *fi)
{
	return (guint32)fi->trigger | (guint32)fi->msg_op << 8 | (guint32)fi->nvals << 16;
}

static guint32 u32_of(const roce_frame_t *fi, int f)
{
	guint32 v;

	memcpy(&v, (const char *)fi + r_u32[f], sizeof(v));
	return v;
}

/* Which fields fi needs stored; 0: none (the slot is enough). */
static guint32 rec_mask(const roce_frame_t *fi)
{
	guint32 m = 0;

	for (int f = 0; f <= R_U32_END; f++)
		if (u32_of(fi, f))
			m |= 1u << f;
	if (rec_small(fi))
		m |= 1u << R_SMALL;
	if (fi->ack_rtt_ns >= 0)
		m |= 1u << R_RTT;
	if (fi->ulp)
		m |= 1u << R_ULP;
	if (fi->vals)
		m |= 1u << R_VALS;
	return m;
}

static guint rec_words(guint32 m)
{
	guint n = 1;

	for (int f = 0; f < R_FIELDS; f++)
		if (m & (1u << f))
			n += f > R_SMALL ? 2 : 1;
	return n;
}

static void rec_write(guint32 *w, guint32 m, const roce_frame_t *fi)
{
	*w++ = m;
	for (int f = 0; f <= R_U32_END; f++)
		if (m & (1u << f))
			*w++ = u32_of(fi, f);
	if (m & (1u << R_SMALL))
		*w++ = rec_small(fi);
	if (m & (1u << R_RTT)) {
		memcpy(w, &fi->ack_rtt_ns, 8);
		w += 2;
	}
	if (m & (1u << R_ULP)) {
		memset(w, 0, 8);
		memcpy(w, &fi->ulp, sizeof(fi->ulp));
		w += 2;
	}
	if (m & (1u << R_VALS)) {
		memset(w, 0, 8);
		memcpy(w, &fi->vals, sizeof(fi->vals));
	}
}

/* The frame of slot s as shown: its slot, and its record when it has one. */
static void frame_read(roce_frame_t *fi, const roce_slot_t *s)
{
	const guint32 *w;
	guint32 m;

	memset(fi, 0, sizeof(*fi));
	fi->conv = s->conv;
	fi->dir = s->dir;
	fi->ack_rtt_ns = -1;
	if (!s->rec)
		return;
	w = arena_at(s->rec);
	m = *w++;
	for (int f = 0; f <= R_U32_END; f++)
		if (m & (1u << f))
			memcpy((char *)fi + r_u32[f], w++, sizeof(guint32));
	if (m & (1u << R_SMALL)) {
		fi->trigger = (guint8)*w;
		fi->msg_op = (guint8)(*w >> 8);
		fi->nvals = (guint8)(*w >> 16);
		w++;
	}
	if (m & (1u << R_RTT)) {
		memcpy(&fi->ack_rtt_ns, w, 8);
		w += 2;
	}
	if (m & (1u << R_ULP)) {
		memcpy(&fi->ulp, w, sizeof(fi->ulp));
		w += 2;
	}
	if (m & (1u << R_VALS))
		memcpy(&fi->vals, w, sizeof(fi->vals));
	if (fi->acked_by == ACKED_BY_LATER)
		fi->acked_by = 0;
}

/* Stores fi as the record of slot s: in place when its fields are the same,
 * else at the end of the arena. */
static QPT_HOT void frame_write(roce_slot_t *s, const roce_frame_t *fi)
{
	guint32 m = rec_mask(fi);

	if (!m) {
		s->rec = 0;
		return;
	}
	if (!s->rec || *arena_at(s->rec) != m)
		s->rec = arena_alloc(rec_words(m));
	if (s->rec)
		rec_write(arena_at(s->rec), m, fi);
}

/* A frame's slot, with its record read into *fi; NULL for a frame not
 * analysed. */
static QPT_HOT roce_slot_t *frame_load(guint32 num, roce_frame_t *fi)
{
	roce_slot_t *s = slot_of(num, FALSE);

	if (!s || !(s->bits & SLOT_ANALYSED))
		return NULL;
	frame_read(fi, s);
	return s;
}

/* A frame's record as shown, in the packet's scope. */
static QPT_HOT roce_frame_t *frame_view(packet_info *pinfo, guint32 num)
{
	roce_frame_t tmp, *fi;

	if (!frame_load(num, &tmp))
		return NULL;
	fi = wmem_new(pinfo->pool, roce_frame_t);
	*fi = tmp;
	return fi;
}

QPT_HOT void roce_loc_put(guint32 num, guint ds_index, gint32 off)
{
	roce_slot_t *s = slot_of(num, TRUE);

	if (s && !(s->bits & SLOT_LOC)) {
		s->loc_ds = (guint16)ds_index;
		s->loc_off = off;
		s->bits |= SLOT_LOC;
	}
}

gboolean roce_loc_get(guint32 num, guint *ds_index, gint32 *off)
{
	roce_slot_t *s = slot_of(num, FALSE);

	if (!s || !(s->bits & SLOT_LOC))
		return FALSE;
	*ds_index = s->loc_ds;
	*off = s->loc_off;
	return TRUE;
}

void roce_analysis_init(void)
{
	if (flow)
		qpt_flow_free(flow);
	flow = qpt_flow_new(NULL);
	flow_finished = FALSE;
	storage_init();
}

void roce_analysis_cleanup(void)
{
	/* The flow instance is kept until the next file (or exit) so that
	 * statistics drawn after the last packet can still read it.  The
	 * storage is in file scope. */
	slot_chunks = NULL;
	arena_chunks = NULL;
}

struct qpt_flow *roce_flow(void)
{
	return flow;
}

static void apply_revisions(packet_info *pinfo, const struct qpt_verdict *v);

/* The end's events, all of earlier frames: onto their frames' records
 * (the second pass shows them, tshark -2) and into the findings' frames. */
static void end_events(void *data _U_, const struct qpt_verdict *v)
{
	roce_findings_note(v);
	if (slot_chunks)
		apply_revisions(NULL, v);
}

void roce_flow_finish(void)
{
	if (flow && !flow_finished) {
		/* every event still undecided, then the results final */
		qpt_flow_end(flow, end_events, NULL);
		flow_finished = TRUE;
	}
}

gint32 roce_conv_id(gint32 conv)
{
	return flow && conv >= 0 ? qpt_flow_conv_id(flow, conv) : conv;
}

/* ---- fields ----------------------------------------------------------------- */

static int hf_stream = -1, hf_dir = -1;
static int hf_an_retrans_frame = -1, hf_an_psn_gap_first = -1,
	   hf_an_duplicate_frame = -1, hf_an_gbn_trigger = -1,
	   hf_an_gbn_trigger_frame = -1, hf_an_ack_rtt = -1, hf_an_acks_frame = -1,
	   hf_an_acked_by = -1, hf_an_read_response_to = -1, hf_msg_length = -1,
	   hf_msg_packets = -1, hf_msg_first_frame = -1, hf_msg_op = -1;
static int hf_an = -1, hf_an_flags = -1; /* the subtree; its verdicts (as tcp.analysis.flags) */
static gint ett_an = -1, ett_an_flags = -1;

/* Per verdict kind, from its table row, as TCP's analysis: the verdict is
 * its expert info, whose name roce.analysis.<key> is the filter
 * (tcp.analysis.retransmission); a value it carries (missing PSNs, the
 * episode's number, a REJ reason) is a field of another name,
 * roce.analysis.<key>.<value> (as tcp.analysis.duplicate_ack_num).  The
 * decoder's kinds (bad ICRC, malformed) have their expert infos on the
 * header items (roce-tree.c), with the analysis off too: their verdict is a
 * plain field (hf_verdict). */
static int hf_verdict[QPT_VB_COUNT], hf_value[QPT_VB_COUNT];
static expert_field ei_verdict[QPT_VB_COUNT];

static const int pi_group[] = {
	[QPT_GRP_SEQUENCE] = PI_SEQUENCE,
	[QPT_GRP_CHECKSUM] = PI_CHECKSUM,
	[QPT_GRP_MALFORMED] = PI_MALFORMED,
	[QPT_GRP_RESPONSE_CODE] = PI_RESPONSE_CODE,
	[QPT_GRP_PROTOCOL] = PI_PROTOCOL,
};
static const int pi_severity[] = {
	[QPT_SEV_CHAT] = PI_CHAT,
	[QPT_SEV_NOTE] = PI_NOTE,
	[QPT_SEV_WARN] = PI_WARN,
	[QPT_SEV_ERROR] = PI_ERROR,
};

/* A bad ICRC and a malformed packet are the decoder's findings: their
 * expert infos sit on the ICRC / error items of the tree (roce.icrc.bad,
 * roce.malformed, roce.truncated), also with the analysis off, and are not
 * repeated here; their verdict fields are. */
static gboolean decode_group(enum qpt_group g)
{
	return g == QPT_GRP_CHECKSUM || g == QPT_GRP_MALFORMED;
}

int roce_pi_severity(enum qpt_severity s)
{
	return pi_severity[s];
}

void roce_expert_of_verdict(expert_field_info *e, unsigned kind)
{
	const struct qpt_verdict_info *vi = &qpt_verdicts[kind];

	e->group = pi_group[vi->group];
	e->severity = pi_severity[vi->severity];
	e->summary = vi->expert;
}

/* The names a verdict's code has, for a field that holds it. */
static const struct qpt_name *code_names(enum qpt_vcode c)
{
	switch (c) {
	case QPT_CODE_NAK:
		return qpt_nak_descr;
	case QPT_CODE_REASON:
		return qpt_cm_rej_reasons;
	default:
		return NULL;
	}
}

/* The name of the field that holds a kind's value (after
 * roce.analysis.<key>.), NULL for a flag: the events' JSON key of its
 * count or code, "number" for a go-back-N episode's. */
static const char *value_suffix(const struct qpt_verdict_info *vi)
{
	switch (vi->value) {
	case QPT_VAL_COUNT:
		return vi->count_key;
	case QPT_VAL_EPISODE:
		return "number";
	case QPT_VAL_CODE:
		return vi->code == QPT_CODE_REASON ? "reason" : vi->code == QPT_CODE_NAK ? "nak" : "code";
	default:
		return NULL;
	}
}

void roce_analysis_register(void)
{
	static hf_register_info hf[] = {
		{ &hf_stream, { "Stream index", "roce.stream", FT_UINT32, BASE_DEC, NULL, 0, "qptrace conversation id (as in `qptrace summary`)", HFILL } },
		{ &hf_dir, { "Direction", "roce.direction", FT_UINT8, BASE_DEC, NULL, 0, "0: a->b, 1: b->a (as in `qptrace summary`)", HFILL } },
		{ &hf_an, { "Sequence analysis (qptrace)", "roce.analysis", FT_NONE, BASE_NONE, NULL, 0, "On every frame the analysis says something of (a verdict, a link, a message)", HFILL } },
		{ &hf_an_flags, { "Analysis flags", "roce.analysis.flags", FT_NONE, BASE_NONE, NULL, 0, "On every frame with a verdict (as tcp.analysis.flags): the roce.analysis.<verdict> fields under it", HFILL } },
		{ &hf_an_retrans_frame, { "Retransmitted frame", "roce.analysis.retransmitted_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RETRANS_PREV), 0, "First transmission of this PSN", HFILL } },
		{ &hf_an_psn_gap_first, { "First missing PSN", "roce.analysis.psn_gap.first", FT_UINT24, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_an_duplicate_frame, { "Duplicate of frame", "roce.analysis.duplicate_of", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RETRANS_PREV), 0, NULL, HFILL } },
		{ &hf_an_gbn_trigger, { "Go-back-N trigger", "roce.analysis.gbn_trigger", FT_UINT8, BASE_DEC, QPT_VALS(qpt_trigger_names), 0, "What started the go-back-N episode (as `qptrace summary` episodes[].trigger)", HFILL } },
		{ &hf_an_gbn_trigger_frame, { "Triggered by frame", "roce.analysis.gbn_trigger_frame", FT_FRAMENUM, BASE_NONE, NULL, 0, "The trigger frame qptrace events names: of a go-back-N episode or a timeout resend (the NAK, the frame before the silence, the resend itself when nothing captured started it), of a resend after an RNR NAK (that NAK)", HFILL } },
		{ &hf_an_ack_rtt, { "ACK RTT", "roce.analysis.ack_rtt", FT_RELATIVE_TIME, BASE_NONE, NULL, 0, "Time since the request this ACK answers: an ACK RTT sample of qptrace summary (none on NAKs, READ responses, atomic ACKs or ACKs of resent requests)", HFILL } },
		{ &hf_an_acks_frame, { "This is an ACK/response to frame", "roce.analysis.acks_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0, NULL, HFILL } },
		{ &hf_an_acked_by, { "Acknowledged by frame", "roce.analysis.acked_by", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0, NULL, HFILL } },
		{ &hf_an_read_response_to, { "READ response to frame", "roce.analysis.read_response_to", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0, NULL, HFILL } },
		{ &hf_msg_op, { "Message operation", "roce.message.op", FT_UINT8, BASE_DEC, QPT_VALS(qpt_op_names), 0, NULL, HFILL } },
		{ &hf_msg_length, { "Message length", "roce.message.length", FT_UINT32, BASE_DEC, NULL, 0, "Bytes of the message this packet completes", HFILL } },
		{ &hf_msg_packets, { "Message packets", "roce.message.packets", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_msg_first_frame, { "Message first frame", "roce.message.first_frame", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL, HFILL } },
	};
	static gint *ett[] = { &ett_an, &ett_an_flags };
	hf_register_info *vhf = g_new0(hf_register_info, 2 * QPT_VB_COUNT);
	ei_register_info *vei = g_new0(ei_register_info, QPT_VB_COUNT);
	int nhf = 0, nei = 0;
	expert_module_t *em;

	for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
		const struct qpt_verdict_info *vi = &qpt_verdicts[k];
		const char *suffix = value_suffix(vi);

		hf_verdict[k] = hf_value[k] = -1;
		ei_verdict[k] = (expert_field)EI_INIT;
		if (suffix) /* the value it carries: a field of its own name */
			vhf[nhf++] = (hf_register_info){ &hf_value[k], {
				vi->label, g_strdup_printf("roce.analysis.%s.%s", vi->key, suffix),
				vi->value == QPT_VAL_CODE ? FT_UINT16 : FT_UINT32, BASE_DEC,
				vi->value == QPT_VAL_CODE ? (const void *)code_names(vi->code) : NULL, 0,
				vi->value == QPT_VAL_EPISODE ? "1-based episode number of this direction" : NULL,
				HFILL } };
		if (decode_group(vi->group)) {
			/* its expert info is the decoder's, on the header item */
			vhf[nhf++] = (hf_register_info){ &hf_verdict[k], {
				vi->label, g_strdup_printf("roce.analysis.%s", vi->key), FT_BOOLEAN,
				BASE_NONE, NULL, 0, NULL, HFILL } };
			continue;
		}
		/* the verdict itself: its expert info, named roce.analysis.<key>
		 * (as tcp.analysis.retransmission): that name is its filter */
		vei[nei] = (ei_register_info){ &ei_verdict[k], {
			g_strdup_printf("roce.analysis.%s", vi->key), 0, 0, NULL, EXPFILL } };
		roce_expert_of_verdict(&vei[nei++].eiinfo, k);
	}
	proto_register_field_array(proto_roce, hf, array_length(hf));
	proto_register_field_array(proto_roce, vhf, nhf);
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_roce);
	expert_register_field_array(em, vei, nei);
}

/* ---- the first pass: feed the engine ----------------------------------------- */

/* The value a non-flag kind's field holds, from its event. */
static guint32 event_value(const struct qpt_event *e)
{
	return qpt_verdicts[e->kind].value == QPT_VAL_CODE ? e->code : e->count;
}

/* Sets (or replaces) the value of kind on a record. */
static void set_value(roce_frame_t *fi, unsigned kind, guint32 value)
{
	roce_val_t *nv;

	for (unsigned i = 0; i < fi->nvals; i++)
		if (fi->vals[i].kind == kind) {
			fi->vals[i].value = value;
			return;
		}
	nv = wmem_alloc_array(wmem_file_scope(), roce_val_t, fi->nvals + 1);
	if (fi->nvals)
		memcpy(nv, fi->vals, fi->nvals * sizeof(*nv));
	nv[fi->nvals].kind = (guint8)kind;
	nv[fi->nvals].value = value;
	fi->vals = nv; /* the old array stays in file scope until the file closes */
	fi->nvals++;
}

/* The details one event gives its record (the same as the verdict's own
 * fields give the frame being fed). */
static void apply_event(roce_frame_t *fi, const struct qpt_event *e)
{
	int64_t t;

	fi->flags |= 1u << e->kind;
	if (qpt_verdicts[e->kind].value != QPT_VAL_FLAG)
		set_value(fi, e->kind, event_value(e));
	switch (e->kind) {
	case QPT_VB_RETRANSMISSION:
	case QPT_VB_DUPLICATE:
		if (e->original_frame)
			fi->original_frame = (guint32)e->original_frame;
		break;
	case QPT_VB_PSN_GAP:
		fi->gap_first_psn = (e->psn - e->count) & 0xffffff;
		break;
	case QPT_VB_GBN_START:
		if (e->original_frame)
			fi->nak_frame = (guint32)e->original_frame;
		t = e->detail ? qpt_value_of(qpt_trigger_descr, e->detail) : -1;
		if (t >= 0)
			fi->trigger = (guint8)t;
		break;
	case QPT_VB_RNR_RETRY:
	case QPT_VB_TIMEOUT_RESEND: /* its episode's trigger (set by GBN_START too) */
		if (e->original_frame)
			fi->nak_frame = (guint32)e->original_frame;
		break;
	default:
		break;
	}
}

/* Events about an earlier frame (the engine revising that frame's verdict
 * once a later packet shows what it was: say, a PSN gap filler judged when
 * the next packet shows it started a go-back-N) go on that frame's stored
 * record, so the second pass and the GUI show them there.  On a single pass
 * that frame was printed already, without them.  A revision adds to the
 * record (its kind's flag, value and details); the flags the frame had stay
 * (the engine's events say what is, not what no longer is). */
static void apply_revisions(packet_info *pinfo, const struct qpt_verdict *v)
{
	for (unsigned i = 0; i < v->nevents; i++) {
		const struct qpt_event *e = &v->ev[i];
		roce_frame_t old;
		roce_slot_t *s;

		if (e->kind >= QPT_VB_COUNT || !e->frame || (pinfo && e->frame == pinfo->num))
			continue;
		s = e->frame <= G_MAXUINT32 ? frame_load((guint32)e->frame, &old) : NULL;
		if (s) {
			apply_event(&old, e);
			frame_write(s, &old);
		}
	}
}

QPT_HOT roce_frame_t *roce_analyse(packet_info *pinfo, const struct qpt_pkt *pkt)
{
	struct qpt_verdict v;
	struct qpt_conv_ident ci;
	roce_frame_t *fi, rec;
	roce_slot_t *slot;
	guint32 own = 0, other = 0;

	if (!slot_chunks || !flow)
		return NULL;
	fi = frame_view(pinfo, pinfo->num);
	if (fi || pinfo->fd->visited || !roce_pref_analyze || pinfo->flags.in_error_pkt)
		return fi;
	qpt_flow_packet(flow, pinfo->num,
			(int64_t)pinfo->abs_ts.secs * 1000000000 + pinfo->abs_ts.nsecs, pkt, &v);
	roce_findings_note(&v);
	fi = &rec;
	memset(fi, 0, sizeof(*fi));
	fi->conv = v.conv;
	fi->dir = v.dir;
	fi->trigger = v.trigger;
	fi->original_frame = (guint32)v.original_frame;
	fi->gap_first_psn = v.gap_first_psn;
	fi->nak_frame = (guint32)v.nak_frame;
	fi->acks_frame = (guint32)v.acks_frame;
	fi->read_request_frame = (guint32)v.read_request_frame;
	/* the RTT of the ACKs the engine counts (summary's RTT), not a NAK's
	 * or a READ response's: one meaning per number */
	fi->ack_rtt_ns = qpt_rtt_sample(&v, pkt) ? v.ack_rtt_ns : -1;
	fi->msg_first_frame = (guint32)v.msg_first_frame;
	fi->msg_len = v.msg_len;
	fi->msg_packets = v.msg_packets;
	fi->msg_op = v.msg_op;
	fi->ulp = v.conv >= 0 ? qpt_conv_ulp(qpt_flow_conv_ident(flow, v.conv, &ci)) : NULL;
	/* This frame's flags: those of its own events (and flags no event
	 * names); a kind only an earlier frame's event has is that frame's. */
	for (unsigned i = 0; i < v.nevents; i++) {
		const struct qpt_event *e = &v.ev[i];

		if (e->kind >= QPT_VB_COUNT)
			continue;
		if (!e->frame || e->frame == pinfo->num)
			own |= 1u << e->kind;
		else
			other |= 1u << e->kind;
	}
	fi->flags = v.flags & ~(other & ~own);
	for (unsigned i = 0; i < v.nevents; i++) {
		const struct qpt_event *e = &v.ev[i];

		if (e->kind >= QPT_VB_COUNT || (e->frame && e->frame != pinfo->num))
			continue;
		if (qpt_verdicts[e->kind].value != QPT_VAL_FLAG)
			set_value(fi, e->kind, event_value(e));
		/* the trigger frame events and packets -v name (the NAK, the
		 * frame before a silence, the resend itself, the RNR NAK) */
		if ((e->kind == QPT_VB_GBN_START || e->kind == QPT_VB_TIMEOUT_RESEND ||
		     e->kind == QPT_VB_RNR_RETRY) && e->original_frame)
			fi->nak_frame = (guint32)e->original_frame;
	}
	apply_revisions(pinfo, &v);
	if (fi->acks_frame && fi->acks_frame != pinfo->num) {
		roce_frame_t req;
		roce_slot_t *s = frame_load(fi->acks_frame, &req);

		if (s && !req.acked_by) {
			req.acked_by = pinfo->num;
			frame_write(s, &req);
		}
	}
	slot = slot_of(pinfo->num, TRUE);
	slot->conv = fi->conv;
	slot->dir = fi->dir;
	slot->bits |= SLOT_ANALYSED;
	if ((pkt->flags & QPT_HAS_BTH) && pkt->bth.ackreq && !fi->acked_by) {
		/* room for the ACK that will answer it: written in place then */
		fi->acked_by = ACKED_BY_LATER;
		frame_write(slot, fi);
		fi->acked_by = 0;
	} else {
		frame_write(slot, fi);
	}
	fi = wmem_new(pinfo->pool, roce_frame_t);
	*fi = rec;
	return fi;
}

const roce_frame_t *roce_frame_info(packet_info *pinfo)
{
	return frame_view(pinfo, pinfo->num);
}

/* ---- every pass: show it ------------------------------------------------------- */

/* The value of kind's field: 1 for a flag, else the event's count or code. */
static guint32 verdict_value(const roce_frame_t *fi, unsigned kind)
{
	if (qpt_verdicts[kind].value == QPT_VAL_FLAG)
		return 1;
	for (unsigned i = 0; i < fi->nvals; i++)
		if (fi->vals[i].kind == kind)
			return fi->vals[i].value;
	return 0;
}

/* The fields that give a verdict's details, after its own. */
static void show_details(proto_tree *at, tvbuff_t *tvb, const roce_frame_t *fi,
			 unsigned kind)
{
	proto_item *it;

	switch (kind) {
	case QPT_VB_RETRANSMISSION:
		if (fi->original_frame)
			roce_add_gen(at, hf_an_retrans_frame, tvb, fi->original_frame);
		break;
	case QPT_VB_DUPLICATE:
		if (fi->original_frame)
			roce_add_gen(at, hf_an_duplicate_frame, tvb, fi->original_frame);
		break;
	case QPT_VB_PSN_GAP:
		roce_add_gen(at, hf_an_psn_gap_first, tvb, fi->gap_first_psn);
		break;
	case QPT_VB_GBN_START:
		it = roce_add_gen(at, hf_an_gbn_trigger, tvb, fi->trigger);
		proto_item_append_text(it, ": %s",
				       qpt_name_of(qpt_trigger_descr, fi->trigger, "?"));
		if (fi->nak_frame)
			roce_add_gen(at, hf_an_gbn_trigger_frame, tvb, fi->nak_frame);
		break;
	case QPT_VB_TIMEOUT_RESEND:
	case QPT_VB_RNR_RETRY:
		if (fi->nak_frame && !(fi->flags & QPT_V(GBN_START)))
			roce_add_gen(at, hf_an_gbn_trigger_frame, tvb, fi->nak_frame);
		break;
	default:
		break;
	}
}

QPT_HOT void roce_show_analysis(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
				proto_item *top, const roce_frame_t *fi, gboolean lean)
{
	proto_tree *at, *ft = NULL;
	proto_item *it, *flags_it = NULL;

	if (fi->conv >= 0) {
		/* the direction said on the stream's line, its field hidden */
		guint32 id = (guint32)roce_conv_id(fi->conv);
		char *v;

		it = proto_tree_add_uint(tree, hf_stream, tvb, 0, 0, id);
		if ((v = roce_label(it)) != NULL) /* hf_stream's name: value (direction) */
			roce_put_dec_paren(roce_put_str(v, "Stream index: "), id,
					   fi->dir ? "b->a" : "a->b");
		proto_item_set_generated(it);
		if (!lean)
			proto_item_set_hidden(roce_add_gen(tree, hf_dir, tvb, (guint64)fi->dir));
		if (fi->ulp)
			proto_item_set_generated(proto_tree_add_string(tree, hf_roce_ulp, tvb, 0, 0, fi->ulp));
	}
	if (!fi->flags && !fi->acks_frame && !fi->acked_by && !fi->read_request_frame &&
	    !fi->msg_first_frame)
		return;
	it = proto_tree_add_item(tree, hf_an, tvb, 0, 0, ENC_NA);
	proto_item_set_generated(it);
	at = proto_item_add_subtree(it, ett_an);
	if (fi->flags) {
		flags_it = proto_tree_add_item(at, hf_an_flags, tvb, 0, 0, ENC_NA);
		proto_item_set_generated(flags_it);
		ft = proto_item_add_subtree(flags_it, ett_an_flags);
	}

	for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
		const struct qpt_verdict_info *vi = &qpt_verdicts[k];

		if (!(fi->flags & (1u << k)))
			continue;
		if (decode_group(vi->group))
			roce_add_gen(ft, hf_verdict[k], tvb, 1);
		else
			expert_add_info(pinfo, flags_it, &ei_verdict[k]);
		if (hf_value[k] != -1)
			roce_add_gen(ft, hf_value[k], tvb, verdict_value(fi, k));
		if (vi->info[0]) {
			col_append_str(pinfo->cinfo, COL_INFO, vi->info);
			proto_item_append_text(top, "%s", vi->info);
		}
		show_details(ft, tvb, fi, k);
	}
	if (fi->acks_frame) {
		roce_add_gen(at, hf_an_acks_frame, tvb, fi->acks_frame);
		if (fi->ack_rtt_ns >= 0) {
			nstime_t rtt;

			rtt.secs = (time_t)(fi->ack_rtt_ns / 1000000000);
			rtt.nsecs = (int)(fi->ack_rtt_ns % 1000000000);
			it = proto_tree_add_time(at, hf_an_ack_rtt, tvb, 0, 0, &rtt);
			proto_item_set_generated(it);
		}
	}
	if (fi->acked_by)
		roce_add_gen(at, hf_an_acked_by, tvb, fi->acked_by);
	if (fi->read_request_frame)
		roce_add_gen(at, hf_an_read_response_to, tvb, fi->read_request_frame);
	if (fi->msg_first_frame) {
		char *p;

		/* one line: the first frame (a link), the message's operation,
		 * length and packets in its text and as hidden fields */
		if (!lean) {
			proto_item_set_hidden(roce_add_gen(at, hf_msg_op, tvb, fi->msg_op));
			proto_item_set_hidden(roce_add_gen(at, hf_msg_length, tvb, fi->msg_len));
			proto_item_set_hidden(roce_add_gen(at, hf_msg_packets, tvb, fi->msg_packets));
		}
		it = proto_tree_add_uint(at, hf_msg_first_frame, tvb, 0, 0, fi->msg_first_frame);
		/* "<name>: %u (%s, %u bytes in %u packet%s)" without printf */
		if ((p = roce_label(it)) != NULL) {
			p = roce_put_dec(roce_put_str(p, "Message first frame: "), fi->msg_first_frame);
			p = roce_put_str(roce_put_str(p, " ("), val_to_str_const(fi->msg_op, QPT_VALS(qpt_op_names), "?"));
			p = roce_put_dec(roce_put_str(p, ", "), fi->msg_len);
			p = roce_put_dec(roce_put_str(p, " bytes in "), fi->msg_packets);
			roce_put_str(p, fi->msg_packets == 1 ? " packet)" : " packets)");
		}
		proto_item_set_generated(it);
	}
}
