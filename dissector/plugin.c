/* plugin.c - Wireshark plugin entry points for the qptrace RoCE dissector
 *
 * The boilerplate of Wireshark's doc/plugins.example: the plugin loader
 * checks plugin_version, plugin_want_major/minor (they must be the
 * major.minor of the Wireshark that loads the plugin, so they are those of
 * the headers it was built with) and calls plugin_register(), which hands
 * Wireshark the protocol's register and handoff routines (packet-roce.c).
 * From 4.4 the loader also asks plugin_describe() what kind of plugin this
 * is (optional: without it, -G plugins says "unknown"; 4.2 has no such
 * call, its wsutil/plugins.h no WS_PLUGIN_DESC_*).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>
#include <epan/proto.h>

#include "ws_compat.h"

#if QPT_WS_HAVE_PLUGIN_DESCRIBE
#include <wsutil/plugins.h>
#endif

#ifndef ROCE_PLUGIN_VERSION
#define ROCE_PLUGIN_VERSION "0.1.0"
#endif

void proto_register_roce(void);
void proto_reg_handoff_roce(void);

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = ROCE_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = QPT_WS_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = QPT_WS_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

void plugin_register(void)
{
	static proto_plugin plug_roce;

	plug_roce.register_protoinfo = proto_register_roce;
	plug_roce.register_handoff = proto_reg_handoff_roce;
	proto_register_plugin(&plug_roce);
}

#if QPT_WS_HAVE_PLUGIN_DESCRIBE
WS_DLL_PUBLIC uint32_t plugin_describe(void);

uint32_t plugin_describe(void)
{
	return WS_PLUGIN_DESC_DISSECTOR;
}
#endif
