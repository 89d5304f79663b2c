/* print_int.h - what the packet printers share (print_pkt.c the line, -v
 * and JSON printers, the numbers and JSON members without printf;
 * print_ext.c the extended headers and the delivery, in every mode).  Not
 * part of the interface (output.h). */
#ifndef QPT_PRINT_INT_H
#define QPT_PRINT_INT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "output.h"

/* print_pkt.c */
void print_append_u64(GString *o, uint64_t v);
void print_append_hex(GString *o, uint64_t v, unsigned width);
void print_json_key(GString *o, bool comma, const char *k);
void print_json_obj_begin(GString *o, const char *key);
void print_json_first(GString *o, const char *k, uint64_t v);
void print_json_str_member(GString *o, const char *k, const char *v);

#define JB(o, k, v) (print_json_key(o, true, k), g_string_append(o, (v) ? "true" : "false"))
#define JU(o, k, v) (print_json_key(o, true, k), print_append_u64(o, (uint64_t)(v)))

/* print_ext.c */
void print_ext(GString *o, const struct qpt_pkt *pkt, enum qpt_print_mode m);
void print_delivery(GString *o, const struct qpt_pkt *pkt, enum qpt_print_mode m);

#endif
