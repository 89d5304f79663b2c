/* grade_checks.c - the check kinds of `qptrace grade`: each looks at the
 * engine's conversations and at the capture's records, and says PASS or
 * FAIL with the frame numbers that prove it */
#include <inttypes.h>
#include <string.h>

#include "grade.h"
#include "qpt_findings.h"

/* The capture starts in the middle of the traffic (its frame 1 continues a
 * message or answers a request): what came before it is not in it. */
bool grade_cut_before(const struct capture *cap, struct result *r, const char *what)
{
	const struct frec *f;

	if (!cap->first_mid || !cap->frames->len)
		return false;
	f = &g_array_index(cap->frames, struct frec, 0);
	r->missing = true;
	g_string_append_printf(r->reason, "the capture starts in the middle of the traffic (frame %" PRIu64
			       " is %s %s): %s before it cannot be in it",
			       f->frame, qpt_service_name(f->opcode),
			       qpt_opcodes[f->opcode].short_name ? qpt_opcodes[f->opcode].short_name : "?",
			       what);
	grade_add_frame(r, f->frame);
	return true;
}

bool grade_rec_op_match(const struct check *c, const struct frec *f)
{
	return c->op < 0 || qpt_opcodes[f->opcode].op == c->op;
}

static void check_transport(const struct check *c, const struct capture *cap, struct result *r)
{
	GString *have = g_string_new(""), *other = g_string_new("");
	struct result orr = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	long n = 0;
	GHashTable *other_tr = g_hash_table_new(g_str_hash, g_str_equal);

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);
		const char *tr = cv->transport[0] ? cv->transport : "?";

		if (!strcmp(tr, c->transport)) {
			n++;
			g_string_append_printf(have, "%sconversation %d, ", have->len ? "; " : "", cv->id);
			grade_conv_range(have, cap, cv);
			grade_conv_frames(cap, cv, r);
		} else {
			g_hash_table_add(other_tr, (gpointer)tr);
			g_string_append_printf(other, "%s%s conversation %d, ", other->len ? "; " : "",
					       tr, cv->id);
			grade_conv_range(other, cap, cv);
			grade_conv_frames(cap, cv, &orr);
		}
	}
	r->pass = n > 0 && (!c->only || !other->len);
	if (c->only && other->len) {
		GList *trs = g_list_sort(g_hash_table_get_keys(other_tr), (GCompareFunc)strcmp);
		GString *names = g_string_new("");

		for (GList *l = trs; l; l = l->next)
			g_string_append_printf(names, "%s%s", l == trs ? "" : "/", (const char *)l->data);
		g_string_append_printf(r->reason, "transport %s present, expected only %s (%s)",
				       names->str, c->transport, other->str);
		if (!n)
			g_string_append_printf(r->reason, "; no %s conversation at all", c->transport);
		g_list_free(trs);
		g_string_free(names, TRUE);
		g_array_set_size(r->frames, 0);
		g_array_append_vals(r->frames, orr.frames->data, orr.frames->len);
	} else if (!n) {
		g_string_append_printf(r->reason, "no %s conversation", c->transport);
		if (other->len)
			g_string_append_printf(r->reason, " (seen: %s)", other->str);
		else
			g_string_append(r->reason, " (no QP conversation in the capture)");
		g_array_append_vals(r->frames, orr.frames->data, orr.frames->len);
	} else {
		g_string_append_printf(r->reason, "%ld %s %s%s: %s", n, c->transport,
				       grade_plural((uint64_t)n, "conversation", "conversations"),
				       c->only ? " and no other transport" : "", have->str);
	}
	g_hash_table_destroy(other_tr);
	g_array_free(orr.frames, TRUE);
	g_string_free(have, TRUE);
	g_string_free(other, TRUE);
}

static void check_acks(const struct check *c, const struct capture *cap, struct result *r)
{
	GPtrArray *acks = g_ptr_array_new();
	GPtrArray *reqs = g_ptr_array_new();

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		const struct qpt_opcode_info *oi = &qpt_opcodes[f->opcode];

		if (oi->hdrs & QPT_H_AETH)
			g_ptr_array_add(acks, (gpointer)f);
		else if (!f->mad && oi->flags & QPT_O_REQ)
			g_ptr_array_add(reqs, (gpointer)f);
	}
	r->pass = c->present ? acks->len > 0 : acks->len == 0;
	if (acks->len) {
		if (!c->present)
			g_string_append(r->reason, "ACKs present: ");
		g_string_append_printf(r->reason, "%u %s with an AETH (", acks->len,
				       grade_plural(acks->len, "frame", "frames"));
		grade_opcode_breakdown(r->reason, acks);
		g_string_append(r->reason, "; ");
		grade_recs_frames(r, acks);
		grade_fmt_frames(r->reason, r->frames);
		g_string_append_c(r->reason, ')');
		if (!c->present)
			g_string_append(r->reason, ", expected none");
	} else {
		struct result tmp = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };

		g_string_append_printf(r->reason, "no ACK: no AETH in %" PRIu64 " RoCE/IB packets",
				       cap->iba);
		if (reqs->len) {
			g_string_append_printf(r->reason, " (%u requests: ", reqs->len);
			grade_opcode_breakdown(r->reason, reqs);
			g_string_append(r->reason, "; ");
			grade_recs_frames(&tmp, reqs);
			grade_fmt_frames(r->reason, tmp.frames);
			g_string_append_c(r->reason, ')');
			if (c->present)
				grade_recs_frames(r, reqs);
		}
		g_array_free(tmp.frames, TRUE);
		if (c->present)
			g_string_append(r->reason, ", expected ACKs");
	}
	g_ptr_array_free(acks, TRUE);
	g_ptr_array_free(reqs, TRUE);
}

static void check_no_retrans(const struct check *c, const struct capture *cap,
			     struct result *r)
{
	const uint32_t mask = QPT_V(RETRANSMISSION) | QPT_V(TIMEOUT_RESEND) |
			      QPT_V(READ_RETRY) | QPT_V(RNR_RETRY);
	unsigned n = 0, shown = 0;

	(void)c;
	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (!(f->vflags & mask))
			continue;
		n++;
		grade_add_frame(r, f->frame);
		if (shown++ < 5) {
			g_string_append_printf(r->reason, "%sframe %" PRIu64 " resends PSN %u", shown > 1 ? ", " : "(",
					       f->frame, f->psn);
			if (f->original_frame)
				g_string_append_printf(r->reason, " of frame %" PRIu64, f->original_frame);
		}
	}
	r->pass = !n;
	if (n) {
		GString *h = g_string_new("");

		g_string_printf(h, "%u retransmitted %s ", n, grade_plural(n, "packet", "packets"));
		g_string_prepend(r->reason, h->str);
		g_string_append(r->reason, n > 5 ? ", ...)" : ")");
		g_string_free(h, TRUE);
	} else {
		g_string_append_printf(r->reason, "no retransmitted packet among %" PRIu64 " RoCE/IB packets",
				       cap->iba);
	}
}

static void check_no_gaps(const struct check *c, const struct capture *cap, struct result *r)
{
	unsigned n = 0, shown = 0;
	uint64_t missing = 0;

	(void)c;
	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (!(f->vflags & QPT_V(PSN_GAP)))
			continue;
		n++;
		missing += f->gap_psns;
		grade_add_frame(r, f->frame);
		if (shown++ < 5)
			g_string_append_printf(r->reason, "%sbefore frame %" PRIu64 ": %u %s missing from PSN %u",
					       shown > 1 ? "; " : " (", f->frame, f->gap_psns,
					       grade_plural(f->gap_psns, "PSN", "PSNs"), f->gap_first_psn);
	}
	r->pass = !n;
	if (n) {
		GString *h = g_string_new("");

		g_string_printf(h, "%u PSN %s, %" PRIu64 " PSNs missing", n, grade_plural(n, "gap", "gaps"),
				missing);
		g_string_prepend(r->reason, h->str);
		g_string_append(r->reason, n > 5 ? "; ...)" : ")");
		g_string_free(h, TRUE);
	} else {
		g_string_append_printf(r->reason, "no PSN gap among %" PRIu64 " RoCE/IB packets", cap->iba);
	}
}

/* Where the engine's MTU of a conversation comes from. */
static void mtu_evidence(GString *o, const struct capture *cap, const struct qpt_conv_stats *cv,
			 struct result *r)
{
	if (cv->has_cm && cv->cm->path_mtu && cv->cm->path_mtu == cv->mtu && cv->cm->req_frame) {
		g_string_append_printf(o, "from CM REQ frame %" PRIu64, cv->cm->req_frame);
		grade_add_frame(r, cv->cm->req_frame);
		return;
	}
	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		uint32_t fl = qpt_opcodes[f->opcode].flags;

		if (f->conv == cv->id && (fl & (QPT_O_FIRST | QPT_O_MIDDLE)) && !(fl & QPT_O_LAST) &&
		    f->payload_len == cv->mtu) {
			g_string_append_printf(o, "full %u-byte %s payload in frame %" PRIu64, f->payload_len,
					       qpt_opcodes[f->opcode].short_name, f->frame);
			grade_add_frame(r, f->frame);
			return;
		}
	}
	g_string_append(o, "learned by the engine");
}

static void check_path_mtu(const struct check *c, const struct capture *cap, struct result *r)
{
	GString *good = g_string_new(""), *bad = g_string_new("");
	struct result br = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
	unsigned known = 0, wrong = 0;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);
		GString *s;

		if (!cv->mtu || !grade_tr_match(c, cv->transport))
			continue;
		known++;
		if (cv->mtu != (uint32_t)c->value)
			wrong++;
		s = cv->mtu == (uint32_t)c->value ? good : bad;
		g_string_append_printf(s, "%spath MTU %u in conversation %d (", s->len ? "; " : "",
				       cv->mtu, cv->id);
		mtu_evidence(s, cap, cv, s == good ? r : &br);
		g_string_append_c(s, ')');
	}
	r->pass = known && !wrong;
	if (r->pass) {
		g_string_append(r->reason, good->str);
	} else if (!known) {
		g_string_append_printf(r->reason, "path MTU unknown: no %s%smulti-packet message and no CM REQ to learn it from, expected %ld",
				       grade_tr_label(c), c->transport[0] ? " " : "", c->value);
	} else {
		g_string_append_printf(r->reason, "%s, expected %ld", bad->str, c->value);
		g_array_set_size(r->frames, 0);
		g_array_append_vals(r->frames, br.frames->data, br.frames->len);
	}
	g_array_free(br.frames, TRUE);
	g_string_free(good, TRUE);
	g_string_free(bad, TRUE);
}

/* Packets carrying header hdr (ImmDt for kind=immediate). */
static void check_header(const struct check *c, const struct capture *cap, struct result *r,
			 unsigned hdr, const char *what)
{
	GPtrArray *hit = g_ptr_array_new();

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (f->mad || !(qpt_opcodes[f->opcode].hdrs & hdr) ||
		    !grade_tr_match(c, qpt_service_name(f->opcode)) || !grade_rec_op_match(c, f))
			continue;
		g_ptr_array_add(hit, (gpointer)f);
	}
	GString *label = g_string_new("");

	if (c->transport[0])
		g_string_append_printf(label, "%s ", c->transport);
	if (c->op >= 0)
		g_string_append_printf(label, "%s ", qpt_op_name(c->op));
	r->pass = (long)hit->len >= c->min_count && hit->len > 0;
	if (hit->len) {
		g_string_append_printf(r->reason, "%s%u %s%s %s (", r->pass ? "" : "only ",
				       hit->len, label->str, grade_plural(hit->len, "packet", "packets"), what);
		grade_opcode_breakdown(r->reason, hit);
		g_string_append(r->reason, "; ");
		grade_recs_frames(r, hit);
		grade_fmt_frames(r->reason, r->frames);
		g_string_append_c(r->reason, ')');
		if (!r->pass)
			g_string_append_printf(r->reason, ", expected at least %ld", c->min_count);
	} else {
		g_string_append_printf(r->reason, "no %spacket %s among %" PRIu64 " RoCE/IB packets",
				       label->str, what, cap->iba);
	}
	g_string_free(label, TRUE);
	g_ptr_array_free(hit, TRUE);
}

static void check_atomic(const struct check *c, const struct capture *cap, struct result *r)
{
	GPtrArray *req = g_ptr_array_new(), *ack = g_ptr_array_new();

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		const struct qpt_opcode_info *oi = &qpt_opcodes[f->opcode];

		if (f->vflags & (QPT_V(RETRANSMISSION) | QPT_V(DUPLICATE)))
			continue;
		if ((oi->flags & QPT_O_REQ) && (oi->hdrs & QPT_H_ATOMICETH) && grade_rec_op_match(c, f))
			g_ptr_array_add(req, (gpointer)f);
		else if (oi->hdrs & QPT_H_ATOMICACKETH)
			g_ptr_array_add(ack, (gpointer)f);
	}
	r->pass = req->len && (long)req->len >= c->min_count && (!c->acks || ack->len >= req->len);
	if (!req->len) {
		g_string_append_printf(r->reason, "no %s atomic request among %" PRIu64 " RoCE/IB packets",
				       c->op >= 0 ? qpt_op_name(c->op) : "CMP_SWAP/FETCH_ADD", cap->iba);
	} else {
		struct result tmp = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };

		g_string_append_printf(r->reason, "%u atomic %s (", req->len,
				       grade_plural(req->len, "request", "requests"));
		grade_opcode_breakdown(r->reason, req);
		g_string_append(r->reason, "; ");
		grade_recs_frames(&tmp, req);
		grade_fmt_frames(r->reason, tmp.frames);
		g_string_append(r->reason, ")");
		g_array_set_size(tmp.frames, 0);
		if (ack->len) {
			g_string_append_printf(r->reason, ", %u atomic %s (", ack->len,
					       grade_plural(ack->len, "ACK", "ACKs"));
			grade_recs_frames(&tmp, ack);
			grade_fmt_frames(r->reason, tmp.frames);
			g_string_append(r->reason, ")");
		} else {
			g_string_append(r->reason, ", no atomic ACK");
		}
		g_array_free(tmp.frames, TRUE);
		grade_recs_frames(r, req);
		grade_recs_frames(r, ack);
		if ((long)req->len < c->min_count)
			g_string_append_printf(r->reason, "; expected at least %ld requests", c->min_count);
		else if (c->acks && ack->len < req->len)
			g_string_append_printf(r->reason, "; %u %s unanswered",
					       req->len - ack->len,
					       grade_plural(req->len - ack->len, "request", "requests"));
	}
	g_ptr_array_free(req, TRUE);
	g_ptr_array_free(ack, TRUE);
}

static void check_min_qps(const struct check *c, const struct capture *cap, struct result *r)
{
	GHashTable *qps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GString *list = g_string_new("");
	long nconv = 0, nqp;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);

		if (!grade_tr_match(c, cv->transport))
			continue;
		nconv++;
		for (int e = 0; e < 2; e++) {
			char buf[QPT_ENDPOINT_QP_STRLEN];

			if (!cv->ep[e].qpn_known || cv->ep[e].qpn <= 1 || cv->ep[e].qpn == 0xffffff)
				continue;
			g_hash_table_add(qps, g_strdup(qpt_format_endpoint_qp(&cv->ep[e], buf)));
		}
		if (list->len)
			g_string_append(list, "; ");
		grade_conv_desc(list, cap, cv);
		grade_conv_frames(cap, cv, r);
	}
	nqp = (long)g_hash_table_size(qps);
	r->pass = nqp >= c->min_qps && nconv >= c->min_conversations;
	g_string_append_printf(r->reason, "%ld distinct %s%sQPs in %ld %s", nqp, grade_tr_label(c),
			       c->transport[0] ? " " : "", nconv,
			       grade_plural((uint64_t)nconv, "conversation", "conversations"));
	if (!r->pass) {
		g_string_append(r->reason, ", expected at least");
		if (c->min_qps)
			g_string_append_printf(r->reason, " %ld QPs", c->min_qps);
		if (c->min_conversations > 1 || !c->min_qps)
			g_string_append_printf(r->reason, "%s %ld conversations", c->min_qps ? " and" : "",
					       c->min_conversations);
	}
	if (list->len)
		g_string_append_printf(r->reason, " (%s)", list->str);
	g_string_free(list, TRUE);
	g_hash_table_destroy(qps);
}

static void check_oob_tcp(const struct check *c, guint idx, const struct capture *cap,
			  struct result *r)
{
	GArray *hit = cap->tcp[idx];

	if (cap->tcp_err[idx] || cap->tcp_unfilterable) {
		r->pass = false;
		r->missing = true;
		g_string_append_printf(r->reason, "the capture cannot show TCP on port %ld: %s", c->value,
				       cap->tcp_err[idx] ? cap->tcp_err[idx] :
				       "libpcap cannot filter TCP on its link type");
		return;
	}
	r->pass = (long)hit->len >= c->min_frames;
	if (!hit->len && !cap->ntcp && !cap->cm_req && cap->nframes) {
		r->missing = true;
		g_string_append_printf(r->reason, "no TCP frame at all among %" PRIu64 " frames: the capture was filtered to other traffic (e.g. udp port 4791) or started after the exchange, so it cannot show TCP on port %ld",
				       cap->nframes, c->value);
		return;
	}
	if (!hit->len && grade_cut_before(cap, r, "the TCP exchange"))
		return;
	if (!hit->len) {
		g_string_append_printf(r->reason, "no TCP frame on port %ld among %" PRIu64 " frames",
				       c->value, cap->nframes);
		if (cap->ntcp) {
			g_string_append(r->reason, "; ");
			grade_tcp_seen(r->reason, cap);
		}
		if (cap->cm_req)
			g_string_append_printf(r->reason, "; the QPs were connected by RDMA CM instead (CM REQ frame %" PRIu64 ")",
					       cap->cm_req);
		return;
	}
	g_string_append_printf(r->reason, "%s%u TCP %s on port %ld (", r->pass ? "" : "only ",
			       hit->len, grade_plural(hit->len, "frame", "frames"), c->value);
	g_array_append_vals(r->frames, hit->data, hit->len);
	grade_fmt_frames(r->reason, r->frames);
	g_string_append_c(r->reason, ')');
	if (!r->pass)
		g_string_append_printf(r->reason, ", expected at least %ld", c->min_frames);
}

static gint by_count(gconstpointer a, gconstpointer b, gpointer data)
{
	GHashTable *h = data;
	guint na = GPOINTER_TO_UINT(g_hash_table_lookup(h, a)), nb = GPOINTER_TO_UINT(g_hash_table_lookup(h, b));

	if (na != nb)
		return na > nb ? -1 : 1;
	return GPOINTER_TO_INT(a) - GPOINTER_TO_INT(b);
}

void grade_tcp_seen(GString *o, const struct capture *cap)
{
	GList *ports = g_hash_table_get_keys(cap->tcp_ports);
	guint n = 0;

	ports = g_list_sort_with_data(ports, (GCompareDataFunc)by_count, cap->tcp_ports);
	if (!ports)
		g_string_append_printf(o, "%" PRIu64 " TCP %s whose ports could not be read",
				       cap->ntcp, grade_plural(cap->ntcp, "frame", "frames"));
	for (GList *l = ports; l && n < 4; l = l->next, n++) {
		guint cnt = GPOINTER_TO_UINT(g_hash_table_lookup(cap->tcp_ports, l->data));

		g_string_append_printf(o, "%sTCP seen on port %u (%u %s%s)", n ? ", " : "",
				       GPOINTER_TO_UINT(l->data), cnt, grade_plural(cnt, "frame", "frames"),
				       g_hash_table_contains(cap->tcp_syn_ports, l->data) ?
				       ", a connection opened to it" : "");
	}
	if (g_list_length(ports) > n)
		g_string_append_printf(o, " and %u other ports", g_list_length(ports) - n);
	g_list_free(ports);
}

/* Every packet of a class (data, ACK, CNP) on the 802.1Q priority and/or
 * DSCP asked for (qpt_flow_qos.c counts them per direction). */
static void check_priority(const struct check *c, const struct capture *cap, struct result *r)
{
	uint64_t all = 0, bad = 0;
	GString *wrong = g_string_new("");
	const char *cls = qpt_qos_class_name((unsigned)c->qos_class);

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);

		if (!grade_tr_match(c, cv->transport))
			continue;
		for (int d = 0; d < 2; d++) {
			const struct qpt_qos_count *e;

			for (unsigned k = 0; (e = qpt_qos_count_at(&cv->dir[d], k)); k++) {
				long want = e->dscp ? c->dscp : c->pcp;

				if (e->cls != (unsigned)c->qos_class || want < 0)
					continue;
				/* a packet is counted once: by its PCP, or by its
				 * DSCP when only that is asked */
				if (!e->dscp || c->pcp < 0)
					all += e->packets;
				if (e->value != want) {
					bad += e->packets;
					g_string_append_printf(wrong, "%s%" PRIu64 " in conversation %d %s on %s %s",
							       wrong->len ? "; " : "", e->packets, cv->id,
							       d ? "b->a" : "a->b", e->dscp ? "DSCP" : "priority",
							       e->value < 0 ? "none (untagged)" : "");
					if (e->value >= 0)
						g_string_append_printf(wrong, "%d", e->value);
				}
			}
		}
	}
	r->pass = all && !bad;
	/* no packet of the class: the capture cannot show their priority
	 * (a lab without congestion has no CNP) */
	r->missing = !all;
	if (!all)
		g_string_append_printf(r->reason, "no %s packets%s%s in the capture", cls,
				       c->transport[0] ? " of " : "", c->transport);
	else if (bad)
		g_string_append_printf(r->reason, "%s packets elsewhere: %s", cls, wrong->str);
	else
		g_string_append_printf(r->reason, "%" PRIu64 " %s %s, all on", all, cls,
				       grade_plural(all, "packet", "packets"));
	if (all && !bad) {
		if (c->pcp >= 0)
			g_string_append_printf(r->reason, " priority %ld", c->pcp);
		if (c->dscp >= 0)
			g_string_append_printf(r->reason, "%s DSCP %ld", c->pcp >= 0 ? " and" : "",
					       c->dscp);
	} else if (all) {
		g_string_append(r->reason, "; expected");
		if (c->pcp >= 0)
			g_string_append_printf(r->reason, " priority %ld", c->pcp);
		if (c->dscp >= 0)
			g_string_append_printf(r->reason, "%s DSCP %ld", c->pcp >= 0 ? " and" : "",
					       c->dscp);
	}
	g_string_free(wrong, TRUE);
}

/* No finding of a kind in the diagnosis of the capture. */
static void check_no_finding(const struct check *c, const struct capture *cap, struct result *r)
{
	GArray *fs = qpt_findings(cap->fl, cap->convs, NULL, true, NULL);
	unsigned n = 0;

	for (guint i = 0; i < fs->len; i++) {
		const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);

		if ((int)f->kind != c->finding)
			continue;
		if (n++ < 2)
			g_string_append_printf(r->reason, "%s%s", n > 1 ? "; " : "", f->text);
		for (unsigned k = 0; k < f->nframes; k++)
			grade_add_frame(r, f->frames[k]);
	}
	r->pass = !n;
	if (!n)
		g_string_append_printf(r->reason, "no %s finding", qpt_finding_kinds[c->finding].key);
	else if (n > 2)
		g_string_append_printf(r->reason, "; %u more %s findings", n - 2,
				       qpt_finding_kinds[c->finding].key);
	g_array_free(fs, TRUE);
}

/* No frame with a verdict of a kind: the frame's own or decided later (a
 * gap filler judged by the request after it or at the end of the capture),
 * as `qptrace events` reports them. */
static void check_no_verdict(const struct check *c, const struct capture *cap, struct result *r)
{
	const struct qpt_verdict_info *vi = &qpt_verdicts[c->verdict];
	unsigned n = 0, shown = 0;

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);

		if (!(f->vflags & (1u << c->verdict)))
			continue;
		n++;
		grade_add_frame(r, f->frame);
		if (shown++ < 5) {
			g_string_append_printf(r->reason, "%sframe %" PRIu64, shown > 1 ? ", " : " (",
					       f->frame);
			if (f->conv >= 0)
				g_string_append_printf(r->reason, " conv %d",
						       qpt_flow_conv_id(cap->fl, f->conv));
			g_string_append_printf(r->reason, " PSN %u", f->psn);
		}
	}
	r->pass = !n;
	if (n) {
		GString *h = g_string_new("");

		g_string_printf(h, "%u %s judged %s", n, grade_plural(n, "frame", "frames"), vi->key);
		g_string_prepend(r->reason, h->str);
		g_string_append(r->reason, n > 5 ? ", ...)" : ")");
		g_string_free(h, TRUE);
	} else {
		g_string_append_printf(r->reason, "no %s among %" PRIu64 " RoCE/IB packets", vi->key,
				       cap->iba);
	}
}

void grade_run_check(const struct check *c, guint idx, const struct capture *cap,
		      struct result *r)
{
	r->reason = g_string_new("");
	r->frames = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	switch (c->kind) {
	case K_OPS: grade_check_ops(c, cap, r); break;
	case K_MULTI_PACKET: grade_check_multi_packet(c, cap, r); break;
	case K_CM_HANDSHAKE: grade_check_cm(c, cap, r); break;
	case K_PAIRED: grade_check_paired(c, cap, r); break;
	case K_TRANSPORT: check_transport(c, cap, r); break;
	case K_ACKS: check_acks(c, cap, r); break;
	case K_NO_RETRANSMISSIONS: check_no_retrans(c, cap, r); break;
	case K_NO_GAPS: check_no_gaps(c, cap, r); break;
	case K_PATH_MTU: check_path_mtu(c, cap, r); break;
	case K_IMMEDIATE: check_header(c, cap, r, QPT_H_IMMDT, "with immediate data"); break;
	case K_ATOMIC: check_atomic(c, cap, r); break;
	case K_MIN_QPS: check_min_qps(c, cap, r); break;
	case K_OOB_TCP: check_oob_tcp(c, idx, cap, r); break;
	case K_HEADER: {
		char *what = g_strdup_printf("with a %s", qpt_hdr_name(c->header));

		check_header(c, cap, r, c->header, what);
		g_free(what);
		break;
	}
	case K_PRIORITY: check_priority(c, cap, r); break;
	case K_NO_FINDING: check_no_finding(c, cap, r); break;
	case K_NO_VERDICT: check_no_verdict(c, cap, r); break;
	case K_COUNT: break;
	}
	grade_sort_unique(r->frames);
}
