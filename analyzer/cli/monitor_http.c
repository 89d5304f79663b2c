/* monitor_http.c - qptrace monitor --metrics: the HTTP endpoint
 *
 * libmicrohttpd serves /metrics from one polling thread.  What keeps it
 * answering when clients are hostile:
 *
 *  - A request's headers must arrive within QPT_HTTP_HEADERS_S seconds of
 *    the connection's start (or of the previous response's end on a
 *    kept-alive connection): an absolute deadline, which a header line
 *    every few seconds does not reset (libmicrohttpd's own timeout is
 *    one of inactivity).  A response must be sent within QPT_HTTP_SEND_S.
 *    A watchdog thread cuts the connections past them (shutdown(2) of
 *    their socket, with a zero linger: libmicrohttpd sees the end and
 *    closes it).
 *  - At most QPT_HTTP_PER_ADDR connections per client address
 *    (libmicrohttpd's per-IP limit), QPT_HTTP_SLOTS in all.  A connection
 *    past the slots takes the slot of the one that has been longest
 *    waiting for its request headers or sending its response: a scrape,
 *    young in both, gets in.
 *  - The exposition is rendered by the monitor's thread when a scrape asks
 *    for it and the last one is older than QPT_HTTP_FRESH_US (so once per
 *    scrape interval, whatever the number of scrapers), into one buffer
 *    that every reader shares: one libmicrohttpd response, reference
 *    counted, the buffer freed with the last reader.  At most two are
 *    alive: while readers still hold the one before the current, a scrape
 *    is served the current one; so slow readers cost their sockets, not a
 *    copy each.  (A scrape waits for a rendering at most QPT_HTTP_WAIT_US:
 *    then it is served what there is.)
 *  - Optional basic authentication (--metrics-auth FILE: user:password).
 *
 * The monitor's thread calls qpt_http_wanted() often (every loop) and,
 * when it says so, renders and hands the text to qpt_http_publish().
 */
#include <errno.h>
#include <glib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include "monitor_http.h"

#ifdef QPT_HAVE_MHD
#include <gmodule.h>
#include <microhttpd.h>

#if MHD_VERSION < 0x00097302
#error "libmicrohttpd 0.9.73 or later is needed (a shared response with a free callback)"
#endif

/* libmicrohttpd is opened when --metrics asks for it, not linked: linked,
 * it brings GnuTLS and eight more libraries into every start of qptrace
 * (1.8 ms a run, tools/bench/README.md, "start-up"), for one option of one
 * command, and qptrace could not start where it is missing. */
#define QPT_MHD_FUNCTIONS(X)                                                              \
	X(add_response_header) X(basic_auth_get_username_password)                        \
	X(create_response_from_buffer) X(create_response_from_buffer_with_free_callback_cls) \
	X(destroy_response) X(free) X(get_connection_info) X(queue_basic_auth_fail_response) \
	X(queue_response) X(resume_connection) X(start_daemon) X(stop_daemon)              \
	X(suspend_connection)

static struct {
#define QPT_MHD_POINTER(n) __typeof__(&MHD_##n) n;
	QPT_MHD_FUNCTIONS(QPT_MHD_POINTER)
#undef QPT_MHD_POINTER
} mhd;

/* Opens libmicrohttpd (ABI 12, Debian 12's and 13's; else the name the
 * -dev package links) and finds every function above: true, or false
 * with a message that names what is missing. */
static bool mhd_open(void)
{
	static GModule *m;
	static const char *const names[] = { "libmicrohttpd.so.12", "libmicrohttpd.so" };

	if (m)
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(names) && !m; i++)
		m = g_module_open(names[i], G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
	if (!m) {
		g_printerr("qptrace monitor: --metrics: cannot load libmicrohttpd: %s\n",
			   g_module_error());
		return false;
	}
#define QPT_MHD_FIND(n)                                                                   \
	if (!g_module_symbol(m, "MHD_" #n, (gpointer *)&mhd.n)) {                         \
		g_printerr("qptrace monitor: --metrics: %s: %s\n", g_module_name(m),       \
			   g_module_error());                                             \
		g_module_close(m);                                                        \
		m = NULL;                                                                 \
		return false;                                                             \
	}
	QPT_MHD_FUNCTIONS(QPT_MHD_FIND)
#undef QPT_MHD_FIND
	return true;
}

#define QPT_HTTP_SLOTS 64
#define QPT_HTTP_PER_ADDR 8
#define QPT_HTTP_HEADERS_S 5
#define QPT_HTTP_SEND_S 30
#define QPT_HTTP_FRESH_US 1000000
#define QPT_HTTP_WAIT_US 2000000

enum phase {
	PH_HEADERS, /* waiting for a request's headers */
	PH_WAITING, /* suspended until a rendering is published */
	PH_RESUMED, /* resumed: the handler is called again */
	PH_SENDING, /* a response queued */
};

struct hconn {
	struct MHD_Connection *c;
	int fd;
	enum phase phase;
	int64_t since; /* monotonic us: the start of the phase */
	bool cut;      /* shut down by us, not closed yet */
	bool stale_ok; /* resumed without a new rendering: serve the current */
	struct hconn *prev, *next;
};

struct qpt_http {
	struct MHD_Daemon *d;
	GMutex lock;
	GCond wake;
	struct hconn *head;
	unsigned n, n_cut;
	struct MHD_Response *cur; /* the current rendering (our reference) */
	int64_t cur_made;
	unsigned live;	  /* renderings not freed yet (cur and those readers hold) */
	bool want;	  /* a scrape waits for a new rendering */
	bool stopping;
	GThread *watchdog;
	gchar *user, *pass;
	struct qpt_http_stats st;
};

static void http_cut(struct qpt_http *h, struct hconn *hc)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	if (hc->cut || hc->fd < 0)
		return;
	/* a reset instead of a FIN: nothing left queued in the kernel for a
	 * reader that does not read */
	setsockopt(hc->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	shutdown(hc->fd, SHUT_RDWR);
	hc->cut = true;
	h->n_cut++;
}

/* Called by libmicrohttpd's thread for each connection's start and end. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct qpt_http *h = cls;
	struct hconn *hc;

	g_mutex_lock(&h->lock);
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		hc = g_new0(struct hconn, 1);
		hc->c = c;
		hc->fd = ci ? ci->connect_fd : -1;
		hc->phase = PH_HEADERS;
		hc->since = g_get_monotonic_time();
		hc->next = h->head;
		if (h->head)
			h->head->prev = hc;
		h->head = hc;
		h->n++;
		*socket_context = hc;
		if (h->n - h->n_cut > QPT_HTTP_SLOTS) {
			/* every slot taken: the one longest in its phase (waiting
			 * for its request or sending its response) makes room; a
			 * scrape is young in both */
			struct hconn *victim = NULL;

			for (struct hconn *x = h->head; x; x = x->next)
				if (x != hc && !x->cut &&
				    (x->phase == PH_HEADERS || x->phase == PH_SENDING) &&
				    (!victim || x->since < victim->since))
					victim = x;
			if (!victim)
				victim = hc;
			http_cut(h, victim);
			h->st.evicted++;
		}
	} else if ((hc = *socket_context)) {
		if (hc->prev)
			hc->prev->next = hc->next;
		else
			h->head = hc->next;
		if (hc->next)
			hc->next->prev = hc->prev;
		h->n--;
		if (hc->cut)
			h->n_cut--;
		g_free(hc);
		*socket_context = NULL;
	}
	g_mutex_unlock(&h->lock);
}

static struct hconn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A request is over (sent, or failed): the connection waits for the next. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	struct qpt_http *h = cls;
	struct hconn *hc = conn_of(c);

	(void)req, (void)toe;
	g_mutex_lock(&h->lock);
	if (hc) {
		hc->phase = PH_HEADERS;
		hc->since = g_get_monotonic_time();
		hc->stale_ok = false;
	}
	g_mutex_unlock(&h->lock);
}

/* The watchdog: the deadlines, and scrapes that waited long enough. */
static gpointer watchdog(gpointer data)
{
	struct qpt_http *h = data;

	g_mutex_lock(&h->lock);
	while (!h->stopping) {
		int64_t now = g_get_monotonic_time();

		for (struct hconn *x = h->head; x; x = x->next) {
			if (x->cut)
				continue;
			if (x->phase == PH_HEADERS && now - x->since > QPT_HTTP_HEADERS_S * G_USEC_PER_SEC) {
				http_cut(h, x);
				h->st.headers_deadline++;
			} else if (x->phase == PH_SENDING &&
				   now - x->since > QPT_HTTP_SEND_S * G_USEC_PER_SEC) {
				http_cut(h, x);
				h->st.send_deadline++;
			} else if (x->phase == PH_WAITING && now - x->since > QPT_HTTP_WAIT_US) {
				x->phase = PH_RESUMED;
				x->stale_ok = true;
				mhd.resume_connection(x->c);
			}
		}
		g_cond_wait_until(&h->wake, &h->lock, g_get_monotonic_time() + 200000);
	}
	g_mutex_unlock(&h->lock);
	return NULL;
}

/* A rendering: freed by libmicrohttpd with its response, when the last
 * reader is done and the monitor has published the next one. */
struct rendering {
	struct qpt_http *h;
	char *text;
};

static void rendering_free(void *cls)
{
	struct rendering *r = cls;

	g_mutex_lock(&r->h->lock);
	r->h->live--;
	g_mutex_unlock(&r->h->lock);
	g_free(r->text);
	g_free(r);
}

static enum MHD_Result small(struct MHD_Connection *c, unsigned code, const char *text,
			     const char *allow)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, "Content-Type", "text/plain");
	if (allow)
		mhd.add_response_header(r, "Allow", allow);
	ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

/* Constant time over the longer of the two. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
	unsigned char d = la != lb;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(i < la ? a[i] : 0) ^ (unsigned char)(i < lb ? b[i] : 0);
	return d == 0;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url,
			     const char *method, const char *version, const char *upload,
			     size_t *upload_size, void **state)
{
	struct qpt_http *h = cls;
	struct hconn *hc = conn_of(c);
	enum MHD_Result ret;
	int64_t now;

	(void)version, (void)upload, (void)upload_size, (void)state;
	if (hc) {
		g_mutex_lock(&h->lock);
		if (hc->phase == PH_HEADERS) {
			hc->phase = PH_SENDING;
			hc->since = g_get_monotonic_time();
		}
		g_mutex_unlock(&h->lock);
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return small(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", "GET, HEAD");
	if (h->user) {
		char *pass = NULL;
		char *user = mhd.basic_auth_get_username_password(c, &pass);
		bool ok = user && pass && same_secret(user, h->user) && same_secret(pass, h->pass);

		mhd.free(user);
		mhd.free(pass);
		if (!ok) {
			static const char no[] = "authentication required\n";
			struct MHD_Response *r = mhd.create_response_from_buffer(
				strlen(no), (void *)no, MHD_RESPMEM_PERSISTENT);

			if (!r)
				return MHD_NO;
			ret = mhd.queue_basic_auth_fail_response(c, "qptrace", r);
			mhd.destroy_response(r);
			return ret;
		}
	}
	if (!strcmp(url, "/"))
		return small(c, MHD_HTTP_OK, "qptrace monitor: metrics at /metrics\n", NULL);
	if (strcmp(url, "/metrics"))
		return small(c, MHD_HTTP_NOT_FOUND, "not found: metrics at /metrics\n", NULL);

	g_mutex_lock(&h->lock);
	now = g_get_monotonic_time();
	/* fresh enough; or no newer one can be made before readers let go of
	 * the one before it (at most two alive): the current one now */
	if (h->cur && h->live > 1)
		h->want = true;
	if (h->cur && (now - h->cur_made < QPT_HTTP_FRESH_US || h->stopping || h->live > 1 ||
		       (hc && hc->stale_ok))) {
		/* under the lock: publish cannot drop it meanwhile */
		ret = mhd.queue_response(c, MHD_HTTP_OK, h->cur);
		if (hc) {
			hc->phase = PH_SENDING;
			hc->since = now;
		}
		h->st.scrapes++;
		g_mutex_unlock(&h->lock);
		return ret;
	}
	if (h->stopping || !hc || hc->stale_ok) {
		g_mutex_unlock(&h->lock);
		return small(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no metrics yet\n", NULL);
	}
	/* wait for the monitor's thread to render (qpt_http_publish resumes) */
	hc->phase = PH_WAITING;
	hc->since = now;
	h->want = true;
	mhd.suspend_connection(c);
	g_mutex_unlock(&h->lock);
	return MHD_YES;
}

/* ADDR:PORT, [ADDR6]:PORT, or :PORT (the loopback, 127.0.0.1) to a socket
 * address. */
static bool parse_listen(const char *s, struct sockaddr_storage *ss)
{
	const char *colon = strrchr(s, ':');
	gchar *host;
	guint64 port;
	bool ok;

	memset(ss, 0, sizeof(*ss));
	if (!colon || !g_ascii_string_to_unsigned(colon + 1, 10, 1, 65535, &port, NULL))
		return false;
	host = g_strndup(s, (gsize)(colon - s));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		host[strlen(host) - 1] = 0;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		ok = inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		ok = inet_pton(AF_INET, host[0] ? host : "127.0.0.1", &a->sin_addr) == 1;
	}
	g_free(host);
	return ok;
}

/* user:password, the first line of FILE. */
static bool read_auth(struct qpt_http *h, const char *file)
{
	gchar *text = NULL, *colon, *nl;
	GError *e = NULL;

	if (!g_file_get_contents(file, &text, NULL, &e)) {
		g_printerr("qptrace monitor: --metrics-auth %s: %s\n", file, e->message);
		g_error_free(e);
		return false;
	}
	nl = strpbrk(text, "\r\n");
	if (nl)
		*nl = 0;
	colon = strchr(text, ':');
	if (!colon || colon == text || !colon[1]) {
		g_printerr("qptrace monitor: --metrics-auth %s: its first line must be "
			   "USER:PASSWORD\n", file);
		g_free(text);
		return false;
	}
	*colon = 0;
	h->user = g_strdup(text);
	h->pass = g_strdup(colon + 1);
	memset(text, 0, strlen(text) + 1 + strlen(colon + 1));
	g_free(text);
	return true;
}

struct qpt_http *qpt_http_start(const char *listen, const char *auth_file)
{
	struct qpt_http *h = g_new0(struct qpt_http, 1);
	struct sockaddr_storage ss;

	if (!parse_listen(listen, &ss)) {
		g_printerr("qptrace monitor: bad --metrics '%s': ADDR:PORT (127.0.0.1:9464, "
			   "[::1]:9464, 0.0.0.0:9464 for every IPv4 address; :9464 is the "
			   "loopback)\n", listen);
		g_free(h);
		return NULL;
	}
	if (!mhd_open() || (auth_file && !read_auth(h, auth_file))) {
		g_free(h);
		return NULL;
	}
	g_mutex_init(&h->lock);
	g_cond_init(&h->wake);
	h->d = mhd.start_daemon(MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
					(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, serve, h, MHD_OPTION_SOCK_ADDR, &ss,
				/* room past the slots for the cut ones not closed yet */
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)QPT_HTTP_SLOTS + 16,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)QPT_HTTP_PER_ADDR,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
	if (!h->d) {
		g_printerr("qptrace monitor: cannot serve metrics on %s: %s\n", listen,
			   g_strerror(errno));
		qpt_http_stop(h);
		return NULL;
	}
	h->watchdog = g_thread_new("qpt-http-watchdog", watchdog, h);
	return h;
}

bool qpt_http_wanted(struct qpt_http *h)
{
	bool w;

	g_mutex_lock(&h->lock);
	/* a third rendering only when the one before the current is freed */
	w = h->want && h->live <= 1 && !h->stopping;
	g_mutex_unlock(&h->lock);
	return w;
}

void qpt_http_publish(struct qpt_http *h, char *text, size_t len)
{
	struct rendering *rd = g_new(struct rendering, 1);
	struct MHD_Response *r, *old;

	rd->h = h;
	rd->text = text;
	r = mhd.create_response_from_buffer_with_free_callback_cls(len, text, rendering_free,
								    rd);
	if (!r) {
		g_free(text);
		g_free(rd);
		return;
	}
	mhd.add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	g_mutex_lock(&h->lock);
	old = h->cur;
	h->cur = r;
	h->cur_made = g_get_monotonic_time();
	h->live++;
	h->want = false;
	h->st.renderings++;
	for (struct hconn *x = h->head; x; x = x->next)
		if (x->phase == PH_WAITING) {
			x->phase = PH_RESUMED;
			mhd.resume_connection(x->c);
		}
	g_mutex_unlock(&h->lock);
	if (old)
		mhd.destroy_response(old); /* freed when its last reader is done */
}

void qpt_http_get_stats(struct qpt_http *h, struct qpt_http_stats *st)
{
	g_mutex_lock(&h->lock);
	*st = h->st;
	g_mutex_unlock(&h->lock);
}

void qpt_http_stop(struct qpt_http *h)
{
	if (!h)
		return;
	if (h->d) {
		g_mutex_lock(&h->lock);
		h->stopping = true;
		/* none may stay suspended when the daemon stops */
		for (struct hconn *x = h->head; x; x = x->next)
			if (x->phase == PH_WAITING) {
				x->phase = PH_RESUMED;
				mhd.resume_connection(x->c);
			}
		g_cond_signal(&h->wake);
		g_mutex_unlock(&h->lock);
		if (h->watchdog)
			g_thread_join(h->watchdog);
		mhd.stop_daemon(h->d);
		if (h->cur)
			mhd.destroy_response(h->cur);
	}
	g_mutex_clear(&h->lock);
	g_cond_clear(&h->wake);
	if (h->pass)
		memset(h->pass, 0, strlen(h->pass));
	g_free(h->user);
	g_free(h->pass);
	g_free(h);
}

#else /* without libmicrohttpd: --metrics is refused */

struct qpt_http *qpt_http_start(const char *listen, const char *auth_file)
{
	(void)listen, (void)auth_file;
	g_printerr("qptrace monitor: --metrics needs libmicrohttpd, which this qptrace was "
		   "built without (tools/setup-deps installs libmicrohttpd-dev; then "
		   "meson setup --reconfigure)\n");
	return NULL;
}

bool qpt_http_wanted(struct qpt_http *h)
{
	(void)h;
	return false;
}

void qpt_http_publish(struct qpt_http *h, char *text, size_t len)
{
	(void)h, (void)len;
	g_free(text);
}

void qpt_http_get_stats(struct qpt_http *h, struct qpt_http_stats *st)
{
	(void)h;
	memset(st, 0, sizeof(*st));
}

void qpt_http_stop(struct qpt_http *h)
{
	(void)h;
}

#endif /* QPT_HAVE_MHD */
