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
	pcap_t *p;
	int lt;

	p = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO,
						    err);
	if (!p) {
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

struct qpt_input {
	struct qpt_input_opts o;
	GArray *files; /* struct input_file */
	uint64_t number;
	bool have_t0;
	int64_t t0;
	gint64 started_us, last_progress_us;
	uint64_t frames;
	bool progress_shown;
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

int qpt_input_next(struct qpt_input *in, struct qpt_frame *f, int *status)
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

void qpt_input_close(struct qpt_input *in)
{
	if (!in)
		return;
	for (guint i = 0; i < in->files->len; i++)
		qpt_reader_close(g_array_index(in->files, struct input_file, i).r);
	g_array_free(in->files, TRUE);
	g_free(in);
}
