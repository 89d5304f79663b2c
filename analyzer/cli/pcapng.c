/* pcapng.c - a plain pcapng file's Interface Statistics Blocks: what the
 * capture itself dropped (qpt_pcapng_drops, reader.h) */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "reader.h"

/* A pcapng block: type, total length, body, total length again.  The
 * Interface Statistics Blocks dumpcap and tcpdump write at the end of a
 * capture hold the interface's drop counters; libpcap skips them, so they
 * are read here, walking the file's blocks from its start (a plain file
 * only: no seeking in a compressed stream).  Each section (a Section Header
 * Block) has its own byte order and interfaces (Interface Description
 * Blocks, numbered from 0 in the section); an interface's counters are
 * cumulative, so its latest ISB counts, and the sections add up. */
#define NG_SHB 0x0A0D0D0Au
#define NG_IDB 1u
#define NG_ISB 5u
#define NG_BOM 0x1A2B3C4Du    /* the byte-order magic */
#define NG_MAX_BLOCK 65536    /* an ISB larger than this is not one */
#define NG_WINDOW (1u << 20)  /* the file is read in windows of this much */

static uint32_t ng32(const uint8_t *b, bool be)
{
	return be ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
		  : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static uint64_t ng64(const uint8_t *b, bool be)
{
	uint64_t hi = ng32(be ? b : b + 4, be), lo = ng32(be ? b + 4 : b, be);

	return hi << 32 | lo;
}

/* An interface's latest statistics in its section. */
struct ng_iface {
	uint64_t ifdrop, osdrop;
	bool has; /* its latest ISB had a drop counter */
};

/* The options of one ISB body (len bytes): its drop counters into *x
 * (those it lacks 0); true when it has either. */
static bool isb_drops(const uint8_t *body, uint32_t len, bool be, struct ng_iface *x)
{
	uint32_t at = 12; /* interface id, timestamp (high, low) */

	*x = (struct ng_iface){ 0 };
	while (at + 4 <= len) {
		uint16_t code = (uint16_t)(be ? body[at] << 8 | body[at + 1] : body[at + 1] << 8 | body[at]);
		uint16_t olen = (uint16_t)(be ? body[at + 2] << 8 | body[at + 3] :
						body[at + 3] << 8 | body[at + 2]);

		if (code == 0 || at + 4 + olen > len)
			break;
		if ((code == 5 || code == 7) && olen == 8) {
			*(code == 5 ? &x->ifdrop : &x->osdrop) = ng64(body + at + 4, be);
			x->has = true;
		}
		at += 4 + ((olen + 3u) & ~3u);
	}
	return x->has;
}

/* n bytes of the file at off, through a window read with pread(); NULL
 * past its end. */
struct ng_window {
	int fd;
	uint8_t *buf;
	uint64_t start;
	size_t len;
};

static const uint8_t *ng_at(struct ng_window *w, uint64_t off, size_t n)
{
	if (off < w->start || off + n > w->start + w->len) {
		ssize_t got = pread(w->fd, w->buf, NG_WINDOW, (off_t)off);

		w->start = off;
		w->len = got > 0 ? (size_t)got : 0;
		if (n > w->len)
			return NULL;
	}
	return w->buf + (off - w->start);
}

/* The section's interfaces' latest counters added to the totals. */
static bool ng_section_end(GArray *ifaces, uint64_t *ifdrop, uint64_t *osdrop)
{
	bool found = false;

	for (guint i = 0; i < ifaces->len; i++) {
		const struct ng_iface *x = &g_array_index(ifaces, struct ng_iface, i);

		*ifdrop += x->ifdrop;
		*osdrop += x->osdrop;
		found |= x->has;
	}
	g_array_set_size(ifaces, 0);
	return found;
}

bool qpt_pcapng_drops(const char *path, uint64_t *ifdrop, uint64_t *osdrop, gchar **note)
{
	struct ng_window w = { .fd = -1 };
	GArray *ifaces = NULL;
	uint64_t pos = 0, sections = 0;
	struct stat st;
	bool be = false, found = false;

	*ifdrop = *osdrop = 0;
	if (note)
		*note = NULL;
	/* a regular file only (never open a FIFO: that waits for a writer) */
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	w.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (w.fd < 0)
		return false;
	if (fstat(w.fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	w.buf = g_malloc(NG_WINDOW);
	ifaces = g_array_new(FALSE, TRUE, sizeof(struct ng_iface));
	for (;;) {
		const uint8_t *h = ng_at(&w, pos, 12), *b;
		uint32_t type, len;

		if (!h)
			break; /* the end (or a few bytes that are no block) */
		if (ng32(h, false) == NG_SHB) {
			/* a new section: its own byte order, no interfaces yet */
			if (ng32(h + 8, false) == NG_BOM)
				be = false;
			else if (ng32(h + 8, true) == NG_BOM)
				be = true;
			else
				break;
			found |= ng_section_end(ifaces, ifdrop, osdrop);
			sections++;
		} else if (!sections) {
			break; /* not a pcapng file */
		}
		type = ng32(h, be);
		len = ng32(h + 4, be);
		if (len < 12 || len % 4 || len > (uint64_t)st.st_size - pos)
			break; /* not a block, or cut: count nothing more */
		if (type == NG_IDB) {
			g_array_set_size(ifaces, ifaces->len + 1);
		} else if (type == NG_ISB && len >= 24 && len <= NG_MAX_BLOCK &&
			   (b = ng_at(&w, pos, len)) && ng32(b + len - 4, be) == len) {
			uint32_t id = ng32(b + 8, be);
			struct ng_iface x;

			isb_drops(b + 8, len - 12, be, &x);
			if (id < ifaces->len) {
				g_array_index(ifaces, struct ng_iface, id) = x;
			} else if (note && !*note) { /* said once */
				*note = g_strdup_printf(
					"%s: an interface statistics block (offset %" PRIu64 ") names "
					"interface %u, which its section does not describe (it has %u): "
					"its drop counters are not counted", path, pos, id, ifaces->len);
			}
		}
		pos += len;
	}
	found |= ng_section_end(ifaces, ifdrop, osdrop);
out:
	if (ifaces)
		g_array_free(ifaces, TRUE);
	g_free(w.buf);
	close(w.fd);
	return found;
}
