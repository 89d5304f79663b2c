/* cli.h - the qptrace command line front end */
#ifndef QPT_CLI_H
#define QPT_CLI_H

#include <glib.h>
#include <stdio.h>

#include "qpt_decode.h"

/* One capture file being read, frame by frame. */
struct qpt_reader;

struct qpt_frame {
	const char *file;
	uint64_t number; /* 1-based, as Wireshark numbers frames */
	int64_t ts_sec;
	uint32_t ts_nsec;
	uint32_t linktype;
	const uint8_t *data;
	uint32_t caplen, wirelen;
	bool matched; /* passed the BPF filter (always true without one) */
};

/* Opens file ("-" for stdin).  On failure prints one line naming the file
 * and the problem to stderr and returns NULL. */
struct qpt_reader *qpt_reader_open(const char *file, const char *bpf);
/* 1 with a frame, 0 at the end, -1 on a read error (already reported). */
int qpt_reader_next(struct qpt_reader *r, struct qpt_frame *f);
void qpt_reader_close(struct qpt_reader *r);

struct opts {
	gboolean verbose, json, quiet, no_crc;
	gchar *filter;
	gchar *rubric; /* grade: --rubric FILE */
	gchar **ports;
	gchar **files;
	gint conv; /* --conv, -1 for all */
	struct qpt_decode_opts dec;
	uint16_t port_buf[64];
};

int cmd_summary(struct opts *o);
int cmd_events(struct opts *o);
int cmd_grade(struct opts *o);

/* Output of one decoded frame. */
enum qpt_print_mode { QPT_PRINT_LINE, QPT_PRINT_VERBOSE, QPT_PRINT_JSON };
void qpt_print_pkt(GString *out, const struct qpt_frame *f,
		   const struct qpt_pkt *pkt, enum qpt_print_mode mode,
		   double t0);
/* Address of the IBA packet's source/destination: IP, GID or LID. */
void qpt_format_addr(const struct qpt_pkt *pkt, bool src, char *buf, size_t len);
void qpt_json_escape(GString *out, const char *s);

#endif
