/* `securer policy learn --write-expect`: an expectation file for the
 * policy written from the run (see securer_learn_expect in learn.h).
 *
 * Every verdict written is the one the written policy's filter gives now
 * (run in the BPF interpreter, as `securer policy test` will run it): the
 * file records the policy as it was learned, so that a later edit that
 * takes away a call the command needs, or opens one it did not, fails
 * the test with the line that says so. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/view.h"
#include "policy/expect.h"
#include "policy/internal.h"
#include "seccomp/learn.h"
#include "seccomp/seccomp.h"

struct writer {
  FILE *f;
  const struct securer_policy *p;
  struct securer_seccomp_prog *prog;
  char **used;       /* names learned, for the calls base allowed and the run did not make */
  size_t n_used;
  bool failed;
};

struct uniform {
  const struct securer_seccomp_prog *prog;
  const struct securer_call *call;
  struct securer_action first;
  unsigned seen;
  bool failed;
};

/* Stops at the first sample whose verdict differs from the first one. */
static int
same_verdict (void *ctx, const uint64_t args[6])
{
  struct uniform *u = ctx;
  struct securer_action got;
  securer_err_t err = NULL;
  if (securer_seccomp_emulate (u->prog, u->call->arch, u->call->nr, args, &got, &err) < 0)
    {
      securer_error_free (&err);
      u->failed = true;
      return -1;
    }
  if (u->seen++ == 0)
    u->first = got;
  return securer_action_equal (got, u->first) ? 0 : 1;
}

/* Writes `WORDS -> VERDICT` when every call the words stand for gets one
 * verdict; returns false when they do not (nothing is written). */
static bool
put_uniform (struct writer *w, char **words, size_t n, const char *note)
{
  struct securer_call c;
  securer_err_t err = NULL;
  if (securer_call_parse_words (words, n, &c, &err) < 0)
    {
      securer_error_free (&err);
      return false;
    }
  struct uniform u = { w->prog, &c, { SECURER_ACT_ALLOW, 0 }, 0, false };
  int r = securer_call_samples (w->prog, w->p, &c, same_verdict, &u);
  securer_call_clear (&c);
  if (r != 0 || u.failed || u.seen == 0)
    return false;
  char buf[64];
  for (size_t i = 0; i < n; i++)
    fprintf (w->f, "%s%s", i ? " " : "", words[i]);
  fprintf (w->f, " -> %s", securer_verdict_text (u.first, buf, sizeof buf));
  if (note != NULL && u.first.type != SECURER_ACT_ALLOW)
    fprintf (w->f, "  # %s", note);
  fputc ('\n', w->f);
  return true;
}

static int
put_learned (void *ctx, const struct securer_learned_call *c)
{
  struct writer *w = ctx;
  char **used = realloc (w->used, (w->n_used + 1) * sizeof *used);
  if (used == NULL)
    return -1;
  w->used = used;
  w->used[w->n_used++] = (char *) c->name;
  static const char note[] = "a rule the base keeps refuses it";
  char hex[7][24];
  char *words[7] = { (char *) c->name };
  if (c->conditioned)
    {
      for (size_t k = 0; k < c->n_values; k++)
        {
          for (unsigned a = 0; a < c->arg; a++)
            words[1 + a] = (char *) "*";
          snprintf (hex[0], sizeof hex[0], "0x%llx", (unsigned long long) c->values[k]);
          words[1 + c->arg] = c->names[k] != NULL ? (char *) c->names[k] : hex[0];
          put_uniform (w, words, c->arg + 2, note);
        }
      return 0;
    }
  if (put_uniform (w, words, 1, note))
    return 0;
  /* The verdict depends on the arguments: the call the command made. */
  for (unsigned a = 0; a < 6; a++)
    {
      snprintf (hex[1 + a], sizeof hex[1 + a], "0x%llx", (unsigned long long) c->args[a]);
      words[1 + a] = hex[1 + a];
    }
  if (!put_uniform (w, words, 7, note))
    w->failed = true;
  return 0;
}

static bool
was_used (const struct writer *w, const char *name)
{
  for (size_t i = 0; i < w->n_used; i++)
    if (strcmp (w->used[i], name) == 0)
      return true;
  return false;
}

/* Base's `network` and `limit` lines, as `securer policy show` writes them. */
static void
put_settings (struct writer *w)
{
  char *text = securer_policy_to_text (w->p);
  for (char *line = text ? strtok (text, "\n") : NULL; line != NULL; line = strtok (NULL, "\n"))
    if (strncmp (line, "network ", 8) == 0 || strncmp (line, "limit ", 6) == 0)
      {
        char *comment = strstr (line, "  #");
        if (comment != NULL)
          *comment = '\0';
        fprintf (w->f, "%s\n", line);
      }
  free (text);
}

static void
put_path (struct writer *w, const char *kind, const char *path, bool exec)
{
  /* Paths with blanks or quotes need quoting; they are rare enough to leave out. */
  if (path == NULL || path[0] != '/' || path[strcspn (path, " \t\"\\#")] != '\0')
    return;
  struct securer_view v;
  securer_err_t err = NULL;
  if (securer_view_path (w->p, path, &v, &err) < 0)
    {
      securer_error_free (&err);
      w->failed = true;
      return;
    }
  fprintf (w->f, "%s %s -> %s\n", kind, path,
           exec ? (v.exec ? "allowed" : "denied") : securer_view_kind_name (v.kind));
  securer_view_clear (&v);
}

char *
securer_learn_expect (const struct securer_learn *l, const struct securer_policy *written,
                      const struct securer_policy *base, const struct securer_learn_info *info,
                      securer_err_t *err)
{
  struct writer w = { NULL, written, NULL, NULL, 0, false };
  if (securer_seccomp_compile (written, 0, -1, &w.prog, err) < 0)
    return NULL;
  char *buf = NULL;
  size_t len = 0;
  w.f = open_memstream (&buf, &len);
  if (w.f == NULL)
    {
      securer_seccomp_free (w.prog);
      securer_error_set (err, errno, "learn: write the expectations");
      return NULL;
    }
  fputs ("# Expectations of the policy learned by `securer policy learn` from:", w.f);
  for (size_t r = 0; r < (info->n_runs > 1 ? info->n_runs : 1); r++)
    {
      if (r > 0)
        fputs (";", w.f);
      for (char *const *a = info->n_runs > 1 ? info->runs[r].argv : info->argv; a != NULL && *a != NULL; a++)
        fprintf (w.f, " %s", *a);
    }
  fputs ("\n# Check them with `securer policy test POLICY THIS-FILE`.\n\n# The calls the command made.\n", w.f);
  if (securer_learn_each (l, put_learned, &w) != 0)
    w.failed = true;

  fputs ("\n# Calls the base policy allowed that the command did not make.\n", w.f);
  for (size_t i = 0; base != NULL && i < base->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *r = &base->seccomp.rules[i];
      bool again = false;
      for (size_t j = 0; j < i && !again; j++)
        again = strcmp (base->seccomp.rules[j].name, r->name) == 0;
      if (r->action.type == SECURER_ACT_ALLOW && !again && !was_used (&w, r->name))
        put_uniform (&w, (char **) &r->name, 1, NULL);
    }

  fputs ("\n# The rest of the policy, as the base has it.\n", w.f);
  put_settings (&w);
  for (size_t i = 0; i < written->n_mounts; i++)
    put_path (&w, "path", written->mounts[i].dest, false);
  for (size_t i = 0; i < written->n_masks; i++)
    put_path (&w, "path", written->masks[i], false);
  for (size_t r = 0; r < (info->n_runs > 1 ? info->n_runs : 1); r++)
    {
      char *const *argv = info->n_runs > 1 ? info->runs[r].argv : info->argv;
      bool again = false;
      for (size_t q = 0; q < r && !again; q++)
        again = strcmp (info->runs[q].argv[0], argv[0]) == 0;
      if (argv != NULL && argv[0] != NULL && !again)
        put_path (&w, "exec", argv[0], true);
    }
  for (size_t i = 0; i < written->n_env_set; i++)
    {
      fputs ("env ", w.f);
      char *kv = NULL;
      if (asprintf (&kv, "%s=%s", written->env_set[i].name, written->env_set[i].value) < 0)
        w.failed = true;
      else
        policy_put_word (w.f, kv, false);
      free (kv);
      fputc ('\n', w.f);
    }
  for (size_t i = 0; i < written->n_env_keep; i++)
    {
      bool set = false;
      for (size_t j = 0; j < written->n_env_set && !set; j++)
        set = strcmp (written->env_set[j].name, written->env_keep[i]) == 0;
      fprintf (w.f, "env %s -> %s\n", written->env_keep[i], set ? "set" : "kept");
    }
  free (w.used);
  securer_seccomp_free (w.prog);
  if (fclose (w.f) != 0 || w.failed)
    {
      free (buf);
      securer_error_set (err, w.failed ? EINVAL : ENOMEM, "learn: write the expectations");
      return NULL;
    }
  return buf;
}
