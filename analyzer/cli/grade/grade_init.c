/* grade_init.c - `grade --lint RUBRIC` and `grade --init-from REF.pcap`
 *
 * --lint loads the rubric as grading does (syntax, parameters, every
 * problem with its line) and then looks for checks whose own settings
 * decide the outcome whatever the capture: one that can never fail (at
 * least 0 messages) and one that can never pass (a UD READ; a 100-byte
 * message in 3 packets; a check requiring one that can never pass).
 *
 * --init-from writes a starting rubric from a reference capture: a check
 * for each thing the capture shows (its transport, the messages of each
 * operation with their count and size, FIRST/MIDDLE/LAST packets, ACKs or
 * none, the pairing, the CM handshake and its port, no retransmission, the
 * path MTU, the TCP side channel's port).  Each candidate is run on the
 * reference and kept only when it passes there; the ones left out are
 * named in comments.  With --command, the numbers the command line sets
 * become parameters (${iterations}, ${size}, ...), so the rubric grades the
 * lab's other variants too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "grade.h"

/* ---- --lint ------------------------------------------------------------- */

/* Why c can never fail or never pass by its own settings, or NULL. */
static char *lint_check(const struct check *c, bool *never_pass)
{
	bool ud = !strcmp(c->transport, "UD"), uc = !strcmp(c->transport, "UC");
	bool read_or_atomic = c->op == QPT_OP_READ || c->op == QPT_OP_CMP_SWAP ||
			      c->op == QPT_OP_FETCH_ADD || c->op == QPT_OP_ATOMIC_WRITE;

	*never_pass = false;
	switch (c->kind) {
	case K_OPS:
		if (c->min_count == 0 && c->max_count < 0)
			return g_strdup_printf("can never fail: at least 0 messages (min_count=0, no max_count)");
		/* a message of size bytes has at most ceil(size/256) packets
		 * (256: the smallest path MTU) */
		if (c->size >= 0 && c->min_packets > MAX(1, (c->size + 255) / 256)) {
			*never_pass = true;
			return g_strdup_printf("can never pass: a %ld-byte message is at most %ld packet(s) even at the smallest path MTU (256), not %ld",
					       c->size, MAX(1, (c->size + 255) / 256), c->min_packets);
		}
		/* fall through */
	case K_MULTI_PACKET:
		if ((ud && c->op >= 0 && c->op != QPT_OP_SEND && c->op != QPT_OP_SEND_IMM) ||
		    (uc && read_or_atomic)) {
			*never_pass = true;
			return g_strdup_printf("can never pass: %s has no %s", c->transport, qpt_op_name(c->op));
		}
		if (c->kind == K_MULTI_PACKET && ud) {
			*never_pass = true;
			return g_strdup("can never pass: a UD message is always one packet");
		}
		break;
	case K_IMMEDIATE:
	case K_ATOMIC:
	case K_HEADER:
		if (c->min_count == 0)
			return g_strdup_printf("can never fail: at least 0 (min_count=0)");
		break;
	default:
		break;
	}
	return NULL;
}

/* Prints the rubric and its problems; 0 clean, 1 a problem, 2 invalid. */
int grade_lint(const char *file, const struct grade_overrides *ov)
{
	struct rubric *rb = grade_rubric_load(file, ov);
	bool *never;
	int problems = 0;

	if (!rb)
		return 2;
	never = g_new0(bool, rb->checks->len);
	printf("rubric %s: %s (%u checks, %ld points)\n", file, rb->name, rb->checks->len,
	       rb->max_points);
	if (rb->not_checked->len)
		printf("  not checked for these parameters: %s\n", rb->not_checked->str);
	for (guint i = 0; i < rb->checks->len; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);
		char *why = lint_check(c, &never[i]);

		for (guint k = 0; !why && c->req && k < c->req->len; k++) {
			guint j = g_array_index(c->req, guint, k);

			if (never[j]) {
				never[i] = true;
				why = g_strdup_printf("can never pass: it requires %s, which can never pass",
						      ((const struct check *)g_ptr_array_index(rb->checks, j))->name);
			}
		}
		if (why) {
			printf("%s:%d: check %s %s\n", file, c->line, c->name, why);
			problems++;
		} else if (c->points == 0) {
			printf("%s:%d: check %s scores nothing (points=0): it must pass, but adds no points\n",
			       file, c->line, c->name);
		}
		g_free(why);
	}
	printf("%d %s\n", problems, problems == 1 ? "problem" : "problems");
	g_free(never);
	grade_rubric_free(rb);
	return problems ? 1 : 0;
}

/* ---- --init-from ---------------------------------------------------------- */

/* The parameters a --command sets, and what the rubric writes for a value:
 * "${size}" when it is a parameter's, "${iterations}*2" for twice it. */
struct init_params {
	struct grade_params ps;
	char *tool;
};

static const char *const known_params[] = { "iterations", "size", "port", "mtu", "qps" };

static char *num(const struct init_params *ip, const char *name, uint64_t v, bool twice)
{
	for (guint i = 0; ip && i < ip->ps.list->len; i++) {
		const struct grade_param *p = g_ptr_array_index(ip->ps.list, i);
		uint64_t pv;

		if (!p->from || !g_ascii_string_to_unsigned(p->value, 10, 1, G_MAXINT64, &pv, NULL))
			continue;
		if (strcmp(name, p->name))
			continue;
		if (pv == v)
			return g_strdup_printf("${%s}", p->name);
		if (twice && pv * 2 == v)
			return g_strdup_printf("${%s}*2", p->name);
	}
	return g_strdup_printf("%" PRIu64, v);
}

/* The value of a parameter the command line set, 0 none. */
static uint64_t param_of(const struct init_params *ip, const char *name)
{
	const struct grade_param *p = ip ? grade_param_find(&ip->ps, name) : NULL;
	uint64_t v = 0;

	if (p && !g_ascii_string_to_unsigned(p->value, 10, 1, G_MAXINT64, &v, NULL))
		v = 0;
	return v;
}

struct opsum {
	char transport[4];
	int op;
	uint64_t n, multi, min_packets;
	int64_t size; /* -1: not all the same */
};

/* The candidate checks for cap, as key-file text. */
static void candidates(GString *o, const struct capture *cap, const struct init_params *ip,
		       const char *ref)
{
	GArray *ops = g_array_new(FALSE, TRUE, sizeof(struct opsum));
	char tr[4] = "";
	bool one_tr = true, acks = false, all_paired = cap->convs->len > 0, all_cm = true,
	     any_cm = false, teardown = true;
	uint64_t ncm = 0;
	long cm_port = -1, mtu = 0;
	uint64_t psize = param_of(ip, "size"), pmtu = param_of(ip, "mtu");
	/* what needs more than one packet is left out of smaller variants */
	const char *when = psize && pmtu ? "when=${size} > ${mtu}\n" : "";
	char *v;

	for (guint i = 0; i < cap->msgs->len; i++) {
		const struct mrec *m = &g_array_index(cap->msgs, struct mrec, i);
		const struct qpt_conv_stats *cv = m->conv >= 0 && (guint)m->conv < cap->convs->len ?
						    g_ptr_array_index(cap->convs, m->conv) : NULL;
		struct opsum *s = NULL;

		if (!cv || m->op == QPT_OP_NONE)
			continue;
		for (guint k = 0; k < ops->len && !s; k++) {
			struct opsum *t = &g_array_index(ops, struct opsum, k);

			if (t->op == m->op && !strcmp(t->transport, cv->transport))
				s = t;
		}
		if (!s) {
			struct opsum n = { .op = m->op, .size = m->len, .min_packets = m->packets };

			g_strlcpy(n.transport, cv->transport, sizeof n.transport);
			g_array_append_val(ops, n);
			s = &g_array_index(ops, struct opsum, ops->len - 1);
		}
		s->n++;
		s->multi += m->packets > 1;
		s->min_packets = MIN(s->min_packets, m->packets);
		if (s->size != (int64_t)m->len)
			s->size = -1;
	}
	for (guint i = 0; i < cap->convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(cap->convs, i);

		if (!cv->transport[0])
			continue;
		if (!tr[0])
			g_strlcpy(tr, cv->transport, sizeof tr);
		else if (strcmp(tr, cv->transport))
			one_tr = false;
		all_paired = all_paired && cv->paired_by != QPT_PAIR_NONE;
		all_cm = all_cm && cv->paired_by == QPT_PAIR_CM;
		if (cv->has_cm) {
			any_cm = true;
			ncm++;
			teardown = teardown && cv->cm->drep_frame;
			if (cv->cm->has_ip)
				cm_port = cm_port < 0 || cm_port == cv->cm->ip.dst_port ? cv->cm->ip.dst_port : 0;
		}
		if (cv->mtu)
			mtu = !mtu || mtu == (long)cv->mtu ? (long)cv->mtu : -1;
	}
	for (guint i = 0; i < cap->frames->len; i++)
		acks = acks || (qpt_opcodes[g_array_index(cap->frames, struct frec, i).opcode].flags & QPT_O_ACK);

	if (tr[0] && one_tr)
		g_string_append_printf(o, "[check transport]\nkind=transport\ntransport=%s\nonly=true\npoints=2\n"
				       "explain=%s uses %s QPs only.\n\n", tr, ref, tr);
	for (guint k = 0; k < ops->len; k++) {
		const struct opsum *s = &g_array_index(ops, struct opsum, k);
		const char *opn = qpt_op_name(s->op);
		char *lname = g_ascii_strdown(opn, -1), *ltr = g_ascii_strdown(s->transport, -1);

		v = num(ip, "iterations", s->n, true);
		g_string_append_printf(o, "[check %s_%s]\nkind=ops\ntransport=%s\nop=%s\nmin_count=%s\nmax_count=%s\n",
				       ltr, lname, s->transport, opn, v, v);
		g_free(v);
		if (s->size >= 0) {
			v = num(ip, "size", (uint64_t)s->size, false);
			g_string_append_printf(o, "size=%s\n", v);
			g_free(v);
			if (s->min_packets > 1 && psize && pmtu && s->min_packets == (psize + pmtu - 1) / pmtu)
				g_string_append(o, "min_packets_per_message=max(1, ceil(${size}/${mtu}))\n");
			else if (s->min_packets > 1)
				g_string_append_printf(o, "min_packets_per_message=%" PRIu64 "\n", s->min_packets);
		}
		g_string_append_printf(o, "points=3\nexplain=%s shows %" PRIu64 " %s %s messages", ref, s->n,
				       s->transport, opn);
		if (s->size >= 0)
			g_string_append_printf(o, " of %" PRId64 " bytes", s->size);
		g_string_append(o, ".\n\n");
		if (s->multi && s->op != QPT_OP_READ)
			g_string_append_printf(o, "[check %s_%s_multi_packet]\nkind=multi_packet\ntransport=%s\nop=%s\n%s"
					       "explain=Messages longer than the path MTU go as FIRST, MIDDLE and LAST packets.\n\n",
					       ltr, lname, s->transport, opn, when);
		g_free(lname);
		g_free(ltr);
	}
	if (tr[0])
		g_string_append_printf(o, "[check acks]\nkind=acks\npresent=%s\nexplain=%s\n\n",
				       acks ? "true" : "false",
				       acks ? "RC is reliable: the responder acknowledges (AETH)."
					    : "Nothing is acknowledged (no AETH): UC and UD are unreliable.");
	if (all_paired && tr[0])
		g_string_append_printf(o, "[check paired]\nkind=paired\nby=%s\nmin_conversations=%u\n"
				       "explain=Both QPs of each conversation are known (%s).\n\n",
				       all_cm ? "cm" : "any", cap->convs->len,
				       all_cm ? "from the CM REQ/REP" : "from the CM or the traffic");
	if (any_cm) {
		g_string_append_printf(o, "[check cm_handshake]\nkind=cm_handshake\nmin_connections=%" PRIu64 "\n%s",
				       ncm, teardown ? "teardown=true\n" : "");
		if (cm_port > 0) {
			v = num(ip, "port", (uint64_t)cm_port, false);
			g_string_append_printf(o, "port=%s\n", v);
			g_free(v);
		}
		g_string_append(o, "points=2\nexplain=The connections are set up by RDMA CM (REQ, REP, RTU).\n\n");
	}
	if (cap->iba)
		g_string_append(o, "[check no_retransmissions]\nkind=no_retransmissions\nexplain=A clean run resends nothing.\n\n");
	if (mtu > 0) {
		v = num(ip, "mtu", (uint64_t)mtu, false);
		g_string_append_printf(o, "[check path_mtu]\nkind=path_mtu\nvalue=%s\n%sexplain=The path MTU is %ld bytes.\n\n",
				       v, when, mtu);
		g_free(v);
	}
	if (g_hash_table_size(cap->tcp_ports)) {
		GHashTableIter it;
		gpointer key, val;
		guint best = 0, port = 0;

		g_hash_table_iter_init(&it, cap->tcp_ports);
		while (g_hash_table_iter_next(&it, &key, &val))
			if (GPOINTER_TO_UINT(val) > best ||
			    (GPOINTER_TO_UINT(val) == best && GPOINTER_TO_UINT(key) < port)) {
				best = GPOINTER_TO_UINT(val);
				port = GPOINTER_TO_UINT(key);
			}
		v = num(ip, "port", port, false);
		g_string_append_printf(o, "[check oob_tcp]\nkind=oob_tcp\nport=%s\n"
				       "explain=The QP numbers and PSNs are exchanged over TCP port %u first.\n\n",
				       v, port);
		g_free(v);
	}
	g_array_free(ops, TRUE);
}

static struct rubric *empty_rubric(void)
{
	struct rubric *rb = g_new0(struct rubric, 1);

	rb->checks = g_ptr_array_new();
	rb->not_checked = g_string_new("");
	grade_params_init(&rb->params);
	return rb;
}

/* The rubric's [rubric] and [params] groups. */
static void head(GString *o, const char *ref, const struct init_params *ip, const char *command)
{
	char *base = g_path_get_basename(ref);

	g_string_append_printf(o, "# Made by qptrace grade --init-from %s%s%s%s: a starting rubric;\n"
				  "# every check passes on %s.  Edit the names, points and explanations.\n",
			       base, command ? " --command '" : "", command ? command : "", command ? "'" : "",
			       base);
	g_string_append(o, "[rubric]\n");
	if (command) {
		g_string_append_printf(o, "name=%s", ip->tool);
		for (guint i = 0; i < ip->ps.list->len; i++) {
			const struct grade_param *p = g_ptr_array_index(ip->ps.list, i);

			if (!strcmp(p->name, "iterations") || !strcmp(p->name, "size"))
				g_string_append_printf(o, " %s=${%s}", p->name, p->name);
		}
		g_string_append_printf(o, "\ntool=%s\n", ip->tool);
	} else {
		g_string_append_printf(o, "name=like %s\n", base);
	}
	g_string_append_printf(o, "description=What %s shows.\n\n", base);
	if (ip && ip->ps.list->len) {
		g_string_append(o, "[params]\n");
		for (guint i = 0; i < ip->ps.list->len; i++) {
			const struct grade_param *p = g_ptr_array_index(ip->ps.list, i);

			g_string_append_printf(o, "%s=%s\n", p->name, p->value);
		}
		g_string_append_c(o, '\n');
	}
	g_free(base);
}

/* Writes the rubric text to a temporary file and loads it; NULL on error
 * (printed). */
static struct rubric *load_text(const GString *text, char **tmp_path)
{
	GError *e = NULL;
	int fd = g_file_open_tmp("qptrace-init-XXXXXX.ini", tmp_path, &e);
	struct rubric *rb;

	if (fd < 0) {
		g_printerr("qptrace grade: --init-from: cannot write a temporary file: %s\n", e->message);
		g_error_free(e);
		return NULL;
	}
	close(fd);
	if (!g_file_set_contents(*tmp_path, text->str, (gssize)text->len, &e)) {
		g_printerr("qptrace grade: --init-from: %s\n", e->message);
		g_error_free(e);
		return NULL;
	}
	rb = grade_rubric_load(*tmp_path, NULL);
	return rb;
}

int grade_init_from(const char *ref, const char *command, const struct opts *o)
{
	struct init_params ip = { 0 };
	struct capture cap = { .file = ref };
	struct rubric *empty = empty_rubric(), *rb = NULL;
	GString *text = g_string_new(""), *checks = g_string_new(""), *left = g_string_new("");
	char *tmp = NULL, *base = NULL;
	int status = 2;

	grade_params_init(&ip.ps);
	if (command) {
		struct grade_params all;
		GString *err = g_string_new("");

		grade_params_init(&all);
		for (guint i = 0; i < G_N_ELEMENTS(known_params); i++)
			grade_param_add(&all, known_params[i], "0", NULL);
		if (!grade_command_params(command, NULL, &all, "--command", &ip.tool, err)) {
			g_printerr("qptrace grade: --command '%s': %s\n", command, err->str);
			g_string_free(err, TRUE);
			grade_params_clear(&all);
			goto out;
		}
		g_string_free(err, TRUE);
		/* only what the tool sets (its options or its defaults) */
		for (guint i = 0; i < all.list->len; i++) {
			const struct grade_param *p = g_ptr_array_index(all.list, i);

			if (p->from && g_ascii_isdigit(p->value[0]) && strcmp(p->value, "0"))
				grade_param_add(&ip.ps, p->name, p->value, "--command");
		}
		grade_params_clear(&all);
	}
	grade_read_capture(&cap, o, empty);
	if (!cap.opened || cap.error) {
		g_printerr("qptrace grade: --init-from %s: %s\n", ref, cap.error);
		goto out;
	}
	if (!cap.nframes) {
		g_printerr("qptrace grade: --init-from %s: the capture holds no frame\n", ref);
		goto out;
	}
	base = g_path_get_basename(ref);
	candidates(checks, &cap, command ? &ip : NULL, base);
	head(text, ref, &ip, command);
	g_string_append(text, checks->str);
	rb = load_text(text, &tmp);
	if (!rb)
		goto out;
	/* keep the checks the reference passes */
	{
		struct capture c2 = { .file = ref };
		GString *kept = g_string_new("");

		grade_read_capture(&c2, o, rb);
		for (guint i = 0; i < rb->checks->len; i++) {
			const struct check *c = g_ptr_array_index(rb->checks, i);
			struct result r = { 0 };
			char *group = g_strdup_printf("[check %s]\n", c->name);
			const char *at = strstr(checks->str, group), *end;

			grade_run_check(c, i, &c2, &r);
			end = at ? strstr(at + 1, "\n[check ") : NULL;
			if (at && r.pass)
				g_string_append_len(kept, at, end ? end - at + 1 : (gssize)strlen(at));
			else
				g_string_append_printf(left, "# left out: %s (the reference fails it: %s)\n",
						       c->name, r.reason->str);
			g_string_free(r.reason, TRUE);
			g_array_free(r.frames, TRUE);
			g_free(group);
		}
		grade_capture_free(&c2, rb->checks->len);
		g_string_truncate(text, 0);
		head(text, ref, &ip, command);
		g_string_append(text, left->str);
		if (left->len)
			g_string_append_c(text, '\n');
		g_string_append(text, kept->str);
		g_string_free(kept, TRUE);
	}
	if (fwrite(text->str, 1, text->len, stdout) != text->len || fflush(stdout) != 0) {
		g_printerr("qptrace grade: --init-from: cannot write the rubric: %s\n", g_strerror(errno));
		goto out;
	}
	status = 0;
out:
	if (tmp) {
		unlink(tmp);
		g_free(tmp);
	}
	grade_capture_free(&cap, 0);
	grade_rubric_free(rb);
	g_ptr_array_free(empty->checks, TRUE);
	g_string_free(empty->not_checked, TRUE);
	grade_params_clear(&empty->params);
	g_free(empty);
	grade_params_clear(&ip.ps);
	g_free(ip.tool);
	g_free(base);
	g_string_free(text, TRUE);
	g_string_free(checks, TRUE);
	g_string_free(left, TRUE);
	return status;
}
