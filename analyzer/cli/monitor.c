/* monitor.c - qptrace monitor: live capture, events as they happen,
 * periodic summaries, Prometheus metrics; and --vxlan-port for every
 * reading command. */
#include <string.h>

#include "cli.h"

/* ---- --vxlan-port ---------------------------------------------------- */

static uint16_t vxlan_ports[16];
static unsigned n_vxlan_ports;

gboolean qpt_opt_vxlan_port(const gchar *name, const gchar *value, gpointer data,
			    GError **error)
{
	gchar **parts = g_strsplit(value, ",", -1);
	gboolean ok = TRUE;

	(void)data;
	for (gchar **q = parts; ok && *q; q++) {
		guint64 v;

		if (!g_ascii_string_to_unsigned(*q, 10, 1, 65535, &v, NULL) ||
		    n_vxlan_ports >= G_N_ELEMENTS(vxlan_ports)) {
			g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				    "bad %s '%s': a UDP port (1-65535, at most %zu)", name, *q,
				    G_N_ELEMENTS(vxlan_ports));
			ok = FALSE;
		} else {
			vxlan_ports[n_vxlan_ports++] = (uint16_t)v;
		}
	}
	g_strfreev(parts);
	return ok;
}

void qpt_vxlan_ports_to(struct qpt_decode_opts *dec)
{
	dec->vxlan_ports = vxlan_ports;
	dec->n_vxlan_ports = n_vxlan_ports;
}
