/* grade_checks.c - the check kinds of `qptrace grade`: each looks at the
 * engine's conversations and at the capture's records, and says PASS or
 * FAIL with the frame numbers that prove it */
#include <inttypes.h>
#include <string.h>

#include "grade.h"
#include "qpt_findings.h"

/* The capture starts in the middle of the traffic (its frame 1 continues a
 * message or answers a request): what came before it is not in it. */
static bool cut_before(const struct capture *cap, struct result *r, const char *what)
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

static void check_ops(const struct check *c, const struct capture *cap, struct result *r)
{
	GArray *by_op = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
	GArray *by_size = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
	GArray *ok = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
	GString *o = r->reason;
	uint32_t pmin = 0, pmax = 0;
	long n;

	for (guint i = 0; i < cap->msgs->len; i++) {
		const struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);

		if (m->op != c->op || !grade_tr_match(c, qpt_service_name(m->opcode)))
			continue;
		g_array_append_val(by_op, m);
		if (c->size >= 0 && m->len != (uint32_t)c->size)
			continue;
		g_array_append_val(by_size, m);
		if (m->packets < (uint32_t)c->min_packets)
			continue;
		g_array_append_val(ok, m);
		pmin = ok->len == 1 ? m->packets : MIN(pmin, m->packets);
		pmax = MAX(pmax, m->packets);
	}
	n = (long)ok->len;
	r->pass = n >= c->min_count && (c->max_count < 0 || n <= c->max_count);
	if (r->pass || (c->max_count >= 0 && n > c->max_count)) {
		grade_desc_msgs(o, c, ok->len);
		if (c->size >= 0)
			g_string_append_printf(o, " of %ld bytes", c->size);
		if (ok->len) {
			if (pmin == pmax)
				g_string_append_printf(o, " in %u %s%s", pmin, grade_plural(pmin, "packet", "packets"),
						       ok->len > 1 ? " each" : "");
			else
				g_string_append_printf(o, " in %u-%u packets", pmin, pmax);
		}
		if (!r->pass)
			g_string_append_printf(o, ", expected at most %ld", c->max_count);
		if (ok->len) {
			g_string_append(o, " (");
			grade_msgs_range(o, ok);
			g_string_append_c(o, ')');
		}
		grade_msgs_frames(r, ok);
	} else if ((long)by_op->len < c->min_count) {
		GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		GArray *others = g_array_new(FALSE, FALSE, sizeof(const struct mrec *));
		GList *keys;

		g_string_append(o, by_op->len ? "only " : "");
		grade_desc_msgs(o, c, by_op->len);
		g_string_append_printf(o, ", expected at least %ld", c->min_count);
		if (by_op->len) {
			g_string_append(o, " (");
			grade_msgs_range(o, by_op);
			if (c->size >= 0) {
				g_string_append(o, "; sizes seen: ");
				grade_size_breakdown(o, by_op);
			}
			g_string_append_c(o, ')');
			grade_msgs_frames(r, by_op);
		}
		for (guint i = 0; i < cap->msgs->len; i++) {
			const struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);
			char *k;

			if (m->op == c->op && grade_tr_match(c, qpt_service_name(m->opcode)))
				continue;
			g_array_append_val(others, m);
			k = g_strdup_printf("%s %s", qpt_service_name(m->opcode), qpt_op_name(m->op));
			g_hash_table_insert(seen, k,
					    GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(seen, k)) + 1));
		}
		keys = g_hash_table_get_keys(seen);
		if (keys) {
			keys = g_list_sort(keys, (GCompareFunc)strcmp);
			g_string_append(o, "; other messages seen:");
			for (GList *l = keys; l; l = l->next)
				g_string_append_printf(o, "%s %u %s", l == keys ? "" : ",",
						       GPOINTER_TO_UINT(g_hash_table_lookup(seen, l->data)),
						       (const char *)l->data);
			g_string_append(o, " (");
			grade_msgs_range(o, others);
			g_string_append_c(o, ')');
			if (!by_op->len)
				grade_msgs_frames(r, others);
		} else if (!by_op->len) {
			g_string_append(o, "; no RDMA messages at all");
		}
		g_list_free(keys);
		g_hash_table_destroy(seen);
		g_array_free(others, TRUE);
	} else if ((long)by_size->len < c->min_count) {
		g_string_append_printf(o, "only %u of %u %s%s%s messages are %ld bytes, expected at least %ld (sizes seen: ",
				       by_size->len, by_op->len, grade_tr_label(c), c->transport[0] ? " " : "",
				       qpt_op_name(c->op), c->size, c->min_count);
		grade_size_breakdown(o, by_op);
		g_string_append(o, "; ");
		grade_msgs_range(o, by_op);
		g_string_append_c(o, ')');
		grade_msgs_frames(r, by_op);
	} else {
		uint32_t most = 0;

		for (guint i = 0; i < by_size->len; i++)
			most = MAX(most, g_array_index(by_size, const struct mrec *, i)->packets);
		g_string_append_printf(o, "only %u of %u %s%s%s messages", ok->len, by_size->len,
				       grade_tr_label(c), c->transport[0] ? " " : "", qpt_op_name(c->op));
		if (c->size >= 0)
			g_string_append_printf(o, " of %ld bytes", c->size);
		g_string_append_printf(o, " span at least %ld packets, expected %ld (largest: %u %s; ",
				       c->min_packets, c->min_count, most, grade_plural(most, "packet", "packets"));
		grade_msgs_range(o, by_size);
		g_string_append_c(o, ')');
		grade_msgs_frames(r, by_size);
	}
	g_array_free(by_op, TRUE);
	g_array_free(by_size, TRUE);
	g_array_free(ok, TRUE);
}

static bool rec_op_match(const struct check *c, const struct frec *f)
{
	return c->op < 0 || qpt_opcodes[f->opcode].op == c->op;
}

static void check_multi_packet(const struct check *c, const struct capture *cap,
			       struct result *r)
{
	GPtrArray *pos[3] = { g_ptr_array_new(), g_ptr_array_new(), g_ptr_array_new() };
	GPtrArray *only = g_ptr_array_new();
	static const char *const names[3] = { "FIRST", "MIDDLE", "LAST" };
	GString *o = r->reason;
	GString *missing = g_string_new("");

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		uint32_t fl = qpt_opcodes[f->opcode].flags;

		if (f->mad || !grade_tr_match(c, qpt_service_name(f->opcode)) || !rec_op_match(c, f) ||
		    !(fl & QPT_O_PAYLOAD || fl & QPT_O_READ) || f->vflags & QPT_V(RETRANSMISSION))
			continue;
		if ((fl & QPT_O_ONLY) == QPT_O_ONLY)
			g_ptr_array_add(only, (gpointer)f);
		else if (fl & QPT_O_FIRST)
			g_ptr_array_add(pos[0], (gpointer)f);
		else if (fl & QPT_O_MIDDLE)
			g_ptr_array_add(pos[1], (gpointer)f);
		else if (fl & QPT_O_LAST)
			g_ptr_array_add(pos[2], (gpointer)f);
	}
	for (int p = 0; p < 3; p++)
		if (!pos[p]->len && (p != 1 || c->middle))
			g_string_append_printf(missing, "%s%s", missing->len ? "/" : "", names[p]);
	r->pass = !missing->len;
	if (r->pass) {
		for (int p = 0; p < 3; p++) {
			const struct frec *f;

			if (!pos[p]->len)
				continue;
			f = g_ptr_array_index(pos[p], 0);
			g_string_append_printf(o, "%s%s frame %" PRIu64, p ? ", " : "",
					       qpt_opcodes[f->opcode].short_name, f->frame);
			grade_add_frame(r, f->frame);
		}
		g_string_append_printf(o, " (%u FIRST, %u MIDDLE, %u LAST)", pos[0]->len,
				       pos[1]->len, pos[2]->len);
	} else {
		bool any = pos[0]->len || pos[1]->len || pos[2]->len;

		g_string_append_printf(o, "no %s%s%s%s%s packet", grade_tr_label(c), c->transport[0] ? " " : "",
				       c->op >= 0 ? qpt_op_name(c->op) : "", c->op >= 0 ? " " : "",
				       missing->str);
		if (!any && only->len) {
			g_string_append(o, ": every message fits in one packet (");
			grade_opcode_breakdown(o, only);
			g_string_append(o, ", ");
			{
				struct result tmp = { .frames = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };

				grade_recs_frames(&tmp, only);
				grade_fmt_frames(o, tmp.frames);
				g_array_free(tmp.frames, TRUE);
			}
			g_string_append_c(o, ')');
			grade_recs_frames(r, only);
		} else if (any) {
			g_string_append(o, " (seen: ");
			for (int p = 0, k = 0; p < 3; p++) {
				if (!pos[p]->len)
					continue;
				g_string_append_printf(o, "%s%u %s", k++ ? ", " : "", pos[p]->len, names[p]);
				grade_recs_frames(r, pos[p]);
			}
			g_string_append(o, "; ");
			grade_fmt_frames(o, r->frames);
			g_string_append_c(o, ')');
		} else {
			g_string_append(o, ": no such messages at all");
		}
	}
	for (int p = 0; p < 3; p++)
		g_ptr_array_free(pos[p], TRUE);
	g_ptr_array_free(only, TRUE);
	g_string_free(missing, TRUE);
}

static void cm_seen(GString *o, const struct capture *cap, struct result *r)
{
	bool first = true;

	for (guint i = 0; i < cap->frames->len; i++) {
		const struct frec *f = &g_array_index(cap->frames, struct frec, i);
		const char *n;

		if (!f->cm_msg)
			continue;
		n = qpt_cm_msg_name(f->cm_msg);
		g_string_append_printf(o, "%s%s frame %" PRIu64, first ? "" : ", ", n ? n : "CM?",
				       f->frame);
		grade_add_frame(r, f->frame);
		first = false;
	}
}

static void check_cm(const struct check *c, const struct capture *cap, struct result *r)
{
	GString *good = g_string_new(""), *bad = g_string_new("");
	GArray *bad_frames = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	struct result br = { .frames = bad_frames };
	long complete = 0, total = 0;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);
		const struct qpt_cm_info *m = cv->cm;
		GString *why;
		GString *s;

		if (!cv->has_cm)
			continue;
		why = g_string_new("");
		total++;
		if (!m->req_frame)
			g_string_append(why, "no CM REQ");
		else if (m->rej_frame)
			g_string_append_printf(why, "CM REJ in frame %" PRIu64 " (reason %u, %s) after REQ in frame %" PRIu64,
					       m->rej_frame, m->rej_reason,
					       qpt_cm_rej_reason_text(m->rej_reason), m->req_frame);
		else if (!m->rep_frame || m->rep_frame < m->req_frame)
			g_string_append_printf(why, "no CM REP after REQ in frame %" PRIu64, m->req_frame);
		else if (!m->rtu_frame || m->rtu_frame < m->rep_frame)
			g_string_append_printf(why, "no CM RTU after REP in frame %" PRIu64, m->rep_frame);
		else if (c->value && !m->has_ip)
			g_string_append_printf(why, "the CM REQ in frame %" PRIu64 " is not an RDMA-CM connection to an IP port (expected port %ld)",
					       m->req_frame, c->value);
		else if (c->value && m->ip.dst_port != c->value)
			g_string_append_printf(why, "the CM REQ in frame %" PRIu64 " connects to RDMA-CM port %u, expected port %ld",
					       m->req_frame, m->ip.dst_port, c->value);
		else if (c->teardown && !m->dreq_frame)
			g_string_append_printf(why, "no CM DREQ (teardown) after RTU in frame %" PRIu64,
					       m->rtu_frame);
		else if (c->teardown && (!m->drep_frame || m->drep_frame < m->dreq_frame))
			g_string_append_printf(why, "no CM DREP after DREQ in frame %" PRIu64, m->dreq_frame);
		s = why->len ? bad : good;
		if (why->len) {
			g_string_append_printf(s, "%sconversation %d: %s", s->len ? "; " : "", cv->id,
					       why->str);
			grade_add_frame(&br, m->req_frame);
			grade_add_frame(&br, m->rep_frame);
			grade_add_frame(&br, m->rtu_frame);
			grade_add_frame(&br, m->rej_frame);
			grade_add_frame(&br, m->dreq_frame);
		} else {
			complete++;
			g_string_append_printf(s, "%sREQ frame %" PRIu64 " -> REP frame %" PRIu64
					       " -> RTU frame %" PRIu64,
					       s->len ? "; " : "", m->req_frame, m->rep_frame, m->rtu_frame);
			if (c->value)
				g_string_append_printf(s, " (RDMA-CM port %u)", m->ip.dst_port);
			grade_add_frame(r, m->req_frame);
			grade_add_frame(r, m->rep_frame);
			grade_add_frame(r, m->rtu_frame);
			if (c->teardown) {
				g_string_append_printf(s, ", DREQ frame %" PRIu64 " -> DREP frame %" PRIu64,
						       m->dreq_frame, m->drep_frame);
				grade_add_frame(r, m->dreq_frame);
				grade_add_frame(r, m->drep_frame);
			}
		}
		g_string_free(why, TRUE);
	}
	r->pass = complete >= c->min_connections && (!c->all || complete == total);
	if (!total && !cap->cm_req && cut_before(cap, r, "the CM handshake")) {
		r->pass = false;
	} else if (r->pass) {
		g_string_append_printf(r->reason, "%ld CM %s complete%s: %s", complete,
				       grade_plural((uint64_t)complete, "connection", "connections"),
				       c->teardown ? " with teardown" : "", good->str);
	} else if (!total) {
		struct result tmp = { .frames = r->frames };
		GString *seen = g_string_new("");

		cm_seen(seen, cap, &tmp);
		if (seen->len)
			g_string_append_printf(r->reason, "no CM connection: no REQ/REP pair (CM messages: %s)",
					       seen->str);
		else
			g_string_append_printf(r->reason, "no CM messages in the capture (%" PRIu64
					       " frames, %" PRIu64 " RoCE/IB)",
					       cap->nframes, cap->iba);
		g_string_free(seen, TRUE);
	} else {
		g_string_append(r->reason, bad->str);
		if (complete < c->min_connections)
			g_string_append_printf(r->reason, " (%ld of %ld %s complete, expected at least %ld)",
					       complete, total, grade_plural((uint64_t)total, "connection", "connections"),
					       c->min_connections);
		g_array_append_vals(r->frames, bad_frames->data, bad_frames->len);
	}
	g_string_free(good, TRUE);
	g_string_free(bad, TRUE);
	g_array_free(bad_frames, TRUE);
}

/* How a conversation's two QPs were found to belong together, in words
 * (the engine's names: none, cm, traffic). */
static const char *paired_words(int by)
{
	switch (by) {
	case QPT_PAIR_CM: return "paired by cm, from the CM REQ/REP that name both QP numbers";
	case QPT_PAIR_TRAFFIC: return "paired by traffic, from packets of each side answering the other's PSNs";
	default: return "not paired (paired by none): no packet of one side answers the other";
	}
}

static void check_paired(const struct check *c, const struct capture *cap, struct result *r)
{
	static const char *const want[] = { "cm or traffic", "cm", "traffic" };
	GString *others = g_string_new("");
	long n = 0;

	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);
		bool ok = c->by == BY_ANY ? cv->paired_by != QPT_PAIR_NONE :
			  c->by == BY_CM  ? cv->paired_by == QPT_PAIR_CM :
					    cv->paired_by == QPT_PAIR_TRAFFIC;
		GString *s = ok ? r->reason : others;

		if (ok)
			n++;
		if (s->len)
			g_string_append(s, "; ");
		grade_conv_desc(s, cap, cv);
		g_string_append_printf(s, ": %s", paired_words(cv->paired_by));
		if (cv->pair_evidence && cv->pair_evidence[0])
			g_string_append_printf(s, " (%s", cv->pair_evidence);
		else
			g_string_append(s, " (");
		if (cv->paired_by == QPT_PAIR_CM && cv->cm->req_frame)
			g_string_append_printf(s, "%sREQ frame %" PRIu64 ", REP frame %" PRIu64,
					       cv->pair_evidence && cv->pair_evidence[0] ? ": " : "",
					       cv->cm->req_frame, cv->cm->rep_frame);
		g_string_append_c(s, ')');
		if (g_str_has_suffix(s->str, " ()"))
			g_string_truncate(s, s->len - 3);
		if (ok) {
			if (cv->paired_by == QPT_PAIR_CM) {
				grade_add_frame(r, cv->cm->req_frame);
				grade_add_frame(r, cv->cm->rep_frame);
			} else {
				grade_conv_frames(cap, cv, r);
			}
		}
	}
	r->pass = n >= c->min_conversations;
	if (!r->pass && c->by == BY_CM && !cap->cm_req) {
		g_string_truncate(r->reason, 0);
		if (cut_before(cap, r, "the CM REQ/REP that pair the QPs")) {
			g_string_free(others, TRUE);
			return;
		}
	}
	if (!r->pass) {
		GString *head = g_string_new("");

		g_string_append_printf(head, "%ld %s paired by %s, expected at least %ld", n,
				       grade_plural((uint64_t)n, "conversation", "conversations"),
				       want[c->by], c->min_conversations);
		if (r->reason->len)
			g_string_append_printf(head, " (%s)", r->reason->str);
		if (others->len)
			g_string_append_printf(head, "; %s", others->str);
		else if (!cap->convs->len)
			g_string_append(head, "; no QP conversation in the capture");
		g_string_assign(r->reason, head->str);
		g_string_free(head, TRUE);
		for (guint i = 0; i < cap->convs->len; i++)
			grade_conv_frames(cap, g_ptr_array_index(cap->convs, i), r);
	}
	g_string_free(others, TRUE);
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
		    !grade_tr_match(c, qpt_service_name(f->opcode)) || !rec_op_match(c, f))
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
		if ((oi->flags & QPT_O_REQ) && (oi->hdrs & QPT_H_ATOMICETH) && rec_op_match(c, f))
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
	if (!hit->len && cut_before(cap, r, "the TCP exchange"))
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
 * DSCP asked for (qpt_ecn.c counts them per direction). */
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
	case K_OPS: check_ops(c, cap, r); break;
	case K_MULTI_PACKET: check_multi_packet(c, cap, r); break;
	case K_CM_HANDSHAKE: check_cm(c, cap, r); break;
	case K_PAIRED: check_paired(c, cap, r); break;
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
