/* interrupt.h - Ctrl-C (interrupt.c) */
#ifndef QPT_INTERRUPT_H
#define QPT_INTERRUPT_H

#include <signal.h>

/* Ctrl-C (interrupt.c): set by the first SIGINT once installed; the
 * reading thread stops at it, and QPT_WAKE_SIGNAL wakes it from a blocked
 * read.  A second SIGINT quits at once. */
extern volatile sig_atomic_t qpt_interrupted;
#define QPT_WAKE_SIGNAL SIGUSR2
void qpt_interrupt_install(void);

#endif
