/* The filesystem view (mount.c): a real child in real user+mount+pid
 * namespaces assembles the policy's root and reports from inside what it
 * can and cannot do. */
#include <config.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>

#include "rootfs-harness.h"

#define MAX_MOUNTS 32

struct pol {
  struct securer_policy p;
  struct securer_mount m[MAX_MOUNTS];
  char *masks[8];
};

static void
pol_init (struct pol *x)
{
  memset (x, 0, sizeof *x);
  x->p.name = (char *) "test";
  x->p.mounts = x->m;
  x->p.masks = x->masks;
}

static struct securer_mount *
add (struct pol *x, enum securer_mount_type t, const char *src, const char *dest)
{
  cr_assert_lt (x->p.n_mounts, MAX_MOUNTS);
  struct securer_mount *m = &x->m[x->p.n_mounts++];
  m->type = t;
  m->source = (char *) src;
  m->dest = (char *) dest;
  m->noexec = t == SECURER_MOUNT_RW || t == SECURER_MOUNT_TMPFS;
  m->loc.file = (char *) "test.policy";
  m->loc.line = (unsigned) x->p.n_mounts + 10;
  return m;
}

/* A root that can run programs from the host's /usr. */
static void
pol_base (struct pol *x)
{
  pol_init (x);
  add (x, SECURER_MOUNT_RO, "/usr", "/usr");
  add (x, SECURER_MOUNT_SYMLINK, "usr/bin", "/bin");
  add (x, SECURER_MOUNT_SYMLINK, "usr/lib", "/lib");
  add (x, SECURER_MOUNT_SYMLINK, "usr/lib64", "/lib64");
  add (x, SECURER_MOUNT_PROC, NULL, "/proc");
  add (x, SECURER_MOUNT_DEV, NULL, "/dev");
  struct securer_mount *t = add (x, SECURER_MOUNT_TMPFS, NULL, "/tmp");
  t->size = 1 << 20;
  t->mode = 01777;
}

static unsigned run_uid;

static char *
run (struct pol *x, void (*inside) (void *), void *arg)
{
  struct harness_steps s = { .policy = &x->p, .rootfs = true, .inside = inside, .arg = arg,
                             .uid = run_uid };
  char *facts = harness_run (&s);
  cr_assert_not_null (facts, "could not create the namespaces");
  return facts;
}

/* A host directory the sandbox's (mapped) user may write to. */
static char *
host_dir (void)
{
  char *d = strdup ("/tmp/securer-test-XXXXXX");
  cr_assert_not_null (mkdtemp (d));
  cr_assert_eq (chmod (d, 0755), 0);
  if (geteuid () == 0)
    cr_assert_eq (chown (d, harness_host_uid (), harness_host_gid ()), 0);
  return d;
}

static void
rm_rf (const char *d)
{
  /* Test fixtures only: a flat directory of files, links and empty dirs. */
  DIR *dir = opendir (d);
  if (dir == NULL)
    return;
  struct dirent *e;
  while ((e = readdir (dir)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      if (unlinkat (dirfd (dir), e->d_name, 0) < 0)
        unlinkat (dirfd (dir), e->d_name, AT_REMOVEDIR);
    }
  closedir (dir);
  rmdir (d);
}

static int
try_write (const char *path, size_t bytes)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0)
    return -1;
  char block[4096];
  memset (block, 'x', sizeof block);
  size_t done = 0;
  while (done < bytes)
    {
      ssize_t n = write (fd, block, sizeof block);
      if (n < 0)
        {
          int e = errno;
          close (fd);
          errno = e;
          return -1;
        }
      done += (size_t) n;
    }
  close (fd);
  return 0;
}

/* Status of running argv: "exit:N", "signal:N" or the execve errno name. */
static void
fact_exec (const char *key, const char *path)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return;
  pid_t pid = fork ();
  if (pid == 0)
    {
      char *argv[] = { (char *) path, NULL };
      char *envp[] = { NULL };
      execve (path, argv, envp);
      int e = errno;
      ssize_t w = write (p[1], &e, sizeof e);
      (void) w;
      _exit (127);
    }
  close (p[1]);
  int e = 0;
  ssize_t n = read (p[0], &e, sizeof e);
  close (p[0]);
  int st;
  waitpid (pid, &st, 0);
  if (n == sizeof e)
    fact (key, "%s", errname (-1, e));
  else if (WIFEXITED (st))
    fact (key, "exit:%d", WEXITSTATUS (st));
  else
    fact (key, "signal:%d", WTERMSIG (st));
}

/* ---- the basic view ------------------------------------------------------ */

static void
inside_basic (void *arg)
{
  (void) arg;
  fact ("pid", "%d", (int) getpid ());
  fact ("uid", "%u", (unsigned) getuid ());
  fact_rc ("write_usr", try_write ("/usr/securer-test", 1));
  fact_rc ("mkdir_root", mkdir ("/newdir", 0755));
  fact_rc ("write_tmp", try_write ("/tmp/small", 4096));
  fact_rc ("write_tmp_past_size", try_write ("/tmp/big", 2 << 20));
  unlink ("/tmp/big");
  fact_exec ("exec_usr", "/usr/bin/true");
  fact_exec ("exec_via_symlink", "/bin/true");
  /* A copy of a real program on the noexec tmpfs. */
  int in = open ("/usr/bin/true", O_RDONLY | O_CLOEXEC);
  int o = open ("/tmp/true", O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
  char buf[65536];
  ssize_t n;
  while (in >= 0 && o >= 0 && (n = read (in, buf, sizeof buf)) > 0)
    if (write (o, buf, (size_t) n) != n)
      break;
  close (in);
  close (o);
  fact_exec ("exec_tmp", "/tmp/true");

  struct stat st;
  fact ("keys_is_empty_file", "%d",
        stat ("/proc/keys", &st) == 0 && S_ISREG (st.st_mode) && st.st_size == 0);
  fact_rc ("keys_write", try_write ("/proc/keys", 1));
  int fd = open ("/proc/timer_list", O_RDONLY | O_CLOEXEC);
  fact ("timer_list_bytes", "%zd", fd < 0 ? (ssize_t) -1 : read (fd, buf, sizeof buf));
  if (fd >= 0)
    close (fd);
  fd = open ("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
  fact_rc ("write_sysrq", fd);
  if (fd >= 0)
    close (fd);
  /* A sysctl of the sandbox's own network namespace: its root owns it, so
   * only the read-only bind stops the write. */
  fd = open ("/proc/sys/net/ipv4/ping_group_range", O_WRONLY | O_CLOEXEC);
  fact_rc ("write_proc_sys", fd);
  if (fd >= 0)
    close (fd);
  if (access ("/proc/acpi", F_OK) == 0)
    {
      DIR *d = opendir ("/proc/acpi");
      int count = 0;
      struct dirent *e;
      while (d && (e = readdir (d)) != NULL)
        if (e->d_name[0] != '.')
          count++;
      if (d)
        closedir (d);
      fact ("acpi_entries", "%d", count);
      fact_rc ("acpi_create", try_write ("/proc/acpi/x", 1));
    }
  fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  fact_rc ("proc_status", fd);
  if (fd >= 0)
    close (fd);

  /* /dev: only the minimal set. */
  DIR *d = opendir ("/dev");
  char names[1024] = "";
  struct dirent *e;
  int count = 0;
  while (d && (e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      count++;
  if (d)
    closedir (d);
  fact ("dev_entries", "%d", count);
  const char *nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
  for (size_t i = 0; i < 6; i++)
    {
      char p[32];
      snprintf (p, sizeof p, "/dev/%s", nodes[i]);
      if (stat (p, &st) == 0 && S_ISCHR (st.st_mode))
        {
          strcat (names, nodes[i]);
          strcat (names, ",");
        }
    }
  fact ("dev_nodes", "%s", names);
  fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  fact ("devnull_write", "%s", fd >= 0 && write (fd, "x", 1) == 1 ? "OK" : errname (-1, errno));
  if (fd >= 0)
    close (fd);
  fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
  fact ("urandom_read", "%s", fd >= 0 && read (fd, buf, 16) == 16 ? "OK" : errname (-1, errno));
  if (fd >= 0)
    close (fd);
  fd = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  fact_rc ("ptmx_open", fd);
  if (fd >= 0)
    close (fd);
  fact_rc ("write_shm", try_write ("/dev/shm/x", 4096));
  fact_rc ("write_dev", try_write ("/dev/newnode", 1));
  char link[64] = "";
  ssize_t ln = readlink ("/dev/fd", link, sizeof link - 1);
  link[ln > 0 ? ln : 0] = '\0';
  fact ("dev_fd", "%s", link);
  fact_rc ("dev_stdout_access", access ("/dev/stdout", F_OK));

  /* Mount table: only ours, nothing of the host's. */
  FILE *mi = fopen ("/proc/self/mountinfo", "re");
  char line[1024];
  char points[2048] = "";
  int nmounts = 0;
  while (mi && fgets (line, sizeof line, mi))
    {
      char mp[512];
      if (sscanf (line, "%*s %*s %*s %*s %511s", mp) == 1)
        {
          nmounts++;
          if (strlen (points) + strlen (mp) + 2 < sizeof points)
            {
              strcat (points, mp);
              strcat (points, " ");
            }
        }
    }
  if (mi)
    fclose (mi);
  fact ("mounts", "%s", points);
  struct statvfs sv;
  fact ("root_ro", "%d", statvfs ("/", &sv) == 0 && (sv.f_flag & ST_RDONLY) != 0);
  fact ("usr_nosuid", "%d", statvfs ("/usr", &sv) == 0 && (sv.f_flag & ST_NOSUID) != 0);
  fact ("tmp_nodev", "%d", statvfs ("/tmp", &sv) == 0 && (sv.f_flag & ST_NODEV) != 0);
  char cwd[256];
  fact ("cwd", "%s", getcwd (cwd, sizeof cwd) ? cwd : "?");
}

static void
check_basic_view (void)
{
  struct pol x;
  pol_base (&x);
  char *f = run (&x, inside_basic, NULL);
  cr_assert_str_eq (get_fact (f, "setup"), "ok", "%s", f);
  cr_assert_str_eq (get_fact (f, "pid"), "1");
  char uid[16];
  snprintf (uid, sizeof uid, "%u", run_uid);
  cr_assert_str_eq (get_fact (f, "uid"), uid);
  cr_assert_str_eq (get_fact (f, "write_usr"), "EROFS");
  cr_assert_str_eq (get_fact (f, "mkdir_root"), "EROFS");
  cr_assert_str_eq (get_fact (f, "write_tmp"), "OK");
  cr_assert_str_eq (get_fact (f, "write_tmp_past_size"), "ENOSPC");
  cr_assert_str_eq (get_fact (f, "exec_usr"), "exit:0");
  cr_assert_str_eq (get_fact (f, "exec_via_symlink"), "exit:0");
  cr_assert_str_eq (get_fact (f, "exec_tmp"), "EACCES");
  cr_assert_str_eq (get_fact (f, "keys_is_empty_file"), "1");
  cr_assert_str_eq (get_fact (f, "keys_write"), "EROFS");
  cr_assert_str_eq (get_fact (f, "timer_list_bytes"), "0");
  if (access ("/proc/sysrq-trigger", F_OK) == 0)
    cr_assert_str_eq (get_fact (f, "write_sysrq"), "EROFS");
  cr_assert_str_eq (get_fact (f, "write_proc_sys"), "EROFS");
  if (access ("/proc/acpi", F_OK) == 0)
    {
      cr_assert_str_eq (get_fact (f, "acpi_entries"), "0");
      cr_assert_str_eq (get_fact (f, "acpi_create"), "EROFS");
    }
  cr_assert_str_eq (get_fact (f, "proc_status"), "OK");
  cr_assert_str_eq (get_fact (f, "dev_nodes"), "null,zero,full,random,urandom,tty,");
  /* 6 nodes + pts shm + ptmx fd stdin stdout stderr */
  cr_assert_str_eq (get_fact (f, "dev_entries"), "13");
  cr_assert_str_eq (get_fact (f, "devnull_write"), "OK");
  cr_assert_str_eq (get_fact (f, "urandom_read"), "OK");
  cr_assert_str_eq (get_fact (f, "ptmx_open"), "OK");
  cr_assert_str_eq (get_fact (f, "write_shm"), "OK");
  cr_assert_str_eq (get_fact (f, "write_dev"), "EROFS");
  cr_assert_str_eq (get_fact (f, "dev_fd"), "/proc/self/fd");
  cr_assert_str_eq (get_fact (f, "dev_stdout_access"), "OK");
  cr_assert_str_eq (get_fact (f, "root_ro"), "1");
  cr_assert_str_eq (get_fact (f, "usr_nosuid"), "1");
  cr_assert_str_eq (get_fact (f, "tmp_nodev"), "1");
  cr_assert_str_eq (get_fact (f, "cwd"), "/");
  cr_log_info ("%s", f);

  /* Every mount point is one the policy asked for (or a /proc mask). */
  char *mounts = strdup (get_fact (f, "mounts"));
  char *save = NULL;
  for (char *mp = strtok_r (mounts, " ", &save); mp; mp = strtok_r (NULL, " ", &save))
    {
      bool ours = strcmp (mp, "/") == 0 || strcmp (mp, "/usr") == 0 || strcmp (mp, "/tmp") == 0
                  || strncmp (mp, "/proc", 5) == 0 || strncmp (mp, "/dev", 4) == 0;
      cr_expect (ours, "unexpected mount %s in the sandbox", mp);
    }
  free (mounts);
  free (f);
}

Test (rootfs, basic_view)
{
  check_basic_view ();
}

/* The launcher runs the steps as the policy's inside uid (1000) with its
 * capabilities kept; the view must come out the same. */
Test (rootfs, basic_view_as_unprivileged_inside_uid)
{
  run_uid = 1000;
  check_basic_view ();
}

/* lstat of the mask table's entry `name` below /proc, its path and its
 * fact's key (128 bytes each). */
static int
lstat_mask (const char *name, char *path, char *key, struct stat *st)
{
  snprintf (path, 128, "/proc/%s", name);
  snprintf (key, 128, "mask:%s", name);
  return lstat (path, st);
}

/* Every entry of the /proc mask table as the sandbox sees it: "absent",
 * "file SIZE READ WRITE" or "dir ENTRIES TMPFS CREATE". */
static void
inside_proc_table (void *arg)
{
  (void) arg;
  size_t n;
  const char *const *masks = securer_linux_proc_masks (&n);
  for (size_t i = 0; i < n; i++)
    {
      char path[128], key[128];
      struct stat st;
      if (lstat_mask (masks[i], path, key, &st) < 0)
        {
          fact (key, "%s", errno == ENOENT ? "absent" : errname (-1, errno));
          continue;
        }
      if (S_ISDIR (st.st_mode))
        {
          DIR *d = opendir (path);
          int count = 0;
          struct dirent *e;
          while (d && (e = readdir (d)) != NULL)
            if (e->d_name[0] != '.')
              count++;
          if (d)
            closedir (d);
          struct statfs sfs;
          bool tmpfs = statfs (path, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
          char sub[160];
          snprintf (sub, sizeof sub, "%s/x", path);
          int w = try_write (sub, 1);
          fact (key, "dir %d %d %s", count, tmpfs, errname (w, errno));
          continue;
        }
      char buf[64];
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      ssize_t got = fd >= 0 ? read (fd, buf, sizeof buf) : -1;
      int re = errno;
      if (fd >= 0)
        close (fd);
      int w = try_write (path, 1);
      int we = errno;
      fact (key, "file %lld %s %s", (long long) st.st_size,
            got >= 0 ? (got == 0 ? "0" : "data") : errname (-1, re), errname (w, we));
    }
  /* Each mount point once: the masks below sys lie on its read-only copy,
   * not also hidden under it. */
  FILE *mi = fopen ("/proc/self/mountinfo", "re");
  char line[1024], seen[128][128];
  int n_seen = 0, dups = 0;
  while (mi && fgets (line, sizeof line, mi))
    {
      char mp[128];
      if (sscanf (line, "%*s %*s %*s %*s %127s", mp) != 1)
        continue;
      for (int k = 0; k < n_seen; k++)
        if (strcmp (seen[k], mp) == 0)
          dups++;
      if (n_seen < 128)
        strcpy (seen[n_seen++], mp);
    }
  if (mi)
    fclose (mi);
  fact ("mount_points_twice", "%d", dups);
  /* The host's device nodes got nosuid and noexec (and keep dev). */
  static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
  char flags[256] = "";
  for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
    {
      char path[64];
      struct statvfs sv;
      snprintf (path, sizeof path, "/dev/%s", nodes[i]);
      bool ok = statvfs (path, &sv) == 0 && (sv.f_flag & ST_NOSUID) && (sv.f_flag & ST_NOEXEC)
                && !(sv.f_flag & ST_NODEV) && !(sv.f_flag & ST_RDONLY);
      strcat (flags, ok ? "1" : "0");
    }
  fact ("dev_node_flags", "%s", flags);
}

/* What a `mount proc` hides is what the table says, entry by entry, the
 * way the host's own procfs has it: an entry this kernel lacks is no error
 * and stays absent; a file reads empty and cannot be written; a directory
 * is an empty read-only tmpfs. */
Test (rootfs, proc_mask_table_entry_by_entry)
{
  struct pol x;
  pol_base (&x);
  char *f = run (&x, inside_proc_table, NULL);
  cr_assert_str_eq (get_fact (f, "setup"), "ok", "%s", f);
  size_t n;
  const char *const *masks = securer_linux_proc_masks (&n);
  for (size_t i = 0; i < n; i++)
    {
      char path[128], key[128];
      struct stat st;
      int rc = lstat_mask (masks[i], path, key, &st);
      const char *got = get_fact (f, key);
      if (rc < 0)
        cr_expect_str_eq (got, "absent", "%s", path);
      else if (S_ISDIR (st.st_mode))
        cr_expect_str_eq (got, "dir 0 1 EROFS", "%s", path);
      else
        cr_expect_str_eq (got, "file 0 0 EROFS", "%s", path);
    }
  cr_expect_str_eq (get_fact (f, "mount_points_twice"), "0", "%s", f);
  cr_expect_str_eq (get_fact (f, "dev_node_flags"), "111111", "%s", f);
  cr_log_info ("%s", f);
  free (f);
}

/* ---- binds, masks, errors ------------------------------------------------ */

struct paths {
  const char *rw;       /* host dir bound rw at /work */
  const char *outside;  /* host dir the symlink points at */
};

static void
inside_binds (void *arg)
{
  (void) arg;
  fact_rc ("work_write", try_write ("/work/new", 10));
  fact_exec ("work_exec", "/work/prog");
  fact_rc ("ro_file_write", try_write ("/etc/securer-hosts", 1));
  char buf[64] = "";
  int fd = open ("/etc/securer-hosts", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close (fd);
  fact ("ro_file_content", "%s", buf);
  fact_rc ("optional_missing", access ("/opt/missing", F_OK));
  struct stat st;
  fact ("dir_mode", "%o", stat ("/home/u", &st) == 0 ? (unsigned) (st.st_mode & 07777) : 0u);
  /* Recursive read-only: the host's /dev has /dev/shm mounted rw below it. */
  fact_rc ("hostdev_shm_write", try_write ("/hostdev/shm/securer-test", 1));
  /* Policy masks: a file (reads empty) and a directory (empty, read-only). */
  fd = open ("/work/secret", O_RDONLY | O_CLOEXEC);
  n = fd >= 0 ? read (fd, buf, sizeof buf) : -1;
  if (fd >= 0)
    close (fd);
  fact ("masked_file_bytes", "%zd", n);
  fact_rc ("masked_dir_secret", access ("/work/private/key", F_OK));
  fact_rc ("masked_dir_write", try_write ("/work/private/new", 1));
}

Test (rootfs, binds_masks_and_optional)
{
  char *d = host_dir ();
  char path[256];
  snprintf (path, sizeof path, "%s/prog", d);
  cr_assert_eq (try_write (path, 16), 0);
  cr_assert_eq (chmod (path, 0755), 0);
  snprintf (path, sizeof path, "%s/secret", d);
  cr_assert_eq (try_write (path, 100), 0);
  cr_assert_eq (chmod (path, 0644), 0);
  snprintf (path, sizeof path, "%s/private", d);
  cr_assert_eq (mkdir (path, 0755), 0);
  snprintf (path, sizeof path, "%s/private/key", d);
  cr_assert_eq (try_write (path, 1), 0);
  cr_assert_eq (chmod (path, 0644), 0);
  char src_file[256];
  snprintf (src_file, sizeof src_file, "%s.file", d);
  FILE *hf = fopen (src_file, "w");
  cr_assert_not_null (hf);
  fputs ("hello", hf);
  fclose (hf);
  chmod (src_file, 0644);

  struct pol x;
  pol_base (&x);
  add (&x, SECURER_MOUNT_RW, d, "/work");
  add (&x, SECURER_MOUNT_RO, src_file, "/etc/securer-hosts");
  add (&x, SECURER_MOUNT_RO, "/nonexistent-securer-source", "/opt/missing")->optional = true;
  add (&x, SECURER_MOUNT_DIR, NULL, "/home/u")->mode = 0700;
  add (&x, SECURER_MOUNT_RO, "/dev", "/hostdev");
  x.masks[x.p.n_masks++] = (char *) "/work/secret";
  x.masks[x.p.n_masks++] = (char *) "/work/private";
  x.masks[x.p.n_masks++] = (char *) "/not/there";
  char *f = run (&x, inside_binds, NULL);
  cr_log_info ("%s", f);
  cr_assert_str_eq (get_fact (f, "setup"), "ok", "%s", f);
  cr_assert_str_eq (get_fact (f, "work_write"), "OK");
  cr_assert_str_eq (get_fact (f, "work_exec"), "EACCES");
  cr_assert_str_eq (get_fact (f, "ro_file_write"), "EROFS");
  cr_assert_str_eq (get_fact (f, "ro_file_content"), "hello");
  cr_assert_str_eq (get_fact (f, "optional_missing"), "ENOENT");
  cr_assert_str_eq (get_fact (f, "dir_mode"), "700");
  cr_assert_str_eq (get_fact (f, "hostdev_shm_write"), "EROFS");
  cr_assert_str_eq (get_fact (f, "masked_file_bytes"), "0");
  cr_assert_str_eq (get_fact (f, "masked_dir_secret"), "ENOENT");
  cr_assert_str_eq (get_fact (f, "masked_dir_write"), "EROFS");

  /* The rw bind really wrote to the host; nothing else leaked out. */
  snprintf (path, sizeof path, "%s/new", d);
  cr_assert_eq (access (path, F_OK), 0);
  cr_assert_neq (access ("/dev/shm/securer-test", F_OK), 0);
  free (f);
  unlink (src_file);
  rm_rf (d);
  free (d);
}

Test (rootfs, missing_required_source_names_policy_line)
{
  struct pol x;
  pol_base (&x);
  add (&x, SECURER_MOUNT_RO, "/nonexistent-securer-source", "/opt/x");
  char *f = run (&x, NULL, NULL);
  cr_assert_null (get_fact (f, "setup"), "%s", f);
  const char *msg = get_fact (f, "setup_error");
  cr_assert_not_null (msg, "%s", f);
  cr_assert_not_null (strstr (msg, "test.policy:18: bind /nonexistent-securer-source on /opt/x"),
                      "%s", msg);
  cr_assert_not_null (strstr (msg, "ENOENT"), "%s", msg);
  cr_assert_str_eq (get_fact (f, "setup_errno"), "ENOENT");
  free (f);
}

Test (rootfs, symlink_in_writable_bind_cannot_redirect_a_mount)
{
  char *d = host_dir ();
  char *outside = host_dir ();
  char link[256];
  snprintf (link, sizeof link, "%s/evil", d);
  cr_assert_eq (symlink (outside, link), 0);
  snprintf (link, sizeof link, "%s/evil-rel", d);
  cr_assert_eq (symlink ("../../../../../../tmp", link), 0);

  /* An intermediate component that is a symlink. */
  struct pol x;
  pol_base (&x);
  add (&x, SECURER_MOUNT_RW, d, "/work");
  add (&x, SECURER_MOUNT_TMPFS, NULL, "/work/evil/x");
  char *f = run (&x, NULL, NULL);
  const char *msg = get_fact (f, "setup_error");
  cr_assert_not_null (msg, "%s", f);
  cr_assert_not_null (strstr (msg, "tmpfs on /work/evil/x"), "%s", msg);
  cr_assert_not_null (strstr (msg, "symlink"), "%s", msg);
  cr_assert_str_eq (get_fact (f, "setup_errno"), "ELOOP");
  free (f);

  /* The final component is a symlink (mount point, DIR and mask). */
  pol_base (&x);
  add (&x, SECURER_MOUNT_RW, d, "/work");
  add (&x, SECURER_MOUNT_RO, "/usr", "/work/evil-rel");
  f = run (&x, NULL, NULL);
  cr_assert_str_eq (get_fact (f, "setup_errno"), "ELOOP", "%s", f);
  free (f);

  pol_base (&x);
  add (&x, SECURER_MOUNT_RW, d, "/work");
  add (&x, SECURER_MOUNT_DIR, NULL, "/work/evil/sub");
  f = run (&x, NULL, NULL);
  cr_assert_str_eq (get_fact (f, "setup_errno"), "ELOOP", "%s", f);
  free (f);

  pol_base (&x);
  add (&x, SECURER_MOUNT_RW, d, "/work");
  x.masks[x.p.n_masks++] = (char *) "/work/evil";
  f = run (&x, NULL, NULL);
  cr_assert_str_eq (get_fact (f, "setup_errno"), "ELOOP", "%s", f);
  free (f);

  /* Nothing was created outside. */
  DIR *od = opendir (outside);
  cr_assert_not_null (od);
  struct dirent *e;
  int count = 0;
  while ((e = readdir (od)) != NULL)
    if (e->d_name[0] != '.')
      count++;
  closedir (od);
  cr_assert_eq (count, 0);
  rm_rf (d);
  rm_rf (outside);
  free (d);
  free (outside);
}

Test (rootfs, bad_destinations_are_refused)
{
  const char *bad[] = { "/", "relative", "/a/../b", "/a/./b" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct pol x;
      pol_base (&x);
      add (&x, SECURER_MOUNT_TMPFS, NULL, bad[i]);
      char *f = run (&x, NULL, NULL);
      cr_assert_str_eq (get_fact (f, "setup_errno"), "EINVAL", "%s: %s", bad[i], f);
      free (f);
    }
}

Test (rootfs, mount_under_read_only_bind_fails_with_erofs)
{
  struct pol x;
  pol_base (&x);
  add (&x, SECURER_MOUNT_TMPFS, NULL, "/usr/securer-nonexistent");
  char *f = run (&x, NULL, NULL);
  cr_assert_str_eq (get_fact (f, "setup_errno"), "EROFS", "%s", f);
  cr_assert_not_null (strstr (get_fact (f, "setup_error"), "tmpfs on /usr/securer-nonexistent"));
  free (f);
}

/* ---- the shipped policies ------------------------------------------------ */

struct shipped_check {
  bool r;
};

static void
inside_shipped (void *arg)
{
  const struct shipped_check *c = arg;
  struct stat st;
  fact_rc ("ld_cache", stat ("/etc/ld.so.cache", &st));
  fact_rc ("write_etc", try_write ("/etc/x", 1));
  fact_rc ("write_tmp", try_write ("/tmp/x", 1));
  fact_rc ("passwd", access ("/etc/passwd", F_OK));
  fact_rc ("home", access ("/home", F_OK));
  fact_rc ("sys", access ("/sys", F_OK));
  fact ("keys_is_empty_file", "%d",
        stat ("/proc/keys", &st) == 0 && S_ISREG (st.st_mode) && st.st_size == 0);
  fact_rc ("keys_write", try_write ("/proc/keys", 1));
  fact_exec ("exec_true", "/bin/true");
  if (c->r)
    {
      fact_rc ("r_home", access ("/usr/lib/R/bin/exec/R", X_OK));
      fact_rc ("etc_r", access ("/etc/R/Renviron", R_OK));
    }
}

static char *
run_shipped (const char *name, bool r)
{
  char path[1024];
  const char *src = getenv ("SECURER_SRCDIR");
  snprintf (path, sizeof path, "%s/policies/%s", src ? src : SECURER_ABS_SRCDIR, name);
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (path, &p, NULL, &err), 0, "%s",
                err ? securer_error_message (err) : "");
  struct shipped_check c = { r };
  struct harness_steps s = { .policy = p, .rootfs = true, .network = true,
                             .inside = inside_shipped, .arg = &c, .uid = p->uid };
  char *f = harness_run (&s);
  cr_assert_not_null (f);
  cr_log_info ("%s", f);
  securer_policy_free (p);
  return f;
}

Test (rootfs, minimal_policy_view)
{
  char *f = run_shipped ("minimal.policy", false);
  cr_assert_str_eq (get_fact (f, "setup"), "ok", "%s", f);
  cr_assert_str_eq (get_fact (f, "ld_cache"), "OK");
  cr_assert_str_eq (get_fact (f, "write_etc"), "EROFS");
  cr_assert_str_eq (get_fact (f, "write_tmp"), "OK");
  cr_assert_str_eq (get_fact (f, "passwd"), "ENOENT");
  cr_assert_str_eq (get_fact (f, "home"), "ENOENT");
  cr_assert_str_eq (get_fact (f, "sys"), "ENOENT");
  cr_assert_str_eq (get_fact (f, "keys_is_empty_file"), "1");
  cr_assert_str_eq (get_fact (f, "keys_write"), "EROFS");
  cr_assert_str_eq (get_fact (f, "exec_true"), "exit:0");
  free (f);
}

Test (rootfs, r_policy_view)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0)
    cr_skip_test ("R is not installed");
  char *f = run_shipped ("r.policy", true);
  cr_assert_str_eq (get_fact (f, "setup"), "ok", "%s", f);
  cr_assert_str_eq (get_fact (f, "write_etc"), "EROFS");
  cr_assert_str_eq (get_fact (f, "passwd"), "ENOENT");
  cr_assert_str_eq (get_fact (f, "r_home"), "OK");
  cr_assert_str_eq (get_fact (f, "etc_r"), "OK");
  free (f);
}
