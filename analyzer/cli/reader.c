/* reader.c - capture files through libpcap (pcap and pcapng) */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pcap/pcap.h>
#include <string.h>

#include "cli.h"

struct qpt_reader {
	pcap_t *p;
	const char *file;
	struct bpf_program prog;
	bool has_prog;
	uint64_t number;
	uint32_t linktype;
};

struct qpt_reader *qpt_reader_open(const char *file, const char *bpf)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct qpt_reader *r;
	FILE *fp;
	pcap_t *p;
	int lt;

	/* The FILE is ours so that it reads in large blocks: with stdio's
	 * default 4 KiB buffer, reading dominates (one read() per 4 KiB). */
	fp = strcmp(file, "-") ? fopen(file, "rb") : stdin;
	if (!fp) {
		g_printerr("qptrace: %s: %s\n", file, g_strerror(errno));
		return NULL;
	}
	setvbuf(fp, NULL, _IOFBF, 1 << 20);
	p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO,
						     err);
	if (!p) {
		if (fp != stdin)
			fclose(fp);
		/* libpcap says "unknown file format" for what is not a capture;
		 * its message sometimes names the file already. */
		if (g_str_has_prefix(err, file) && err[strlen(file)] == ':')
			g_printerr("qptrace: %s\n", err);
		else
			g_printerr("qptrace: %s: %s\n", file, err);
		return NULL;
	}
	lt = pcap_datalink(p);
	if (!qpt_linktype_supported((uint32_t)lt)) {
		const char *name = pcap_datalink_val_to_name(lt);

		g_printerr("qptrace: %s: unsupported link type %d (%s)\n", file, lt,
			   name ? name : "unknown");
		pcap_close(p);
		return NULL;
	}
	r = g_new0(struct qpt_reader, 1);
	r->p = p;
	r->file = file;
	r->linktype = (uint32_t)lt;
	if (bpf && *bpf) {
		if (pcap_compile(p, &r->prog, bpf, 1, PCAP_NETMASK_UNKNOWN) < 0) {
			g_printerr("qptrace: %s: bad filter '%s': %s\n", file, bpf,
				   pcap_geterr(p));
			qpt_reader_close(r);
			return NULL;
		}
		r->has_prog = true;
	}
	return r;
}

int qpt_reader_next(struct qpt_reader *r, struct qpt_frame *f)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc = pcap_next_ex(r->p, &h, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		g_printerr("qptrace: %s: after frame %" G_GUINT64_FORMAT ": %s\n",
			   r->file, r->number, pcap_geterr(r->p));
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
	f->linktype = r->linktype;
	f->data = data;
	f->caplen = h->caplen;
	f->wirelen = h->len;
	/* Filter here rather than with pcap_setfilter(), so that frame numbers
	 * stay those Wireshark shows. */
	f->matched = !r->has_prog || pcap_offline_filter(&r->prog, h, data);
	return 1;
}

void qpt_reader_close(struct qpt_reader *r)
{
	if (!r)
		return;
	if (r->has_prog)
		pcap_freecode(&r->prog);
	pcap_close(r->p);
	g_free(r);
}

void qpt_reader_position(struct qpt_reader *r, uint64_t *done, uint64_t *size)
{
	FILE *fp = pcap_file(r->p);
	struct stat st;
	long pos;

	*done = 0;
	*size = 0;
	if (!fp || fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode))
		return;
	pos = ftell(fp);
	*done = pos > 0 ? (uint64_t)pos : 0;
	*size = (uint64_t)st.st_size;
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
#define BATCH_FRAMES 4096u
#define NBATCHES 4

struct batch {
	struct qpt_frame f[BATCH_FRAMES];
	uint8_t *buf;
	size_t used, cap;
	guint n;
	bool end;   /* the last batch: no frames follow */
	int status; /* with end: 2 when a file could not be read to its end */
};

static void start_thread(struct qpt_input *in);

struct qpt_input {
	struct qpt_input_opts o;
	GArray *files; /* struct input_file */
	uint64_t number;
	bool have_t0;
	int64_t t0;
	gint64 started_us, last_progress_us;
	uint64_t frames;
	bool progress_shown;

	GThread *thread;
	GAsyncQueue *full, *empty; /* struct batch */
	struct batch *cur;
	guint cur_idx;
	gint stop;   /* atomic: the consumer gave up early */
	bool done;   /* the end batch was consumed */
};

bool qpt_parse_time(const char *s, int64_t *ns, bool *relative)
{
	char *end;
	GDateTime *dt;

	*relative = s[0] == '+';
	/* Seconds with up to nine decimals, read exactly (a double would lose
	 * the nanoseconds of an epoch time). */
	if (g_ascii_isdigit(s[*relative])) {
		guint64 sec = g_ascii_strtoull(s + *relative, &end, 10);
		int64_t frac = 0, scale = 100000000;

		if (*end == '.')
			for (end++; g_ascii_isdigit(*end); end++, scale /= 10)
				frac += scale ? (*end - '0') * scale : 0;
		if (*end == '\0' && sec < 9000000000ull) {
			*ns = (int64_t)sec * 1000000000 + frac;
			return true;
		}
	}
	if (*relative)
		return false;
	dt = g_date_time_new_from_iso8601(s, NULL);
	if (!dt) {
		GTimeZone *utc = g_time_zone_new_utc();

		dt = g_date_time_new_from_iso8601(s, utc);
		g_time_zone_unref(utc);
	}
	if (!dt)
		return false;
	*ns = g_date_time_to_unix(dt) * 1000000000 +
	      (int64_t)g_date_time_get_microsecond(dt) * 1000;
	g_date_time_unref(dt);
	return true;
}

struct qpt_input *qpt_input_open(gchar **files, const struct qpt_input_opts *o,
				 int *status)
{
	struct qpt_input *in = g_new0(struct qpt_input, 1);

	in->o = *o;
	in->o.progress = o->progress && isatty(2);
	in->files = g_array_new(FALSE, TRUE, sizeof(struct input_file));
	for (gchar **f = files; *f; f++) {
		struct input_file x = { .r = qpt_reader_open(*f, o->bpf) };

		if (!x.r) {
			*status = 2;
			continue;
		}
		g_array_append_val(in->files, x);
	}
	if (!in->files->len) {
		qpt_input_close(in);
		return NULL;
	}
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
	for (guint i = 0; i < in->files->len; i++) {
		uint64_t d, s;

		qpt_reader_position(g_array_index(in->files, struct input_file, i).r,
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

/* The merge itself, in the reading thread. */
static int merge_next(struct qpt_input *in, struct qpt_frame *f, int *status)
{
	struct input_file *best = NULL;
	int64_t best_ns = 0;

	for (guint i = 0; i < in->files->len; i++) {
		struct input_file *x = &g_array_index(in->files, struct input_file, i);
		int64_t ns;

		if (!x->has_pending && x->r) {
			int rc = qpt_reader_next(x->r, &x->pending);

			if (rc > 0) {
				x->has_pending = true;
			} else {
				if (rc < 0)
					*status = 2;
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
		return 0;
	}
	*f = best->pending;
	best->has_pending = false;
	f->file_number = f->number;
	f->number = ++in->number;
	if (!in->have_t0) {
		in->have_t0 = true;
		in->t0 = best_ns;
	}
	if (in->o.has_from &&
	    best_ns < (in->o.from_rel ? in->t0 + in->o.from_ns : in->o.from_ns))
		f->matched = false;
	if (in->o.has_to && best_ns > (in->o.to_rel ? in->t0 + in->o.to_ns : in->o.to_ns))
		f->matched = false;
	if (in->o.progress && (++in->frames & 0xffff) == 0)
		progress(in);
	return 1;
}

static gpointer reader_thread(gpointer data)
{
	struct qpt_input *in = data;
	int status = 0;

	for (;;) {
		struct batch *b = g_async_queue_pop(in->empty);
		struct qpt_frame f;
		int rc = 1;

		b->n = 0;
		b->used = 0;
		while (b->n < BATCH_FRAMES && !g_atomic_int_get(&in->stop) &&
		       (rc = merge_next(in, &f, &status)) > 0) {
			if (b->used + f.caplen > b->cap) {
				if (b->n) { /* this frame opens the next batch */
					g_async_queue_push(in->full, b);
					b = g_async_queue_pop(in->empty);
					b->n = 0;
					b->used = 0;
				}
				if (f.caplen > b->cap) {
					b->cap = f.caplen;
					b->buf = g_realloc(b->buf, b->cap);
				}
			}
			memcpy(b->buf + b->used, f.data, f.caplen);
			f.data = (const uint8_t *)(uintptr_t)b->used; /* an offset until popped */
			b->used += f.caplen;
			b->f[b->n++] = f;
		}
		if (rc <= 0 || g_atomic_int_get(&in->stop)) {
			b->end = true;
			b->status = status;
			g_async_queue_push(in->full, b);
			return NULL;
		}
		g_async_queue_push(in->full, b);
	}
}

static void start_thread(struct qpt_input *in)
{
	in->full = g_async_queue_new();
	in->empty = g_async_queue_new();
	for (int i = 0; i < NBATCHES; i++) {
		struct batch *b = g_new0(struct batch, 1);

		b->cap = BATCH_BYTES;
		b->buf = g_malloc(b->cap);
		g_async_queue_push(in->empty, b);
	}
	in->thread = g_thread_new("qptrace-reader", reader_thread, in);
}

int qpt_input_next(struct qpt_input *in, struct qpt_frame *f, int *status)
{
	for (;;) {
		if (in->done)
			return 0;
		if (in->cur && in->cur_idx < in->cur->n) {
			*f = in->cur->f[in->cur_idx++];
			f->data = in->cur->buf + (uintptr_t)f->data;
			return 1;
		}
		if (in->cur) {
			if (in->cur->end) {
				if (in->cur->status)
					*status = in->cur->status;
				in->done = true;
				continue;
			}
			g_async_queue_push(in->empty, in->cur);
		}
		in->cur = g_async_queue_pop(in->full);
		in->cur_idx = 0;
	}
}

static void free_batch(gpointer p)
{
	struct batch *b = p;

	g_free(b->buf);
	g_free(b);
}

void qpt_input_close(struct qpt_input *in)
{
	if (!in)
		return;
	if (in->thread) {
		/* let the reader finish (early when the consumer stopped) */
		g_atomic_int_set(&in->stop, 1);
		while (!in->done) {
			if (in->cur) {
				bool end = in->cur->end;

				if (end) {
					in->done = true;
					break;
				}
				g_async_queue_push(in->empty, in->cur);
			}
			in->cur = g_async_queue_pop(in->full);
		}
		g_thread_join(in->thread);
		if (in->cur)
			free_batch(in->cur);
		for (struct batch *b; (b = g_async_queue_try_pop(in->full));)
			free_batch(b);
		for (struct batch *b; (b = g_async_queue_try_pop(in->empty));)
			free_batch(b);
		g_async_queue_unref(in->full);
		g_async_queue_unref(in->empty);
	}
	for (guint i = 0; i < in->files->len; i++)
		qpt_reader_close(g_array_index(in->files, struct input_file, i).r);
	g_array_free(in->files, TRUE);
	g_free(in);
}
