/* monitor_dir.c - qptrace monitor -r DIR [--follow]: the capture files
 * of a folder, as tcpdump rotates them (monitor.c; monitor_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor_int.h"
#include "output.h"

/* ---- -r DIR [--follow]: rotating capture files (tcpdump -w -G / -C) ----
 *
 * A file is known by its identity (device, inode), not its name: tcpdump
 * -C N -W M writes a ring of M names, truncating each and writing it
 * again in turn, and -G S without a time in the name truncates its one
 * name every S seconds.  Kept for each file read: how far (whole
 * records), its size and modification time then, its first record's
 * header.  A file found again in DIR is
 *   - unchanged (the same size and time): left;
 *   - grown (larger, the same first record): with --follow read on from
 *     where it was left (without it, a file is read as it was when its end
 *     was reached);
 *   - rewritten (smaller, another first record, or the same size at
 *     another time): read again from its start, and a line says so.
 * The file being read is checked the same way before each batch of
 * records (truncated, or another first record: from its start again).
 * A known file gone from DIR is forgotten.
 */

struct fid {
	dev_t dev;
	ino_t ino;
};

static guint fid_hash(gconstpointer p)
{
	const struct fid *x = p;
	uint64_t h = (uint64_t)x->ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)x->dev;

	return (guint)(h ^ h >> 32);
}

static gboolean fid_equal(gconstpointer a, gconstpointer b)
{
	const struct fid *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

struct known {
	struct fid id;		/* the table's key */
	int64_t pos;		/* read up to here (whole records) */
	int64_t size, mtime_ns; /* the file's, as it was left */
	uint8_t first[16];	/* its first record's header */
	bool has_first;
	bool skipped; /* not a pcap file, or corrupt: not read on while it grows */
	bool seen;    /* in the last look at DIR */
};

struct follow {
	gchar *path;
	int fd; /* -1: no file being read */
	struct fid id;
	bool swap, nsec, header;
	uint32_t linktype;
	int64_t pos;		/* the next record */
	int64_t resume;		/* a grown file: where to go on from */
	int64_t size, mtime_ns; /* at the last look */
	uint8_t first[16];
	bool has_first, skipped;
	bool have_prog;
	struct bpf_program prog;
	GHashTable *known; /* struct fid -> struct known */
	uint8_t *buf;	   /* bytes [bstart, bstart + blen) of the file */
	size_t cap, blen;
	int64_t bstart;
};

static uint32_t rd32(const uint8_t *b, bool swap)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return swap ? GUINT32_SWAP_LE_BE(v) : v;
}

static int64_t mtime_ns_of(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Bytes [pos, pos + n) of the file being read; NULL when it has fewer. */
static const uint8_t *fget(struct follow *f, int64_t pos, uint32_t n)
{
	if (pos < f->bstart || pos + n > f->bstart + (int64_t)f->blen) {
		size_t want = n > (1u << 20) ? n : (1u << 20);
		ssize_t r;

		if (want > f->cap) {
			f->buf = g_realloc(f->buf, want);
			f->cap = want;
		}
		r = pread(f->fd, f->buf, want, pos);
		f->bstart = pos;
		f->blen = r > 0 ? (size_t)r : 0;
		if (f->blen < n)
			return NULL;
	}
	return f->buf + (pos - f->bstart);
}

/* The header of the first record of path, when it has one. */
static bool read_first(const char *path, uint8_t h[16])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, h, 16, 24) == 16;
	close(fd);
	return ok;
}

struct dent {
	gchar *path;
	struct fid id;
	int64_t mtime_ns, size;
	int64_t resume;	  /* grown: read on from here */
	int64_t was_read; /* rewritten: how far it had been read */
	bool rewritten;
};

static gint cmp_dent(gconstpointer a, gconstpointer b)
{
	const struct dent *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The files of DIR to read: new, grown (with --follow) or rewritten, the
 * one being read left out; oldest first (tcpdump -G names by time, -C
 * numbers them, and a ring rewrites the oldest: their modification times
 * order all of them). */
static GArray *pending_files(struct follow *f, const char *dir, bool follow)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(struct dent));
	GDir *d = g_dir_open(dir, 0, NULL);
	GHashTableIter it;
	gpointer val;
	const char *n;

	if (!d)
		return a;
	g_hash_table_iter_init(&it, f->known);
	while (g_hash_table_iter_next(&it, NULL, &val))
		((struct known *)val)->seen = false;
	while ((n = g_dir_read_name(d))) {
		struct dent e = { 0 };
		struct stat st;
		struct known *k;

		if (n[0] == '.')
			continue;
		e.path = g_build_filename(dir, n, NULL);
		if (stat(e.path, &st) || !S_ISREG(st.st_mode)) {
			g_free(e.path);
			continue;
		}
		e.id.dev = st.st_dev;
		e.id.ino = st.st_ino;
		e.mtime_ns = mtime_ns_of(&st);
		e.size = st.st_size;
		k = g_hash_table_lookup(f->known, &e.id);
		if (k)
			k->seen = true;
		if ((f->fd >= 0 && fid_equal(&e.id, &f->id)) ||
		    (k && k->size == e.size && k->mtime_ns == e.mtime_ns)) {
			g_free(e.path); /* being read, or unchanged */
			continue;
		}
		if (k) {
			uint8_t h[16];
			bool same = k->has_first && read_first(e.path, h) && !memcmp(h, k->first, 16);

			if (e.size > k->size && (same || !k->has_first)) {
				if (!follow || k->skipped) { /* grown: left as it was */
					k->size = e.size;
					k->mtime_ns = e.mtime_ns;
					g_free(e.path);
					continue;
				}
				e.resume = k->pos;
			} else {
				e.rewritten = k->has_first;
				e.was_read = k->pos;
			}
		}
		g_array_append_val(a, e);
	}
	g_dir_close(d);
	/* forget the files gone */
	g_hash_table_iter_init(&it, f->known);
	while (g_hash_table_iter_next(&it, NULL, &val))
		if (!((struct known *)val)->seen)
			g_hash_table_iter_remove(&it);
	g_array_sort(a, cmp_dent);
	return a;
}

static void free_dents(GArray *a)
{
	for (guint i = 0; i < a->len; i++)
		g_free(g_array_index(a, struct dent, i).path);
	g_array_free(a, TRUE);
}

/* From the start of the file again (or of a new one). */
static void follow_restart(struct follow *f)
{
	if (f->have_prog)
		pcap_freecode(&f->prog);
	f->have_prog = false;
	f->header = false;
	f->pos = 0;
	f->resume = 0;
	f->has_first = false;
	f->skipped = false;
	f->blen = 0;
}

/* What was read of the current file, kept by its identity. */
static void remember(struct follow *f)
{
	struct known *k = g_hash_table_lookup(f->known, &f->id);

	if (!k) {
		k = g_new0(struct known, 1);
		k->id = f->id;
		g_hash_table_insert(f->known, &k->id, k);
	}
	k->pos = f->pos;
	k->size = f->size;
	k->mtime_ns = f->mtime_ns;
	k->has_first = f->has_first;
	memcpy(k->first, f->first, sizeof(k->first));
	k->skipped = f->skipped;
	k->seen = true;
}

/* Done with the file for now. */
static void follow_close(struct follow *f)
{
	if (f->fd >= 0) {
		remember(f);
		close(f->fd);
		f->fd = -1;
	}
	follow_restart(f);
	g_free(f->path);
	f->path = NULL;
}

static void follow_open(struct follow *f, const struct dent *e)
{
	struct stat st;

	f->path = g_strdup(e->path);
	f->id = e->id;
	f->size = e->size;
	f->mtime_ns = e->mtime_ns;
	follow_restart(f);
	if (e->rewritten)
		g_printerr("qptrace monitor: %s: rewritten since it was read (%" PRId64 " bytes "
			   "read, %" PRId64 " now): read again from its start\n", e->path,
			   e->was_read, e->size);
	f->fd = open(e->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		g_printerr("qptrace monitor: %s: %s\n", e->path, g_strerror(errno));
		f->skipped = true; /* known as it is: tried again when rewritten */
		remember(f);
		follow_close(f);
		return;
	}
	if (fstat(f->fd, &st) == 0) {
		f->id.dev = st.st_dev; /* replaced since the look at DIR: this one */
		f->id.ino = st.st_ino;
	}
	if (e->resume) {
		const struct known *k = g_hash_table_lookup(f->known, &f->id);

		if (k) {
			f->resume = e->resume;
			memcpy(f->first, k->first, sizeof(f->first));
			f->has_first = k->has_first;
		}
	}
}

/* Reads the complete records of the current file; false when none was
 * there (the file is at its end for now). */
static bool follow_read(struct mon *m, struct follow *f, int max)
{
	struct stat st;
	const uint8_t *h;
	uint8_t first[16];
	int n = 0;

	if (fstat(f->fd, &st))
		return false;
	f->blen = 0; /* what the buffer holds may have been rewritten since */
	f->size = st.st_size;
	f->mtime_ns = mtime_ns_of(&st);
	if (f->header && (st.st_size < f->pos ||
			  (f->has_first && (pread(f->fd, first, 16, 24) != 16 ||
					    memcmp(first, f->first, 16))))) {
		g_printerr("qptrace monitor: %s: truncated or rewritten while it was read (%" PRId64
			   " bytes read, %" PRId64 " now): read again from its start\n", f->path,
			   f->pos, (int64_t)st.st_size);
		follow_restart(f);
	}
	if (!f->header) {
		uint32_t magic;

		if (st.st_size < 24 || !(h = fget(f, 0, 24)))
			return false;
		memcpy(&magic, h, 4);
		f->swap = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
		f->nsec = magic == 0xa1b23c4d || magic == 0x4d3cb2a1;
		if (!f->swap && magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
			g_printerr("qptrace monitor: %s: not a pcap file (pcapng files are not "
				   "followed): skipped\n", f->path);
			f->skipped = true;
			follow_close(f);
			return true;
		}
		f->linktype = rd32(h + 20, f->swap) & 0x0fffffff;
		f->header = true;
		f->pos = f->resume > 24 ? f->resume : 24;
		f->resume = 0;
		if (m->o->filter) {
			pcap_t *dead = pcap_open_dead((int)f->linktype, 262144);

			if (pcap_compile(dead, &f->prog, m->o->filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
				g_printerr("qptrace monitor: bad filter '%s': %s\n", m->o->filter,
					   pcap_geterr(dead));
				pcap_close(dead);
				m->failed = true;
				return false;
			}
			f->have_prog = true;
			pcap_close(dead);
		}
		if (!qpt_linktype_supported(f->linktype))
			g_printerr("qptrace monitor: %s: link type %u: no RoCE/IB in it\n", f->path,
				   f->linktype);
	}
	while (n < max && st.st_size - f->pos >= 16) {
		const uint8_t *rh = fget(f, f->pos, 16), *data;
		uint32_t incl, orig, sec, frac;

		if (!rh)
			break;
		sec = rd32(rh, f->swap);
		frac = rd32(rh + 4, f->swap);
		incl = rd32(rh + 8, f->swap);
		orig = rd32(rh + 12, f->swap);
		if (incl > 262144) {
			g_printerr("qptrace monitor: %s: a record of %u bytes: the file is "
				   "corrupt, left\n", f->path, incl);
			f->skipped = true;
			follow_close(f);
			return true;
		}
		if (st.st_size - f->pos - 16 < incl)
			break; /* still being written */
		if (f->pos == 24) {
			memcpy(f->first, rh, 16);
			f->has_first = true;
		}
		if (!(data = fget(f, f->pos + 16, incl)))
			break;
		f->pos += 16 + (int64_t)incl;
		n++;
		if (f->have_prog) {
			struct pcap_pkthdr ph = { .caplen = incl, .len = orig };

			if (!pcap_offline_filter(&f->prog, &ph, data))
				continue;
		}
		mon_on_frame(m, f->linktype,
			     (int64_t)sec * 1000000000 + (f->nsec ? frac : (int64_t)frac * 1000),
			     data, incl, orig);
	}
	return n > 0;
}

int mon_run_dir(struct mon *m, int64_t deadline_us)
{
	struct follow f = { .fd = -1,
			    .known = g_hash_table_new_full(fid_hash, fid_equal, NULL, g_free) };
	int64_t next_tick = 0, next_interval = g_get_monotonic_time() +
					       (int64_t)(m->mo->interval * 1e6);

	if (!g_file_test(m->mo->dir, G_FILE_TEST_IS_DIR)) {
		g_printerr("qptrace monitor: -r %s: not a directory\n", m->mo->dir);
		g_hash_table_destroy(f.known);
		return 2;
	}
	m->started = true;
	while (!mon_stop_signal && !m->write_failed && !m->failed) {
		bool progress = false;
		int64_t now;

		if (f.fd < 0) {
			GArray *p = pending_files(&f, m->mo->dir, m->mo->follow);

			if (p->len) {
				follow_open(&f, &g_array_index(p, struct dent, 0));
				progress = true;
			}
			free_dents(p);
		}
		if (f.fd >= 0) {
			progress |= follow_read(m, &f, 4096);
			if (!progress && f.fd >= 0) {
				/* at its end: finished when another file is to be read
				 * (the rotation closed this one), or without --follow */
				GArray *p = pending_files(&f, m->mo->dir, m->mo->follow);
				bool other = p->len > 0;

				free_dents(p);
				if (other || !m->mo->follow) {
					follow_read(m, &f, INT32_MAX);
					follow_close(&f);
					progress = true;
				}
			}
		}
		if (!progress && f.fd < 0 && !m->mo->follow)
			break; /* every file read */
		mon_metrics_on_demand(m);
		now = g_get_monotonic_time();
		if (now >= next_tick) {
			mon_tick(m, &next_interval);
			next_tick = now + 1000000;
		}
		if (deadline_us && now >= deadline_us)
			break;
		if (!progress)
			g_usleep(100000);
	}
	follow_close(&f);
	g_free(f.buf);
	g_hash_table_destroy(f.known);
	return m->failed ? 2 : mon_stopped_status();
}
