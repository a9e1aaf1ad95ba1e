/* securer — the secondary backends: macOS Seatbelt and Windows Job Objects.
 *
 * Both ports read the same resolved policy (securer/policy.h) as the Linux
 * backend.  Neither OS can give everything the IR describes, so each port
 * first turns the IR into a plan (Seatbelt profile text, Job Object limits
 * and an environment block) and, alongside it, a report of every rule it
 * cannot enforce.  The plan layer is portable C and is unit-tested on Linux;
 * only the launchers (macos/launch-macos.c, windows/launch-windows.c) are
 * platform code.
 *
 * The caller decides with securer_port_check(): a gap at REQUIRED level
 * means the port would give the payload more than the policy allows (or the
 * policy itself marks the rule required), and the launch is refused unless
 * the caller explicitly accepts a weaker sandbox; a BEST_EFFORT gap is
 * defence in depth the port lacks, reported and run.
 */
#ifndef SECURER_PORTS_H
#define SECURER_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "securer/error.h"
#include "securer/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what a port cannot enforce ----------------------------------------- */

struct securer_port_gap {
  char *section;               /* IR section: "filesystem", "network", "limits", ... */
  char *rule;                  /* the rule as the policy states it, e.g. "namespace pid" */
  char *reason;                /* what the port does instead, and why */
  enum securer_enforce level;  /* REQUIRED or BEST_EFFORT (never OFF) */
};

struct securer_port_report {
  const char *port;            /* "seatbelt" or "jobobject"; static storage */
  struct securer_port_gap *gaps;
  size_t n_gaps;
  char **enforced;             /* one line per protection the port does apply */
  size_t n_enforced;
};

/* Flags for securer_port_check(). */
enum {
  /* Refuse on any gap, best-effort ones included (production on a port). */
  SECURER_PORT_STRICT = 1u << 0,
  /* The caller knowingly runs with REQUIRED gaps (the R package's
   * sandbox_strict = FALSE).  Never the default. */
  SECURER_PORT_ACCEPT_WEAKER = 1u << 1,
};

/* Decides whether a launch may go ahead.  Returns 0 when it may, -1 with
 * *err (status SECURER_EXIT_SETUP) listing every gap that forbids it. */
int securer_port_check (const struct securer_port_report *rep, unsigned flags,
                        securer_err_t *err);

/* Human-readable report: one "enforced:" line per protection, then one
 * "required:"/"best-effort:" line per gap.  malloc'd; NULL on ENOMEM. */
char *securer_port_report_format (const struct securer_port_report *rep);

/* Number of gaps at `level`. */
size_t securer_port_report_count (const struct securer_port_report *rep,
                                  enum securer_enforce level);

/* First gap whose section and rule match (rule may be NULL: any); NULL if none. */
const struct securer_port_gap *securer_port_report_find (const struct securer_port_report *rep,
                                                         const char *section, const char *rule);

void securer_port_report_clear (struct securer_port_report *rep);

/* ---- macOS: Seatbelt ------------------------------------------------------ */

/* The profile takes the per-sandbox private directory as an SBPL parameter
 * (sandbox-exec -D SECURER_PRIVATE_DIR=...), so the text depends only on the
 * policy and the directory's path is never spliced into it.  The value must
 * be the directory's real path (macOS resolves /tmp to /private/tmp before
 * Seatbelt matches). */
#define SECURER_SEATBELT_PARAM_PRIVATE "SECURER_PRIVATE_DIR"

/* Generates the Seatbelt profile (SBPL) for `p` and fills *rep (which must
 * be zeroed or cleared) with what the profile and the macOS launcher can and
 * cannot enforce.  Returns malloc'd text, or NULL with *err set (a path the
 * profile language cannot carry, ENOMEM). */
char *securer_seatbelt_profile (const struct securer_policy *p, struct securer_port_report *rep,
                                securer_err_t *err);

/* Where a path inside the sandbox is found on a macOS host, which has no
 * mount namespace: RO/RW binds map dest to source, tmpfs mounts map to
 * "<private>/tmpfs<dest>" (private = the directory above, or the parameter
 * name in angle brackets when NULL).  NULL (no error) when the path lies
 * under no mount. */
char *securer_seatbelt_host_path (const struct securer_policy *p, const char *inside,
                                  const char *private_dir);

#if defined(__APPLE__) || defined(SECURER_MACOS_LAUNCH_TEST)
/* Launches argv under the profile with the policy's rlimits set in the
 * forked child (not a shell script), stdin/out/err inherited, and returns
 * the child's pid.  `private_dir` is created by the caller (mkdtemp). */
int securer_macos_spawn (const struct securer_policy *p, char *const *argv,
                         char *const *caller_env, const char *private_dir, unsigned flags,
                         int *pid_out, struct securer_port_report *rep, securer_err_t *err);
/* Waits for the child, killing its process group at the policy's timeout.
 * Returns the exit status as `securer run` would (124 on timeout). */
int securer_macos_wait (const struct securer_policy *p, int pid, securer_err_t *err);
#endif

/* ---- Windows: Job Objects + AppContainer ---------------------------------- */

/* A filesystem ACE for the AppContainer SID: the payload runs in a fresh
 * AppContainer, which by default reaches none of the user's files; each
 * RO/RW mount source and the private directory get an ACE for that SID
 * alone (removed again after the run), and masks inside them a deny ACE. */
enum securer_win_access {
  SECURER_WIN_READ = 0,        /* read + execute */
  SECURER_WIN_READ_WRITE,      /* full access */
  SECURER_WIN_DENY,            /* deny everything (a mask) */
};

struct securer_win_grant {
  char *path;                  /* host path (as the policy spells it) */
  enum securer_win_access access;
  bool optional;               /* skip when missing */
};

struct securer_jobobject_plan {
  /* JOBOBJECT_EXTENDED_LIMIT_INFORMATION.BasicLimitInformation.LimitFlags */
  uint32_t limit_flags;
  uint32_t active_process_limit;     /* JOB_OBJECT_LIMIT_ACTIVE_PROCESS */
  uint64_t process_memory_limit;     /* bytes; JOB_OBJECT_LIMIT_PROCESS_MEMORY */
  uint64_t job_memory_limit;         /* bytes; JOB_OBJECT_LIMIT_JOB_MEMORY */
  int64_t per_process_user_time;     /* 100 ns units; JOB_OBJECT_LIMIT_PROCESS_TIME */
  uint32_t ui_restrictions;          /* JOBOBJECT_BASIC_UI_RESTRICTIONS.UIRestrictionsClass */
  uint32_t cpu_rate_millis;          /* 1000 = one CPU; 0 = none (converted at launch) */
  uint64_t timeout_ms;               /* wall clock; 0 = none */

  /* AppContainer: no capabilities means no network at all. */
  bool appcontainer;
  char **capabilities;               /* well-known capability names, e.g. "internetClient" */
  size_t n_capabilities;
  struct securer_win_grant *grants;
  size_t n_grants;

  /* "NAME=value", sorted case-insensitively as CreateProcess requires,
   * one entry per name; NULL-terminated. */
  char **env;
  size_t n_env;

  char *private_dir;                 /* HOME/TEMP/TMP/TMPDIR/USERPROFILE point here */
};

/* Windows constants the plan uses, fixed by the Win32 ABI (winnt.h), so
 * the portable plan and its tests need no Windows headers. */
#define SECURER_JOB_LIMIT_PROCESS_TIME 0x00000002u
#define SECURER_JOB_LIMIT_ACTIVE_PROCESS 0x00000008u
#define SECURER_JOB_LIMIT_PROCESS_MEMORY 0x00000100u
#define SECURER_JOB_LIMIT_JOB_MEMORY 0x00000200u
#define SECURER_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION 0x00000400u
#define SECURER_JOB_LIMIT_KILL_ON_JOB_CLOSE 0x00002000u
#define SECURER_JOB_UILIMIT_HANDLES 0x0001u
#define SECURER_JOB_UILIMIT_READCLIPBOARD 0x0002u
#define SECURER_JOB_UILIMIT_WRITECLIPBOARD 0x0004u
#define SECURER_JOB_UILIMIT_SYSTEMPARAMETERS 0x0008u
#define SECURER_JOB_UILIMIT_DISPLAYSETTINGS 0x0010u
#define SECURER_JOB_UILIMIT_GLOBALATOMS 0x0020u
#define SECURER_JOB_UILIMIT_DESKTOP 0x0040u
#define SECURER_JOB_UILIMIT_EXITWINDOWS 0x0080u
#define SECURER_JOB_UILIMIT_ALL 0x00ffu

/* Translates `p` into a Job Object plan.  `private_dir` is the per-sandbox
 * directory the caller created; `caller_env` ("NAME=value", NULL-terminated)
 * is read only for the names the policy keeps.  Fills *rep (zeroed or
 * cleared) with what cannot be enforced.  Returns 0 or -1 with *err. */
int securer_jobobject_plan (const struct securer_policy *p, const char *private_dir,
                            char *const *caller_env, struct securer_jobobject_plan *plan,
                            struct securer_port_report *rep, securer_err_t *err);

/* For a system that cannot create AppContainers (Windows before 8; Wine,
 * whose userenv.dll has CreateAppContainerProfile only as a stub): the plan
 * runs the payload with a restricted token in the job alone, and every
 * protection the AppContainer gave becomes a gap of *rep, REQUIRED where the
 * policy asks for it, so the launch is refused unless the caller accepts a
 * weaker sandbox.  `why` says why there is none. */
int securer_jobobject_without_appcontainer (const struct securer_policy *p,
                                            struct securer_jobobject_plan *plan,
                                            struct securer_port_report *rep, const char *why,
                                            securer_err_t *err);

void securer_jobobject_plan_clear (struct securer_jobobject_plan *plan);

#ifdef _WIN32
/* Whether this system can create AppContainers; when not, *why (static
 * text) says why. */
bool securer_windows_appcontainer_available (const char **why);
/* CreateProcessW suspended in a fresh AppContainer (or, when the plan has
 * none, with a restricted token) → AssignProcessToJobObject
 * → ResumeThread; waits with the plan's wall-clock timeout and terminates
 * the whole job on expiry.  `cmdline` is UTF-8, quoted by the caller.
 * *exit_code gets the payload's code (SECURER_EXIT_TIMEOUT on timeout). */
int securer_windows_run (const struct securer_jobobject_plan *plan, const char *cmdline,
                         int *exit_code, securer_err_t *err);
#endif

#ifdef __cplusplus
}
#endif
#endif
