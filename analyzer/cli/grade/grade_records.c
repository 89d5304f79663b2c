/* grade_records.c - one pass over a capture for `qptrace grade`
 *
 * Every frame goes through the decoder and the flow engine; a small record
 * of each RoCE/IB frame and of each message is kept (what the engine does
 * not keep), and the frames matching each check's BPF filter.
 */
#include <pcap/pcap.h>
#include <string.h>

#include "grade.h"

/* The reader's message without the file name it starts with (the report
 * names the file already). */
static char *take_error(const char *file, GError *e)
{
	const char *m = e ? e->message : "read error";
	size_t n = strlen(file);
	char *s;

	if (!strncmp(m, file, n) && m[n] == ':' && m[n + 1] == ' ')
		m += n + 2;
	s = g_strdup(m);
	g_clear_error(&e);
	return s;
}

static void compile_bpfs(struct capture *cap, const struct rubric *rb, uint32_t linktype,
			 struct bpf_program *progs, bool *ok, struct bpf_program *any_tcp,
			 bool *any_ok)
{
	pcap_t *dead = pcap_open_dead((int)linktype, 262144);

	/* Any TCP at all: a capture without it was filtered to other traffic
	 * (or started after the exchange), and cannot show an oob_tcp check. */
	*any_ok = dead && pcap_compile(dead, any_tcp, "tcp", 1, PCAP_NETMASK_UNKNOWN) == 0;
	cap->tcp_unfilterable = !*any_ok;

	for (guint i = 0; i < rb->checks->len; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);

		ok[i] = false;
		if (!c->bpf)
			continue;
		if (!dead) {
			cap->tcp_err[i] = g_strdup("libpcap cannot open a filter for this link type");
			continue;
		}
		if (pcap_compile(dead, &progs[i], c->bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			const char *name = pcap_datalink_val_to_name((int)linktype);

			cap->tcp_err[i] = g_strdup_printf("'%s' cannot be applied to link type %u (%s): %s",
							  c->bpf, linktype, name ? name : "?",
							  pcap_geterr(dead));
			continue;
		}
		ok[i] = true;
	}
	if (dead)
		pcap_close(dead);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The TCP ports of a frame (Ethernet with up to two VLAN tags, Linux
 * cooked v1/v2, raw IP; IPv4 or IPv6 without extension headers), every
 * read bounds-checked.  false when it is not such a TCP frame. */
static bool tcp_ports(uint32_t linktype, const uint8_t *d, uint32_t len, uint16_t *sp,
		      uint16_t *dp, bool *syn)
{
	uint32_t off, l4;
	uint16_t et;

	switch (linktype) {
	case 1: /* EN10MB */
		if (len < 14)
			return false;
		et = be16(d + 12);
		off = 14;
		for (int v = 0; v < 2 && (et == 0x8100 || et == 0x88a8); v++) {
			if (len < off + 4)
				return false;
			et = be16(d + off + 2);
			off += 4;
		}
		break;
	case 113: /* LINUX_SLL */
		if (len < 16)
			return false;
		et = be16(d + 14);
		off = 16;
		break;
	case 276: /* LINUX_SLL2 */
		if (len < 20)
			return false;
		et = be16(d);
		off = 20;
		break;
	case 101: /* RAW */
	case 12:
		if (len < 1)
			return false;
		et = (d[0] >> 4) == 6 ? 0x86dd : 0x0800;
		off = 0;
		break;
	default:
		return false;
	}
	if (et == 0x0800) {
		if (len < off + 20 || d[off + 9] != 6 || (be16(d + off + 6) & 0x1fff))
			return false; /* not TCP, or a later fragment */
		l4 = off + (uint32_t)(d[off] & 0x0f) * 4;
	} else if (et == 0x86dd) {
		if (len < off + 40 || d[off + 6] != 6)
			return false;
		l4 = off + 40;
	} else {
		return false;
	}
	if (len < l4 + 14)
		return false;
	*sp = be16(d + l4);
	*dp = be16(d + l4 + 2);
	*syn = (d[l4 + 13] & 0x12) == 0x02; /* SYN without ACK: to the server's port */
	return true;
}

/* A TCP frame: its server port counted (the SYN's destination; without a
 * SYN, the lower of the two ports). */
static void count_tcp_port(struct capture *cap, const struct qpt_frame *f)
{
	uint16_t sp, dp;
	bool syn;
	guint port;

	if (!tcp_ports(f->linktype, f->data, f->caplen, &sp, &dp, &syn))
		return;
	port = syn ? dp : MIN(sp, dp);
	g_hash_table_replace(cap->tcp_ports, GUINT_TO_POINTER(port),
			     GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(cap->tcp_ports,
										   GUINT_TO_POINTER(port))) + 1));
	if (syn)
		g_hash_table_add(cap->tcp_syn_ports, GUINT_TO_POINTER(port));
}

static struct convspan *span_of(struct capture *cap, int32_t conv)
{
	if (conv < 0)
		return NULL;
	if ((guint)conv >= cap->spans->len)
		g_array_set_size(cap->spans, (guint)conv + 1);
	return &g_array_index(cap->spans, struct convspan, conv);
}

/* Events of earlier frames (a gap filler judged by the request after it,
 * or at the end of the capture): their kinds onto those frames' records. */
static void apply_earlier(struct capture *cap, const struct qpt_verdict *v)
{
	for (unsigned i = 0; i < v->nevents; i++) {
		const struct qpt_event *ev = &v->ev[i];
		guint lo = 0, hi = cap->frames->len;

		if (ev->frame == v->frame)
			continue; /* the frame's own: in v->flags */
		while (lo < hi) { /* the records are in frame order */
			guint mid = lo + (hi - lo) / 2;

			if (g_array_index(cap->frames, struct frec, mid).frame < ev->frame)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < cap->frames->len &&
		    g_array_index(cap->frames, struct frec, lo).frame == ev->frame)
			g_array_index(cap->frames, struct frec, lo).vflags |= 1u << ev->kind;
	}
}

static void end_events(void *data, const struct qpt_verdict *v)
{
	apply_earlier(data, v);
}

void grade_read_capture(struct capture *cap, const struct opts *o, const struct rubric *rb)
{
	struct qpt_reader *rd;
	struct qpt_frame f;
	struct qpt_pkt pkt;
	struct qpt_verdict v;
	guint nc = rb->checks->len;
	struct bpf_program *progs = g_new0(struct bpf_program, nc);
	bool *prog_ok = g_new0(bool, nc);
	bool compiled = false, any_ok = false;
	struct bpf_program any_tcp = { 0 };
	GHashTable *read_resp = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	GError *rerr = NULL;
	GChecksum *sum_all = g_checksum_new(G_CHECKSUM_SHA256);
	GChecksum *sum_roce = g_checksum_new(G_CHECKSUM_SHA256);
	int rc;

	cap->frames = g_array_new(FALSE, TRUE, sizeof(struct frec));
	cap->msgs = g_array_new(FALSE, TRUE, sizeof(struct mrec));
	cap->spans = g_array_new(FALSE, TRUE, sizeof(struct convspan));
	cap->tcp_ports = g_hash_table_new(g_direct_hash, g_direct_equal);
	cap->tcp_syn_ports = g_hash_table_new(g_direct_hash, g_direct_equal);
	cap->tcp = g_new0(GArray *, nc);
	cap->tcp_err = g_new0(char *, nc);
	for (guint i = 0; i < nc; i++)
		cap->tcp[i] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	cap->fl = qpt_drive_new(o);

	rd = qpt_reader_open(cap->file, o->filter, &rerr);
	if (!rd) {
		cap->error = take_error(cap->file, rerr);
		goto out;
	}
	cap->opened = true;
	for (;;) {
		struct frec r = { 0 };
		const struct qpt_opcode_info *oi;
		int64_t ns;

		rc = qpt_reader_next(rd, &f, &rerr);
		if (rc <= 0)
			break;
		cap->nframes++;
		if (!compiled) {
			cap->linktype = f.linktype;
			compile_bpfs(cap, rb, f.linktype, progs, prog_ok, &any_tcp, &any_ok);
			compiled = true;
		}
		if (!f.matched)
			continue;
		for (guint i = 0; i < nc; i++) {
			struct pcap_pkthdr h = { .caplen = f.caplen, .len = f.wirelen };

			if (prog_ok[i] && pcap_offline_filter(&progs[i], &h, f.data))
				g_array_append_val(cap->tcp[i], f.number);
		}
		if (any_ok) {
			struct pcap_pkthdr h = { .caplen = f.caplen, .len = f.wirelen };

			if (pcap_offline_filter(&any_tcp, &h, f.data)) {
				cap->ntcp++;
				count_tcp_port(cap, &f);
			}
		}
		ns = f.ts_sec * 1000000000 + f.ts_nsec;
		/* copies: the packets and their times (grade.c compares) */
		g_checksum_update(sum_all, (const guchar *)&ns, sizeof ns);
		g_checksum_update(sum_all, f.data, f.caplen);
		qpt_decode(&pkt, f.linktype, f.data, f.caplen, f.wirelen, &o->dec);
		qpt_drive_packet(cap->fl, QPT_DRIVE_NO_TAP, f.number, ns, &pkt, &v);
		apply_earlier(cap, &v);
		if (pkt.transport == QPT_TR_NONE || !(pkt.flags & QPT_HAS_BTH))
			continue;
		cap->iba++;
		g_checksum_update(sum_roce, (const guchar *)&ns, sizeof ns);
		g_checksum_update(sum_roce, f.data, f.caplen);
		oi = &qpt_opcodes[pkt.bth.opcode];
		/* The first frame of the capture continues a message or answers
		 * a request: the capture was started in the middle of the run. */
		if (cap->nframes == 1 && !(pkt.flags & QPT_HAS_MAD)) {
			bool cont = (oi->flags & QPT_O_MIDDLE) ||
				    ((oi->flags & QPT_O_LAST) && !(oi->flags & QPT_O_FIRST));

			if (cont || (oi->flags & QPT_O_RESP))
				cap->first_mid = f.number;
		}
		if ((pkt.flags & QPT_HAS_CM) && pkt.cm.msg == QPT_CM_REQ && !cap->cm_req)
			cap->cm_req = f.number;
		r.frame = f.number;
		r.conv = v.conv;
		r.dir = v.dir;
		r.opcode = pkt.bth.opcode;
		r.mad = (pkt.flags & QPT_HAS_MAD) != 0;
		if (pkt.flags & QPT_HAS_CM) {
			r.cm_msg = pkt.cm.msg;
			r.cm_reason = pkt.cm.reason;
		}
		r.vflags = v.flags;
		r.payload_len = pkt.payload_len;
		r.psn = pkt.bth.psn;
		r.original_frame = v.original_frame;
		r.gap_psns = v.gap_psns;
		r.gap_first_psn = v.gap_first_psn;
		r.read_request_frame = v.read_request_frame;
		g_array_append_val(cap->frames, r);
		if (v.conv >= 0 && v.dir >= 0) {
			struct convspan *s = span_of(cap, v.conv);

			if (!s->first[v.dir])
				s->first[v.dir] = f.number;
			s->last[v.dir] = f.number;
			s->n++;
		}
		if (v.msg_first_frame) {
			struct mrec m = {
				.first = v.msg_first_frame, .last = f.number, .conv = v.conv,
				.op = v.msg_op, .opcode = pkt.bth.opcode, .len = v.msg_len,
				.packets = v.msg_packets,
			};
			g_array_append_val(cap->msgs, m);
		}
		/* READ responses: count them against their request. */
		if ((oi->flags & QPT_O_READ) && (oi->flags & QPT_O_RESP) && v.read_request_frame &&
		    !(v.flags & (QPT_V(RETRANSMISSION) | QPT_V(DUPLICATE)))) {
			uint64_t *cnt = g_hash_table_lookup(read_resp, &v.read_request_frame);

			if (!cnt) {
				gint64 *k = g_new(gint64, 1);

				*k = (gint64)v.read_request_frame;
				cnt = g_new0(uint64_t, 2);
				g_hash_table_insert(read_resp, k, cnt);
			}
			cnt[0]++;
			cnt[1] = f.number;
		}
	}
	if (rc < 0)
		cap->error = take_error(cap->file, rerr);
	cap->sum_frames = g_strdup(g_checksum_get_string(sum_all));
	cap->sum_roce = g_strdup(g_checksum_get_string(sum_roce));
	qpt_reader_close(rd);
	/* A READ's packets are its response packets. */
	for (guint i = 0; i < cap->msgs->len; i++) {
		struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);
		gint64 k = (gint64)m->last;
		uint64_t *cnt;

		if (m->op != QPT_OP_READ)
			continue;
		cnt = g_hash_table_lookup(read_resp, &k);
		if (cnt) {
			m->packets = (uint32_t)cnt[0];
			m->last = cnt[1];
		}
	}
out:
	/* the end: verdicts still undecided (of earlier frames), then final */
	qpt_drive_end(cap->fl, end_events, cap);
	cap->convs = qpt_flow_conversations(cap->fl);
	for (guint i = 0; i < nc; i++)
		if (prog_ok[i])
			pcap_freecode(&progs[i]);
	if (any_ok)
		pcap_freecode(&any_tcp);
	g_free(progs);
	g_free(prog_ok);
	g_checksum_free(sum_all);
	g_checksum_free(sum_roce);
	g_hash_table_destroy(read_resp);
}

void grade_capture_free(struct capture *cap, guint nc)
{
	if (cap->convs)
		g_ptr_array_free(cap->convs, TRUE);
	qpt_drive_free(cap->fl);
	if (cap->frames)
		g_array_free(cap->frames, TRUE);
	if (cap->msgs)
		g_array_free(cap->msgs, TRUE);
	if (cap->spans)
		g_array_free(cap->spans, TRUE);
	for (guint i = 0; cap->tcp && i < nc; i++) {
		g_array_free(cap->tcp[i], TRUE);
		g_free(cap->tcp_err[i]);
	}
	g_free(cap->tcp);
	g_free(cap->tcp_err);
	if (cap->tcp_ports)
		g_hash_table_destroy(cap->tcp_ports);
	if (cap->tcp_syn_ports)
		g_hash_table_destroy(cap->tcp_syn_ports);
	g_free(cap->error);
	g_free(cap->sum_frames);
	g_free(cap->sum_roce);
}
