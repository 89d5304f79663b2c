/* queue.h - hand-offs between threads through a GAsyncQueue */
#ifndef QPT_QUEUE_H
#define QPT_QUEUE_H

#include <glib.h>

/* Hand-offs between threads through a GAsyncQueue.  ThreadSanitizer does
 * not see GLib's futex-based GMutex (every hand-off looks like a race), so
 * a -Db_sanitize=thread build tells it: what is pushed was released by the
 * pusher and is acquired by the popper. */
#if defined(__SANITIZE_THREAD__)
#define QPT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QPT_TSAN 1
#endif
#endif
#ifdef QPT_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static inline void qpt_queue_push(GAsyncQueue *q, gpointer p)
{
	__tsan_release(p);
	g_async_queue_push(q, p);
}
static inline gpointer qpt_queue_got(gpointer p)
{
	if (p)
		__tsan_acquire(p);
	return p;
}
#define qpt_queue_pop(q) qpt_queue_got(g_async_queue_pop(q))
#define qpt_queue_timeout_pop(q, us) qpt_queue_got(g_async_queue_timeout_pop(q, us))
#define qpt_queue_try_pop(q) qpt_queue_got(g_async_queue_try_pop(q))
#else
#define qpt_queue_push g_async_queue_push
#define qpt_queue_pop g_async_queue_pop
#define qpt_queue_timeout_pop g_async_queue_timeout_pop
#define qpt_queue_try_pop g_async_queue_try_pop
#endif

#endif
