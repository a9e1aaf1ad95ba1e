/* linux.resources.devices as the kernel enforces it: the rules the
 * container gets (the spec's, then the default nodes and linux.devices,
 * as runc gives them), written to the v1 device controller, or compiled to
 * a BPF_PROG_TYPE_CGROUP_DEVICE program for a cgroup v2 directory.
 *
 * Both follow v1's meaning: the last rule that matches decides, and what
 * no rule matches is denied.  The program tests the rules from the last
 * to the first and returns at the first match. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"

/* What every container is given (as with runc): the default nodes and pty
 * slaves; then each node linux.devices creates. */
static const struct oci_devrule defaults[] = {
  { true, 'c', 1, 3, "rwm" }, { true, 'c', 1, 5, "rwm" }, { true, 'c', 1, 7, "rwm" },
  { true, 'c', 1, 8, "rwm" }, { true, 'c', 1, 9, "rwm" }, { true, 'c', 5, 0, "rwm" },
  { true, 'c', 5, 1, "rwm" }, { true, 'c', 5, 2, "rwm" }, { true, 'c', 136, -1, "rwm" },
};

struct oci_devrule *
oci_devrules_effective (const struct oci_spec *s, size_t *n)
{
  size_t nd = sizeof defaults / sizeof defaults[0];
  struct oci_devrule *r = calloc (s->n_devrules + nd + s->n_devices + 1, sizeof *r);
  *n = 0;
  for (size_t i = 0; i < s->n_devrules; i++)
    r[(*n)++] = s->devrules[i];
  for (size_t i = 0; i < nd; i++)
    r[(*n)++] = defaults[i];
  for (size_t i = 0; i < s->n_devices; i++)
    if (s->devices[i].type != 'p')
      r[(*n)++] = (struct oci_devrule) { true, s->devices[i].type, s->devices[i].major,
                                         s->devices[i].minor, "rwm" };
  return r;
}

int
oci_devrule_v1 (const struct oci_devrule *d, char *buf, size_t len)
{
  char maj[24], min[24];
  snprintf (maj, sizeof maj, d->major < 0 ? "*" : "%lld", (long long) d->major);
  snprintf (min, sizeof min, d->minor < 0 ? "*" : "%lld", (long long) d->minor);
  if (d->type == 'a')
    return snprintf (buf, len, "a");
  return snprintf (buf, len, "%c %s:%s %s", d->type, maj, min, d->access);
}

/* ---- the BPF program ---- */
#define INSN(c, d, s, o, i) ((struct bpf_insn) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

struct prog {
  struct bpf_insn *v;
  size_t n, cap;
};

static size_t
emit (struct prog *p, struct bpf_insn i)
{
  if (p->n == p->cap)
    {
      p->cap = p->cap ? 2 * p->cap : 64;
      p->v = realloc (p->v, p->cap * sizeof *p->v);
    }
  p->v[p->n] = i;
  return p->n++;
}

static unsigned
access_bits (const char *a)
{
  unsigned b = 0;
  for (; *a; a++)
    b |= *a == 'r' ? BPF_DEVCG_ACC_READ : *a == 'w' ? BPF_DEVCG_ACC_WRITE : *a == 'm' ? BPF_DEVCG_ACC_MKNOD : 0;
  return b;
}

/* r2 = device type, r3 = access, r4 = major, r5 = minor; per rule, "jump
 * to the next rule" offsets are patched once the rule's end is known. */
static void
compile (struct prog *p, const struct oci_devrule *rules, size_t n)
{
  const unsigned all = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
  emit (p, INSN (BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1, 0, 0));
  emit (p, INSN (BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff));
  emit (p, INSN (BPF_LDX | BPF_W | BPF_MEM, BPF_REG_3, BPF_REG_1, 0, 0));
  emit (p, INSN (BPF_ALU | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 16));
  emit (p, INSN (BPF_LDX | BPF_W | BPF_MEM, BPF_REG_4, BPF_REG_1, 4, 0));
  emit (p, INSN (BPF_LDX | BPF_W | BPF_MEM, BPF_REG_5, BPF_REG_1, 8, 0));
  for (size_t k = n; k-- > 0;)
    {
      const struct oci_devrule *r = &rules[k];
      size_t jumps[4], nj = 0;
      if (r->type != 'a')
        jumps[nj++] = emit (p, INSN (BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 0,
                                     r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR));
      unsigned acc = access_bits (r->access);
      if (acc != all)
        {
          /* Every right asked for must be one the rule names. */
          emit (p, INSN (BPF_ALU | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_3, 0, 0));
          emit (p, INSN (BPF_ALU | BPF_AND | BPF_K, BPF_REG_6, 0, 0, (int32_t) (~acc & all)));
          jumps[nj++] = emit (p, INSN (BPF_JMP | BPF_JNE | BPF_K, BPF_REG_6, 0, 0, 0));
        }
      if (r->type != 'a' && r->major >= 0)
        jumps[nj++] = emit (p, INSN (BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 0, (int32_t) r->major));
      if (r->type != 'a' && r->minor >= 0)
        jumps[nj++] = emit (p, INSN (BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 0, (int32_t) r->minor));
      emit (p, INSN (BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, r->allow ? 1 : 0));
      size_t end = emit (p, INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
      for (size_t j = 0; j < nj; j++)
        p->v[jumps[j]].off = (int16_t) (end - jumps[j]);
      /* A rule that matches everything decides for every earlier one (the
       * verifier refuses code that cannot be reached). */
      if (nj == 0)
        return;
    }
  emit (p, INSN (BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));
  emit (p, INSN (BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
}

int
oci_devices_bpf_attach (const char *cgroup_dir, const struct oci_devrule *rules, size_t n,
                        securer_err_t *err)
{
  struct prog p = { 0 };
  compile (&p, rules, n);
  if (p.n > 4096)
    {
      free (p.v);
      return securer_error_set (err, E2BIG, "device program of %zu instructions", p.n);
    }
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  a.insns = (uint64_t) (uintptr_t) p.v;
  a.insn_cnt = (uint32_t) p.n;
  a.license = (uint64_t) (uintptr_t) "GPL";
  /* Without a log first: a program that verifies can still make a log
   * too long for any fixed buffer (one line per instruction and branch),
   * and the kernel then fails the load with ENOSPC. */
  int prog = (int) syscall (SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
  int e = errno;
  char *log = NULL;
  if (prog < 0)
    {
      /* Again with a log, only to say why. */
      const size_t log_size = 1 << 20;
      log = calloc (1, log_size);
      if (log)
        {
          a.log_buf = (uint64_t) (uintptr_t) log;
          a.log_size = (uint32_t) log_size;
          a.log_level = 1;
          int again = (int) syscall (SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
          if (again >= 0)
            prog = again;  /* a passing fault the first time */
        }
    }
  free (p.v);
  if (prog < 0)
    {
      /* The verifier's reason is its last line. */
      const char *why = "";
      if (log)
        {
          size_t l = strlen (log);
          while (l > 0 && log[l - 1] == '\n')
            log[--l] = '\0';
          const char *nl = strrchr (log, '\n');
          why = nl ? nl + 1 : log;
        }
      securer_error_set (err, e, "load the device program of %zu instructions%s%.300s", (size_t) a.insn_cnt,
                         *why ? ": " : "", why);
      free (log);
      return -1;
    }
  free (log);
  int cg = open (cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg < 0)
    {
      close (prog);
      return securer_error_set (err, errno, "open %s", cgroup_dir);
    }
  memset (&a, 0, sizeof a);
  a.target_fd = (uint32_t) cg;
  a.attach_bpf_fd = (uint32_t) prog;
  a.attach_type = BPF_CGROUP_DEVICE;
  a.attach_flags = BPF_F_ALLOW_MULTI;
  int rc = (int) syscall (SYS_bpf, BPF_PROG_ATTACH, &a, sizeof a);
  e = errno;
  close (cg);
  close (prog);
  /* Attached, the program lives as long as the cgroup. */
  return rc < 0 ? securer_error_set (err, e, "attach the device program to %s", cgroup_dir) : 0;
}
