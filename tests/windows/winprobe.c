/* winprobe: run by securer-winrun under the Windows port's sandbox (on
 * Windows, or under Wine in `make check`), it tries one thing and reports
 * what Windows answered, so that tests/windows/test-wine.sh can assert it.
 *
 *   winprobe exit N            exits with N
 *   winprobe echo TEXT         TEXT on stdout;  winprobe err TEXT: on stderr
 *   winprobe env               the environment block, one NAME=value a line
 *   winprobe spawn             starts another winprobe: "spawn=ok" or "spawn=error N"
 *   winprobe grandchild F MS   starts "winprobe touch-later F MS", then waits forever
 *   winprobe touch-later F MS  creates file F after MS milliseconds
 *   winprobe alloc MB          commits MB MiB: "alloc=ok" or "alloc=error N"
 *   winprobe burn MS           spends MS milliseconds of CPU time: "burn=done" */
#ifndef UNICODE
#define UNICODE
#endif
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static int
start_self (const wchar_t *args)
{
  wchar_t self[MAX_PATH + 1];
  if (GetModuleFileNameW (NULL, self, MAX_PATH + 1) == 0)
    return (int) GetLastError ();
  wchar_t cmd[2 * MAX_PATH];
  swprintf (cmd, sizeof cmd / sizeof cmd[0], L"\"%ls\" %ls", self, args);
  STARTUPINFOW si;
  memset (&si, 0, sizeof si);
  si.cb = sizeof si;
  PROCESS_INFORMATION pi;
  if (!CreateProcessW (NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi))
    return (int) GetLastError ();
  CloseHandle (pi.hThread);
  CloseHandle (pi.hProcess);
  return 0;
}

static ULONGLONG
cpu_ms (void)
{
  FILETIME c, e, k, u;
  GetProcessTimes (GetCurrentProcess (), &c, &e, &k, &u);
  ULARGE_INTEGER uu = { .LowPart = u.dwLowDateTime, .HighPart = u.dwHighDateTime };
  return uu.QuadPart / 10000;
}

int wmain (int argc, wchar_t **argv);

int
wmain (int argc, wchar_t **argv)
{
  if (argc < 2)
    return 2;
  const wchar_t *what = argv[1];
  const wchar_t *a = argc > 2 ? argv[2] : L"";
  const wchar_t *b = argc > 3 ? argv[3] : L"0";
  if (wcscmp (what, L"exit") == 0)
    return _wtoi (a);
  if (wcscmp (what, L"echo") == 0 || wcscmp (what, L"err") == 0)
    {
      fwprintf (wcscmp (what, L"echo") == 0 ? stdout : stderr, L"%ls\n", a);
      return 0;
    }
  if (wcscmp (what, L"env") == 0)
    {
      wchar_t *env = GetEnvironmentStringsW ();
      for (wchar_t *e = env; e && *e; e += wcslen (e) + 1)
        wprintf (L"%ls\n", e);
      FreeEnvironmentStringsW (env);
      return 0;
    }
  if (wcscmp (what, L"spawn") == 0)
    {
      int e = start_self (L"exit 0");
      if (e == 0)
        printf ("spawn=ok\n");
      else
        printf ("spawn=error %d\n", e);
      return 0;
    }
  if (wcscmp (what, L"grandchild") == 0)
    {
      wchar_t args[MAX_PATH + 64];
      swprintf (args, sizeof args / sizeof args[0], L"touch-later \"%ls\" %ls", a, b);
      int e = start_self (args);
      printf ("grandchild=%s\n", e == 0 ? "started" : "error");
      fflush (stdout);
      Sleep (INFINITE);
      return 0;
    }
  if (wcscmp (what, L"touch-later") == 0)
    {
      Sleep ((DWORD) _wtoi (b));
      HANDLE h = CreateFileW (a, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
      if (h != INVALID_HANDLE_VALUE)
        CloseHandle (h);
      return 0;
    }
  if (wcscmp (what, L"alloc") == 0)
    {
      SIZE_T n = (SIZE_T) _wtoi (a) << 20;
      char *p = VirtualAlloc (NULL, n, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
      if (p == NULL)
        printf ("alloc=error %lu\n", (unsigned long) GetLastError ());
      else
        {
          memset (p, 1, n);
          printf ("alloc=ok\n");
        }
      return 0;
    }
  if (wcscmp (what, L"burn") == 0)
    {
      ULONGLONG until = cpu_ms () + (ULONGLONG) _wtoi (a);
      volatile unsigned long x = 0;
      while (cpu_ms () < until)
        x++;
      printf ("burn=done\n");
      return 0;
    }
  return 2;
}
