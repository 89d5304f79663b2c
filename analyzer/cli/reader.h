/* reader.h - capture files read frame by frame (reader.c) */
#ifndef QPT_READER_H
#define QPT_READER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

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
	bool matched; /* passed the BPF filter and (unless window_selects)
		       * the time window; from qpt_input_next(), data is NULL
		       * for the others */
	bool in_window; /* inside --from/--to (true without them) */
	/* Set when the reading thread has decoded the frame already (see
	 * qpt_input_opts.decode); data is then NULL. */
	const struct qpt_pkt *pkt;
	uint64_t file_number; /* number inside its own file */
	uint32_t file_index;  /* which of the files (0 first): its capture point */
};

/* Errors of the reader: one message naming the file and the problem. */
#define QPT_READER_ERROR qpt_reader_error_quark()
GQuark qpt_reader_error_quark(void);
enum qpt_reader_error {
	QPT_READER_ERROR_OPEN,	   /* cannot open (missing, permissions, ...) */
	QPT_READER_ERROR_FORMAT,   /* not a capture libpcap reads */
	QPT_READER_ERROR_LINKTYPE, /* a link type without RoCE/IB */
	QPT_READER_ERROR_FILTER,   /* the BPF expression does not compile */
	QPT_READER_ERROR_READ,	   /* cut or corrupt mid-file */
};
/* Adds e to errors (a GPtrArray of GError, or NULL: e is freed). */
void qpt_errors_add(GPtrArray *errors, GError *e);
/* Prints each error as one "qptrace: MESSAGE" line on stderr and empties
 * the array; 2 when there was any, else 0. */
int qpt_errors_print(GPtrArray *errors);

/* Opens file ("-" for stdin); NULL and *error set on failure. */
struct qpt_reader *qpt_reader_open(const char *file, const char *bpf, GError **error);
/* 1 with a frame, 0 at the end, -1 on a read error (*error set). */
int qpt_reader_next(struct qpt_reader *r, struct qpt_frame *f, GError **error);
void qpt_reader_close(struct qpt_reader *r);
/* Bytes read so far and the file's size (0 when unknown, e.g. stdin). */
void qpt_reader_position(struct qpt_reader *r, uint64_t *done, uint64_t *size);

/* Several files read as one timeline, merged by timestamp as mergecap
 * does; frames are numbered along the timeline (frame.number) and keep
 * their number in their own file (file_number). */
struct qpt_input;
struct qpt_input_opts {
	const char *bpf;
	bool progress;	     /* a progress line on stderr (only on a tty) */
	bool has_from, has_to; /* time window; from/to in ns since the epoch, */
	int64_t from_ns, to_ns; /* or relative to the first frame when < 1e18 */
	bool from_rel, to_rel;
	/* The window selects what is shown, not what is analysed: frames
	 * outside it stay matched, with in_window false. */
	bool window_selects;
	/* When set, the reading thread may decode frames with these options
	 * itself, while the analysing thread is behind: see qpt_frame.pkt. */
	const struct qpt_decode_opts *decode;
};
/* Opens every file; those that fail are skipped, their errors added to
 * errors (see qpt_errors_add).  NULL when none could be opened. */
struct qpt_input *qpt_input_open(gchar **files, const struct qpt_input_opts *o,
				 GPtrArray *errors);
/* 1 with a frame, 0 at the end of every file; a read error ends that file
 * only and is added to errors (by the end of the input at the latest). */
int qpt_input_next(struct qpt_input *in, struct qpt_frame *f, GPtrArray *errors);
void qpt_input_close(struct qpt_input *in);
/* A plain (uncompressed) pcapng file's Interface Statistics Blocks: the
 * latest isb_ifdrop / isb_osdrop of each interface of each section (any
 * number of them, each section in its own byte order), summed.  False when
 * the file is not such a file or has none.  An ISB naming an interface its
 * section does not describe is not counted; *note (when note is not NULL;
 * g_free it) then says so, once, naming the file. */
bool qpt_pcapng_drops(const char *path, uint64_t *ifdrop, uint64_t *osdrop, gchar **note);
/* The names of the files that could be opened, joined by " + ". */
gchar *qpt_input_label(const struct qpt_input *in);

/* Seconds the nanosecond arithmetic holds (int64: about +-292 years). */
#define QPT_MAX_SECONDS 9223372035LL
/* A frame's time in nanoseconds; false when it does not fit. */
bool qpt_frame_ns(int64_t sec, uint32_t nsec, int64_t *ns);

#endif
