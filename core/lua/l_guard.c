/* A last word before the command line dies of a crash: `shingle` (cli.lua)
 * installs handlers for the signals that end a process on a fault, so that a
 * damaged index that makes LMDB fail an assertion or touch a bad page ends
 * the command with a sentence naming what it was reading and what to do,
 * and exit status 70, rather than "Segmentation fault". Signal handlers
 * belong to the whole process: this is for the command line only, never
 * for a library user or a server that embeds the module. */
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "lshingle.h"

static char guard_context[1024];  /* process-wide, as signal dispositions are */
static volatile sig_atomic_t guard_installed;

static void say(const char *s) { ssize_t r = write(2, s, strlen(s)); (void)r; }

static void on_fault(int sig)
{
    const char *name = sig == SIGSEGV ? "a segmentation fault" : sig == SIGBUS ? "a bus error"
                     : sig == SIGABRT ? "an abort (a failed assertion)" : sig == SIGFPE ? "an arithmetic fault" : "a fault";
    say("shingle: stopped by ");
    say(name);
    if (guard_context[0]) { say(" while "); say(guard_context); }
    say("\n");
    _exit(70);
}

/* core.crash_guard(): install the handlers (once) */
static int g_install(lua_State *L)
{
    if (!guard_installed) {
        struct sigaction sa;
        int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
        size_t i;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fault;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
        guard_installed = 1;
    }
    (void)L;
    return 0;
}

/* core.crash_context(text): what the process is doing, for the last word
 * (nil clears it); harmless where no guard is installed */
static int g_context(lua_State *L)
{
    size_t n = 0;
    const char *s = luaL_optlstring(L, 1, "", &n);
    if (n >= sizeof guard_context) n = sizeof guard_context - 1;
    guard_context[0] = 0; /* never half a text in the buffer, should a fault come now */
    memcpy(guard_context + 1, s + (n ? 1 : 0), n ? n - 1 : 0);
    guard_context[n] = 0;
    if (n) guard_context[0] = s[0];
    return 0;
}

void shl_open_guard(lua_State *L)
{
    static const luaL_Reg funcs[] = { { "crash_guard", g_install }, { "crash_context", g_context }, { NULL, NULL } };
    shl_setfuncs(L, funcs);
}
