/* reader.c - capture files through libpcap (pcap and pcapng) */
#include <errno.h>
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
	f->ts_sec = h->ts.tv_sec;
	f->ts_nsec = (uint32_t)h->ts.tv_usec; /* nanoseconds: opened with NANO */
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
