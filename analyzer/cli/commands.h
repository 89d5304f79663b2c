/* commands.h - the commands of qptrace, each run with the parsed options */
#ifndef QPT_COMMANDS_H
#define QPT_COMMANDS_H

#include <glib.h>

#include "options.h"

int cmd_summary(struct opts *o); /* report.c */
int cmd_events(struct opts *o);	 /* report.c */
int cmd_packets(struct opts *o); /* packets.c */
int cmd_grade(struct opts *o);	 /* grade/grade.c */
int cmd_plot(struct opts *o);	 /* plot.c */
int cmd_monitor(struct opts *o); /* monitor.c */
/* plot --timeline: the files' interval table (summary --interval; without
 * it, intervals that double until at most 512 cover the capture) drawn as
 * an SVG into svg.  0, or 2 after a message (a file not read). */
int qpt_timeline_svg(struct opts *o, GString *svg);

#endif
