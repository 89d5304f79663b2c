/* monitor_http.h - the monitor's metrics endpoint (monitor_http.c) */
#ifndef QPT_MONITOR_HTTP_H
#define QPT_MONITOR_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The metrics endpoint (monitor_http.c, with libmicrohttpd): deadlines,
 * connection caps, one shared rendering per scrape interval.  The
 * monitor's thread renders when qpt_http_wanted() says a scrape waits for
 * it and hands the text over with qpt_http_publish(). */
struct qpt_http;
struct qpt_http_stats {
	uint64_t scrapes, renderings;
	uint64_t headers_deadline, send_deadline, evicted; /* connections cut */
};
/* NULL after a message on stderr (a bad address, a port in use, an
 * unreadable --metrics-auth file). */
struct qpt_http *qpt_http_start(const char *listen, const char *auth_file);
bool qpt_http_wanted(struct qpt_http *h);
/* Takes text (g_malloc'd): shared by every reader until the next one is
 * published and its last reader is done. */
void qpt_http_publish(struct qpt_http *h, char *text, size_t len);
void qpt_http_get_stats(struct qpt_http *h, struct qpt_http_stats *st);
void qpt_http_stop(struct qpt_http *h);

#endif
