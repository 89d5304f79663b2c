/* grade_tools.c - the lab's own command line as rubric parameters:
 * `qptrace grade --command 'ibv_rc_pingpong -n 50 -s 4096'`
 *
 * One table per tool family: each option with its long name, whether it
 * takes a value, the rubric parameter it sets (if it changes what the
 * capture shows) and the tool's default.  The options and defaults are
 * those of the tools' own sources (rubrics/README.md cites them):
 *   rdma-core libibverbs/examples/{rc,uc,ud,srq,xsrq}_pingpong.c
 *   perftest src/perftest_parameters.c (long_options, usage) and
 *            src/perftest_parameters.h (DEF_PORT, DEF_ITERS, DEF_SIZE_*)
 *   rdma-core librdmacm/examples/{rping,cmatose,udaddy,rdma_client,
 *            rdma_server,rdma_xclient,rdma_xserver}.c
 * An option a tool does not have is an error naming it, as the tool's
 * getopt would reject it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"

/* V_MTU: a path MTU the rdma-core pingpongs take (pingpong.c's
 * pp_mtu_to_enum(): 256, 512, 1024, 2048 or 4096; any other value makes
 * the tool print its usage and exit 1).  V_PMTU: perftest's -m, where 0
 * and any other value mean the port's active MTU (set_mtu()): the
 * machine's, so the rubric keeps its own. */
enum vk { V_FLAG, V_INT, V_STR, V_MAP, V_MTU, V_PMTU };

/* perftest: which tests an option belongs to (0: every test) */
enum {
	PT_WRITE = 1 << 0, PT_READ = 1 << 1, PT_SEND = 1 << 2, PT_ATOMIC = 1 << 3,
	PT_OPS = PT_WRITE | PT_READ | PT_SEND | PT_ATOMIC,
	PT_BW = 1 << 4, PT_LAT = 1 << 5,
	PT_KINDS = PT_BW | PT_LAT,
};

struct tool_opt {
	char sname;	   /* 0: a long option only */
	const char *lname; /* NULL: a short option only */
	enum vk vk;
	const char *param; /* the parameter it sets, NULL: none */
	const char *def;   /* the tool's default (NULL: none, or the machine's) */
	const char *map;   /* V_MAP: "TOOLVALUE=PARAMVALUE ..." */
	unsigned only;	   /* perftest: PT_* it applies to, 0 all */
};

#define END { 0, NULL, V_FLAG, NULL, NULL, NULL, 0 }

/* libibverbs/examples/rc_pingpong.c: getopt "p:d:i:s:m:r:n:l:eg:oOPtcjN" */
static const struct tool_opt rc_pp[] = {
	{ 'p', "port", V_INT, "port", "18515", NULL, 0 },
	{ 'd', "ib-dev", V_STR, NULL, NULL, NULL, 0 },
	{ 'i', "ib-port", V_INT, NULL, NULL, NULL, 0 },
	{ 's', "size", V_INT, "size", "4096", NULL, 0 },
	{ 'm', "mtu", V_MTU, "mtu", "1024", NULL, 0 },
	{ 'r', "rx-depth", V_INT, NULL, NULL, NULL, 0 },
	{ 'n', "iters", V_INT, "iterations", "1000", NULL, 0 },
	{ 'l', "sl", V_INT, NULL, NULL, NULL, 0 },
	{ 'e', "events", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'g', "gid-idx", V_INT, NULL, NULL, NULL, 0 },
	{ 'o', "odp", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'O', "iodp", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'P', "prefetch", V_FLAG, NULL, NULL, NULL, 0 },
	{ 't', "ts", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'c', "chk", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'j', "dm", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'N', "new_send", V_FLAG, NULL, NULL, NULL, 0 },
	END
};

/* uc_pingpong.c: "p:d:i:s:m:r:n:l:eg:c" */
static const struct tool_opt uc_pp[] = {
	{ 'p', "port", V_INT, "port", "18515", NULL, 0 },
	{ 'd', "ib-dev", V_STR, NULL, NULL, NULL, 0 },
	{ 'i', "ib-port", V_INT, NULL, NULL, NULL, 0 },
	{ 's', "size", V_INT, "size", "4096", NULL, 0 },
	{ 'm', "mtu", V_MTU, "mtu", "1024", NULL, 0 },
	{ 'r', "rx-depth", V_INT, NULL, NULL, NULL, 0 },
	{ 'n', "iters", V_INT, "iterations", "1000", NULL, 0 },
	{ 'l', "sl", V_INT, NULL, NULL, NULL, 0 },
	{ 'e', "events", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'g', "gid-idx", V_INT, NULL, NULL, NULL, 0 },
	{ 'c', "chk", V_FLAG, NULL, NULL, NULL, 0 },
	END
};

/* ud_pingpong.c: "p:d:i:s:r:n:l:eg:c" (no -m: UD messages fit one MTU) */
static const struct tool_opt ud_pp[] = {
	{ 'p', "port", V_INT, "port", "18515", NULL, 0 },
	{ 'd', "ib-dev", V_STR, NULL, NULL, NULL, 0 },
	{ 'i', "ib-port", V_INT, NULL, NULL, NULL, 0 },
	{ 's', "size", V_INT, "size", "2048", NULL, 0 },
	{ 'r', "rx-depth", V_INT, NULL, NULL, NULL, 0 },
	{ 'n', "iters", V_INT, "iterations", "1000", NULL, 0 },
	{ 'l', "sl", V_INT, NULL, NULL, NULL, 0 },
	{ 'e', "events", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'g', "gid-idx", V_INT, NULL, NULL, NULL, 0 },
	{ 'c', "chk", V_FLAG, NULL, NULL, NULL, 0 },
	END
};

/* srq_pingpong.c: "p:d:i:s:m:q:r:n:l:eg:oc" */
static const struct tool_opt srq_pp[] = {
	{ 'p', "port", V_INT, "port", "18515", NULL, 0 },
	{ 'd', "ib-dev", V_STR, NULL, NULL, NULL, 0 },
	{ 'i', "ib-port", V_INT, NULL, NULL, NULL, 0 },
	{ 's', "size", V_INT, "size", "4096", NULL, 0 },
	{ 'm', "mtu", V_MTU, "mtu", "1024", NULL, 0 },
	{ 'q', "num-qp", V_INT, "qps", "16", NULL, 0 },
	{ 'r', "rx-depth", V_INT, NULL, NULL, NULL, 0 },
	{ 'n', "iters", V_INT, "iterations", "1000", NULL, 0 },
	{ 'l', "sl", V_INT, NULL, NULL, NULL, 0 },
	{ 'e', "events", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'g', "gid-idx", V_INT, NULL, NULL, NULL, 0 },
	{ 'o', "odp", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'c', "chk", V_FLAG, NULL, NULL, NULL, 0 },
	END
};

/* xsrq_pingpong.c: "p:d:i:s:m:c:n:l:eog:" */
static const struct tool_opt xsrq_pp[] = {
	{ 'p', "port", V_INT, "port", "18515", NULL, 0 },
	{ 'd', "ib-dev", V_STR, NULL, NULL, NULL, 0 },
	{ 'i', "ib-port", V_INT, NULL, NULL, NULL, 0 },
	{ 's', "size", V_INT, "size", "4096", NULL, 0 },
	{ 'm', "mtu", V_MTU, "mtu", "2048", NULL, 0 },
	{ 'c', "clients", V_INT, "clients", "1", NULL, 0 },
	{ 'n', "num_tests", V_INT, "iterations", "5", NULL, 0 },
	{ 'l', "sl", V_INT, NULL, NULL, NULL, 0 },
	{ 'e', "events", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'o', "odp", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'g', "gid-idx", V_INT, NULL, NULL, NULL, 0 },
	END
};

/* perftest src/perftest_parameters.c (parser(): long_options and getopt
 * string; usage() says which test prints which option) and
 * perftest_parameters.h: DEF_PORT 18515, DEF_ITERS 1000, DEF_ITERS_WB 5000
 * (ib_write_bw), DEF_SIZE_BW 65536, DEF_SIZE_LAT 2, DEF_SIZE_ATOMIC 8.
 * -m: the port's active MTU (the machine's: the rubric keeps its own). */
static const struct tool_opt perftest[] = {
	{ 'a', "all", V_FLAG, "all_sizes", "0", NULL, PT_WRITE | PT_READ | PT_SEND },
	{ 'b', "bidirectional", V_FLAG, "bidirectional", "0", NULL, PT_BW },
	{ 'c', "connection", V_MAP, "transport", "RC", "RC=RC UC=UC UD=UD XRC=XRC", 0 },
	{ 'C', "report-cycles", V_FLAG, NULL, NULL, NULL, PT_LAT },
	{ 'd', "ib-dev", V_STR, NULL, NULL, NULL, 0 },
	{ 'D', "duration", V_INT, "duration", "0", NULL, 0 },
	{ 'e', "events", V_FLAG, NULL, NULL, NULL, PT_READ | PT_SEND | PT_ATOMIC },
	{ 'X', "vector", V_INT, NULL, NULL, NULL, PT_READ | PT_SEND | PT_ATOMIC },
	{ 'f', "margin", V_INT, NULL, NULL, NULL, 0 },
	{ 'F', "CPU-freq", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'g', "mcg", V_FLAG, NULL, NULL, NULL, PT_SEND },
	{ 'h', "help", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'H', "report-histogram", V_FLAG, NULL, NULL, NULL, PT_LAT },
	{ 'i', "ib-port", V_INT, NULL, NULL, NULL, 0 },
	{ 'I', "inline_size", V_INT, NULL, NULL, NULL, PT_WRITE | PT_SEND },
	{ 'l', "post_list", V_INT, NULL, NULL, NULL, PT_BW },
	{ 'L', "hop_limit", V_INT, NULL, NULL, NULL, 0 },
	{ 'm', "mtu", V_PMTU, "mtu", NULL, NULL, 0 },
	{ 'M', "MGID", V_STR, NULL, NULL, NULL, PT_SEND },
	{ 'n', "iters", V_INT, "iterations", "1000", NULL, 0 },
	{ 'N', "noPeak", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 'o', "outs", V_INT, NULL, NULL, NULL, PT_READ | PT_ATOMIC },
	{ 'O', "dualport", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 'p', "port", V_INT, "port", "18515", NULL, 0 },
	{ 'q', "qp", V_INT, "qps", "1", NULL, PT_BW },
	{ 'Q', "cq-mod", V_INT, NULL, NULL, NULL, PT_BW },
	{ 'r', "rx-depth", V_INT, NULL, NULL, NULL, PT_SEND },
	{ 'R', "rdma_cm", V_FLAG, "rdma_cm", "0", NULL, 0 },
	{ 's', "size", V_INT, "size", NULL, NULL, PT_WRITE | PT_READ | PT_SEND },
	{ 'S', "sl", V_INT, NULL, NULL, NULL, 0 },
	{ 't', "tx-depth", V_INT, NULL, NULL, NULL, PT_BW },
	{ 'T', "tos", V_INT, NULL, NULL, NULL, 0 },
	{ 'u', "qp-timeout", V_INT, NULL, NULL, NULL, 0 },
	{ 'U', "report-unsorted", V_FLAG, NULL, NULL, NULL, PT_LAT },
	{ 'V', "version", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'w', "limit_bw", V_STR, NULL, NULL, NULL, PT_BW },
	{ 'W', "report-counters", V_STR, NULL, NULL, NULL, 0 },
	{ 'x', "gid-index", V_INT, NULL, NULL, NULL, 0 },
	{ 'y', "limit_msgrate", V_STR, NULL, NULL, NULL, PT_BW },
	{ 'z', "com_rdma_cm", V_FLAG, NULL, NULL, NULL, 0 },
	{ 'A', "atomic_type", V_MAP, "atomic", "FETCH_ADD",
	  "CMP_AND_SWAP=CMP_SWAP FETCH_AND_ADD=FETCH_ADD", PT_ATOMIC },
	{ 0, "log_dci_streams", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "log_active_dci_streams", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "aes_xts", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "encrypt_on_tx", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "sig_before", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "aes_block_size", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "data_enc_keys_number", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "kek_path", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "credentials_path", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "data_enc_key_app_path", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "recv_post_list", V_INT, NULL, NULL, NULL, PT_BW },
	{ 0, "out_json", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "out_json_file", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "cpu_util", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "dlid", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "dont_xchg_versions", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "force-link", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "inline_recv", V_INT, NULL, NULL, NULL, PT_READ | PT_SEND | PT_ATOMIC },
	{ 0, "use-srq", V_FLAG, NULL, NULL, NULL, PT_SEND },
	{ 0, "ipv6", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "source_ip", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "latency_gap", V_INT, NULL, NULL, NULL, PT_LAT },
	{ 0, "mmap", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "mmap-offset", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "mr_per_qp", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "odp", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "output", V_STR, NULL, NULL, NULL, 0 },
	{ 0, "use_old_post_send", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "perform_warm_up", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "pkey_index", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "report-both", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "report_gbits", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "report-per-port", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "reversed", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "run_infinitely", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "retry_count", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "tclass", V_INT, NULL, NULL, NULL, 0 },
	{ 0, "use_hugepages", V_FLAG, NULL, NULL, NULL, 0 },
	{ 0, "wait_destroy", V_INT, NULL, NULL, NULL, PT_BW },
	{ 0, "disable_pcie_relaxed", V_FLAG, NULL, NULL, NULL, PT_BW },
	{ 0, "burst_size", V_INT, NULL, NULL, NULL, PT_BW },
	{ 0, "typical_pkt_size", V_INT, NULL, NULL, NULL, PT_BW },
	{ 0, "rate_limit", V_STR, NULL, NULL, NULL, PT_BW },
	{ 0, "rate_units", V_STR, NULL, NULL, NULL, PT_BW },
	{ 0, "rate_limit_type", V_STR, NULL, NULL, NULL, PT_BW },
	END
};

/* librdmacm/examples/rping.c: getopt "a:I:Pp:C:S:t:scvVdq"; port 7174,
 * size 64, count 0 (ping until killed) */
static const struct tool_opt rping[] = {
	{ 'a', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'I', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'P', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	{ 'p', NULL, V_INT, "port", "7174", NULL, 0 },
	{ 'C', NULL, V_INT, "iterations", "0", NULL, 0 },
	{ 'S', NULL, V_INT, "size", "64", NULL, 0 },
	{ 't', NULL, V_INT, NULL, NULL, NULL, 0 },
	{ 's', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	{ 'c', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	{ 'v', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	{ 'V', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	{ 'd', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	{ 'q', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	END
};

/* cmatose.c (ucmatose): "s:b:f:P:c:C:S:t:p:a:m"; connections 1, message
 * count 10, message size 100, port "7471" */
static const struct tool_opt cmatose[] = {
	{ 's', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'b', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'f', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'P', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'c', NULL, V_INT, "connections", "1", NULL, 0 },
	{ 'C', NULL, V_INT, "iterations", "10", NULL, 0 },
	{ 'S', NULL, V_INT, "size", "100", NULL, 0 },
	{ 't', NULL, V_INT, NULL, NULL, NULL, 0 },
	{ 'p', NULL, V_INT, "port", "7471", NULL, 0 },
	{ 'a', NULL, V_INT, NULL, NULL, NULL, 0 },
	{ 'm', NULL, V_FLAG, NULL, NULL, NULL, 0 },
	END
};

/* udaddy.c: "s:b:f:P:c:C:S:t:p:" (UD over RDMA CM; -p is the port space) */
static const struct tool_opt udaddy[] = {
	{ 's', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'b', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'f', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'P', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'c', NULL, V_INT, "connections", "1", NULL, 0 },
	{ 'C', NULL, V_INT, "iterations", "10", NULL, 0 },
	{ 'S', NULL, V_INT, "size", "100", NULL, 0 },
	{ 't', NULL, V_INT, NULL, NULL, NULL, 0 },
	{ 'p', NULL, V_STR, NULL, NULL, NULL, 0 },
	END
};

/* rdma_client.c / rdma_server.c: "s:p:", port "7471" (one 16-byte SEND
 * each way); rdma_xclient.c "s:p:c:" / rdma_xserver.c "p:c:", -c r|x */
static const struct tool_opt rdma_client[] = {
	{ 's', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'p', NULL, V_INT, "port", "7471", NULL, 0 },
	END
};
static const struct tool_opt rdma_xclient[] = {
	{ 's', NULL, V_STR, NULL, NULL, NULL, 0 },
	{ 'p', NULL, V_INT, "port", "7471", NULL, 0 },
	{ 'c', NULL, V_MAP, "transport", "RC", "r=RC x=XRC", 0 },
	END
};
static const struct tool_opt rdma_xserver[] = {
	{ 'p', NULL, V_INT, "port", "7471", NULL, 0 },
	{ 'c', NULL, V_MAP, "transport", "RC", "r=RC x=XRC", 0 },
	END
};

struct tool {
	const char *name;
	const struct tool_opt *opts;
	unsigned bits;	      /* perftest: PT_* of this test */
	int positional;	      /* non-option arguments allowed (the server) */
	const char *defaults; /* "param=value ..." over the rows' defaults */
};

static const struct tool tools[] = {
	{ "ibv_rc_pingpong", rc_pp, 0, 1, NULL },
	{ "ibv_uc_pingpong", uc_pp, 0, 1, NULL },
	{ "ibv_ud_pingpong", ud_pp, 0, 1, NULL },
	{ "ibv_srq_pingpong", srq_pp, 0, 1, NULL },
	{ "ibv_xsrq_pingpong", xsrq_pp, 0, 1, NULL },
	{ "ib_write_bw", perftest, PT_WRITE | PT_BW, 1, "iterations=5000 size=65536" },
	{ "ib_write_lat", perftest, PT_WRITE | PT_LAT, 1, "size=2" },
	{ "ib_read_bw", perftest, PT_READ | PT_BW, 1, "size=65536" },
	{ "ib_read_lat", perftest, PT_READ | PT_LAT, 1, "size=2" },
	{ "ib_send_bw", perftest, PT_SEND | PT_BW, 1, "size=65536" },
	{ "ib_send_lat", perftest, PT_SEND | PT_LAT, 1, "size=2" },
	{ "ib_atomic_bw", perftest, PT_ATOMIC | PT_BW, 1, "size=8" },
	{ "ib_atomic_lat", perftest, PT_ATOMIC | PT_LAT, 1, "size=8" },
	{ "rping", rping, 0, 0, NULL },
	{ "ucmatose", cmatose, 0, 0, NULL },
	{ "udaddy", udaddy, 0, 0, NULL },
	{ "rdma_client", rdma_client, 0, 0, NULL },
	{ "rdma_server", rdma_client, 0, 0, NULL },
	{ "rdma_xclient", rdma_xclient, 0, 0, NULL },
	{ "rdma_xserver", rdma_xserver, 0, 0, NULL },
};

static bool applies(const struct tool *t, const struct tool_opt *r)
{
	unsigned ops = r->only & PT_OPS, kinds = r->only & PT_KINDS;

	return (!ops || (ops & t->bits)) && (!kinds || (kinds & t->bits));
}

static const struct tool_opt *by_short(const struct tool *t, char c)
{
	for (const struct tool_opt *r = t->opts; r->sname || r->lname; r++)
		if (r->sname == c && applies(t, r))
			return r;
	return NULL;
}

static const struct tool_opt *by_long(const struct tool *t, const char *name)
{
	for (const struct tool_opt *r = t->opts; r->sname || r->lname; r++)
		if (r->lname && !strcmp(r->lname, name) && applies(t, r))
			return r;
	return NULL;
}

const char *grade_tool_list(void)
{
	static char buf[512];

	for (size_t i = 0; !buf[0] && i < G_N_ELEMENTS(tools); i++) {
		if (i)
			g_strlcat(buf, ", ", sizeof buf);
		g_strlcat(buf, tools[i].name, sizeof buf);
	}
	return buf;
}

static void set_value(GHashTable *vals, GHashTable *from, const char *param, const char *v,
		      char *why)
{
	g_hash_table_replace(vals, g_strdup(param), g_strdup(v));
	g_hash_table_replace(from, g_strdup(param), why);
}

static bool is_path_mtu(gint64 n)
{
	return n == 256 || n == 512 || n == 1024 || n == 2048 || n == 4096;
}

/* The value of option r given as text v, for its parameter; NULL and err
 * when it is not one the tool takes. */
static char *convert(const struct tool_opt *r, const char *tool, const char *optname,
		     const char *v, GString *err)
{
	if (r->vk == V_FLAG)
		return g_strdup("1");
	if (r->vk == V_INT || r->vk == V_MTU || r->vk == V_PMTU) {
		char *end;
		gint64 n;

		errno = 0;
		n = g_ascii_strtoll(v, &end, 0);
		if (!*v || *end || errno || n < 0 || n > G_MAXINT32) {
			g_string_append_printf(err, "%s '%s' is not a whole number from 0 to %d", optname, v,
					       G_MAXINT32);
			return NULL;
		}
		if (r->vk == V_MTU && !is_path_mtu(n)) {
			g_string_append_printf(err, "%s '%s' is not a path MTU %s takes (256, 512, 1024, "
					       "2048 or 4096): %s refuses it and exits", optname, v,
					       tool, tool);
			return NULL;
		}
		return g_strdup_printf("%" G_GINT64_FORMAT, n);
	}
	if (r->vk == V_MAP) {
		gchar **pairs = g_strsplit(r->map, " ", -1);
		GString *known = g_string_new("");
		char *out = NULL;

		for (gchar **p = pairs; *p; p++) {
			char *eq = strchr(*p, '=');

			g_string_append_printf(known, "%s%.*s", known->len ? ", " : "", (int)(eq - *p), *p);
			if (!out && (size_t)(eq - *p) == strlen(v) && !g_ascii_strncasecmp(*p, v, strlen(v)))
				out = g_strdup(eq + 1);
		}
		if (!out)
			g_string_append_printf(err, "%s '%s' is not one qptrace can grade (%s)", optname, v,
					       known->str);
		g_string_free(known, TRUE);
		g_strfreev(pairs);
		return out;
	}
	if (!grade_value_ok(v)) {
		g_string_append_printf(err, "%s '%s' is not a word (letters, digits, _ . -)", optname, v);
		return NULL;
	}
	return g_strdup(v);
}

bool grade_command_params(const char *cmdline, const char *want, struct grade_params *ps,
			  const char *from, char **tool_out, GString *err)
{
	GHashTable *vals = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	GHashTable *why = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	GString *unknown = g_string_new("");
	const struct tool *t = NULL;
	gchar **argv = NULL, *base = NULL;
	GError *e = NULL;
	int argc = 0, positional = 0;
	bool ok = false;

	if (!g_shell_parse_argv(cmdline, &argc, &argv, &e)) {
		g_string_append_printf(err, "cannot read the command line: %s", e->message);
		g_error_free(e);
		goto out;
	}
	base = g_path_get_basename(argv[0]);
	for (size_t i = 0; i < G_N_ELEMENTS(tools); i++)
		if (!strcmp(base, tools[i].name))
			t = &tools[i];
	if (!t) {
		g_string_append_printf(err, "'%s' is not a tool whose options qptrace knows (known: %s)",
				       base, grade_tool_list());
		goto out;
	}
	if (want && *want) {
		gchar **w = g_strsplit(want, " ", -1);
		bool found = false;

		for (gchar **p = w; *p; p++)
			found = found || !strcmp(*p, base);
		if (!found)
			g_string_append_printf(err, "the rubric is for %s, not %s", want, base);
		g_strfreev(w);
		if (!found)
			goto out;
	}
	/* The tool's defaults: every parameter the command does not set. */
	for (const struct tool_opt *r = t->opts; r->sname || r->lname; r++)
		if (r->param && r->def && applies(t, r))
			set_value(vals, why, r->param, r->def, g_strdup_printf("%s default", base));
	if (t->defaults) {
		gchar **d = g_strsplit(t->defaults, " ", -1);

		for (gchar **p = d; *p; p++) {
			char *eq = strchr(*p, '=');

			*eq = '\0';
			set_value(vals, why, *p, eq + 1, g_strdup_printf("%s default", base));
		}
		g_strfreev(d);
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct tool_opt *r = NULL;
		char *optname = NULL;
		const char *v = NULL;

		if (!strcmp(a, "--")) {
			positional += argc - i - 1;
			break;
		}
		if (a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a, '=');
			char *name = eq ? g_strndup(a + 2, (gsize)(eq - a - 2)) : g_strdup(a + 2);

			r = by_long(t, name);
			optname = g_strdup_printf("--%s", name);
			g_free(name);
			if (!r) {
				g_string_append_printf(unknown, "%s%s", unknown->len ? ", " : "", optname);
				g_free(optname);
				continue;
			}
			if (r->vk == V_FLAG && eq) {
				g_string_append_printf(err, "%s takes no value", optname);
				g_free(optname);
				goto out;
			}
			if (r->vk != V_FLAG) {
				if (eq)
					v = eq + 1;
				else if (i + 1 < argc)
					v = argv[++i];
			}
		} else if (a[0] == '-' && a[1]) {
			for (int j = 1; a[j]; j++) {
				r = by_short(t, a[j]);
				if (!r) {
					g_string_append_printf(unknown, "%s-%c", unknown->len ? ", " : "", a[j]);
					continue;
				}
				g_free(optname);
				optname = g_strdup_printf("-%c", a[j]);
				if (r->vk == V_FLAG) {
					if (r->param)
						set_value(vals, why, r->param, "1",
							  g_strdup_printf("%s %s", from, optname));
					r = NULL;
					continue;
				}
				if (a[j + 1])
					v = a + j + 1;
				else if (i + 1 < argc)
					v = argv[++i];
				break;
			}
			if (!r) {
				g_free(optname);
				continue;
			}
		} else {
			if (++positional > t->positional) {
				g_string_append_printf(err, "unexpected argument '%s' (%s takes %s)", a, base,
						       t->positional ? "one: the server's address" : "no argument outside its options");
				goto out;
			}
			continue;
		}
		if (r->vk != V_FLAG && !v) {
			g_string_append_printf(err, "%s needs a value", optname);
			g_free(optname);
			goto out;
		}
		if (r->param) {
			char *cv = convert(r, base, optname, r->vk == V_FLAG ? "" : v, err);

			if (!cv) {
				g_free(optname);
				goto out;
			}
			/* perftest -m 0 (or no MTU): the port's, not known here */
			if (r->vk != V_PMTU || is_path_mtu(g_ascii_strtoll(cv, NULL, 10)))
				set_value(vals, why, r->param, cv,
					  g_strdup_printf("%s %s", from, optname));
			g_free(cv);
		} else if (r->vk == V_INT) {
			char *cv = convert(r, base, optname, v, err);

			if (!cv) {
				g_free(optname);
				goto out;
			}
			g_free(cv);
		}
		g_free(optname);
	}
	if (unknown->len) {
		g_string_append_printf(err, "%s has no option %s", base, unknown->str);
		goto out;
	}
	for (guint i = 0; i < ps->list->len; i++) {
		struct grade_param *p = g_ptr_array_index(ps->list, i);
		const char *v = g_hash_table_lookup(vals, p->name);

		if (v)
			grade_param_assign(p, v, g_hash_table_lookup(why, p->name));
	}
	if (tool_out)
		*tool_out = g_strdup(base);
	ok = true;
out:
	g_free(base);
	g_strfreev(argv);
	g_string_free(unknown, TRUE);
	g_hash_table_destroy(vals);
	g_hash_table_destroy(why);
	return ok;
}
