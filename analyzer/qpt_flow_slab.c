/* qpt_flow_slab.c - cold records' memory (struct cold_slab, qpt_flow_int.h):
 * blocks carved in steps of SLAB_UNIT bytes, a free list per size */
#include <string.h>

#include "qpt_flow_int.h"

/* Under AddressSanitizer the blocks' free parts and freed records are
 * poisoned, so that a read of a freed or never-given cold record is caught
 * as it is with malloc's own memory. */
#if defined(__SANITIZE_ADDRESS__)
#define QPT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QPT_ASAN 1
#endif
#endif
#ifdef QPT_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

/* ---- the cold records' memory ------------------------------------------ */

void *fl_slab_alloc(struct cold_slab *s, size_t n)
{
	size_t u = (n + SLAB_UNIT - 1) / SLAB_UNIT;
	void *p;

	if (u > SLAB_CLASSES)
		return g_malloc(n);
	if ((p = s->free[u])) {
		ASAN_UNPOISON_MEMORY_REGION(p, sizeof(void *));
		memcpy(&s->free[u], p, sizeof(void *));
		ASAN_UNPOISON_MEMORY_REGION(p, n);
		return p;
	}
	if (s->left < u * SLAB_UNIT) {
		if (s->left >= sizeof(void *)) /* the block's tail, for a smaller one */
			fl_slab_free(s, s->cur, s->left);
		if (!s->blocks)
			s->blocks = g_ptr_array_new();
		s->cur = g_malloc(SLAB_BLOCK);
		ASAN_POISON_MEMORY_REGION(s->cur, SLAB_BLOCK);
		g_ptr_array_add(s->blocks, s->cur);
		s->left = SLAB_BLOCK;
	}
	p = s->cur;
	s->cur += u * SLAB_UNIT;
	s->left -= u * SLAB_UNIT;
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	return p;
}

void fl_slab_free(struct cold_slab *s, void *p, size_t n)
{
	size_t u = (n + SLAB_UNIT - 1) / SLAB_UNIT;

	if (u > SLAB_CLASSES) {
		g_free(p);
		return;
	}
	ASAN_UNPOISON_MEMORY_REGION(p, sizeof(void *));
	memcpy(p, &s->free[u], sizeof(void *));
	ASAN_POISON_MEMORY_REGION(p, u * SLAB_UNIT);
	s->free[u] = p;
}

void fl_slab_clear(struct cold_slab *s)
{
	for (guint i = 0; s->blocks && i < s->blocks->len; i++) {
		ASAN_UNPOISON_MEMORY_REGION(s->blocks->pdata[i], SLAB_BLOCK);
		g_free(s->blocks->pdata[i]);
	}
	if (s->blocks)
		g_ptr_array_free(s->blocks, TRUE);
	memset(s, 0, sizeof(*s));
}
