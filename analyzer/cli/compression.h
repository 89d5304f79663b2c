/* compression.h - compressed captures (decompress.c) */
#ifndef QPT_COMPRESSION_H
#define QPT_COMPRESSION_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Compressed captures (decompress.c): what the first bytes say; whether
 * this build reads it; a stream reading fd decompressed, the prefix bytes
 * (already read from fd) first.  *handle gives the compressed position. */
enum qpt_compression { QPT_COMP_NONE, QPT_COMP_GZIP, QPT_COMP_ZSTD, QPT_COMP_XZ,
		       QPT_COMP_BZIP2, QPT_COMP_LZ4 };
enum qpt_compression qpt_compression_of(const uint8_t *magic, size_t n);
const char *qpt_compression_name(enum qpt_compression c);
bool qpt_compression_supported(enum qpt_compression c);
FILE *qpt_decompress_open(int fd, const uint8_t *prefix, size_t nprefix,
			  enum qpt_compression kind, void **handle);
uint64_t qpt_decompress_raw_pos(const void *handle);
/* Why the stream ended before the end of a clean compressed file, or NULL
 * (g_free it): "trailing data at offset N (...)", "corrupt gzip data found
 * at offset N (zlib: ...)", "truncated ...".  Every byte decoded before it was
 * read first.  file_size: the compressed file's, when known (else 0). */
gchar *qpt_decompress_error(const void *handle, uint64_t file_size);

#endif
