/* ws_compat.h - the Wireshark API differences between 4.0 and 4.6 that the
 * roce plugin meets, in one place.
 *
 * The version is the one meson found (dependency('wireshark').version(),
 * passed as QPT_WS_MAJOR / QPT_WS_MINOR), else ws_version.h's.  Each shim
 * names the release whose headers changed; the references are Wireshark's
 * own installed headers of 4.0 (Debian 12), 4.4 (Debian 13) and 4.6 (sid).
 * 4.2 is not built here (no Debian release ships it): its guards follow
 * the 4.2.4 headers (epan/prefs.h, conversation_filter.h, stat_tap_ui.h,
 * tvbuff.h, wsutil/plugins.h; read, not compiled against): there the
 * preference and the conversation-filter callbacks still take and return
 * gboolean, the callbacks already take user_data, tvb_get_uint8 and
 * plugin_describe do not exist yet.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QPT_WS_COMPAT_H
#define QPT_WS_COMPAT_H

#include <wireshark.h>
#include <ws_version.h>
/* The headers whose names are shimmed below come first, so a macro here
 * never renames one of their declarations. */
#include <epan/packet.h>
#include <epan/tvbuff.h>

#ifndef QPT_WS_MAJOR
#define QPT_WS_MAJOR WIRESHARK_VERSION_MAJOR
#define QPT_WS_MINOR WIRESHARK_VERSION_MINOR
#endif

#define QPT_WS_AT_LEAST(maj, min) \
	(QPT_WS_MAJOR > (maj) || (QPT_WS_MAJOR == (maj) && QPT_WS_MINOR >= (min)))

#if !QPT_WS_AT_LEAST(4, 0)
#error "the roce plugin needs Wireshark 4.0 or newer"
#endif

/* Preferences: prefs_register_bool_preference() takes a gboolean * up to
 * 4.2, a bool * from 4.4 (GCC 14 makes the mismatch an error).  The
 * conversation-filter validity callback returns the same type (gboolean up
 * to 4.2, bool from 4.4). */
#if QPT_WS_AT_LEAST(4, 4)
typedef bool qpt_ws_bool;
#else
typedef gboolean qpt_ws_bool;
#endif

/* Conversation filters: from 4.2 the two callbacks take a user_data
 * pointer, given as register_conversation_filter()'s fifth argument (they
 * return gboolean / gchar * in 4.2, bool / char * from 4.4: qpt_ws_bool).
 * Declare a callback as
 *   static qpt_ws_bool f(packet_info *pinfo QPT_WS_CONV_FILTER_UDATA)   */
#if QPT_WS_AT_LEAST(4, 2)
#define QPT_WS_CONV_FILTER_UDATA , void *user_data _U_
#define qpt_register_conversation_filter(proto, name, valid, build) \
	register_conversation_filter((proto), (name), (valid), (build), NULL)
#else
#define QPT_WS_CONV_FILTER_UDATA
#define qpt_register_conversation_filter(proto, name, valid, build) \
	register_conversation_filter((proto), (name), (valid), (build))
#endif

/* stat_tap_ui.tap_init_cb returns void up to 4.4, bool (true: the tap is
 * set up) from 4.6.  QPT_WS_TAP_INIT_OK ends such a function. */
#if QPT_WS_AT_LEAST(4, 6)
typedef bool qpt_ws_tap_init_ret;
#define QPT_WS_TAP_INIT_OK return true
#else
typedef void qpt_ws_tap_init_ret;
#define QPT_WS_TAP_INIT_OK return
#endif

/* tvbuff: tvb_get_uint8() is the name in 4.4 and 4.6 (there
 * tvb_get_guint8() is deprecated); 4.0 only has tvb_get_guint8().  Below
 * 4.4 the new name maps to the old one, which 4.2 has either way. */
#if !QPT_WS_AT_LEAST(4, 4) && !defined(tvb_get_uint8)
#define tvb_get_uint8 tvb_get_guint8
#endif

/* plugin_describe() (wsutil/plugins.h, WS_PLUGIN_DESC_*): from 4.4; 4.2's
 * loader does not ask for it. */
#define QPT_WS_HAVE_PLUGIN_DESCRIBE QPT_WS_AT_LEAST(4, 4)

#endif /* QPT_WS_COMPAT_H */
