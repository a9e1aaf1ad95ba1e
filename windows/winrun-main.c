/* securer-winrun: runs one command in the Windows sandbox, for trying the
 * port on a Windows host until the policy parser builds there.  The policy
 * is given as options and turned into the same IR a policy file yields.
 *
 *   securer-winrun [--cpu S] [--memory BYTES] [--nproc N] [--timeout-ms MS]
 *                  [--job-memory BYTES] [--network none|host]
 *                  [--ro PATH]... [--rw PATH]... [--keep NAME]...
 *                  [--strict] [--accept-weaker] -- PROGRAM [ARG]...
 *
 * Exit status: the command's, 124 on timeout, 125 when the sandbox cannot
 * be set up or the port cannot enforce what is asked. */
#ifdef _WIN32

#ifndef UNICODE
#define UNICODE
#endif
#include <windows.h>
#include <shellapi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/ports.h"
#include "securer/sandbox.h"

static char *
to_utf8 (const wchar_t *w)
{
  int n = WideCharToMultiByte (CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
  char *s = n > 0 ? malloc ((size_t) n) : NULL;
  if (s != NULL)
    WideCharToMultiByte (CP_UTF8, 0, w, -1, s, n, NULL, NULL);
  return s;
}

/* Quotes one argument as CommandLineToArgvW will split it back: backslashes
 * double only before a quote. */
static void
append_arg (char **cmd, size_t *len, const char *arg)
{
  size_t need = *len + 2 * strlen (arg) + 4;
  *cmd = realloc (*cmd, need);
  char *p = *cmd + *len;
  if (*len)
    *p++ = ' ';
  *p++ = '"';
  for (const char *c = arg;; c++)
    {
      size_t bs = 0;
      while (*c == '\\')
        bs++, c++;
      if (*c == '\0')
        {
          for (size_t i = 0; i < 2 * bs; i++)
            *p++ = '\\';
          break;
        }
      for (size_t i = 0; i < (*c == '"' ? 2 * bs + 1 : bs); i++)
        *p++ = '\\';
      *p++ = *c;
    }
  *p++ = '"';
  *p = '\0';
  *len = (size_t) (p - *cmd);
}

/* Removes the private directory and what the payload left in it. */
static void
remove_tree (const wchar_t *dir)
{
  wchar_t pattern[MAX_PATH + 4];
  swprintf (pattern, MAX_PATH + 4, L"%ls\\*", dir);
  WIN32_FIND_DATAW fd;
  HANDLE h = FindFirstFileW (pattern, &fd);
  if (h != INVALID_HANDLE_VALUE)
    {
      do
        {
          if (wcscmp (fd.cFileName, L".") == 0 || wcscmp (fd.cFileName, L"..") == 0)
            continue;
          wchar_t path[MAX_PATH + 4];
          swprintf (path, MAX_PATH + 4, L"%ls\\%ls", dir, fd.cFileName);
          if ((fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
              && !(fd.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT))
            remove_tree (path);
          else
            {
              SetFileAttributesW (path, FILE_ATTRIBUTE_NORMAL);
              if (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
                RemoveDirectoryW (path);
              else
                DeleteFileW (path);
            }
        }
      while (FindNextFileW (h, &fd));
      FindClose (h);
    }
  RemoveDirectoryW (dir);
}

static int
usage (void)
{
  fprintf (stderr, "usage: securer-winrun [--cpu S] [--memory BYTES] [--job-memory BYTES] "
                   "[--nproc N] [--timeout-ms MS] [--network none|host] [--ro PATH]... "
                   "[--rw PATH]... [--keep NAME]... [--strict] [--accept-weaker] -- PROGRAM [ARG]...\n");
  return SECURER_EXIT_SETUP;
}

int
main (void)
{
  int argc = 0;
  wchar_t **wargv = CommandLineToArgvW (GetCommandLineW (), &argc);
  if (wargv == NULL)
    return usage ();
  char **argv = calloc ((size_t) argc + 1, sizeof *argv);
  for (int i = 0; i < argc; i++)
    argv[i] = to_utf8 (wargv[i]);

  struct securer_policy p;
  memset (&p, 0, sizeof p);
  p.name = (char *) "winrun";
  p.namespaces = SECURER_NS_USER | SECURER_NS_NET | SECURER_NS_IPC;
  p.host_uid = p.host_gid = -1;
  p.network = SECURER_NET_NONE;
  struct securer_mount *mounts = calloc ((size_t) argc, sizeof *mounts);
  char **keep = calloc ((size_t) argc, sizeof *keep);
  p.mounts = mounts;
  p.env_keep = keep;
  unsigned flags = 0;
  int i = 1;
  for (; i < argc; i++)
    {
      const char *a = argv[i];
      const char *v = i + 1 < argc ? argv[i + 1] : NULL;
      struct securer_limits *l = &p.limits;
      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      else if (strcmp (a, "--strict") == 0)
        flags |= SECURER_PORT_STRICT;
      else if (strcmp (a, "--accept-weaker") == 0)
        flags |= SECURER_PORT_ACCEPT_WEAKER;
      else if (v == NULL)
        return usage ();
      else if (strcmp (a, "--cpu") == 0)
        l->rlimit[SECURER_RLIMIT_CPU] = (struct securer_rlimit) { true, strtoull (v, NULL, 10), strtoull (v, NULL, 10) }, i++;
      else if (strcmp (a, "--memory") == 0)
        l->rlimit[SECURER_RLIMIT_AS] = (struct securer_rlimit) { true, strtoull (v, NULL, 10), strtoull (v, NULL, 10) }, i++;
      else if (strcmp (a, "--nproc") == 0)
        l->rlimit[SECURER_RLIMIT_NPROC] = (struct securer_rlimit) { true, strtoull (v, NULL, 10), strtoull (v, NULL, 10) }, i++;
      else if (strcmp (a, "--job-memory") == 0)
        l->cgroup_memory = strtoull (v, NULL, 10), i++;
      else if (strcmp (a, "--timeout-ms") == 0)
        l->timeout_ms = strtoull (v, NULL, 10), i++;
      else if (strcmp (a, "--network") == 0 && strcmp (v, "host") == 0)
        p.network = SECURER_NET_HOST, i++;
      else if (strcmp (a, "--network") == 0 && strcmp (v, "none") == 0)
        p.network = SECURER_NET_NONE, i++;
      else if (strcmp (a, "--ro") == 0 || strcmp (a, "--rw") == 0)
        {
          mounts[p.n_mounts++] = (struct securer_mount) {
            .type = a[3] == 'o' ? SECURER_MOUNT_RO : SECURER_MOUNT_RW,
            .source = (char *) v, .dest = (char *) v,
          };
          i++;
        }
      else if (strcmp (a, "--keep") == 0)
        keep[p.n_env_keep++] = (char *) v, i++;
      else
        return usage ();
    }
  if (i >= argc)
    return usage ();

  char *cmd = NULL;
  size_t len = 0;
  for (int j = i; j < argc; j++)
    append_arg (&cmd, &len, argv[j]);

  /* The caller's environment, for the names the policy keeps. */
  wchar_t *wenv = GetEnvironmentStringsW ();
  size_t n_env = 0;
  for (wchar_t *e = wenv; e && *e; e += wcslen (e) + 1)
    n_env++;
  char **env = calloc (n_env + 1, sizeof *env);
  n_env = 0;
  for (wchar_t *e = wenv; e && *e; e += wcslen (e) + 1)
    env[n_env++] = to_utf8 (e);
  FreeEnvironmentStringsW (wenv);

  /* The private directory: %TEMP%\securer-<pid>-<tick>. */
  wchar_t tmp[MAX_PATH + 1], dir[MAX_PATH + 1];
  DWORD n = GetTempPathW (MAX_PATH + 1, tmp);
  if (n == 0 || n > MAX_PATH)
    return usage ();
  swprintf (dir, MAX_PATH + 1, L"%lssecurer-%lu-%llx", tmp, (unsigned long) GetCurrentProcessId (),
            (unsigned long long) GetTickCount64 ());
  if (!CreateDirectoryW (dir, NULL))
    {
      fprintf (stderr, "securer-winrun: cannot create the private directory (error %lu)\n",
               (unsigned long) GetLastError ());
      return SECURER_EXIT_SETUP;
    }
  char *private_dir = to_utf8 (dir);

  securer_err_t err = NULL;
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  int status = SECURER_EXIT_SETUP;
  const char *no_container = NULL;
  bool have_container = securer_windows_appcontainer_available (&no_container);
  if (securer_jobobject_plan (&p, private_dir, env, &plan, &rep, &err) == 0
      && (have_container || securer_jobobject_without_appcontainer (&p, &plan, &rep, no_container, &err) == 0))
    {
      char *text = securer_port_report_format (&rep);
      if (text)
        fputs (text, stderr);
      free (text);
      int code = 0;
      if (securer_port_check (&rep, flags, &err) == 0
          && securer_windows_run (&plan, cmd, &code, &err) == 0)
        status = code;
    }
  if (err != NULL)
    {
      fprintf (stderr, "securer-winrun: %s\n", securer_error_message (err));
      securer_error_free (&err);
    }
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
  remove_tree (dir);
  free (private_dir);
  for (size_t k = 0; k < n_env; k++)
    free (env[k]);
  free (env);
  free (cmd);
  for (int k = 0; k < argc; k++)
    free (argv[k]);
  free (argv);
  free (mounts);
  free (keep);
  LocalFree (wargv);
  return status;
}

#else
typedef int securer_winrun_unused;
#endif
