/* roce-text.c - an item's text written without printf
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <string.h>

#include "qpt_attr.h"
#include "roce-int.h"

/* The label is the item's field_info's, from the packet's pool as
 * Wireshark's own (proto_item_set_text(): ITEM_LABEL_NEW); Wireshark makes
 * none when the tree is not visible or the item hidden. */
QPT_HOT char *roce_label(proto_item *it)
{
	field_info *fi = it ? PITEM_FINFO(it) : NULL;
	item_label_t *rep;

	if (!fi || !PTREE_DATA(it)->visible || proto_item_is_hidden(it))
		return NULL;
	rep = wmem_new(PNODE_POOL(it), item_label_t);
	/* what newer Wireshark keeps after the text (the value's place) zeroed */
	if (sizeof(*rep) > ITEM_LABEL_LENGTH)
		memset((char *)rep + ITEM_LABEL_LENGTH, 0, sizeof(*rep) - ITEM_LABEL_LENGTH);
	rep->representation[0] = '\0';
	fi->rep = rep;
	return rep->representation;
}
