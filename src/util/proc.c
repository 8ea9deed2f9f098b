/*
 * proc.c — process identity and liveness (see proc.h), from /proc.
 */
#include "util/proc.h"

#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of a file, without its newline; NULL when unreadable. */
static char *read_line(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[256];
    char *ok = fgets(buf, sizeof(buf), f);
    fclose(f);
    if (!ok)
        return NULL;
    buf[strcspn(buf, "\n")] = 0;
    return xstrdup(buf);
}

/* Reads /proc/PID/<name> into buf (NUL-terminated); its length, or 0
 * when it cannot be read (gone, or another user's). */
static size_t proc_read(long pid, const char *name, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/%s", pid, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    return n;
}

/* "boot-id:ticks" of process pid, or NULL. Field 22 of /proc/PID/stat is
 * the start time in clock ticks since boot; the fields are counted after
 * the command name, which is in parentheses and may hold spaces. */
static char *proc_start(long pid)
{
    char buf[1024];
    if (proc_read(pid, "stat", buf, sizeof(buf)) == 0)
        return NULL;
    char *p = strrchr(buf, ')');
    if (!p)
        return NULL;
    p++;
    /* after ')': field 3 (state) is the first; the start time is field 22 */
    char *tok = strtok(p, " ");
    for (int field = 3; tok && field < 22; field++)
        tok = strtok(NULL, " ");
    if (!tok)
        return NULL;
    char *boot = read_line("/proc/sys/kernel/random/boot_id");
    char *out = xasprintf("%s:%s", boot ? boot : "", tok);
    free(boot);
    return out;
}

char *proc_command(long pid)
{
    char buf[512];
    size_t n = proc_read(pid, "cmdline", buf, sizeof(buf));
    if (n == 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == 0)
            buf[i] = ' ';
    while (n && buf[n - 1] == ' ')
        n--;
    buf[n] = 0;
    return xstrdup(buf);
}

void proc_self(char **host, long *pid, char **start)
{
    char name[256] = "";
    if (gethostname(name, sizeof(name) - 1) != 0)
        name[0] = 0;
    *host = xstrdup(name);
    *pid = (long)getpid();
    char *s = proc_start(*pid);
    *start = s ? s : xstrdup("");
}

int proc_alive(const char *host, long pid, const char *start)
{
    char *me = NULL, *my_start = NULL;
    long my_pid;
    proc_self(&me, &my_pid, &my_start);
    int same_host = host && strcmp(host, me) == 0;
    free(me);
    free(my_start);
    if (!same_host)
        return -1;
    if (pid <= 0)
        return 0;
    char *now = proc_start(pid);
    int alive = now && (!start || !*start || strcmp(now, start) == 0);
    free(now);
    return alive;
}
