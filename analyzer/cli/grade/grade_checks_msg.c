/* grade_checks_msg.c - the check kinds of `qptrace grade` about messages
 * and connections: the operations used, multi-packet messages, the CM
 * handshake, paired QPs (the others: grade_checks.c) */
#include <inttypes.h>
#include <string.h>

#include "grade.h"
#include "qpt_findings.h"

void grade_check_ops(const struct check *c, const struct capture *cap, struct result *r)
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

void grade_check_multi_packet(const struct check *c, const struct capture *cap,
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

		if (f->mad || !grade_tr_match(c, qpt_service_name(f->opcode)) || !grade_rec_op_match(c, f) ||
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

void grade_check_cm(const struct check *c, const struct capture *cap, struct result *r)
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
	if (!total && !cap->cm_req && grade_cut_before(cap, r, "the CM handshake")) {
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

void grade_check_paired(const struct check *c, const struct capture *cap, struct result *r)
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
		if (grade_cut_before(cap, r, "the CM REQ/REP that pair the QPs")) {
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
