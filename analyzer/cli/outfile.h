/* outfile.h - output files written whole or not at all (outfile.c) */
#ifndef QPT_OUTFILE_H
#define QPT_OUTFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

/* Output files (outfile.c).  The files a command reads, by device and
 * inode; "-" is standard input when it is a file.  Files that do not
 * exist are left out (the reader reports them). */
struct qpt_inputs;
struct qpt_inputs *qpt_inputs_new(void);
void qpt_inputs_add(struct qpt_inputs *in, const char *file);
void qpt_inputs_add_all(struct qpt_inputs *in, gchar **files);
void qpt_inputs_free(struct qpt_inputs *in);
/* True, after one line on stderr naming both ("qptrace CMD: OPT OUTPUT is
 * the input IN ..."), when output is one of the inputs: the same file, a
 * symbolic link to it or a hard link.  Called before anything is opened
 * for writing. */
bool qpt_output_names_input(const struct qpt_inputs *in, const char *cmd, const char *opt,
			    const char *output);
/* An output file written to a temporary file beside it and renamed into
 * place by qpt_outfile_commit() once complete, flushed and synced: a
 * failed write leaves no file and an older one intact.  "-" is standard
 * output.  NULL and *error (the reason, e.g. "No space left on device")
 * when it cannot be made. */
struct qpt_outfile;
struct qpt_outfile *qpt_outfile_open(const char *path, GError **error);
FILE *qpt_outfile_stream(const struct qpt_outfile *f);
/* Whether a write into the stream failed (its error kept for the commit):
 * a writer may stop early. */
bool qpt_outfile_failed(struct qpt_outfile *f);
/* Ends the file: in place, or false, *error set and nothing left behind.
 * Frees f either way. */
bool qpt_outfile_commit(struct qpt_outfile *f, GError **error);
/* Drops the file (the temporary file removed); frees f. */
void qpt_outfile_abort(struct qpt_outfile *f);
/* The whole of data as path, through the above. */
bool qpt_write_file(const char *path, const void *data, size_t len, GError **error);
/* Temporary files removed when a signal (SIGTERM, SIGHUP, SIGQUIT, and
 * SIGINT, SIGPIPE, SIGXFSZ when not handled or ignored) ends qptrace:
 * path kept until qpt_tmp_unguard(slot); qpt_tmp_remove_all() is
 * async-signal-safe (the second Ctrl-C calls it). */
int qpt_tmp_guard(const char *path);
void qpt_tmp_unguard(int slot);
void qpt_tmp_remove_all(void);

#endif
