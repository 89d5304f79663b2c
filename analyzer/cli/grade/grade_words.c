/* grade_words.c - the words of a grading report, each explained once
 *
 * A student's feedback ends with one line per term the report used
 * (whole words, as written): what an AETH or a PSN is, in a sentence,
 * with where the InfiniBand Architecture Specification (IBA, vol. 1, and
 * its RoCEv2 annex A17) defines it.
 */
#include <string.h>

#include "grade.h"

static const struct {
	const char *term, *means;
} words[] = {
	{ "RoCE", "RDMA over Converged Ethernet: InfiniBand transport packets carried in Ethernet; RoCEv2 puts them in UDP/IP, destination port 4791 (IBA annex A17)." },
	{ "RDMA", "Remote Direct Memory Access: one computer reads or writes another's memory through the network adapter, without the remote CPU copying data." },
	{ "IB", "InfiniBand: the transport whose packets RoCE carries." },
	{ "QP", "Queue Pair: one end of an RDMA connection (a send queue and a receive queue), numbered by its QPN." },
	{ "QPN", "Queue Pair Number: the 24-bit number of a QP, in every packet's BTH as the destination." },
	{ "PSN", "Packet Sequence Number: the 24-bit number of each packet in its direction, used to detect loss and to acknowledge (IBA 9.7)." },
	{ "RC", "Reliable Connected: a QP connected to one other QP; every packet is acknowledged and lost ones are sent again." },
	{ "UC", "Unreliable Connected: a QP connected to one other QP, without acknowledgements: a lost packet is simply lost." },
	{ "UD", "Unreliable Datagram: a QP that sends single-packet messages to any QP, with a DETH naming the sender." },
	{ "BTH", "Base Transport Header: the header of every RoCE/IB packet (opcode, destination QP, PSN; IBA 9.2)." },
	{ "opcode", "The BTH field that says what a packet is (SEND_ONLY, RDMA_WRITE_FIRST, ACKNOWLEDGE, ...); its top bits give the transport (RC 0x00-0x1f, UC 0x20-0x3f, UD 0x60-0x7f)." },
	{ "AETH", "ACK Extended Transport Header: the part of an ACK or NAK packet that says which PSN is acknowledged or why it was refused (IBA 9.3.5)." },
	{ "DETH", "Datagram Extended Transport Header: in UD packets, the Q_Key and the sender's QP number (IBA 9.3.3)." },
	{ "RETH", "RDMA Extended Transport Header: the remote address, R_Key and length of an RDMA WRITE or READ (IBA 9.3.2)." },
	{ "ACK", "Acknowledgement: a packet from the receiver of an RC QP saying that packets up to a PSN arrived." },
	{ "ACKs", "Acknowledgements: packets from the receiver of an RC QP saying that packets up to a PSN arrived." },
	{ "NAK", "Negative acknowledgement: the receiver refuses a packet (out of sequence, no receive buffer ready, access error)." },
	{ "MTU", "Maximum Transfer Unit: the largest payload in one packet (path MTU 256-4096 bytes); a longer message is split into FIRST, MIDDLE and LAST packets." },
	{ "FIRST", "A message longer than the path MTU goes as a FIRST packet, MIDDLE packets and a LAST packet; one that fits goes as an ONLY packet." },
	{ "SEND", "An RDMA operation that delivers a message into a buffer the receiver posted in advance." },
	{ "WRITE", "An RDMA WRITE puts data straight into the remote memory named by the RETH; the remote program is not told." },
	{ "READ", "An RDMA READ fetches remote memory: a request with a RETH, answered by READ_RESPONSE packets." },
	{ "atomic", "An atomic operation (FETCH_ADD, CMP_SWAP) changes 8 bytes of remote memory in one step and returns the old value in an ATOMIC_ACKNOWLEDGE." },
	{ "CM", "Communication Manager: MAD messages (REQ, REP, RTU to connect; DREQ, DREP to disconnect) that exchange QP numbers and PSNs (IBA chapter 12); rdma_cm programs use it." },
	{ "MAD", "Management Datagram: a 256-byte management message sent to QP 1; CM messages are MADs." },
	{ "REQ", "CM connection request: the client's QP number, starting PSN and path MTU." },
	{ "REP", "CM reply: the server's answer to a REQ, with its QP number." },
	{ "RTU", "CM Ready To Use: the client's third message; after it the connection carries data." },
	{ "DREQ", "CM disconnect request." },
	{ "DREP", "CM disconnect reply." },
	{ "TCP", "The ordinary TCP connection that perftest and the ibv_*_pingpong examples use before any RDMA to swap QP numbers, PSNs and addresses." },
	{ "conversation", "qptrace's name for the traffic between two QPs (both directions)." },
	{ "frame", "One packet of the capture file, numbered from 1 as Wireshark numbers them (Go > Go to Packet)." },
	{ "frames", "Packets of the capture file, numbered from 1 as Wireshark numbers them (Go > Go to Packet)." },
	{ "retransmitted", "Sent again: an RC sender repeats packets the receiver did not acknowledge (lost, or refused by a NAK)." },
	{ "NOT-IN-CAPTURE", "The capture cannot show this check (filtered out, or started too late): not a mistake in the traffic, but in how it was captured." },
	{ "NOT-CHECKED", "Not looked at because a check it depends on failed, or the capture has no RoCE packet: fix that one first." },
	{ "immediate", "32 bits of immediate data sent with a SEND or WRITE (the _IMM opcodes), handed to the receiver with the completion." },
};

/* s contains term as a whole word: not inside a longer word of letters,
 * digits or '-'. */
static bool has_word(const char *s, const char *term)
{
	size_t n = strlen(term);

	for (const char *p = strstr(s, term); p; p = strstr(p + 1, term)) {
		bool before = p == s || !(g_ascii_isalnum(p[-1]) || p[-1] == '-');
		bool after = !(g_ascii_isalnum(p[n]) || p[n] == '-');

		if (before && after)
			return true;
	}
	return false;
}

void grade_glossary(GString *o, const char *in)
{
	char *text = g_strdup(in); /* in may be o's own text */
	bool any = false;

	for (guint i = 0; i < G_N_ELEMENTS(words); i++) {
		if (!has_word(text, words[i].term))
			continue;
		if (!any)
			g_string_append(o, "words used above:\n");
		any = true;
		g_string_append_printf(o, "  %s: %s\n", words[i].term, words[i].means);
	}
	g_free(text);
}
