/* reader.c - capture files through libpcap (pcap and pcapng) */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "reader.h"
#include "compression.h"
#include "interrupt.h"
#include "queue.h"

/* stdio buffer: 64 KiB.  Larger costs more than it saves: at 128 or 256 KiB
 * the kernel's copy into it (and the copies out of it) miss the cache, and
 * `summary` of the 1 M-packet bench capture took 0.65 s against 0.37 s at 64
 * KiB (32 KiB the same, 16 KiB 0.45 s; tools/bench/README.md, "The reader's
 * buffer", 2026-12-07). */
#define IO_BUF (64u << 10)

/* Memory that the reading thread writes for every frame gets cache lines of
 * its own: a line shared with what the analysing thread writes would bounce
 * between the two cores on every frame. */
static void *own_lines_unset(size_t size)
{
	return g_aligned_alloc(1, (size + 63) & ~(size_t)63, 64);
}

static void *own_lines(size_t size)
{
	return memset(own_lines_unset(size), 0, size);
}

struct qpt_reader {
	pcap_t *p;
	const char *file;
	struct bpf_program prog;
	bool has_prog;
	uint64_t number;
	uint32_t linktype;
	uint64_t size;	       /* the file's size (0: not a regular file) */
	char *iobuf;	       /* the stream's buffer */
	void *dc;	       /* decompressing stream (decompress.c), or NULL */
	bool drainable;	       /* compressed, from a regular file: read on after an error */
};

G_DEFINE_QUARK(qpt-reader-error-quark, qpt_reader_error)

void qpt_errors_add(GPtrArray *errors, GError *e)
{
	if (errors)
		g_ptr_array_add(errors, e);
	else
		g_error_free(e);
}

int qpt_errors_print(GPtrArray *errors)
{
	int status = errors->len ? 2 : 0;

	for (guint i = 0; i < errors->len; i++)
		g_printerr("qptrace: %s\n", ((GError *)errors->pdata[i])->message);
	g_ptr_array_set_size(errors, 0);
	return status;
}

/* (see reader.h) */
bool qpt_frame_ns(int64_t sec, uint32_t nsec, int64_t *ns)
{
	/* |sec| below 2^63 / 1e9 - 1 (about year 2262): sec * 1e9 + nsec fits */
	if (sec > QPT_MAX_SECONDS || sec < -QPT_MAX_SECONDS)
		return false;
	*ns = sec * 1000000000 + (int64_t)nsec;
	return true;
}

/* Up to 8 first bytes of a stream that cannot be read again. */
static ssize_t read_magic(int fd, uint8_t magic[8])
{
	ssize_t got = 0;

	while (got < 8) {
		ssize_t n = read(fd, magic + got, (size_t)(8 - got));

		if (n < 0 && errno == EINTR && !qpt_interrupted)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

/* A compressed capture this qptrace cannot read: say how to read it. */
static bool compression_ok(const char *file, enum qpt_compression c, GError **error)
{
	const char *tool[] = { [QPT_COMP_GZIP] = "zcat", [QPT_COMP_ZSTD] = "zstdcat",
			       [QPT_COMP_XZ] = "xzcat", [QPT_COMP_BZIP2] = "bzcat",
			       [QPT_COMP_LZ4] = "lz4cat" };

	if (qpt_compression_supported(c))
		return true;
	g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_FORMAT,
		    "%s: compressed with %s, which qptrace reads %s; "
		    "decompress it on the way: %s %s | qptrace COMMAND -", file,
		    qpt_compression_name(c),
		    c == QPT_COMP_ZSTD ? "only when built with libzstd (install libzstd-dev, "
					 "then meson setup again)"
				       : "not (it reads gzip and zstd)",
		    tool[c], strcmp(file, "-") ? file : "FILE");
	return false;
}

struct qpt_reader *qpt_reader_open(const char *file, const char *bpf, GError **error)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct qpt_reader *r;
	uint64_t size = 0;
	char *iobuf = NULL;
	FILE *fp;
	pcap_t *p;
	int lt;

	uint8_t magic[8];
	ssize_t nmagic = 0;
	enum qpt_compression comp;
	void *dc = NULL;
	struct stat st0;

	if (strcmp(file, "-")) {
		int fd = open(file, O_RDONLY);
		struct stat st;

		if (fd < 0) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_OPEN, "%s: %s",
				    file, g_strerror(errno));
			return NULL;
		}
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_OPEN,
				    "%s: is a directory, not a capture", file);
			close(fd);
			return NULL;
		}
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			size = (uint64_t)st.st_size;
		/* the first bytes say whether it is compressed (a pipe or a
		 * FIFO cannot be read twice: they are fed back below) */
		if (size)
			nmagic = pread(fd, magic, sizeof(magic), 0);
		else
			nmagic = read_magic(fd, magic);
		comp = qpt_compression_of(magic, nmagic > 0 ? (size_t)nmagic : 0);
		if (!compression_ok(file, comp, error)) {
			close(fd);
			return NULL;
		}
		if (size && comp == QPT_COMP_NONE) {
			fp = fdopen(fd, "rb");
		} else {
			fp = qpt_decompress_open(fd, magic, size ? 0 : (size_t)MAX(nmagic, 0),
						 comp, &dc);
		}
		if (!fp) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_OPEN, "%s: %s",
				    file, g_strerror(errno));
			close(fd);
			return NULL;
		}
	} else {
		nmagic = read_magic(0, magic);
		comp = qpt_compression_of(magic, nmagic > 0 ? (size_t)nmagic : 0);
		if (!compression_ok(file, comp, error))
			return NULL;
		fp = qpt_decompress_open(0, magic, (size_t)MAX(nmagic, 0), comp, &dc);
		if (!fp) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_OPEN, "%s: %s",
				    file, g_strerror(errno));
			return NULL;
		}
	}
	/* Reads in large blocks: stdio's own buffer is the file system's block
	 * size (4 KiB), a read() for every four frames; and setvbuf() ignores
	 * the size it is given unless the buffer comes with it.  Standard input
	 * keeps its buffer after libpcap is done with it (it is not closed): a
	 * static one. */
	iobuf = g_malloc(IO_BUF);
	setvbuf(fp, iobuf, _IOFBF, IO_BUF);
	/* Only one thread reads this stream: no stdio lock around each of the
	 * two fread() calls per frame (once a second thread exists, glibc would
	 * take it every time). */
	__fsetlocking(fp, FSETLOCKING_BYCALLER);
	p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO,
						     err);
	if (!p) {
		gchar *why = qpt_decompress_error(dc, size);

		fclose(fp);
		g_free(iobuf);
		/* libpcap says "unknown file format" for what is not a capture;
		 * its message sometimes names the file already. */
		if (why) /* the compressed stream failed before a capture header */
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_FORMAT, "%s: %s",
				    file, why);
		else if (nmagic == 0 && comp == QPT_COMP_NONE) /* not libpcap's "tried to read 4 ..." */
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_FORMAT,
				    "%s: empty (0 bytes), not a capture: was it written to the end?",
				    file);
		else if (g_str_has_prefix(err, file) && err[strlen(file)] == ':')
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_FORMAT, "%s", err);
		else
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_FORMAT, "%s: %s",
				    file, err);
		g_free(why);
		return NULL;
	}
	lt = pcap_datalink(p);
	if (!qpt_linktype_supported((uint32_t)lt)) {
		const char *name = pcap_datalink_val_to_name(lt);

		g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_LINKTYPE,
			    "%s: unsupported link type %d (%s)", file, lt,
			    name ? name : "unknown");
		pcap_close(p);
		g_free(iobuf);
		return NULL;
	}
	r = own_lines(sizeof(*r));
	r->p = p;
	r->file = file;
	r->linktype = (uint32_t)lt;
	r->size = size;
	r->iobuf = iobuf;
	r->dc = dc;
	/* never a pipe: reading on could wait for a writer */
	r->drainable = dc && comp != QPT_COMP_NONE &&
		       (strcmp(file, "-") ? size != 0 :
					    fstat(0, &st0) == 0 && S_ISREG(st0.st_mode));
	if (bpf && *bpf) {
		if (pcap_compile(p, &r->prog, bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_FILTER,
				    "%s: bad filter '%s': %s", file, bpf, pcap_geterr(p));
			qpt_reader_close(r);
			return NULL;
		}
		r->has_prog = true;
	}
	return r;
}

/* Decompressed bytes looked at past an error libpcap met first, to find
 * the damage in the compressed stream that explains it (an undetected
 * corrupt byte decodes into a bogus record header before the checksum). */
#define DRAIN_MAX (64u << 20)

/* Why a compressed input ended early (see qpt_decompress_error), or NULL.
 * With drain (libpcap failed on the stream's bytes): a compressed regular
 * file is read on a little to find it (a pipe is not: that could wait). */
static gchar *stream_error(struct qpt_reader *r, bool drain)
{
	gchar *msg;

	if (!r->dc)
		return NULL;
	msg = qpt_decompress_error(r->dc, r->size);
	if (!msg && drain && r->drainable && !qpt_interrupted) {
		FILE *fp = pcap_file(r->p);
		char *buf = g_malloc(1u << 16);
		size_t n, total = 0;

		while (fp && total < DRAIN_MAX && (n = fread(buf, 1, 1u << 16, fp)) > 0)
			total += n;
		g_free(buf);
		msg = qpt_decompress_error(r->dc, r->size);
	}
	return msg;
}

int qpt_reader_next(struct qpt_reader *r, struct qpt_frame *f, GError **error)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc = pcap_next_ex(r->p, &h, &data);

	if (rc != 1 && rc != PCAP_ERROR_BREAK && r->dc) {
		/* a failed compressed stream reads as its end (decompress.c):
		 * libpcap's own words come after the stream's */
		const char *err = pcap_geterr(r->p);
		gchar *why = stream_error(r, true);

		if (why) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_READ,
				    "%s: after frame %" G_GUINT64_FORMAT ": %s (libpcap: %s)",
				    r->file, r->number, why, err);
			g_free(why);
			return -1;
		}
	} else if (rc == PCAP_ERROR_BREAK) {
		gchar *why = stream_error(r, false);

		if (!why)
			return 0;
		g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_READ,
			    "%s: after frame %" G_GUINT64_FORMAT ": %s", r->file, r->number, why);
		g_free(why);
		return -1;
	}
	if (rc != 1) {
		const char *err = pcap_geterr(r->p);

		/* libpcap reads a pcapng file only while its interfaces share one
		 * link type and snapshot length: say how to get around that. */
		g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_READ,
			    "%s: after frame %" G_GUINT64_FORMAT ": %s%s",
			    r->file, r->number, err,
			   strstr(err, "an interface has a") ?
				   " (libpcap reads pcapng only with one link type and "
				   "snapshot length for all interfaces: give qptrace one "
				   "file per interface instead, README.md says how)" :
				   "");
		return -1;
	}
	r->number++;
	f->file = r->file;
	f->number = r->number;
	f->file_number = r->number;
	f->ts_sec = h->ts.tv_sec;
	f->ts_nsec = (uint32_t)h->ts.tv_usec; /* nanoseconds: opened with NANO */
	if (r->linktype == QPT_LINKTYPE_ERF && h->caplen >= 8) {
		/* An ERF record carries its own, finer timestamp (little-endian
		 * 32.32 fixed point), which Wireshark shows: use it too. */
		uint64_t t = 0;

		for (int i = 7; i >= 0; i--)
			t = t << 8 | data[i];
		f->ts_sec = (int64_t)(t >> 32);
		f->ts_nsec = (uint32_t)(((t & 0xffffffffu) * 1000000000u) >> 32);
	}
	{
		int64_t ns;

		/* libpcap applies if_tsoffset / if_tsresol: a time past what
		 * nanoseconds in 64 bits hold is an error, not an overflow */
		if (!qpt_frame_ns(f->ts_sec, f->ts_nsec, &ns)) {
			g_set_error(error, QPT_READER_ERROR, QPT_READER_ERROR_READ,
				    "%s: frame %" G_GUINT64_FORMAT ": time %" G_GINT64_FORMAT
				    " s since 1970 is out of range (a pcapng if_tsoffset or "
				    "if_tsresol gone wrong?)", r->file, r->number, f->ts_sec);
			return -1;
		}
		/* a fraction of a second past 1 s (a bad classic pcap record)
		 * carries into the seconds, as ns = sec * 1e9 + fraction */
		f->ts_sec = ns / 1000000000 - (ns % 1000000000 < 0);
		f->ts_nsec = (uint32_t)(ns - f->ts_sec * 1000000000);
	}
	f->linktype = r->linktype;
	f->data = data;
	f->caplen = h->caplen;
	f->wirelen = h->len;
	/* Filter here rather than with pcap_setfilter(), so that frame numbers
	 * stay those Wireshark shows. */
	f->matched = !r->has_prog || pcap_offline_filter(&r->prog, h, data);
	f->in_window = true;
	return 1;
}

void qpt_reader_close(struct qpt_reader *r)
{
	if (!r)
		return;
	if (r->has_prog)
		pcap_freecode(&r->prog);
	pcap_close(r->p);
	g_free(r->iobuf);
	g_aligned_free(r);
}

void qpt_reader_position(struct qpt_reader *r, uint64_t *done, uint64_t *size)
{
	long pos;

	*done = 0;
	*size = r->size;
	if (!r->size)
		return;
	if (r->dc) { /* compressed: how far in the compressed file */
		*done = qpt_decompress_raw_pos(r->dc);
		return;
	}
	pos = ftell(pcap_file(r->p));
	*done = pos > 0 ? (uint64_t)pos : 0;
}

/* ---- several files as one timeline ---------------------------------- */

struct input_file {
	struct qpt_reader *r;
	struct qpt_frame pending;
	bool has_pending;
};

/* Frames travel from the reading thread to the analysing one in batches:
 * libpcap's reads and the decode/analysis overlap on two cores. */
#define BATCH_BYTES (1u << 18)
#define BATCH_FRAMES 1024u
#define NBATCHES 8

/* A frame in a batch: half a struct qpt_frame, which qpt_input_next()
 * rebuilds (the reading thread writes it for every frame and the analysing
 * one reads it, so every byte here crosses between the two cores). */
struct bframe {
	int64_t ts_sec;
	uint64_t file_number;
	uint32_t ts_nsec;
	uint32_t off; /* the bytes: batch.buf + off */
	uint32_t caplen, wirelen;
	uint32_t file; /* index into qpt_input.c.names and .c.linktypes */
	bool matched;
	bool in_window;
	bool decoded; /* the reading thread decoded it: batch.pkt[index] */
};

struct batch {
	struct bframe f[BATCH_FRAMES];
	uint64_t first; /* the number of f[0] (frames are numbered in a row) */
	struct qpt_pkt *pkt; /* BATCH_FRAMES of them, with qpt_input_opts.decode */
	bool decoded; /* the reading thread decodes this batch's frames */
	uint8_t *buf;
	size_t used, cap;
	guint n;
	bool end;   /* the last batch: no frames follow */
	GPtrArray *errors; /* with end: why files could not be read to their end */
};

static void start_thread(struct qpt_input *in);

struct qpt_input {
	struct qpt_input_opts o;
	struct input_file *files;
	guint nfiles;
	uint64_t number;
	bool have_t0;
	int64_t t0;
	gint64 started_us, last_progress_us;
	uint64_t frames;
	bool progress_shown;

	GThread *thread;
	pthread_t reader_tid; /* for QPT_WAKE_SIGNAL */
	gint reader_started, reader_ended; /* atomic */
	GAsyncQueue *full, *empty; /* struct batch */
	gint stop; /* atomic: the consumer gave up early */
	/* Who decodes: -1 shared as below; 1 always the reading thread; 0
	 * always the analysing one (QPTRACE_DECODE_IN=reader|analyser, for the
	 * tests and the benchmark). */
	int decode_here;
	unsigned batches, batches_decoded;

	/* The analysing thread's own state, on a cache line of its own: the
	 * reading thread writes the fields above for every frame. */
	struct {
		struct batch *cur;
		guint cur_idx;
		bool done; /* the end batch was consumed */
		bool stuck; /* interrupted, and the reading thread did not end */
		const char **names; /* the files', for the frames (nfiles of them) */
		uint32_t *linktypes;
	} c __attribute__((aligned(64)));
};

struct qpt_input *qpt_input_open(gchar **files, const struct qpt_input_opts *o,
				 GPtrArray *errors)
{
	struct qpt_input *in = own_lines(sizeof(*in));
	GArray *opened;

	in->o = *o;
	in->o.progress = o->progress && isatty(2);
	opened = g_array_new(FALSE, TRUE, sizeof(struct input_file));
	for (gchar **f = files; *f; f++) {
		GError *e = NULL;
		struct input_file x = { .r = qpt_reader_open(*f, o->bpf, &e) };

		if (!x.r) {
			qpt_errors_add(errors, e);
			continue;
		}
		g_array_append_val(opened, x);
	}
	in->nfiles = opened->len;
	in->files = own_lines(MAX(opened->len, 1u) * sizeof(struct input_file));
	in->c.names = own_lines(MAX(opened->len, 1u) * sizeof(const char *));
	in->c.linktypes = own_lines(MAX(opened->len, 1u) * sizeof(uint32_t));
	if (opened->len)
		memcpy(in->files, opened->data, opened->len * sizeof(struct input_file));
	for (guint i = 0; i < opened->len; i++) {
		in->c.names[i] = in->files[i].r->file;
		in->c.linktypes[i] = in->files[i].r->linktype;
	}
	g_array_free(opened, TRUE);
	if (!in->nfiles) {
		qpt_input_close(in);
		return NULL;
	}
	in->decode_here = -1;
	if (g_strcmp0(g_getenv("QPTRACE_DECODE_IN"), "reader") == 0)
		in->decode_here = 1;
	else if (g_strcmp0(g_getenv("QPTRACE_DECODE_IN"), "analyser") == 0)
		in->decode_here = 0;
	in->started_us = in->last_progress_us = g_get_monotonic_time();
	start_thread(in);
	return in;
}

static void progress(struct qpt_input *in)
{
	gint64 now = g_get_monotonic_time();
	uint64_t done = 0, size = 0;

	if (now - in->started_us < 1000000 || now - in->last_progress_us < 250000)
		return;
	in->last_progress_us = now;
	for (guint i = 0; i < in->nfiles; i++) {
		uint64_t d, s;

		qpt_reader_position(in->files[i].r,
				    &d, &s);
		done += d;
		size += s;
	}
	if (size)
		g_printerr("\r%5.1f%% of %.1f MB, %.0f packets/s  ", 100.0 * (double)done / (double)size,
			   (double)size / 1e6,
			   (double)in->frames * 1e6 / (double)(now - in->started_us));
	else
		g_printerr("\r%" G_GUINT64_FORMAT " packets, %.0f packets/s  ", in->frames,
			   (double)in->frames * 1e6 / (double)(now - in->started_us));
	in->progress_shown = true;
}

/* A --from/--to edge in ns since the epoch; +seconds past what 64 bits
 * hold is the end of time. */
static int64_t window_edge(const struct qpt_input *in, int64_t ns, bool rel)
{
	int64_t sum;

	if (!rel)
		return ns;
	return __builtin_add_overflow(in->t0, ns, &sum) ? INT64_MAX : sum;
}

/* The merge itself, in the reading thread: the next frame (valid until the
 * next call) or NULL at the end; *file is its index. */
static struct qpt_frame *merge_next(struct qpt_input *in, guint *file, GPtrArray *errors)
{
	struct qpt_frame *f;
	struct input_file *best = NULL;
	int64_t best_ns = 0;

	for (guint i = 0; i < in->nfiles; i++) {
		struct input_file *x = &in->files[i];
		int64_t ns;

		if (!x->has_pending && x->r) {
			GError *e = NULL;
			int rc = qpt_reader_next(x->r, &x->pending, &e);

			if (rc > 0) {
				x->has_pending = true;
			} else {
				if (rc < 0 && qpt_interrupted)
					g_clear_error(&e); /* a read cut by Ctrl-C */
				else if (rc < 0)
					qpt_errors_add(errors, e);
				qpt_reader_close(x->r);
				x->r = NULL;
			}
		}
		if (!x->has_pending)
			continue;
		ns = x->pending.ts_sec * 1000000000 + x->pending.ts_nsec;
		/* ties go to the earlier file, as mergecap does */
		if (!best || ns < best_ns) {
			best = x;
			best_ns = ns;
		}
	}
	if (!best) {
		if (in->progress_shown)
			g_printerr("\r%40s\r", "");
		return NULL;
	}
	f = &best->pending;
	*file = (guint)(best - in->files);
	best->has_pending = false;
	f->file_number = f->number;
	f->number = ++in->number;
	if (!in->have_t0) {
		in->have_t0 = true;
		in->t0 = best_ns;
	}
	f->in_window = true;
	if (in->o.has_from && best_ns < window_edge(in, in->o.from_ns, in->o.from_rel))
		f->in_window = false;
	if (in->o.has_to && best_ns > window_edge(in, in->o.to_ns, in->o.to_rel))
		f->in_window = false;
	if (!f->in_window && !in->o.window_selects)
		f->matched = false;
	if (in->o.progress && (++in->frames & 0xffff) == 0)
		progress(in);
	return f;
}

/* QPTRACE_THREAD_TIMES: the calling thread's CPU time on stderr. */
static void thread_times(const char *who, const char *more)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	g_printerr("%s thread: %.2f s user, %.2f s system%s\n", who,
		   ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		   ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, more);
}

/* Hands b (when not NULL) to the analysing thread and takes an empty
 * batch, deciding who decodes its frames.
 *
 * Work sharing: decoding (with its CRC over every byte) is cheapest here,
 * where libpcap has just brought the frame into this core's cache, but
 * this thread also runs libpcap.  So it decodes whole batches itself while
 * half the batches wait for the analysing thread, and else hands frames
 * over undecoded; the queue settles where both threads are busy. */
static struct batch *next_batch(struct qpt_input *in, struct batch *b)
{
	if (b)
		qpt_queue_push(in->full, b);
	b = qpt_queue_pop(in->empty);
	b->n = 0;
	b->used = 0;
	b->decoded = in->o.decode &&
		     (in->decode_here == 1 ||
		      (in->decode_here < 0 &&
		       g_async_queue_length(in->full) >= NBATCHES / 2));
	in->batches++;
	in->batches_decoded += b->decoded;
	return b;
}

static gpointer reader_thread(gpointer data)
{
	struct qpt_input *in = data;
	struct batch *b = next_batch(in, NULL);
	struct qpt_frame *f;
	guint file = 0;
	GPtrArray *errors = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);

	in->reader_tid = pthread_self();
	g_atomic_int_set(&in->reader_started, 1);
	while (!g_atomic_int_get(&in->stop) && !qpt_interrupted &&
	       (f = merge_next(in, &file, errors))) {
		struct bframe *e;

		if (f->matched && !b->decoded && b->used + f->caplen > b->cap && b->n)
			b = next_batch(in, b); /* this frame opens the next batch */
		if (!b->n)
			b->first = f->number;
		e = &b->f[b->n];
		e->ts_sec = f->ts_sec;
		e->file_number = f->file_number;
		e->ts_nsec = f->ts_nsec;
		e->caplen = f->caplen;
		e->wirelen = f->wirelen;
		e->file = file;
		e->matched = f->matched;
		e->in_window = f->in_window;
		e->decoded = f->matched && b->decoded;
		e->off = 0;
		if (e->decoded) {
			qpt_decode(&b->pkt[b->n], f->linktype, f->data, f->caplen, f->wirelen,
				   in->o.decode);
		} else if (f->matched) { /* else nobody looks at its bytes */
			if (f->caplen > b->cap) {
				b->cap = f->caplen;
				b->buf = g_realloc(b->buf, b->cap);
			}
			memcpy(b->buf + b->used, f->data, f->caplen);
			e->off = (uint32_t)b->used;
			b->used += f->caplen;
		}
		if (++b->n == BATCH_FRAMES)
			b = next_batch(in, b);
	}
	if (g_getenv("QPTRACE_THREAD_TIMES")) {
		char what[64];

		g_snprintf(what, sizeof(what), "; decoded %u of %u batches",
			   in->batches_decoded, in->batches);
		thread_times("reading", what);
	}
	b->end = true;
	b->errors = errors;
	g_atomic_int_set(&in->reader_ended, 1);
	qpt_queue_push(in->full, b);
	return NULL;
}

volatile sig_atomic_t qpt_interrupted; /* set by interrupt.c's handler */

/* The next full batch; after Ctrl-C, the reading thread is woken from a
 * blocked read until it ends (NULL when it does not within 2 s). */
static struct batch *pop_full(struct qpt_input *in)
{
	int waited = 0;

	for (;;) {
		struct batch *b = qpt_queue_timeout_pop(in->full, 100000);

		if (b)
			return b;
		if (!qpt_interrupted)
			continue;
		if (g_atomic_int_get(&in->reader_started) && !g_atomic_int_get(&in->reader_ended))
			pthread_kill(in->reader_tid, QPT_WAKE_SIGNAL);
		if (++waited > 20)
			return NULL;
	}
}

static void start_thread(struct qpt_input *in)
{
	in->full = g_async_queue_new();
	in->empty = g_async_queue_new();
	for (int i = 0; i < NBATCHES; i++) {
		/* f[] (40 KiB) is written frame by frame before it is read:
		 * not zeroed, so that no page of it is touched before a frame
		 * needs it (eight zeroed batches were 80 of the 390 page
		 * faults of a run over a small capture) */
		struct batch *b = own_lines_unset(sizeof(*b));

		memset(&b->first, 0, sizeof(*b) - offsetof(struct batch, first));
		b->cap = BATCH_BYTES;
		b->buf = g_malloc(b->cap);
		if (in->o.decode)
			b->pkt = g_new(struct qpt_pkt, BATCH_FRAMES);
		qpt_queue_push(in->empty, b);
	}
	in->thread = g_thread_new("qptrace-reader", reader_thread, in);
}

int qpt_input_next(struct qpt_input *in, struct qpt_frame *f, GPtrArray *errors)
{
	for (;;) {
		if (in->c.done)
			return 0;
		if (in->c.cur && in->c.cur_idx < in->c.cur->n) {
			const struct batch *b = in->c.cur;
			guint i = in->c.cur_idx++;
			const struct bframe *e = &b->f[i];

			f->file = in->c.names[e->file];
			f->file_index = e->file;
			f->number = b->first + i;
			f->file_number = e->file_number;
			f->ts_sec = e->ts_sec;
			f->ts_nsec = e->ts_nsec;
			f->linktype = in->c.linktypes[e->file];
			f->caplen = e->caplen;
			f->wirelen = e->wirelen;
			f->matched = e->matched;
			f->in_window = e->in_window;
			f->pkt = e->decoded ? &b->pkt[i] : NULL;
			f->data = e->matched && !e->decoded ? b->buf + e->off : NULL;
			return 1;
		}
		if (in->c.cur) {
			if (in->c.cur->end) {
				GPtrArray *e = in->c.cur->errors;

				for (guint i = 0; e && i < e->len; i++)
					qpt_errors_add(errors, e->pdata[i]);
				if (e) {
					g_ptr_array_set_free_func(e, NULL);
					g_ptr_array_free(e, TRUE);
					in->c.cur->errors = NULL;
				}
				in->c.done = true;
				continue;
			}
			qpt_queue_push(in->empty, in->c.cur);
		}
		in->c.cur = pop_full(in);
		in->c.cur_idx = 0;
		if (!in->c.cur) { /* interrupted, the reader stuck: end here */
			in->c.done = true;
			in->c.stuck = true;
			return 0;
		}
	}
}

gchar *qpt_input_label(const struct qpt_input *in)
{
	GString *s = g_string_new("");

	for (guint i = 0; i < in->nfiles; i++)
		g_string_append_printf(s, "%s%s", i ? " + " : "", in->c.names[i]);
	return g_string_free(s, FALSE);
}

static void free_batch(gpointer p)
{
	struct batch *b = p;

	g_free(b->buf);
	g_free(b->pkt);
	if (b->errors)
		g_ptr_array_free(b->errors, TRUE);
	g_aligned_free(b);
}

void qpt_input_close(struct qpt_input *in)
{
	if (!in)
		return;
	if (g_getenv("QPTRACE_THREAD_TIMES"))
		thread_times("analysing", "");
	if (in->thread) {
		/* let the reader finish (early when the consumer stopped) */
		g_atomic_int_set(&in->stop, 1);
		while (!in->c.done) {
			if (in->c.cur) {
				bool end = in->c.cur->end;

				if (end) {
					in->c.done = true;
					break;
				}
				qpt_queue_push(in->empty, in->c.cur);
			}
			in->c.cur = in->c.stuck ? NULL : pop_full(in);
			if (!in->c.cur) {
				in->c.stuck = true;
				break;
			}
		}
		if (in->c.stuck) {
			/* the reading thread does not end: leave it (we exit) */
			g_thread_unref(in->thread);
			return;
		}
		g_thread_join(in->thread);
		if (in->c.cur)
			free_batch(in->c.cur);
		for (struct batch *b; (b = qpt_queue_try_pop(in->full));)
			free_batch(b);
		for (struct batch *b; (b = qpt_queue_try_pop(in->empty));)
			free_batch(b);
		g_async_queue_unref(in->full);
		g_async_queue_unref(in->empty);
	}
	for (guint i = 0; i < in->nfiles; i++)
		qpt_reader_close(in->files[i].r);
	g_aligned_free(in->files);
	g_aligned_free(in->c.names);
	g_aligned_free(in->c.linktypes);
	g_aligned_free(in);
}
