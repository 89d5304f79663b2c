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

#include "cli.h"

struct counts {
	uint64_t frames, iba, malformed, bad_icrc, other;
};

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

static int cmd_packets(struct opts *o)
{
	enum qpt_print_mode mode = o->json ? QPT_PRINT_JSON :
				   o->verbose ? QPT_PRINT_VERBOSE : QPT_PRINT_LINE;
	GString *out = g_string_sized_new(1 << 16);
	struct qpt_input_opts io;
	struct qpt_pkt pkt;
	GPtrArray *errors = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	int status = 0;

	if (!qpt_input_opts_from(o, &io))
		return 2;
	io.progress = false; /* the output itself shows progress */
	/* Each file on its own: frame numbers are those of the file. */
	for (gchar **file = o->files; *file; file++) {
		gchar *one[2] = { *file, NULL };
		struct qpt_input *in = qpt_input_open(one, &io, errors);
		struct counts c = { 0 };
		struct qpt_frame f;
		double t0 = -1;

		status |= qpt_errors_print(errors);
		if (!in)
			continue;
		while (qpt_input_next(in, &f, errors) > 0) {
			c.frames++;
			if (t0 < 0)
				t0 = (double)f.ts_sec + f.ts_nsec / 1e9;
			if (!f.matched)
				continue;
			qpt_decode(&pkt, f.linktype, f.data, f.caplen, f.wirelen, &o->dec);
			if (pkt.transport == QPT_TR_NONE) {
				c.other++;
				continue;
			}
			c.iba++;
			if (pkt.error != QPT_E_OK)
				c.malformed++;
			if (pkt.icrc_checked && !pkt.icrc_ok)
				c.bad_icrc++;
			qpt_print_pkt(out, &f, &pkt, mode, t0);
			if (out->len > (1 << 16) - 4096) {
				fwrite(out->str, 1, out->len, stdout);
				g_string_truncate(out, 0);
			}
		}
		fwrite(out->str, 1, out->len, stdout);
		g_string_truncate(out, 0);
		fflush(stdout);
		status |= qpt_errors_print(errors);
		if (!o->quiet && !o->json)
			g_printerr("%s: %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT
				   " RoCE/IB (%" G_GUINT64_FORMAT " malformed, %" G_GUINT64_FORMAT
				   " bad ICRC), %" G_GUINT64_FORMAT " other\n",
				   *file, c.frames, c.iba, c.malformed, c.bad_icrc,
				   c.other);
		qpt_input_close(in);
	}
	fflush(stdout);
	g_string_free(out, TRUE);
	g_ptr_array_free(errors, TRUE);
	return status;
}

static const struct {
	const char *name;
	const char *summary;
	int (*run)(struct opts *o);
} commands[] = {
	{ "summary", "QP conversations, tcptrace style (the default)", cmd_summary },
	{ "events", "one line per anomaly: retransmission, gap, NAK, ...", cmd_events },
	{ "packets", "one line per RoCE/InfiniBand frame", cmd_packets },
	{ "grade", "grade lab captures against a rubric", cmd_grade },
	{ "plot", "time-sequence graph of a conversation (SVG)", cmd_plot },
};

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	const GOptionEntry entries[] = {
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose,
		  "Print every header field", NULL },
		{ "json", 0, 0, G_OPTION_ARG_NONE, &o.json,
		  "Print JSON (JSON Lines for packets)", NULL },
		{ "filter", 'f', 0, G_OPTION_ARG_STRING, &o.filter,
		  "Read only frames matching the BPF expression", "EXPR" },
		{ "port", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &o.ports,
		  "Also decode UDP destination port N as RoCEv2 (repeatable)", "N" },
		{ "conv", 'c', 0, G_OPTION_ARG_INT, &o.conv,
		  "Only this conversation (summary, events)", "ID" },
		{ "each", 0, 0, G_OPTION_ARG_NONE, &o.each,
		  "Analyse each file on its own (default: one merged timeline)", NULL },
		{ "from", 0, 0, G_OPTION_ARG_STRING, &o.from,
		  "Only frames at or after T (epoch seconds, +seconds from the first frame, or ISO 8601)", "T" },
		{ "to", 0, 0, G_OPTION_ARG_STRING, &o.to,
		  "Only frames at or before T", "T" },
		{ "no-crc", 0, 0, G_OPTION_ARG_NONE, &o.no_crc,
		  "Do not verify ICRC/VCRC", NULL },
		{ "rubric", 0, 0, G_OPTION_ARG_FILENAME, &o.rubric,
		  "Rubric to grade against (grade)", "FILE" },
		{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
		  "Write to FILE (plot; with --top: FILE-conv<ID>.svg each)", "FILE" },
		{ "top", 0, 0, G_OPTION_ARG_INT, &o.top,
		  "Plot the N conversations with the most retransmissions (plot)", "N" },
		{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &o.quiet,
		  "No per-file counts or progress on stderr", NULL },
		{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.files,
		  NULL, "FILE..." },
		{ NULL },
	};
	GOptionContext *ctx;
	GError *err = NULL;
	GString *desc = g_string_new("Commands:\n");
	const char *cmd = "summary";
	int (*run)(struct opts *) = NULL;
	int status;

	setlocale(LC_ALL, "C");
	o.conv = -1;
	for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
		g_string_append_printf(desc, "  %-10s %s\n", commands[i].name,
				       commands[i].summary);
	g_string_append(desc, "\nFILE is a pcap or pcapng capture, - for standard input.\n");

	if (argc > 1 && argv[1][0] != '-') {
		for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
			if (!strcmp(argv[1], commands[i].name))
				run = commands[i].run;
		if (run) {
			cmd = argv[1];
			argv[1] = argv[0];
			argv++;
			argc--;
		}
	}
	if (!run)
		run = commands[0].run;

	ctx = g_option_context_new("[COMMAND] FILE...");
	g_option_context_set_summary(ctx, "Decode and explain RoCE / InfiniBand captures.");
	g_option_context_set_description(ctx, desc->str);
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		g_printerr("qptrace %s: %s\n", cmd, err->message);
		g_error_free(err);
		status = 2;
	} else if (!o.files || !o.files[0]) {
		g_printerr("qptrace %s: no capture file given (try --help)\n", cmd);
		status = 2;
	} else if (!parse_ports(&o)) {
		status = 2;
	} else {
		o.dec.no_crc = o.no_crc;
		status = run(&o);
	}
	g_option_context_free(ctx);
	g_string_free(desc, TRUE);
	g_strfreev(o.files);
	g_strfreev(o.ports);
	g_free(o.filter);
	g_free(o.from);
	g_free(o.to);
	return status;
}
