/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Code layout hints (tools/bench/README.md, "Plugin code layout"): a
 * function marked QPT_COLD runs rarely (first-time setup, events, error
 * paths); the compiler takes the branches that call it as unlikely and
 * moves their code out of line (.text.unlikely), so that the code a
 * frame runs fills fewer instruction cache lines.  QPT_HOT: a function
 * every frame runs (the Wireshark plugin's per-frame path); GCC groups
 * them (.text.hot).  QPT_UNLIKELY(x): x is rarely true; QPT_LIKELY(x): x
 * is mostly true.  No effect on results. */
#ifndef QPT_ATTR_H
#define QPT_ATTR_H

#if defined(__GNUC__)
#define QPT_COLD __attribute__((cold, noinline))
#define QPT_HOT __attribute__((hot))
#define QPT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define QPT_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define QPT_COLD
#define QPT_HOT
#define QPT_UNLIKELY(x) (x)
#define QPT_LIKELY(x) (x)
#endif

#endif
