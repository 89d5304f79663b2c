/* qptrace.c - command line front end of the qptrace engine
 *
 *   qptrace packets [-v | --json] [-f BPF] FILE...   one line per RoCE/IB frame
 *
 * Exit status: 0 when every input was read to its end, 2 when any input
 * could not be opened or was cut mid-record (the others are still read).
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "driver.h"
#include "interrupt.h"
#include "options.h"
#include "output.h"
#include "reader.h"
#include "shard.h"
#include "qpt_verdict.h"

/* Every string and vector the option table filled (g_option_context_parse
 * allocates them; they live in main()'s struct opts). */
static void opts_clear(struct opts *o)
{
	gchar **strs[] = { &o->filter, &o->rubric, &o->command, &o->gradebook,
			   &o->feedback, &o->student_pattern, &o->lint, &o->init_from,
			   &o->html, &o->addr, &o->from, &o->to, &o->output,
			   &o->write_file, &o->mon.iface, &o->mon.dir, &o->mon.metrics,
			   &o->mon.metrics_auth };
	gchar ***vecs[] = { &o->sets, &o->ports, &o->files, &o->read_files };

	for (size_t i = 0; i < G_N_ELEMENTS(strs); i++)
		g_clear_pointer(strs[i], g_free);
	for (size_t i = 0; i < G_N_ELEMENTS(vecs); i++)
		g_clear_pointer(vecs[i], g_strfreev);
}

static bool parse_ports(struct opts *o)
{
	for (gchar **p = o->ports; p && *p; p++) {
		gchar **parts = g_strsplit(*p, ",", -1);

		for (gchar **q = parts; *q; q++) {
			guint64 v;

			if (!g_ascii_string_to_unsigned(*q, 10, 1, 65535, &v, NULL) ||
			    o->dec.n_udp_ports >= G_N_ELEMENTS(o->port_buf)) {
				g_printerr("qptrace: bad UDP port '%s'\n", *q);
				g_strfreev(parts);
				return false;
			}
			o->port_buf[o->dec.n_udp_ports++] = (uint16_t)v;
		}
		g_strfreev(parts);
	}
	o->dec.udp_ports = o->port_buf;
	return true;
}

/* A file operand that names a command and does not exist: the command was
 * put after the files (`qptrace x.pcap events`), which is not read as one. */
struct command;
static bool files_not_commands(const struct opts *o, const struct command *cmd);

/* Which commands take an option (a bit per command, in commands[] order). */
enum { C_SUMMARY = 1 << 0, C_EVENTS = 1 << 1, C_PACKETS = 1 << 2, C_GRADE = 1 << 3,
       C_PLOT = 1 << 4, C_VERDICTS = 1 << 5 };
enum { C_MONITOR = 1 << 6 };
#define C_READ (C_SUMMARY | C_EVENTS | C_PACKETS | C_GRADE | C_PLOT)
#define C_FLOW (C_SUMMARY | C_EVENTS | C_PLOT)

static int cmd_verdicts(struct opts *o);

static const struct command {
	const char *name;
	const char *summary;
	int (*run)(struct opts *o);
	unsigned bit;
	bool takes_files;
} commands[] = {
	{ "summary", "a diagnosis, then one line per QP conversation (the default)", cmd_summary, C_SUMMARY, true },
	{ "events", "one line per anomaly: retransmission, gap, NAK, ...", cmd_events, C_EVENTS, true },
	{ "packets", "one line per RoCE/InfiniBand frame", cmd_packets, C_PACKETS, true },
	{ "grade", "grade lab captures against a rubric", cmd_grade, C_GRADE, true },
	{ "plot", "time-sequence graph of a conversation (SVG)", cmd_plot, C_PLOT, true },
	{ "verdicts", "the verdict kinds the analysis gives, with their counters", cmd_verdicts, C_VERDICTS, false },
	{ "monitor", "a live interface or rotating capture files: events as they happen, periodic summaries, Prometheus metrics", cmd_monitor, C_MONITOR, false },
};

/* Every option once, with the commands that take it. */
struct opt_row {
	unsigned cmds;
	GOptionEntry e;
};

static GOptionEntry *entries_for(const struct opt_row *rows, size_t n, unsigned cmd)
{
	GArray *a = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));

	for (size_t i = 0; i < n; i++)
		if (rows[i].cmds & cmd)
			g_array_append_val(a, rows[i].e);
	return (GOptionEntry *)(void *)g_array_free(a, FALSE);
}

/* The edit distance of a and b (insertions, deletions, substitutions,
 * and a swap of two neighbours as one), for "did you mean". */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned *d, r;

	if (na > 64 || nb > 64)
		return 99;
	d = g_new(unsigned, (na + 1) * (nb + 1));
#define D(i, j) d[(i) * (nb + 1) + (j)]
	for (size_t i = 0; i <= na; i++)
		D(i, 0) = (unsigned)i;
	for (size_t j = 0; j <= nb; j++)
		D(0, j) = (unsigned)j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			unsigned v = MIN(D(i - 1, j) + 1, D(i, j - 1) + 1);

			v = MIN(v, D(i - 1, j - 1) + (a[i - 1] != b[j - 1]));
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				v = MIN(v, D(i - 2, j - 2) + 1);
			D(i, j) = v;
		}
	r = D(na, nb);
#undef D
	g_free(d);
	return r;
}

/* Whether a name is close enough to want for "did you mean": a prefix of
 * it, or at most a third of its letters wrong. */
static bool near(const char *typed, const char *want, unsigned *best)
{
	unsigned e = g_str_has_prefix(want, typed) && strlen(typed) >= 2 ? 1 : edit_distance(typed, want);

	if (e > MAX(1u, (unsigned)strlen(want) / 3) || e >= *best)
		return false;
	*best = e;
	return true;
}

/* The command closest to s, or NULL. */
static const struct command *closest_command(const char *s);

/* `qptrace verdicts`: the verdict table, as every front end shows it. */
static int cmd_verdicts(struct opts *o)
{
	GString *out = g_string_new("");
	int status;

	for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
		const struct qpt_verdict_info *vi = &qpt_verdicts[k];

		if (o->json) {
			g_string_append(out, "{\"kind\":");
			qpt_json_escape(out, vi->key);
			g_string_append(out, ",\"label\":");
			qpt_json_escape(out, vi->label);
			g_string_append(out, ",\"expert\":");
			qpt_json_escape(out, vi->expert);
			g_string_append(out, ",\"field\":\"roce.analysis.");
			g_string_append(out, vi->key);
			g_string_append(out, "\",\"counter\":");
			qpt_json_escape(out, vi->counter);
			g_string_append(out, "}\n");
		} else {
			g_string_append_printf(out, "%-20s %-28s %s\n", vi->key, vi->counter,
					       vi->expert);
		}
	}
	status = qpt_write_out(out, "standard output");
	g_string_free(out, TRUE);
	return status;
}

static void usage_description(GString *desc)
{
	g_string_append(desc, "Commands:\n");
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		g_string_append_printf(desc, "  %-10s %s\n", commands[i].name,
				       commands[i].summary);
	g_string_append(desc, "\nFILE is a pcap or pcapng capture, - for standard input.\n"
			      "`qptrace help COMMAND` or `qptrace COMMAND --help` shows the "
			      "options of that command.\n");
}

static const struct command *closest_command(const char *s)
{
	const struct command *c = NULL;
	unsigned best = 99;

	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		if (near(s, commands[i].name, &best))
			c = &commands[i];
	return c;
}

/* An option GLib did not know: the one of this command's (or another
 * command's) it is closest to. */
static void unknown_option(const struct opt_row *rows, size_t n, const struct command *cmd,
			   const char *message)
{
	const char *typed = strrchr(message, ' ');
	const struct opt_row *best_row = NULL;
	unsigned best = 99;
	gchar *name;

	if (!typed || strncmp(typed + 1, "--", 2))
		return;
	name = g_strndup(typed + 3, strcspn(typed + 3, "="));
	for (int pass = 0; pass < 2 && !best_row; pass++)
		for (size_t i = 0; i < n; i++) {
			const GOptionEntry *e = &rows[i].e;

			if (!e->long_name || !e->long_name[0] || !(pass || (rows[i].cmds & cmd->bit)))
				continue;
			if (near(name, e->long_name, &best))
				best_row = &rows[i];
		}
	if (best_row && (best_row->cmds & cmd->bit)) {
		g_printerr("qptrace %s: did you mean --%s?\n", cmd->name, best_row->e.long_name);
	} else if (best_row) {
		for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
			if (best_row->cmds & commands[i].bit) {
				g_printerr("qptrace %s: --%s is an option of qptrace %s\n", cmd->name,
					   best_row->e.long_name, commands[i].name);
				break;
			}
	}
	g_free(name);
}

static bool files_not_commands(const struct opts *o, const struct command *cmd)
{
	for (gchar **f = o->files; f && *f; f++)
		for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
			if (!strcmp(*f, commands[i].name) && !g_file_test(*f, G_FILE_TEST_EXISTS)) {
				g_printerr("qptrace %s: '%s' is a command, not a file: the command "
					   "comes first (qptrace %s [OPTION...] FILE...)\n",
					   cmd->name, *f, *f);
				return false;
			}
	return true;
}

/* --conv ID: a conversation id, 0 or more. */
static bool parse_id(const struct command *cmd, const char *opt, const char *s,
		     guint64 max, gint *out)
{
	guint64 v;

	if (!s)
		return true;
	if (!g_ascii_string_to_unsigned(s, 10, 0, max, &v, NULL)) {
		g_printerr("qptrace %s: bad %s '%s': a conversation id (0, 1, ... as qptrace "
			   "summary numbers them)\n", cmd->name, opt, s);
		return false;
	}
	*out = (gint)v;
	return true;
}

/* --qp QPN: 24 bits, decimal or 0x hex. */
static bool parse_qpn(const struct command *cmd, const char *s, gint64 *out)
{
	guint64 v;

	if (!s)
		return true;
	if (!g_ascii_string_to_unsigned(s, g_str_has_prefix(s, "0x") ? 16 : 10, 0, 0xffffff,
					&v, NULL) &&
	    !(g_str_has_prefix(s, "0x") &&
	      g_ascii_string_to_unsigned(s + 2, 16, 0, 0xffffff, &v, NULL))) {
		g_printerr("qptrace %s: bad --qp '%s': a QP number of 24 bits (decimal or 0x hex)\n",
			   cmd->name, s);
		return false;
	}
	*out = (gint64)v;
	return true;
}

/* -c N: a count of frames, 1 or more. */
static bool parse_count(const struct command *cmd, const char *s, gint *out)
{
	guint64 v;

	if (!s)
		return true;
	if (!g_ascii_string_to_unsigned(s, 10, 1, G_MAXINT, &v, NULL)) {
		g_printerr("qptrace %s: bad -c '%s': a number of frames, 1 or more\n",
			   cmd->name, s);
		return false;
	}
	*out = (gint)v;
	return true;
}

/* --max-qps N: 1 or more QPs (the engine's halves). */
static bool parse_max_qps(const struct command *cmd, const char *s, guint32 *out)
{
	guint64 v;

	if (!s)
		return true;
	if (!g_ascii_string_to_unsigned(s, 10, 1, G_MAXUINT32, &v, NULL)) {
		g_printerr("qptrace %s: bad --max-qps '%s': a number of QPs, 1 or more\n",
			   cmd->name, s);
		return false;
	}
	*out = (guint32)v;
	return true;
}

/* QPTRACE_COLD_EVERY=N (the environment, for tests): the engine's sweep
 * of idle halves every N frames instead of 65,536 (qpt_flow_cold.c; the
 * results are the same whatever N is, which tests/cold_sweep.py checks
 * with 1). */
static bool parse_cold_every(const struct command *cmd, guint32 *out)
{
	const char *s = g_getenv("QPTRACE_COLD_EVERY");
	guint64 v;

	if (!s)
		return true;
	if (!g_ascii_string_to_unsigned(s, 10, 1, G_MAXUINT32, &v, NULL)) {
		g_printerr("qptrace %s: bad QPTRACE_COLD_EVERY '%s' in the environment: "
			   "a number of frames, 1 or more\n", cmd->name, s);
		return false;
	}
	*out = (guint32)v;
	return true;
}

/* -j N: analysis threads, 1 to QPT_MAX_JOBS; without it, the default for
 * the commands that take it. */
static bool parse_jobs(const struct command *cmd, const char *s, gint *out)
{
	guint64 v;

	if (!s) {
		if (cmd->bit & (C_SUMMARY | C_EVENTS | C_PACKETS))
			*out = (gint)qpt_default_jobs();
		return true;
	}
	if (!g_ascii_string_to_unsigned(s, 10, 1, QPT_MAX_JOBS, &v, NULL)) {
		g_printerr("qptrace %s: bad -j '%s': a number of analysis threads, 1 to %d\n",
			   cmd->name, s, QPT_MAX_JOBS);
		return false;
	}
	*out = (gint)v;
	return true;
}

/* --cnp-dscp D, --cnp-priority P: the value CNPs are expected on, or -1
 * (any); --ecn-window US: how long after a mark its CNP may come. */
static bool parse_qos(const struct command *cmd, const char *dscp, const char *pcp,
		      const char *win, struct opts *o)
{
	gint64 v;
	gdouble us;
	char *end;

	o->cnp_dscp = 48;
	o->cnp_pcp = 6;
	o->ecn_window_ns = 100000;
	if (dscp && (!g_ascii_string_to_signed(dscp, 10, -1, 63, &v, NULL))) {
		g_printerr("qptrace %s: bad --cnp-dscp '%s': a DSCP from 0 to 63, or -1 for any\n",
			   cmd->name, dscp);
		return false;
	} else if (dscp) {
		o->cnp_dscp = (gint)v;
	}
	if (pcp && (!g_ascii_string_to_signed(pcp, 10, -1, 7, &v, NULL))) {
		g_printerr("qptrace %s: bad --cnp-priority '%s': an 802.1Q priority from 0 to 7, "
			   "or -1 for any\n", cmd->name, pcp);
		return false;
	} else if (pcp) {
		o->cnp_pcp = (gint)v;
	}
	if (win) {
		us = g_ascii_strtod(win, &end);
		if (!*win || *end || !(us > 0) || us > 1e9) {
			g_printerr("qptrace %s: bad --ecn-window '%s': microseconds, more than 0\n",
				   cmd->name, win);
			return false;
		}
		o->ecn_window_ns = (gint64)(us * 1000 + 0.5);
		if (o->ecn_window_ns < 1)
			o->ecn_window_ns = 1;
	}
	return true;
}

/* -r FILE ... come first, then the operands; false when there is none. */
static bool join_read_files(struct opts *o)
{
	GPtrArray *all = g_ptr_array_new();

	for (gchar **f = o->read_files; f && *f; f++)
		g_ptr_array_add(all, g_strdup(*f));
	for (gchar **f = o->files; f && *f; f++)
		g_ptr_array_add(all, g_strdup(*f));
	g_ptr_array_add(all, NULL);
	g_strfreev(o->files);
	o->files = (gchar **)g_ptr_array_free(all, FALSE);
	return o->files[0] != NULL;
}

/* --fail-on LEVEL: the least severe finding that makes summary exit 1. */
static bool parse_fail_on(const struct command *cmd, const char *s, struct opts *o)
{
	static const struct { const char *name; enum qpt_severity sev; } levels[] = {
		{ "note", QPT_SEV_NOTE }, { "warning", QPT_SEV_WARN }, { "error", QPT_SEV_ERROR },
	};

	o->fail_on = -1;
	if (!s)
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(levels); i++)
		if (!strcmp(s, levels[i].name)) {
			o->fail_on = (gint)levels[i].sev;
			return true;
		}
	g_printerr("qptrace %s: bad --fail-on '%s': warning or error (or note)\n", cmd->name, s);
	return false;
}

/* events --time abs|rel|delta */
static bool parse_time_mode(const struct command *cmd, const char *s, struct opts *o)
{
	static const char *const modes[] = { [QPT_TIME_REL] = "rel", [QPT_TIME_ABS] = "abs",
					     [QPT_TIME_DELTA] = "delta" };

	o->time_mode = QPT_TIME_REL;
	if (!s)
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(modes); i++)
		if (!strcmp(s, modes[i])) {
			o->time_mode = (gint)i;
			return true;
		}
	g_printerr("qptrace %s: bad --time '%s': abs, rel or delta\n", cmd->name, s);
	return false;
}

static bool parse_top(const struct command *cmd, const struct opts *o)
{
	if (!(o->interval >= 0 && o->interval <= 1e6) ||
	    (o->interval > 0 && o->interval < 1e-6)) {
		g_printerr("qptrace %s: bad --interval %g: seconds, 0.000001 to 1000000\n",
			   cmd->name, o->interval);
		return false;
	}
	if (o->top >= 0)
		return true;
	g_printerr("qptrace %s: bad --top %d: a number of conversations, 1 or more\n",
		   cmd->name, o->top);
	return false;
}

/* --from after --to, when both are of the same kind, is an empty window. */
static bool window_ok(const struct command *cmd, const struct opts *o)
{
	struct qpt_input_opts io;

	if (!o->from || !o->to)
		return true;
	if (!qpt_input_opts_from(o, &io))
		return false;
	if (io.from_rel == io.to_rel && io.from_ns > io.to_ns) {
		g_printerr("qptrace %s: --from %s is after --to %s: the window is empty\n",
			   cmd->name, o->from, o->to);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	gboolean version = FALSE;
	gchar *conv_s = NULL, *qp_s = NULL, *count_s = NULL, *max_qps_s = NULL;
	gchar *jobs_s = NULL, *cnp_dscp_s = NULL, *cnp_pcp_s = NULL, *ecn_window_s = NULL;
	gchar *fail_on_s = NULL, *time_s = NULL;
	const struct opt_row rows[] = {
		{ C_PACKETS, { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose,
			       "Print every header field", NULL } },
		{ C_SUMMARY, { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose,
			       "With --long: also the rows that are zero both ways", NULL } },
		{ C_SUMMARY, { "long", 'l', 0, G_OPTION_ARG_NONE, &o.long_report,
			       "A tcptrace-style block per conversation (a->b and b->a columns)", NULL } },
		{ (C_READ & ~C_PLOT) | C_VERDICTS, { "json", 0, 0, G_OPTION_ARG_NONE, &o.json,
					 "Print JSON (JSON Lines for packets and events)", NULL } },
		{ C_READ, { "filter", 'f', 0, G_OPTION_ARG_STRING, &o.filter,
			    "Read only frames matching the BPF expression", "EXPR" } },
		{ C_READ, { "port", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.ports,
			    "Also decode UDP destination port N as RoCEv2 (repeatable)", "N" } },
		{ C_FLOW | C_PACKETS, { "conv", 0, 0, G_OPTION_ARG_STRING, &conv_s,
			    "Only this conversation (ids are those of the whole input)", "ID" } },
		{ C_SUMMARY | C_EVENTS | C_PACKETS, { "qp", 0, 0, G_OPTION_ARG_STRING, &qp_s,
					  "Only conversations with this QP number at either end (decimal or 0x hex)", "QPN" } },
		{ C_SUMMARY | C_EVENTS | C_PACKETS, { "addr", 0, 0, G_OPTION_ARG_STRING, &o.addr,
					  "Only conversations with this endpoint (IP address, GID, or 'LID N')", "ADDR" } },
		{ C_FLOW | C_PACKETS, { "count", 'c', 0, G_OPTION_ARG_STRING, &count_s,
					"Stop after N frames (packets: N frames shown; the others: N frames read that -f matched), as tcpdump -c", "N" } },
		{ C_READ, { "read", 'r', 0, G_OPTION_ARG_FILENAME_ARRAY, &o.read_files,
			    "Read FILE (as tcpdump -r; repeatable, the same as naming it)", "FILE" } },
		{ C_PACKETS, { "write", 'w', 0, G_OPTION_ARG_FILENAME, &o.write_file,
			       "Write the frames shown (a conversation, a window, a filter) to FILE as a pcap, instead of printing them", "FILE" } },
		{ C_SUMMARY | C_EVENTS, { "each", 0, 0, G_OPTION_ARG_NONE, &o.each,
					  "Analyse each file on its own (default: one merged timeline)", NULL } },
		{ C_FLOW | C_PACKETS, { "from", 0, 0, G_OPTION_ARG_STRING, &o.from,
					"Show frames at or after T (epoch seconds, +seconds from the first frame, or ISO 8601); the whole input is analysed", "T" } },
		{ C_FLOW | C_PACKETS, { "to", 0, 0, G_OPTION_ARG_STRING, &o.to,
					"Show frames at or before T", "T" } },
		{ C_READ, { "vxlan-port", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)qpt_opt_vxlan_port,
			    "Also decode UDP destination port N as VXLAN (4789 always is; repeatable)", "N" } },
		{ C_READ, { "no-crc", 0, 0, G_OPTION_ARG_NONE, &o.no_crc,
			    "Do not verify ICRC/VCRC", NULL } },
		{ C_SUMMARY, { "link-speed", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)qpt_opt_link_speed,
			       "The captured link's speed (100G, 25G, bits/s): PFC/PAUSE pause times in µs", "SPEED" } },
		{ C_GRADE, { "rubric", 0, 0, G_OPTION_ARG_FILENAME, &o.rubric,
			     "Rubric to grade against", "FILE" } },
		{ C_GRADE, { "command", 0, 0, G_OPTION_ARG_STRING, &o.command,
			     "The lab's command line: sets the rubric's parameters from the tool's options", "'TOOL ARGS'" } },
		{ C_GRADE, { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
			     "Set a rubric parameter (repeatable)", "NAME=VALUE" } },
		{ C_GRADE, { "gradebook", 0, 0, G_OPTION_ARG_FILENAME, &o.gradebook,
			     "Write a CSV gradebook, one row per capture", "FILE.csv" } },
		{ C_GRADE, { "feedback", 0, 0, G_OPTION_ARG_FILENAME, &o.feedback,
			     "Write one text report per capture into DIR", "DIR" } },
		{ C_GRADE, { "student-pattern", 0, 0, G_OPTION_ARG_STRING, &o.student_pattern,
			     "Student id: group 1 of REGEX on the path below the class folder", "REGEX" } },
		{ C_GRADE, { "lint", 0, 0, G_OPTION_ARG_FILENAME, &o.lint,
			     "Check a rubric alone: syntax, parameters, checks that can never fail or never pass", "RUBRIC" } },
		{ C_GRADE, { "init-from", 0, 0, G_OPTION_ARG_FILENAME, &o.init_from,
			     "Write a starting rubric (stdout) from a reference capture (with --command: its parameters)", "REF.pcap" } },
		{ C_GRADE, { "html", 0, 0, G_OPTION_ARG_FILENAME, &o.html,
			     "Write the class report: one static HTML page (gradebook, pass rates, scores, feedback links)", "FILE.html" } },
		{ C_PLOT, { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
			    "Write to FILE (with --top: FILE-conv<ID>.svg each)", "FILE" } },
		{ C_PLOT, { "top", 0, 0, G_OPTION_ARG_INT, &o.top,
			    "Plot the N conversations with the most retransmissions", "N" } },
		{ C_SUMMARY, { "top", 0, 0, G_OPTION_ARG_INT, &o.top,
			       "Name the N worst conversations of each finding group and of the table (default 5 and 10; -v: all)", "N" } },
		{ C_EVENTS, { "time", 't', 0, G_OPTION_ARG_STRING, &time_s,
			      "Times as rel (seconds since the first frame, the default), abs (ISO 8601 UTC, as tcpdump -tttt) or delta (since the event before, as tcpdump -ttt)", "abs|rel|delta" } },
		{ C_SUMMARY | C_PLOT, { "interval", 0, 0, G_OPTION_ARG_DOUBLE, &o.interval,
			       "A table of the capture per S seconds: packets, re-sent, PSN gaps, NAKs, RNR NAKs, CNPs, ECN-CE, pauses (the events of each interval; plot: with --timeline)", "S" } },
		{ C_PLOT, { "timeline", 0, 0, G_OPTION_ARG_NONE, &o.timeline,
			    "Draw the whole capture per interval (--interval S, or at most 512 intervals): packets, and re-sent, PSN gaps, NAKs, RNR NAKs, CNPs, ECN-CE, pauses", NULL } },
		{ C_SUMMARY, { "fail-on", 0, 0, G_OPTION_ARG_STRING, &fail_on_s,
			       "Exit with status 1 when a finding is at LEVEL or worse (warning, error)", "LEVEL" } },
		{ C_SUMMARY | C_EVENTS | C_PACKETS, { "jobs", 'j', 0, G_OPTION_ARG_STRING, &jobs_s,
					  "Analyse on N threads, the output the same as with 1 (default: the cores less 2, up to 16; 1 below 4 cores)", "N" } },
		{ C_READ, { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet,
			    "No per-file counts or progress on stderr", NULL } },
		{ C_MONITOR, { "interface", 'i', 0, G_OPTION_ARG_STRING, &o.mon.iface,
			       "Capture live on IFACE (libpcap)", "IFACE" } },
		{ C_MONITOR, { "read-dir", 'r', 0, G_OPTION_ARG_FILENAME, &o.mon.dir,
			       "Read the capture files of DIR, oldest first (tcpdump -w -G/-C rotation)", "DIR" } },
		{ C_MONITOR, { "follow", 0, 0, G_OPTION_ARG_NONE, &o.mon.follow,
			       "With -r: wait for the newest file to grow and for new files", NULL } },
		{ C_MONITOR, { "filter", 'f', 0, G_OPTION_ARG_STRING, &o.filter,
			       "Only frames matching the BPF expression", "EXPR" } },
		{ C_MONITOR, { "json", 0, 0, G_OPTION_ARG_NONE, &o.json,
			       "JSON Lines: events, periodic and final summaries", NULL } },
		{ C_MONITOR, { "interval", 0, 0, G_OPTION_ARG_DOUBLE, &o.mon.interval,
			       "A line per active conversation every S seconds, the worst first (default 10, 0: none)", "S" } },
		{ C_MONITOR, { "idle", 0, 0, G_OPTION_ARG_DOUBLE, &o.mon.idle,
			       "A conversation idle S seconds expires from the tables and metrics (default 300)", "S" } },
		{ C_MONITOR, { "no-events", 0, 0, G_OPTION_ARG_NONE, &o.mon.no_events,
			       "Do not print events, only the summaries", NULL } },
		{ C_MONITOR, { "metrics", 0, 0, G_OPTION_ARG_STRING, &o.mon.metrics,
			       "Serve Prometheus metrics on ADDR:PORT at /metrics (:PORT: the loopback; 0.0.0.0:PORT every IPv4 address)", "ADDR:PORT" } },
		{ C_MONITOR, { "metrics-auth", 0, 0, G_OPTION_ARG_FILENAME, &o.mon.metrics_auth,
			       "Ask for HTTP basic authentication: USER:PASSWORD, the first line of FILE", "FILE" } },
		{ C_MONITOR, { "metrics-max-conversations", 0, 0, G_OPTION_ARG_INT, &o.mon.metrics_max,
			       "Series per QP pair (qptrace_qp_*) for the N with the most recent trouble (default 100); the link series count every packet", "N" } },
		{ C_MONITOR, { "metrics-max-links", 0, 0, G_OPTION_ARG_INT, &o.mon.metrics_max_links,
			       "At most N link series (link, hosts, direction, priority), then one labelled 'other' (default 256)", "N" } },
		{ C_MONITOR, { "max-conversations", 0, 0, G_OPTION_ARG_INT, &o.mon.max_convs,
			       "Renew the engine when it holds more than N conversations (memory bound; default 4096)", "N" } },
		{ C_MONITOR, { "duration", 0, 0, G_OPTION_ARG_DOUBLE, &o.mon.duration,
			       "Stop after S seconds (default: at Ctrl-C)", "S" } },
		{ C_MONITOR, { "port", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.ports,
			       "Also decode UDP destination port N as RoCEv2 (repeatable)", "N" } },
		{ C_MONITOR, { "vxlan-port", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)qpt_opt_vxlan_port,
			       "Also decode UDP destination port N as VXLAN (4789 always is; repeatable)", "N" } },
		{ C_MONITOR, { "no-crc", 0, 0, G_OPTION_ARG_NONE, &o.no_crc,
			       "Do not verify ICRC/VCRC", NULL } },
		{ C_FLOW | C_PACKETS | C_MONITOR, { "max-qps", 0, 0, G_OPTION_ARG_STRING, &max_qps_s,
			"Track at most N QPs (a QP at one address as another sends to it: a connection is two); the packets of the others are counted as not analysed and the output says so (default: no limit)", "N" } },
		{ C_SUMMARY | C_EVENTS | C_GRADE, { "cnp-dscp", 0, 0, G_OPTION_ARG_STRING, &cnp_dscp_s,
			     "The DSCP CNPs are expected on (default 48; -1: any): others are cnp_priority", "D" } },
		{ C_SUMMARY | C_EVENTS | C_GRADE, { "cnp-priority", 0, 0, G_OPTION_ARG_STRING, &cnp_pcp_s,
			     "The 802.1Q priority tagged CNPs are expected on (default 6; -1: any)", "P" } },
		{ C_SUMMARY | C_EVENTS | C_GRADE, { "ecn-window", 0, 0, G_OPTION_ARG_STRING, &ecn_window_s,
			     "A CNP answers an ECN-CE mark within US microseconds (default 100)", "US" } },
		{ ~0u, { "version", 'V', 0, G_OPTION_ARG_NONE, &version,
			 "Print the version and exit", NULL } },
		{ C_READ, { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.files,
			    NULL, NULL } }, /* named in the usage line */
	};
	const struct command *cmd = NULL;
	GOptionContext *ctx;
	GOptionEntry *entries;
	GError *err = NULL;
	GString *desc = g_string_new("");
	gchar *param, *prgname = NULL;
	bool help = false;
	int status;

	/* C rules (numbers, sorting), UTF-8 messages (GLib's quotes) */
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "C");
	o.conv = -1;
	o.qp = -1;
	qpt_monitor_opts_init(&o.mon);

	if (argc > 1 && !strcmp(argv[1], "help")) {
		help = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc > 1 && argv[1][0] != '-') {
		for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
			if (!strcmp(argv[1], commands[i].name))
				cmd = &commands[i];
		if (cmd) {
			argv[1] = argv[0];
			argv++;
			argc--;
		} else if (help) {
			g_printerr("qptrace help: no command '%s' (try qptrace --help)\n", argv[1]);
			g_string_free(desc, TRUE);
			return 2;
		} else if (!g_file_test(argv[1], G_FILE_TEST_EXISTS) && closest_command(argv[1])) {
			/* a mistyped command, not a file: nothing is read */
			g_printerr("qptrace: no command or file '%s': did you mean qptrace %s?\n",
				   argv[1], closest_command(argv[1])->name);
			g_string_free(desc, TRUE);
			return 2;
		}
	}
	/* `qptrace --help`: the commands, not summary's options */
	for (int i = 1; !cmd && !help && i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ||
		    !strcmp(argv[i], "-?"))
			help = true;
	if (!cmd && !help)
		cmd = &commands[0]; /* summary */
	if (cmd) {
		entries = entries_for(rows, G_N_ELEMENTS(rows), cmd->bit);
		param = g_strdup(cmd->takes_files ? "FILE..." : "");
		prgname = g_strdup_printf("qptrace %s", cmd->name);
		g_set_prgname(prgname);
		ctx = g_option_context_new(param);
		g_option_context_set_summary(ctx, cmd->summary);
	} else {
		entries = g_new0(GOptionEntry, 2); /* the options of every command */
		entries[0] = rows[G_N_ELEMENTS(rows) - 2].e;
		param = g_strdup("FILE...");
		g_set_prgname("qptrace [COMMAND]");
		ctx = g_option_context_new(param);
		g_option_context_set_summary(ctx, "Decode and explain RoCE / InfiniBand captures.");
		usage_description(desc);
		g_option_context_set_description(ctx, desc->str);
	}
	{ /* as g_option_context_add_main_entries(), the callbacks' data &o */
		GOptionGroup *main_group = g_option_group_new(NULL, NULL, NULL, &o, NULL);

		g_option_group_add_entries(main_group, entries);
		g_option_context_set_main_group(ctx, main_group);
	}
	if (help) {
		gchar *h = g_option_context_get_help(ctx, TRUE, NULL);

		g_print("%s", h);
		g_free(h);
		status = 0;
	} else if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		g_printerr("qptrace %s: %s\n", cmd->name, err->message);
		if (g_error_matches(err, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION))
			unknown_option(rows, G_N_ELEMENTS(rows), cmd, err->message);
		g_error_free(err);
		status = 2;
	} else if (version) {
		g_print("qptrace %s\n", QPT_VERSION);
		if (QPT_WIRESHARK_VERSION[0])
			g_print("Wireshark plugin built for Wireshark %s\n", QPT_WIRESHARK_VERSION);
		status = 0;
	} else if (cmd->takes_files && !join_read_files(&o) && !o.lint && !o.init_from) {
		g_printerr("qptrace %s: no capture file given (try qptrace help %s)\n",
			   cmd->name, cmd->name);
		status = 2;
	} else if (!parse_ports(&o) || !files_not_commands(&o, cmd) ||
		   !parse_id(cmd, "--conv", conv_s, 0x7fffffff, &o.conv) ||
		   !parse_qpn(cmd, qp_s, &o.qp) || !window_ok(cmd, &o) ||
		   !parse_count(cmd, count_s, &o.count) || !parse_jobs(cmd, jobs_s, &o.jobs) ||
		   !parse_max_qps(cmd, max_qps_s, &o.max_qps) || !parse_cold_every(cmd, &o.cold_every) ||
		   !parse_qos(cmd, cnp_dscp_s, cnp_pcp_s, ecn_window_s, &o) ||
		   !parse_fail_on(cmd, fail_on_s, &o) || !parse_top(cmd, &o) ||
		   !parse_time_mode(cmd, time_s, &o)) {
		status = 2;
	} else {
		o.dec.no_crc = o.no_crc;
		qpt_vxlan_ports_to(&o, &o.dec);
		if (cmd->bit & (C_SUMMARY | C_EVENTS | C_PACKETS))
			qpt_interrupt_install(); /* Ctrl-C: the results so far */
		status = cmd->run(&o);
	}
	g_option_context_free(ctx);
	g_free(entries);
	g_free(param);
	opts_clear(&o);
	g_free(prgname);
	g_string_free(desc, TRUE);
	g_free(conv_s);
	g_free(qp_s);
	g_free(count_s);
	g_free(max_qps_s);
	g_free(jobs_s);
	g_free(cnp_dscp_s);
	g_free(cnp_pcp_s);
	g_free(ecn_window_s);
	g_free(fail_on_s);
	g_free(time_s);
	return status;
}
