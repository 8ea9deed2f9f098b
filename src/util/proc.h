/*
 * proc.h — which process this is, and whether a process recorded earlier
 * is still alive: the host name, the pid and the process's start (boot id
 * and start time since boot, from /proc), so that a pid reused by another
 * process, or a reboot, is not taken for the same process; and the
 * command line of a process, to name it in a message.
 */
#ifndef TARN_UTIL_PROC_H
#define TARN_UTIL_PROC_H

/* This process's host name, pid and start ("boot-id:ticks"; "" when /proc
 * cannot be read). host and start: caller frees. */
void proc_self(char **host, long *pid, char **start);

/* 1 when process `pid` of `host` that started at `start` (proc_self's
 * values) is still running; 0 when it is not (gone, or its pid now
 * belongs to another process); -1 when this host cannot tell (another
 * host). */
int proc_alive(const char *host, long pid, const char *start);

/* The command line of process `pid` ("tarn run -C shop"), its arguments
 * joined by spaces; NULL when it cannot be read (gone, or another
 * user's). Caller frees. */
char *proc_command(long pid);

#endif
