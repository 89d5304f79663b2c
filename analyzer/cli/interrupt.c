/* interrupt.c - Ctrl-C: stop reading, print what was found so far
 *
 * As tshark: the first SIGINT ends the input where it is (the reading
 * thread stops at the next frame, or is woken from a blocked read by
 * SIGUSR2) and the command prints its results, marked as cut short; a
 * second SIGINT quits at once.  The handler only sets a flag
 * (async-signal-safe); the reading loop checks it.
 */
#include <signal.h>
#include <string.h>

#include "outfile.h"
#include "interrupt.h"

/* qpt_interrupted is the reader's (reader.c), which checks it */

static void on_sigint(int sig)
{
	if (qpt_interrupted) {
		/* the second Ctrl-C: die of it, as without the handler,
		 * leaving no half-written output behind */
		qpt_tmp_remove_all();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	qpt_interrupted = 1;
}

/* The reading thread's wake-up: its only effect is to end a blocked read
 * with EINTR (no SA_RESTART). */
static void on_wake(int sig)
{
	(void)sig;
}

void qpt_interrupt_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESTART; /* writes of the results go on */
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_wake;
	sa.sa_flags = 0;
	sigaction(QPT_WAKE_SIGNAL, &sa, NULL);
}
