/*
 * status.c — coloured status words and --quiet (see status.h).
 */
#include "cli/status.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int quiet;

int cli_color_ok(void)
{
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
    return !(no && *no) && !(term && strcmp(term, "dumb") == 0);
}

int cli_color_for(FILE *f)
{
    return isatty(fileno(f)) && cli_color_ok();
}

void cli_status(FILE *f, cli_tone tone, int width, const char *word)
{
    static const char *const sgr[] = {NULL, "32", "1;31", "33", "2"};
    int pad = width - (int)strlen(word);
    if (tone != CLI_TONE_PLAIN && cli_color_for(f))
        fprintf(f, "\033[%sm%s\033[0m", sgr[tone], word);
    else
        fputs(word, f);
    for (; pad > 0; pad--)
        fputc(' ', f);
}

int cli_opt_quiet(const char *arg)
{
    if (strcmp(arg, "-q") != 0 && strcmp(arg, "--quiet") != 0)
        return 0;
    quiet = 1;
    return 1;
}

int cli_quiet(void)
{
    return quiet;
}
