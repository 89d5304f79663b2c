/* decompress.c - compressed captures read directly, as Wireshark reads them
 *
 * A capture compressed with gzip (zlib) or zstd (libzstd, when built with
 * it) is read through a stdio stream (fopencookie) that decompresses as
 * libpcap reads: no temporary file, memory bounded by the buffers.  The
 * bytes that told the format (read first, from a pipe too) are fed back in
 * front of the rest.  Concatenated gzip members and zstd frames are read
 * one after the other, as zcat and zstdcat do.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#ifdef QPT_HAVE_ZSTD
#include <zstd.h>
#endif

#include "cli.h"

#define IN_BUF (128u << 10)

struct dc {
	int fd;
	enum qpt_compression kind;
	uint8_t prefix[8];
	size_t nprefix, prefix_pos;
	uint8_t *in;
	size_t in_len, in_pos; /* zstd: what is in[] and how far it is used */
	bool eof, started;
	uint64_t raw; /* compressed bytes read so far (progress) */
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

static ssize_t read_gzip(struct dc *d, char *buf, size_t size)
{
	d->z.next_out = (Bytef *)buf;
	d->z.avail_out = (uInt)(size > UINT32_MAX ? UINT32_MAX : size);
	while (d->z.avail_out) {
		int rc;

		if (!d->z.avail_in && !d->eof) {
			ssize_t n = raw_read(d, d->in, IN_BUF);

			if (n < 0)
				return -1; /* errno from read(): EINTR on Ctrl-C, ... */
			if (n == 0)
				d->eof = true;
			d->z.next_in = d->in;
			d->z.avail_in = (uInt)n;
		}
		if (!d->z.avail_in && d->eof)
			break; /* a member cut short reads as a truncated capture */
		rc = inflate(&d->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			/* another gzip member may follow (cat a.gz b.gz) */
			inflateReset(&d->z);
			continue;
		}
		if (rc == Z_BUF_ERROR && !d->z.avail_in)
			continue;
		if (rc != Z_OK) {
			errno = EILSEQ; /* corrupt gzip data */
			return -1;
		}
	}
	return (ssize_t)(size - d->z.avail_out);
}

#ifdef QPT_HAVE_ZSTD
static ssize_t read_zstd(struct dc *d, char *buf, size_t size)
{
	ZSTD_outBuffer out = { buf, size, 0 };

	while (out.pos < out.size) {
		ZSTD_inBuffer in;
		size_t rc;

		if (d->in_pos == d->in_len && !d->eof) {
			ssize_t n = raw_read(d, d->in, IN_BUF);

			if (n < 0)
				return out.pos ? (ssize_t)out.pos : -1;
			if (n == 0)
				d->eof = true;
			d->in_len = (size_t)n;
			d->in_pos = 0;
		}
		if (d->in_pos == d->in_len && d->eof)
			break;
		in = (ZSTD_inBuffer){ d->in, d->in_len, d->in_pos };
		rc = ZSTD_decompressStream(d->zs, &out, &in);
		d->in_pos = in.pos;
		if (ZSTD_isError(rc)) {
			errno = EILSEQ;
			return -1;
		}
	}
	return (ssize_t)out.pos;
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
	if (kind == QPT_COMP_ZSTD)
		d->zs = ZSTD_createDStream();
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
