/* fuzz_decode.c - libFuzzer target for qpt_decode() (and the packet printers)
 *
 * Input layout (all fuzzer-controlled):
 *   byte 0      link type: index into the supported list below (mod its size)
 *   byte 1      options: bit0 no_crc, bit1 also treat UDP port 4792 as RoCEv2,
 *               bit2 skip the printers
 *   bytes 2..3  little-endian uint16 added to the captured length to give
 *               the wire length (so caplen < wirelen, snap-length cuts)
 *   bytes 4..   the frame; the captured length is exactly its size
 *
 * The frame is copied into a buffer of exactly caplen bytes so that ASan
 * reports any read past the captured data.  Besides the decoder, the three
 * packet printers of the CLI (line, verbose, JSON) run over the result: they
 * see every field the decoder filled in, including hostile ones.
 *
 * FUZZ_EXTRA_SOURCES: analyzer/cli/print_pkt.c analyzer/cli/print_ext.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/output.h"
#include "qpt_decode.h"

static const uint32_t linktypes[] = {
	QPT_LINKTYPE_ETHERNET,	 QPT_LINKTYPE_NULL,	  QPT_LINKTYPE_RAW,
	QPT_DLT_RAW_BSD,	 QPT_DLT_RAW_OPENBSD,	  QPT_LINKTYPE_LINUX_SLL,
	QPT_LINKTYPE_LINUX_SLL2, QPT_LINKTYPE_ERF,	  QPT_LINKTYPE_IPV4,
	QPT_LINKTYPE_IPV6,	 QPT_LINKTYPE_INFINIBAND,
	105, /* unsupported (802.11): must be refused cleanly */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t extra_port = 4792;
	struct qpt_decode_opts opts = { 0 };
	struct qpt_pkt pkt;
	uint32_t lt, caplen, wirelen;
	uint8_t *frame;

	if (size < 4 || size - 4 > 262144)
		return 0;
	lt = linktypes[data[0] % (sizeof linktypes / sizeof linktypes[0])];
	opts.no_crc = data[1] & 1;
	if (data[1] & 2) {
		opts.udp_ports = &extra_port;
		opts.n_udp_ports = 1;
	}
	caplen = (uint32_t)(size - 4);
	wirelen = caplen + (uint32_t)(data[2] | data[3] << 8);
	frame = malloc(caplen ? caplen : 1);
	if (!frame)
		return 0;
	memcpy(frame, data + 4, caplen);

	memset(&pkt, 0xa5, sizeof pkt); /* the decoder must not rely on zeroed input */
	enum qpt_error e = qpt_decode(&pkt, lt, frame, caplen, wirelen, &opts);
	if (e != pkt.error || (unsigned)e >= QPT_E_COUNT)
		abort();
	if (!qpt_strerror(e) || !qpt_transport_name(pkt.transport))
		abort();
	if (pkt.caplen != caplen || pkt.wirelen != wirelen)
		abort();
	/* Offsets the decoder hands out must lie inside the captured bytes. */
	if ((pkt.flags & QPT_HAS_BTH) && pkt.off_bth > caplen)
		abort();
	if ((pkt.flags & QPT_HAS_BTH) && pkt.off_iba > caplen)
		abort();

	if (!(data[1] & 4) && pkt.transport != QPT_TR_NONE) {
		struct qpt_frame f = {
			.file = "fuzz",
			.number = 1,
			.ts_sec = 1700000000,
			.ts_nsec = 123456789,
			.linktype = lt,
			.data = frame,
			.caplen = caplen,
			.wirelen = wirelen,
			.matched = true,
		};
		GString *out = g_string_new(NULL);
		char addr[128];

		qpt_print_pkt(out, &f, &pkt, QPT_PRINT_LINE, 1700000000.0);
		qpt_print_pkt(out, &f, &pkt, QPT_PRINT_VERBOSE, 1700000000.0);
		qpt_print_pkt(out, &f, &pkt, QPT_PRINT_JSON, 1700000000.0);
		qpt_format_addr(&pkt, true, addr, sizeof addr);
		qpt_format_addr(&pkt, false, addr, sizeof addr);
		g_string_free(out, TRUE);
	}
	free(frame);
	return 0;
}
