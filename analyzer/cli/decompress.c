/* decompress.c - compressed captures read directly, as Wireshark reads them
 *
 * A capture compressed with gzip (zlib) or zstd (libzstd, when built with
 * it) is read through a stdio stream (fopencookie) that decompresses as
 * libpcap reads: no temporary file, memory bounded by the buffers.  The
 * bytes that told the format (read first, from a pipe too) are fed back in
 * front of the rest.  Concatenated gzip members and zstd frames are read
 * one after the other, as zcat and zstdcat do; zstd skippable frames (the
 * one pzstd writes first) are skipped.
 *
 * A stream that does not end cleanly (bytes after the last member that are
 * not another one, corrupt data, the file ending inside a member) first
 * hands out every byte decoded before the damage, then reads as the end of
 * the file; the failure is kept for the reader to say
 * (qpt_decompress_error) after the frames before it are analysed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef QPT_HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h> /* ZSTD_getErrorCode */
#endif

#include "compression.h"

#define IN_BUF (128u << 10)

/* How a compressed stream failed to end cleanly. */
enum dc_fail {
	DC_OK,
	DC_TRAILING,  /* bytes after the last member (frame) that do not start another */
	DC_CORRUPT,   /* the library refused the data */
	DC_TRUNCATED, /* the file ends inside a member (frame) */
};

struct dc {
	int fd;
	enum qpt_compression kind;
	uint8_t prefix[8];
	size_t nprefix, prefix_pos;
	uint8_t *in;
	size_t in_len, in_pos; /* zstd: what is in[] and how far it is used */
	bool eof;
	uint64_t raw; /* compressed bytes read so far (progress) */
	uint64_t members;    /* gzip members, zstd frames read whole */
	uint64_t member_end; /* the compressed offset where the last of them ends */
	bool mid;	     /* zstd: inside a frame */
	size_t hint;	     /* zstd: the input it asks for next (0: any) */
	uint8_t head[2];     /* gzip: a member's first two bytes (its magic) */
	enum dc_fail fail;   /* then every read is the end of the file */
	uint64_t fail_at;    /* compressed offset of the failure */
	char fail_why[96];   /* the library's words */
	z_stream z;
#ifdef QPT_HAVE_ZSTD
	ZSTD_DStream *zs;
#endif
};

enum qpt_compression qpt_compression_of(const uint8_t *m, size_t n)
{
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		return QPT_COMP_GZIP;
	if (n >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd)
		return QPT_COMP_ZSTD;
	/* a zstd skippable frame (0x184D2A50-5F, little-endian): pzstd starts
	 * its files with one */
	if (n >= 4 && (m[0] & 0xf0) == 0x50 && m[1] == 0x2a && m[2] == 0x4d && m[3] == 0x18)
		return QPT_COMP_ZSTD;
	if (n >= 6 && !memcmp(m, "\xfd" "7zXZ\0", 6))
		return QPT_COMP_XZ;
	if (n >= 3 && !memcmp(m, "BZh", 3))
		return QPT_COMP_BZIP2;
	if (n >= 4 && m[0] == 0x04 && m[1] == 0x22 && m[2] == 0x4d && m[3] == 0x18)
		return QPT_COMP_LZ4;
	return QPT_COMP_NONE;
}

const char *qpt_compression_name(enum qpt_compression c)
{
	static const char *const names[] = { "uncompressed", "gzip", "zstd", "xz", "bzip2", "lz4" };

	return (unsigned)c < G_N_ELEMENTS(names) ? names[c] : "?";
}

bool qpt_compression_supported(enum qpt_compression c)
{
#ifdef QPT_HAVE_ZSTD
	if (c == QPT_COMP_ZSTD)
		return true;
#endif
	return c == QPT_COMP_NONE || c == QPT_COMP_GZIP;
}

/* Compressed bytes into buf: first the prefix, then the file. */
static ssize_t raw_read(struct dc *d, uint8_t *buf, size_t size)
{
	ssize_t n;

	if (d->prefix_pos < d->nprefix) {
		size_t k = d->nprefix - d->prefix_pos;

		if (k > size)
			k = size;
		memcpy(buf, d->prefix + d->prefix_pos, k);
		d->prefix_pos += k;
		d->raw += k;
		return (ssize_t)k;
	}
	n = read(d->fd, buf, size);
	if (n > 0)
		d->raw += (uint64_t)n;
	return n;
}

static void set_fail(struct dc *d, enum dc_fail f, uint64_t at, const char *why)
{
	d->fail = f;
	d->fail_at = at;
	g_strlcpy(d->fail_why, why ? why : "", sizeof(d->fail_why));
}

/* What the stream handed out: what it decoded, even when it failed (the
 * failure waits in d->fail: the next read is the end); -1 only for a read
 * error before anything was decoded. */
static ssize_t produced(size_t n, bool read_error)
{
	return n || !read_error ? (ssize_t)n : -1;
}

static ssize_t read_gzip(struct dc *d, char *buf, size_t size)
{
	bool read_error = false;

	d->z.next_out = (Bytef *)buf;
	d->z.avail_out = (uInt)(size > UINT32_MAX ? UINT32_MAX : size);
	while (d->z.avail_out && !d->fail) {
		uint64_t at;
		int rc;

		if (!d->z.avail_in && !d->eof) {
			ssize_t n = raw_read(d, d->in, IN_BUF);

			if (n < 0) {
				read_error = true; /* errno from read(): EINTR on Ctrl-C, ... */
				break;
			}
			if (n == 0)
				d->eof = true;
			d->z.next_in = d->in;
			d->z.avail_in = (uInt)n;
		}
		/* inflateReset() zeroes total_in: none means between members */
		if (!d->z.avail_in && d->eof && !d->z.total_in)
			break; /* the end, after a whole member */
		/* a member's first two bytes, to tell another member from trailing data */
		for (uLong k = d->z.total_in; k < 2 && k - d->z.total_in < d->z.avail_in; k++)
			d->head[k] = d->z.next_in[k - d->z.total_in];
		/* at the end of the file too: inflate() still hands out what it holds */
		rc = inflate(&d->z, Z_NO_FLUSH);
		at = d->raw - d->z.avail_in; /* the compressed bytes inflate() took */
		if (rc == Z_STREAM_END) {
			/* another gzip member may follow (cat a.gz b.gz) */
			d->members++;
			d->member_end = at;
			inflateReset(&d->z);
			continue;
		}
		if (rc == Z_OK || (rc == Z_BUF_ERROR && !d->z.avail_in && !d->eof))
			continue;
		/* bytes after a member that are not another one, as gzip calls
		 * them: trailing data (the 512 zeros of a tape block, ...) */
		if (d->members && !(d->z.total_in >= 2 && d->head[0] == 0x1f && d->head[1] == 0x8b))
			set_fail(d, DC_TRAILING, d->member_end, NULL);
		else if (rc == Z_BUF_ERROR)
			set_fail(d, DC_TRUNCATED, at, NULL); /* no input left, none to come */
		else
			set_fail(d, DC_CORRUPT, at, d->z.msg ? d->z.msg : "inflate failed");
	}
	return produced(size - d->z.avail_out, read_error);
}

#ifdef QPT_HAVE_ZSTD
static ssize_t read_zstd(struct dc *d, char *buf, size_t size)
{
	ZSTD_outBuffer out = { buf, size, 0 };
	bool read_error = false;

	while (out.pos < out.size && !d->fail) {
		ZSTD_inBuffer in;
		size_t rc, before = out.pos, in_before;
		uint64_t at;

		if (d->in_pos == d->in_len && !d->eof) {
			ssize_t n = raw_read(d, d->in, IN_BUF);

			if (n < 0) {
				read_error = true;
				break;
			}
			if (n == 0)
				d->eof = true;
			d->in_len = (size_t)n;
			d->in_pos = 0;
		}
		if (d->in_pos == d->in_len && d->eof && !d->mid)
			break; /* the end, after a whole frame */
		/* At the end of the file too: the decoder still hands out what it
		 * holds.  Fed no more than it asks for next (a block, its checksum):
		 * a call that fails keeps nothing it decoded, so it decodes no
		 * more than the block that fails (a checksum that does not match
		 * comes alone, after its frame's last block is handed out). */
		in = (ZSTD_inBuffer){ d->in, d->in_len, d->in_pos };
		if (d->hint && d->hint < in.size - in.pos)
			in.size = in.pos + d->hint;
		in_before = in.pos;
		rc = ZSTD_decompressStream(d->zs, &out, &in);
		d->in_pos = in.pos;
		at = d->raw - (d->in_len - d->in_pos);
		if (ZSTD_isError(rc)) {
			/* what follows a whole frame is not one: trailing data */
			if (d->members && ZSTD_getErrorCode(rc) == ZSTD_error_prefix_unknown)
				set_fail(d, DC_TRAILING, d->member_end, NULL);
			else
				set_fail(d, DC_CORRUPT, at, ZSTD_getErrorName(rc));
			break;
		}
		d->hint = rc ? rc : 1; /* a new frame: its header first */
		if (rc == 0) { /* a frame (or a skippable one) decoded and flushed */
			d->members++;
			d->member_end = at;
			d->mid = false;
		} else {
			d->mid = true;
			if (d->eof && d->in_pos == d->in_len && out.pos == before &&
			    in.pos == in_before)
				set_fail(d, DC_TRUNCATED, at, NULL); /* nothing more to come */
		}
	}
	return produced(out.pos, read_error);
}
#endif

static ssize_t dc_read(void *cookie, char *buf, size_t size)
{
	struct dc *d = cookie;

	switch (d->kind) {
	case QPT_COMP_GZIP: return read_gzip(d, buf, size);
#ifdef QPT_HAVE_ZSTD
	case QPT_COMP_ZSTD: return read_zstd(d, buf, size);
#endif
	case QPT_COMP_NONE: return raw_read(d, (uint8_t *)buf, size);
	default: errno = ENOTSUP; return -1;
	}
}

static int dc_close(void *cookie)
{
	struct dc *d = cookie;

	if (d->kind == QPT_COMP_GZIP)
		inflateEnd(&d->z);
#ifdef QPT_HAVE_ZSTD
	if (d->zs)
		ZSTD_freeDStream(d->zs);
#endif
	if (d->fd > 2)
		close(d->fd);
	g_free(d->in);
	g_free(d);
	return 0;
}

FILE *qpt_decompress_open(int fd, const uint8_t *prefix, size_t nprefix,
			  enum qpt_compression kind, void **handle)
{
	static const cookie_io_functions_t io = { .read = dc_read, .close = dc_close };
	struct dc *d = g_new0(struct dc, 1);
	FILE *fp;

	d->fd = fd;
	d->kind = kind;
	if (nprefix > sizeof(d->prefix))
		nprefix = sizeof(d->prefix);
	memcpy(d->prefix, prefix, nprefix);
	d->nprefix = nprefix;
	if (kind != QPT_COMP_NONE)
		d->in = g_malloc(IN_BUF);
	if (kind == QPT_COMP_GZIP && inflateInit2(&d->z, 15 + 16) != Z_OK) {
		g_free(d->in);
		g_free(d);
		errno = ENOMEM;
		return NULL;
	}
#ifdef QPT_HAVE_ZSTD
	if (kind == QPT_COMP_ZSTD) {
		d->zs = ZSTD_createDStream();
		d->hint = 1; /* the frame header first */
	}
#endif
	fp = fopencookie(d, "rb", io);
	if (!fp) {
		d->fd = -1; /* the caller still owns it */
		dc_close(d);
		return NULL;
	}
	if (handle)
		*handle = d;
	return fp;
}

uint64_t qpt_decompress_raw_pos(const void *handle)
{
	return handle ? ((const struct dc *)handle)->raw : 0;
}

gchar *qpt_decompress_error(const void *handle, uint64_t file_size)
{
	const struct dc *d = handle;
	const char *what, *unit;

	if (!d || d->fail == DC_OK)
		return NULL;
	what = qpt_compression_name(d->kind);
	unit = d->kind == QPT_COMP_GZIP ? "member" : "frame";
	switch (d->fail) {
	case DC_TRAILING:
		if (file_size > d->fail_at)
			return g_strdup_printf("trailing data at offset %" PRIu64 " (%" PRIu64
					       " bytes after the last %s %s that are not another)",
					       d->fail_at, file_size - d->fail_at, what, unit);
		return g_strdup_printf("trailing data at offset %" PRIu64 " (bytes after the "
				       "last %s %s that are not another)", d->fail_at, what, unit);
	case DC_CORRUPT:
		/* where the library found it: a byte changed in the data may be
		 * found only at the checksum, at the end of the member */
		return g_strdup_printf("corrupt %s data found at offset %" PRIu64 " (%s: %s)", what,
				       d->fail_at, d->kind == QPT_COMP_GZIP ? "zlib" : "libzstd",
				       d->fail_why);
	case DC_TRUNCATED:
		return g_strdup_printf("truncated %s data: the file ends at offset %" PRIu64
				       " inside a %s %s", what, d->fail_at, what, unit);
	default:
		return NULL;
	}
}
