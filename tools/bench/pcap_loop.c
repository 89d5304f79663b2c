/* pcap_loop.c - the floor for reading a capture: a bare libpcap
 * pcap_next_ex() loop that counts packets and captured bytes, opened as
 * qptrace opens files (nanosecond timestamps).  tools/bench/run compares
 * qptrace with it.
 *
 *   pcap_loop FILE   ->   "PACKETS packets, BYTES bytes"
 */
#ifndef _GNU_SOURCE
#define _DEFAULT_SOURCE /* u_char & co. in pcap.h under -std=c11 */
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include <pcap/pcap.h>

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t packets = 0, bytes = 0;
	pcap_t *p;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: pcap_loop FILE\n");
		return 2;
	}
	p = pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO,
						    err);
	if (!p) {
		fprintf(stderr, "pcap_loop: %s: %s\n", argv[1], err);
		return 2;
	}
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		packets++;
		bytes += h->caplen;
	}
	if (rc != PCAP_ERROR_BREAK) {
		fprintf(stderr, "pcap_loop: %s: after packet %" PRIu64 ": %s\n", argv[1],
			packets, pcap_geterr(p));
		pcap_close(p);
		return 2;
	}
	pcap_close(p);
	printf("%" PRIu64 " packets, %" PRIu64 " bytes\n", packets, bytes);
	return 0;
}
