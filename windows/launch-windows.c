/* The Windows launcher: runs one command as the plan of jobobject.c says.
 *
 *   AppContainer profile (fresh, per run) + ACEs for its SID on the grants
 *   → CreateProcessW suspended, in the container, with the sanitized
 *     environment and only the standard handles inherited
 *   → AssignProcessToJobObject (limits set before the first instruction runs)
 *   → ResumeThread → WaitForSingleObject with the wall-clock timeout
 *   → TerminateJobObject on expiry; the job handle is closed with
 *     KILL_ON_JOB_CLOSE so nothing the payload started survives
 *   → ACEs revoked, profile deleted.
 *
 * The AppContainer API is looked up at run time, not imported: Windows
 * before 8 has none, and Wine exports CreateAppContainerProfile only as a
 * stub that aborts the process when called.  Without it the plan says so
 * (securer_jobobject_without_appcontainer) and the payload runs with a
 * restricted token in the job alone, if the caller accepts that.
 *
 * Compiled only on Windows (`make check-windows-build` cross-compiles it
 * with mingw-w64); on every other system this file is empty. */
#ifdef _WIN32

#ifndef UNICODE
#define UNICODE
#endif
#include <windows.h>
#include <aclapi.h>
#include <userenv.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "securer/ports.h"
#include "securer/sandbox.h"

/* An error with the Windows error code and its text. */
static int
win_error (securer_err_t *err, DWORD code, const char *what)
{
  char text[256] = "";
  DWORD n = FormatMessageA (FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                            code, 0, text, sizeof text, NULL);
  while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
    text[--n] = '\0';
  securer_error_set (err, 0, "%s: Windows error %lu (%s)", what, (unsigned long) code, text);
  securer_error_set_status (err, SECURER_EXIT_SETUP);
  return -1;
}

static wchar_t *
to_wide (const char *s)
{
  int n = MultiByteToWideChar (CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  if (n <= 0)
    return NULL;
  wchar_t *w = malloc ((size_t) n * sizeof *w);
  if (w != NULL && MultiByteToWideChar (CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n)
    {
      free (w);
      return NULL;
    }
  return w;
}

/* The policy spells paths with '/'; some security APIs want '\\'. */
static wchar_t *
to_wide_path (const char *s)
{
  wchar_t *w = to_wide (s);
  for (wchar_t *c = w; c && *c; c++)
    if (*c == L'/')
      *c = L'\\';
  return w;
}

/* "A=1\0B=2\0\0": the plan's entries are already sorted and unique. */
static wchar_t *
env_block (const struct securer_jobobject_plan *plan)
{
  /* An empty block is still two NULs. */
  size_t total = plan->n_env == 0 ? 2 : 1;
  wchar_t **w = calloc (plan->n_env + 1, sizeof *w);
  if (w == NULL)
    return NULL;
  wchar_t *block = NULL;
  for (size_t i = 0; i < plan->n_env; i++)
    {
      if ((w[i] = to_wide (plan->env[i])) == NULL)
        goto out;
      total += wcslen (w[i]) + 1;
    }
  block = malloc (total * sizeof *block);
  if (block == NULL)
    goto out;
  wchar_t *p = block;
  for (size_t i = 0; i < plan->n_env; i++)
    {
      size_t n = wcslen (w[i]) + 1;
      memcpy (p, w[i], n * sizeof *p);
      p += n;
    }
  *p = L'\0';
  if (plan->n_env == 0)
    p[1] = L'\0';
out:
  for (size_t i = 0; i < plan->n_env; i++)
    free (w[i]);
  free (w);
  return block;
}

/* ---- AppContainer ---------------------------------------------------------- */

typedef HRESULT (WINAPI *create_profile_fn) (PCWSTR, PCWSTR, PCWSTR, PSID_AND_ATTRIBUTES, DWORD, PSID *);
typedef HRESULT (WINAPI *delete_profile_fn) (PCWSTR);
static create_profile_fn create_profile;
static delete_profile_fn delete_profile;

bool
securer_windows_appcontainer_available (const char **why)
{
  *why = NULL;
  /* Wine's stub would abort us at the first call: ask ntdll first. */
  HMODULE ntdll = GetModuleHandleW (L"ntdll.dll");
  if (ntdll != NULL && GetProcAddress (ntdll, "wine_get_version") != NULL)
    {
      *why = "no AppContainer under Wine, whose CreateAppContainerProfile is a stub";
      return false;
    }
  HMODULE userenv = LoadLibraryW (L"userenv.dll");
  if (userenv != NULL)
    {
      create_profile = (create_profile_fn) (void (*) (void)) GetProcAddress (userenv, "CreateAppContainerProfile");
      delete_profile = (delete_profile_fn) (void (*) (void)) GetProcAddress (userenv, "DeleteAppContainerProfile");
    }
  if (create_profile == NULL || delete_profile == NULL)
    {
      *why = "no AppContainer before Windows 8";
      return false;
    }
  return true;
}

struct container {
  wchar_t name[96];
  PSID sid;
  SID_AND_ATTRIBUTES caps[8];
  BYTE cap_sids[8][SECURITY_MAX_SID_SIZE];
  DWORD n_caps;
  wchar_t **granted;    /* paths that got an ACE, to revoke */
  size_t n_granted;
};

static int
capability_sid (const char *name, WELL_KNOWN_SID_TYPE *type)
{
  if (strcmp (name, "internetClient") == 0)
    *type = WinCapabilityInternetClientSid;
  else if (strcmp (name, "internetClientServer") == 0)
    *type = WinCapabilityInternetClientServerSid;
  else if (strcmp (name, "privateNetworkClientServer") == 0)
    *type = WinCapabilityPrivateNetworkClientServerSid;
  else
    return -1;
  return 0;
}

static int
container_create (const struct securer_jobobject_plan *plan, struct container *c, securer_err_t *err)
{
  LARGE_INTEGER t;
  QueryPerformanceCounter (&t);
  /* Unique per run, so a leftover ACE of a crashed run names a SID no
   * later process will ever carry. */
  swprintf (c->name, sizeof c->name / sizeof c->name[0], L"securer.%lu.%llx",
            (unsigned long) GetCurrentProcessId (), (unsigned long long) t.QuadPart);
  if (plan->n_capabilities > sizeof c->caps / sizeof c->caps[0])
    return securer_error_set (err, EINVAL, "too many capabilities");
  for (size_t i = 0; i < plan->n_capabilities; i++)
    {
      WELL_KNOWN_SID_TYPE type;
      if (capability_sid (plan->capabilities[i], &type) < 0)
        return securer_error_set (err, EINVAL, "unknown capability %s", plan->capabilities[i]);
      DWORD size = SECURITY_MAX_SID_SIZE;
      if (!CreateWellKnownSid (type, NULL, c->cap_sids[i], &size))
        return win_error (err, GetLastError (), "capability SID");
      c->caps[i].Sid = c->cap_sids[i];
      c->caps[i].Attributes = SE_GROUP_ENABLED;
      c->n_caps++;
    }
  if (create_profile == NULL)
    return securer_error_set (err, ENOSYS, "no AppContainers on this system");
  HRESULT hr = create_profile (c->name, c->name, L"securer sandbox", c->n_caps ? c->caps : NULL,
                                          c->n_caps, &c->sid);
  if (FAILED (hr))
    return win_error (err, (DWORD) hr, "CreateAppContainerProfile");
  return 0;
}

static DWORD
set_ace (const wchar_t *path, PSID sid, ACCESS_MODE mode, DWORD rights)
{
  PACL old = NULL, acl = NULL;
  PSECURITY_DESCRIPTOR sd = NULL;
  DWORD rc = GetNamedSecurityInfoW (path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
                                    &old, NULL, &sd);
  if (rc != ERROR_SUCCESS)
    return rc;
  EXPLICIT_ACCESS_W ea;
  memset (&ea, 0, sizeof ea);
  ea.grfAccessPermissions = rights;
  ea.grfAccessMode = mode;
  ea.grfInheritance = SUB_CONTAINERS_AND_OBJECTS_INHERIT;
  ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
  ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
  ea.Trustee.ptstrName = (LPWSTR) sid;
  rc = SetEntriesInAclW (1, &ea, old, &acl);
  if (rc == ERROR_SUCCESS)
    rc = SetNamedSecurityInfoW ((LPWSTR) path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL,
                                NULL, acl, NULL);
  LocalFree (acl);
  LocalFree (sd);
  return rc;
}

static int
container_grant (const struct securer_jobobject_plan *plan, struct container *c, securer_err_t *err)
{
  c->granted = calloc (plan->n_grants + 1, sizeof *c->granted);
  if (c->granted == NULL)
    return securer_error_set (err, ENOMEM, "grants");
  for (size_t i = 0; i < plan->n_grants; i++)
    {
      const struct securer_win_grant *g = &plan->grants[i];
      wchar_t *w = to_wide_path (g->path);
      if (w == NULL)
        return securer_error_set (err, EINVAL, "grant %s: not valid UTF-8", g->path);
      if (GetFileAttributesW (w) == INVALID_FILE_ATTRIBUTES)
        {
          DWORD code = GetLastError ();
          free (w);
          if (g->optional)
            continue;
          return win_error (err, code, g->path);
        }
      ACCESS_MODE mode = g->access == SECURER_WIN_DENY ? DENY_ACCESS : GRANT_ACCESS;
      DWORD rights = g->access == SECURER_WIN_READ ? GENERIC_READ | GENERIC_EXECUTE : GENERIC_ALL;
      DWORD rc = set_ace (w, c->sid, mode, rights);
      if (rc != ERROR_SUCCESS)
        {
          free (w);
          return win_error (err, rc, g->path);
        }
      c->granted[c->n_granted++] = w;
    }
  return 0;
}

static void
container_destroy (struct container *c)
{
  /* REVOKE_ACCESS removes every ACE naming the SID, grants and denies. */
  for (size_t i = c->n_granted; i-- > 0;)
    {
      set_ace (c->granted[i], c->sid, REVOKE_ACCESS, 0);
      free (c->granted[i]);
    }
  free (c->granted);
  if (c->sid != NULL)
    {
      if (delete_profile != NULL)
        delete_profile (c->name);
      FreeSid (c->sid);
    }
  memset (c, 0, sizeof *c);
}

/* Without an AppContainer: the caller's token with every privilege it can
 * shed removed (SeChangeNotify stays: Windows needs it to traverse). */
static HANDLE
restricted_token (securer_err_t *err)
{
  HANDLE self = NULL, restricted = NULL;
  if (!OpenProcessToken (GetCurrentProcess (),
                         TOKEN_DUPLICATE | TOKEN_ASSIGN_PRIMARY | TOKEN_QUERY | TOKEN_ADJUST_DEFAULT, &self))
    {
      win_error (err, GetLastError (), "OpenProcessToken");
      return NULL;
    }
  if (!CreateRestrictedToken (self, DISABLE_MAX_PRIVILEGE, 0, NULL, 0, NULL, 0, NULL, &restricted))
    {
      win_error (err, GetLastError (), "CreateRestrictedToken");
      restricted = NULL;
    }
  CloseHandle (self);
  return restricted;
}

/* ---- the job ---------------------------------------------------------------- */

static HANDLE
job_create (const struct securer_jobobject_plan *plan, securer_err_t *err)
{
  HANDLE job = CreateJobObjectW (NULL, NULL);
  if (job == NULL)
    {
      win_error (err, GetLastError (), "CreateJobObject");
      return NULL;
    }
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
  memset (&li, 0, sizeof li);
  li.BasicLimitInformation.LimitFlags = plan->limit_flags;
  li.BasicLimitInformation.ActiveProcessLimit = plan->active_process_limit;
  li.BasicLimitInformation.PerProcessUserTimeLimit.QuadPart = plan->per_process_user_time;
  li.ProcessMemoryLimit = (SIZE_T) plan->process_memory_limit;
  li.JobMemoryLimit = (SIZE_T) plan->job_memory_limit;
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui;
  ui.UIRestrictionsClass = plan->ui_restrictions;
  const char *what = NULL;
  if (!SetInformationJobObject (job, JobObjectExtendedLimitInformation, &li, sizeof li))
    what = "job limits";
  else if (!SetInformationJobObject (job, JobObjectBasicUIRestrictions, &ui, sizeof ui))
    what = "job UI restrictions";
  else if (plan->cpu_rate_millis)
    {
      SYSTEM_INFO si;
      GetSystemInfo (&si);
      /* CpuRate is in 1/100 % of all processors; 1000 millis = one CPU. */
      uint64_t rate = (uint64_t) plan->cpu_rate_millis * 10000
                      / (1000ull * (si.dwNumberOfProcessors ? si.dwNumberOfProcessors : 1));
      JOBOBJECT_CPU_RATE_CONTROL_INFORMATION cr;
      memset (&cr, 0, sizeof cr);
      cr.ControlFlags = JOB_OBJECT_CPU_RATE_CONTROL_ENABLE | JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP;
      cr.CpuRate = (DWORD) (rate < 1 ? 1 : rate > 10000 ? 10000 : rate);
      if (!SetInformationJobObject (job, JobObjectCpuRateControlInformation, &cr, sizeof cr))
        what = "job CPU rate";
    }
  if (what != NULL)
    {
      win_error (err, GetLastError (), what);
      CloseHandle (job);
      return NULL;
    }
  return job;
}

/* Only the standard handles cross into the payload, and only when they are
 * real: PROC_THREAD_ATTRIBUTE_HANDLE_LIST is Windows' close_range. */
static DWORD
std_handles (HANDLE out[3])
{
  DWORD n = 0;
  const DWORD ids[3] = { STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE };
  for (int i = 0; i < 3; i++)
    {
      HANDLE h = GetStdHandle (ids[i]);
      if (h == NULL || h == INVALID_HANDLE_VALUE)
        continue;
      bool dup = false;
      for (DWORD j = 0; j < n; j++)
        dup |= out[j] == h;
      if (dup || !SetHandleInformation (h, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT))
        continue;
      out[n++] = h;
    }
  return n;
}

int
securer_windows_run (const struct securer_jobobject_plan *plan, const char *cmdline, int *exit_code,
                     securer_err_t *err)
{
  struct container c;
  memset (&c, 0, sizeof c);
  HANDLE job = NULL, token = NULL;
  PROCESS_INFORMATION pi;
  memset (&pi, 0, sizeof pi);
  STARTUPINFOEXW si;
  memset (&si, 0, sizeof si);
  wchar_t *wcmd = to_wide (cmdline);
  wchar_t *wdir = to_wide_path (plan->private_dir);
  wchar_t *env = env_block (plan);
  int ret = -1;

  if (wcmd == NULL || wdir == NULL || env == NULL)
    {
      securer_error_set (err, EINVAL, "command line, directory or environment is not valid UTF-8");
      goto out;
    }
  if (plan->appcontainer && (container_create (plan, &c, err) < 0 || container_grant (plan, &c, err) < 0))
    goto out;
  if (!plan->appcontainer && (token = restricted_token (err)) == NULL)
    goto out;
  if ((job = job_create (plan, err)) == NULL)
    goto out;

  SIZE_T size = 0;
  InitializeProcThreadAttributeList (NULL, 2, 0, &size);
  si.lpAttributeList = HeapAlloc (GetProcessHeap (), 0, size);
  if (si.lpAttributeList == NULL || !InitializeProcThreadAttributeList (si.lpAttributeList, 2, 0, &size))
    {
      win_error (err, GetLastError (), "attribute list");
      goto out;
    }
  SECURITY_CAPABILITIES sc;
  memset (&sc, 0, sizeof sc);
  sc.AppContainerSid = c.sid;
  sc.Capabilities = c.n_caps ? c.caps : NULL;
  sc.CapabilityCount = c.n_caps;
  HANDLE inherit[3];
  DWORD n_inherit = std_handles (inherit);
  if ((plan->appcontainer
       && !UpdateProcThreadAttribute (si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES,
                                      &sc, sizeof sc, NULL, NULL))
      || (n_inherit > 0
          && !UpdateProcThreadAttribute (si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                                         inherit, n_inherit * sizeof (HANDLE), NULL, NULL)))
    {
      win_error (err, GetLastError (), "process attributes");
      goto out;
    }
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = GetStdHandle (STD_INPUT_HANDLE);
  si.StartupInfo.hStdOutput = GetStdHandle (STD_OUTPUT_HANDLE);
  si.StartupInfo.hStdError = GetStdHandle (STD_ERROR_HANDLE);

  /* Suspended: the limits must hold before the payload's first instruction. */
  DWORD cflags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
  BOOL created = token != NULL
                   ? CreateProcessAsUserW (token, NULL, wcmd, NULL, NULL, n_inherit > 0, cflags, env, wdir,
                                           &si.StartupInfo, &pi)
                   : CreateProcessW (NULL, wcmd, NULL, NULL, n_inherit > 0, cflags, env, wdir,
                                     &si.StartupInfo, &pi);
  if (!created)
    {
      win_error (err, GetLastError (), "CreateProcess");
      securer_error_set_status (err, SECURER_EXIT_CANNOT_EXEC);
      goto out;
    }
  if (!AssignProcessToJobObject (job, pi.hProcess))
    {
      win_error (err, GetLastError (), "AssignProcessToJobObject");
      TerminateProcess (pi.hProcess, SECURER_EXIT_SETUP);
      goto out;
    }
  if (ResumeThread (pi.hThread) == (DWORD) -1)
    {
      win_error (err, GetLastError (), "ResumeThread");
      TerminateJobObject (job, SECURER_EXIT_SETUP);
      goto out;
    }

  DWORD wait_ms = INFINITE;
  if (plan->timeout_ms)
    wait_ms = plan->timeout_ms >= INFINITE ? INFINITE - 1 : (DWORD) plan->timeout_ms;
  DWORD w = WaitForSingleObject (pi.hProcess, wait_ms);
  if (w == WAIT_TIMEOUT)
    {
      TerminateJobObject (job, SECURER_EXIT_TIMEOUT);
      WaitForSingleObject (pi.hProcess, INFINITE);
      *exit_code = SECURER_EXIT_TIMEOUT;
    }
  else if (w == WAIT_OBJECT_0)
    {
      DWORD code = 0;
      GetExitCodeProcess (pi.hProcess, &code);
      *exit_code = (int) code;
    }
  else
    {
      win_error (err, GetLastError (), "WaitForSingleObject");
      TerminateJobObject (job, SECURER_EXIT_SETUP);
      goto out;
    }
  ret = 0;

out:
  if (job != NULL)
    {
      /* Whatever the payload left running goes with the job. */
      TerminateJobObject (job, 0);
      CloseHandle (job);
    }
  if (token != NULL)
    CloseHandle (token);
  if (pi.hThread)
    CloseHandle (pi.hThread);
  if (pi.hProcess)
    CloseHandle (pi.hProcess);
  if (si.lpAttributeList)
    {
      DeleteProcThreadAttributeList (si.lpAttributeList);
      HeapFree (GetProcessHeap (), 0, si.lpAttributeList);
    }
  container_destroy (&c);
  free (env);
  free (wdir);
  free (wcmd);
  return ret;
}

#else
/* ISO C wants at least one declaration per translation unit. */
typedef int securer_launch_windows_unused;
#endif
