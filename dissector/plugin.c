/* plugin.c - Wireshark plugin entry points for the qptrace RoCE dissector
 *
 * The boilerplate of Wireshark's doc/plugins.example (4.0): the plugin
 * loader checks plugin_version, plugin_want_major/minor and calls
 * plugin_register(), which hands Wireshark the protocol's register and
 * handoff routines (packet-roce.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>
#include <epan/proto.h>

#ifndef ROCE_PLUGIN_VERSION
#define ROCE_PLUGIN_VERSION "0.1.0"
#endif

void proto_register_roce(void);
void proto_reg_handoff_roce(void);

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = ROCE_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = 4;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = 0;

WS_DLL_PUBLIC void plugin_register(void);

void plugin_register(void)
{
	static proto_plugin plug_roce;

	plug_roce.register_protoinfo = proto_register_roce;
	plug_roce.register_handoff = proto_reg_handoff_roce;
	proto_register_plugin(&plug_roce);
}
