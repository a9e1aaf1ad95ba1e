/* Runs inside a sandbox and reports what it observes, one key=value per
 * line, so tests can assert on facts seen from the inside.  Commands are
 * taken from argv in order:
 *
 *   info               ids, maps, caps, limits, env, fds, session, mounts, ...
 *   write PATH         create/truncate PATH for writing   -> write=OK|ENAME
 *   open PATH          open PATH read-only                 -> open=OK|ENAME
 *   exec PATH          fork + execve PATH                  -> exec=OK|ENAME
 *   connect IP PORT    TCP connect                         -> connect=OK|ENAME
 *   udp IP PORT        UDP socket + sendto (a DNS query's way) -> udp=OK|ENAME
 *   tunnel VIA HOST PORT N
 *                      through the proxy of `network allow` on 127.0.0.1:3128
 *                      (VIA connect: HTTP CONNECT; socks: SOCKS5 with the name),
 *                      N bytes of every value 0..255 out and back from an echo
 *                      server                              -> tunnel=OK|EXXX|reply:TEXT
 *   hold N SEC         N connections to the proxy, held SEC seconds, then closed
 *                                                          -> hold=K (connected)
 *   kill PID SIG       kill(2)                             -> kill=OK|ENAME
 *   setuid UID         setuid(2)                           -> setuid=OK|ENAME
 *   ptrace             ptrace(PTRACE_TRACEME)               -> ptrace=OK|ENAME
 *   sleep SEC          sleep
 *   orphan SEC         fork a child that sleeps SEC and is never waited for
 *   exit N             exit with status N
 *   raise SIG          die of signal SIG
 *   echo TEXT          print TEXT
 *   marker TEXT        nothing (lets a test find its processes in /proc)
 *
 * Only libc, linked statically, so it runs in any sandbox view. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void result (const char *what, int ok, int err);

/* A connected socket to the proxy of `network allow`, or -1. */
static int
proxy_socket (void)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (3128) };
  inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s >= 0 && connect (s, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (s);
      errno = e;
      return -1;
    }
  return s;
}

static int
write_all (int fd, const void *buf, size_t n)
{
  const char *p = buf;
  while (n > 0)
    {
      ssize_t w = write (fd, p, n);
      if (w <= 0)
        return -1;
      p += w;
      n -= (size_t) w;
    }
  return 0;
}

static int
read_exact (int fd, void *buf, size_t n)
{
  char *p = buf;
  while (n > 0)
    {
      ssize_t r = read (fd, p, n);
      if (r <= 0)
        return -1;
      p += r;
      n -= (size_t) r;
    }
  return 0;
}

static void
tunnel (const char *via, const char *host, const char *port, size_t n)
{
  int s = proxy_socket ();
  if (s < 0)
    {
      result ("tunnel", 0, errno);
      return;
    }
  char head[600];
  if (strcmp (via, "socks") == 0)
    {
      unsigned char g[3] = { 5, 1, 0 }, r[2];
      size_t hl = strlen (host);
      unsigned char req[300] = { 5, 1, 0, 3, (unsigned char) hl };
      memcpy (req + 5, host, hl);
      int pn = atoi (port);
      req[5 + hl] = (unsigned char) (pn >> 8);
      req[6 + hl] = (unsigned char) pn;
      unsigned char rep[10];
      if (write_all (s, g, 3) < 0 || read_exact (s, r, 2) < 0 || write_all (s, req, 7 + hl) < 0
          || read_exact (s, rep, 10) < 0)
        {
          printf ("tunnel=reply:socks-eof\n");
          close (s);
          return;
        }
      if (rep[1] != 0)
        {
          printf ("tunnel=reply:socks-%u\n", rep[1]);
          close (s);
          return;
        }
    }
  else
    {
      int hn = snprintf (head, sizeof head, "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port, host, port);
      if (write_all (s, head, (size_t) hn) < 0)
        {
          result ("tunnel", 0, errno);
          close (s);
          return;
        }
      /* The reply's head, byte by byte up to the empty line. */
      size_t got = 0;
      while (got + 1 < sizeof head && read (s, head + got, 1) == 1)
        {
          got++;
          if (got >= 4 && memcmp (head + got - 4, "\r\n\r\n", 4) == 0)
            break;
        }
      head[got] = '\0';
      if (strncmp (head, "HTTP/1.1 200", 12) != 0)
        {
          char *eol = strpbrk (head, "\r\n");
          if (eol)
            *eol = '\0';
          printf ("tunnel=reply:%s\n", head);
          close (s);
          return;
        }
    }
  unsigned char *out = malloc (n), *back = malloc (n);
  for (size_t k = 0; k < n; k++)
    out[k] = (unsigned char) (k * 7 + k / 256);
  int ok = write_all (s, out, n) == 0 && read_exact (s, back, n) == 0 && memcmp (out, back, n) == 0;
  result ("tunnel", ok, errno ? errno : EIO);
  free (out);
  free (back);
  close (s);
}

static const char *
ename (int e)
{
  const char *n = strerrorname_np (e);
  return n ? n : "E?";
}

static void
result (const char *key, int ok, int e)
{
  printf ("%s=%s\n", key, ok ? "OK" : ename (e));
}

/* Prints a file's lines joined by ';' with runs of blanks squeezed. */
static void
print_file_joined (const char *key, const char *path)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      printf ("%s=!%s\n", key, ename (errno));
      return;
    }
  printf ("%s=", key);
  char line[512];
  int first = 1;
  while (fgets (line, sizeof line, f) != NULL)
    {
      if (!first)
        putchar (';');
      first = 0;
      int blank = 1;
      for (char *c = line; *c && *c != '\n'; c++)
        {
          if (isspace ((unsigned char) *c))
            {
              if (!blank)
                putchar (' ');
              blank = 1;
            }
          else
            {
              putchar (*c);
              blank = 0;
            }
        }
    }
  putchar ('\n');
  fclose (f);
}

static void
print_status_fields (void)
{
  static const char *keys[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                                "Seccomp", "Groups", "NSpid" };
  FILE *f = fopen ("/proc/self/status", "re");
  if (f == NULL)
    {
      printf ("status=!%s\n", ename (errno));
      return;
    }
  char line[512];
  while (fgets (line, sizeof line, f) != NULL)
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
      {
        size_t l = strlen (keys[i]);
        if (strncmp (line, keys[i], l) == 0 && line[l] == ':')
          {
            char *v = line + l + 1;
            while (*v == ' ' || *v == '\t')
              v++;
            v[strcspn (v, "\n")] = '\0';
            for (char *c = v; *c; c++)
              if (*c == '\t')
                *c = ' ';
            printf ("%s=%s\n", keys[i], v);
          }
      }
  fclose (f);
}

static void
print_rlimits (void)
{
  static const struct { const char *name; int res; } lim[] = {
    { "cpu", RLIMIT_CPU }, { "as", RLIMIT_AS }, { "fsize", RLIMIT_FSIZE },
    { "nproc", RLIMIT_NPROC }, { "nofile", RLIMIT_NOFILE }, { "stack", RLIMIT_STACK },
    { "core", RLIMIT_CORE }, { "memlock", RLIMIT_MEMLOCK },
    { "sigpending", RLIMIT_SIGPENDING },
  };
  for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
    {
      struct rlimit r;
      if (getrlimit (lim[i].res, &r) < 0)
        continue;
      printf ("rlimit.%s=", lim[i].name);
      if (r.rlim_cur == RLIM_INFINITY)
        printf ("inf:");
      else
        printf ("%llu:", (unsigned long long) r.rlim_cur);
      if (r.rlim_max == RLIM_INFINITY)
        printf ("inf\n");
      else
        printf ("%llu\n", (unsigned long long) r.rlim_max);
    }
}

static void
print_fds (void)
{
  printf ("fds=");
  int first = 1;
  for (int fd = 0; fd < 4096; fd++)
    if (fcntl (fd, F_GETFD) >= 0)
      {
        printf ("%s%d", first ? "" : ",", fd);
        first = 0;
      }
  putchar ('\n');
}

static void
print_mounts (void)
{
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  if (f == NULL)
    {
      printf ("mounts=!%s\n", ename (errno));
      return;
    }
  char line[4096];
  while (fgets (line, sizeof line, f) != NULL)
    {
      /* id parent major:minor root mountpoint options ... */
      char mp[1024], opts[512];
      if (sscanf (line, "%*d %*d %*s %*s %1023s %511s", mp, opts) == 2)
        printf ("mount=%s %s\n", mp, opts);
    }
  fclose (f);
}

static void
print_netifs (void)
{
  struct if_nameindex *ifs = if_nameindex ();
  printf ("netifs=");
  if (ifs == NULL)
    {
      printf ("!%s\n", ename (errno));
      return;
    }
  for (struct if_nameindex *i = ifs; i->if_index != 0; i++)
    {
      int s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      struct ifreq r;
      memset (&r, 0, sizeof r);
      snprintf (r.ifr_name, sizeof r.ifr_name, "%s", i->if_name);
      int up = s >= 0 && ioctl (s, SIOCGIFFLAGS, &r) == 0 && (r.ifr_flags & IFF_UP);
      if (s >= 0)
        close (s);
      printf ("%s%s:%s", i == ifs ? "" : ",", i->if_name, up ? "up" : "down");
    }
  putchar ('\n');
  if_freenameindex (ifs);
}

static void
info (void)
{
  printf ("pid=%d\nppid=%d\nsid=%d\npgid=%d\n", (int) getpid (), (int) getppid (), (int) getsid (0),
          (int) getpgid (0));
  printf ("uid=%d\neuid=%d\ngid=%d\negid=%d\n", (int) getuid (), (int) geteuid (), (int) getgid (),
          (int) getegid ());
  char host[256] = "";
  gethostname (host, sizeof host - 1);
  printf ("hostname=%s\n", host);
  char cwd[1024];
  printf ("cwd=%s\n", getcwd (cwd, sizeof cwd) ? cwd : "?");
  printf ("dumpable=%d\n", prctl (PR_GET_DUMPABLE, 0, 0, 0, 0));
  print_file_joined ("uid_map", "/proc/self/uid_map");
  print_file_joined ("gid_map", "/proc/self/gid_map");
  print_file_joined ("setgroups", "/proc/self/setgroups");
  print_status_fields ();
  print_rlimits ();
  int n = 0;
  for (char **e = environ; *e != NULL; e++, n++)
    printf ("env.%s\n", *e);
  printf ("env_count=%d\n", n);
  print_fds ();
  print_netifs ();
  print_mounts ();
}

static void
try_exec (const char *path)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      result ("exec", 0, errno);
      return;
    }
  fflush (stdout);
  pid_t c = fork ();
  if (c < 0)
    {
      result ("exec", 0, errno);
      return;
    }
  if (c == 0)
    {
      char *argv[] = { (char *) path, NULL };
      int devnull = open ("/dev/null", O_WRONLY);
      if (devnull >= 0)
        {
          dup2 (devnull, 1);
          dup2 (devnull, 2);
        }
      execve (path, argv, environ);
      int e = errno;
      (void) !write (p[1], &e, sizeof e);
      _exit (127);
    }
  close (p[1]);
  int e = 0;
  ssize_t r = read (p[0], &e, sizeof e);
  close (p[0]);
  waitpid (c, NULL, 0);
  result ("exec", r != (ssize_t) sizeof e, e);
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++)
    {
      const char *c = argv[i];
      const char *a1 = i + 1 < argc ? argv[i + 1] : NULL;
      const char *a2 = i + 2 < argc ? argv[i + 2] : NULL;
      if (strcmp (c, "info") == 0)
        info ();
      else if (strcmp (c, "write") == 0 && a1)
        {
          int fd = open (a1, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
          int e = errno;
          if (fd >= 0)
            close (fd);
          result ("write", fd >= 0, e);
          i++;
        }
      else if (strcmp (c, "open") == 0 && a1)
        {
          int fd = open (a1, O_RDONLY | O_CLOEXEC);
          int e = errno;
          if (fd >= 0)
            close (fd);
          result ("open", fd >= 0, e);
          i++;
        }
      else if (strcmp (c, "exec") == 0 && a1)
        {
          try_exec (a1);
          i++;
        }
      else if (strcmp (c, "connect") == 0 && a1 && a2)
        {
          struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (a2)) };
          inet_pton (AF_INET, a1, &sa.sin_addr);
          int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          int ok = s >= 0 && connect (s, (struct sockaddr *) &sa, sizeof sa) == 0;
          int e = errno;
          if (s >= 0)
            close (s);
          result ("connect", ok, e);
          i += 2;
        }
      else if (strcmp (c, "udp") == 0 && a1 && a2)
        {
          struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (a2)) };
          inet_pton (AF_INET, a1, &sa.sin_addr);
          int s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
          int ok = s >= 0 && sendto (s, "q", 1, 0, (struct sockaddr *) &sa, sizeof sa) == 1;
          int e = errno;
          if (s >= 0)
            close (s);
          result ("udp", ok, e);
          i += 2;
        }
      else if (strcmp (c, "tunnel") == 0 && a1 && a2 && i + 4 < argc)
        {
          tunnel (a1, a2, argv[i + 3], (size_t) atol (argv[i + 4]));
          i += 4;
        }
      else if (strcmp (c, "hold") == 0 && a1 && a2)
        {
          int n = atoi (a1), k = 0;
          int *held = calloc ((size_t) (n > 0 ? n : 1), sizeof *held);
          for (int j = 0; j < n; j++)
            {
              int s = proxy_socket ();
              if (s >= 0)
                held[k++] = s;
            }
          printf ("hold=%d\n", k);
          fflush (stdout);
          sleep ((unsigned) atoi (a2));
          for (int j = 0; j < k; j++)
            close (held[j]);
          free (held);
          /* The proxy sees the ends before the next command connects. */
          usleep (200 * 1000);
          i += 2;
        }
      else if (strcmp (c, "kill") == 0 && a1 && a2)
        {
          int ok = kill ((pid_t) atoi (a1), atoi (a2)) == 0;
          result ("kill", ok, errno);
          i += 2;
        }
      else if (strcmp (c, "setuid") == 0 && a1)
        {
          int ok = setuid ((uid_t) atoi (a1)) == 0;
          result ("setuid", ok, errno);
          i++;
        }
      else if (strcmp (c, "ptrace") == 0)
        {
          int ok = ptrace (PTRACE_TRACEME, 0, NULL, NULL) == 0;
          result ("ptrace", ok, errno);
        }
      else if (strcmp (c, "sleep") == 0 && a1)
        {
          sleep ((unsigned) atoi (a1));
          i++;
        }
      else if (strcmp (c, "orphan") == 0 && a1)
        {
          fflush (stdout);
          if (fork () == 0)
            {
              setsid ();
              sleep ((unsigned) atoi (a1));
              _exit (0);
            }
          i++;
        }
      else if (strcmp (c, "exit") == 0 && a1)
        exit (atoi (a1));
      else if (strcmp (c, "raise") == 0 && a1)
        {
          int s = atoi (a1);
          fflush (stdout);
          signal (s, SIG_DFL);
          raise (s);
          _exit (99);
        }
      else if (strcmp (c, "echo") == 0 && a1)
        {
          printf ("%s\n", a1);
          i++;
        }
      else if (strcmp (c, "marker") == 0 && a1)
        i++;
      else
        {
          fprintf (stderr, "probe: bad command '%s'\n", c);
          return 2;
        }
    }
  return 0;
}
