/* Internal interface of the policy area: lexer, diagnostics, the builder
 * that applies directives with the override rules, and the validators the
 * text and JSON readers share. */
#ifndef SECURER_POLICY_INTERNAL_H
#define SECURER_POLICY_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "securer/policy.h"

/* ---- limits: every input, however hostile, stays inside these ---------- */
#define POLICY_MAX_FILE_SIZE (1u << 20)   /* bytes per file */
#define POLICY_MAX_LINE (64u * 1024)      /* bytes per logical line */
#define POLICY_MAX_TOKENS 1024            /* words per logical line */
#define POLICY_MAX_INCLUDE_DEPTH 16
#define POLICY_MAX_FILES 256              /* files read for one policy */
#define POLICY_MAX_DIAGS 100              /* further errors are counted, not kept */
/* Below these nothing starts: see d_limit and d_cgroup. */
#define POLICY_MIN_AS (4ull << 20)
#define POLICY_MIN_CGROUP_MEMORY (1ull << 20)
#define POLICY_MAX_RULES 65536
#define POLICY_MAX_ITEMS 4096             /* mounts, masks, env, exec, ports each */
#define POLICY_MAX_PATH 4096
#define POLICY_MAX_VALUE_TERMS 64         /* A|B|C in one condition value */

/* Host name of a sandbox with a uts namespace when the policy names none. */
#define POLICY_DEFAULT_HOSTNAME "sandbox"

/* ---- diagnostics (diag.c) ----------------------------------------------- */
void diag_add (struct securer_diags *d, enum securer_diag_severity sev, const char *file,
               unsigned line, unsigned col, const char *hint, const char *fmt, ...)
  __attribute__ ((format (printf, 7, 8)));
void diag_addv (struct securer_diags *d, enum securer_diag_severity sev, const char *file,
                unsigned line, unsigned col, const char *hint, const char *fmt, va_list ap)
  __attribute__ ((format (printf, 7, 0)));
/* True once no more diagnostics are kept (only counted): suggestions,
 * which cost an edit-distance scan, are then not computed. */
bool diag_full (const struct securer_diags *d);
/* "did you mean 'x'?" for word among candidates, or NULL; malloc'd. */
char *diag_suggest (const char *word, const char *const *cands, size_t n);
/* Turns the first error into *err ("file:line:col: message"). */
int diag_to_error (const struct securer_diags *d, securer_err_t *err);

/* ---- lexer (lexer.c) ---------------------------------------------------- */
struct token {
  char *text;      /* unquoted, unescaped */
  unsigned line, col;
  bool quoted;     /* some part was written in quotes: never a keyword/operator */
};

struct line {
  struct token *tok;
  size_t n;
  unsigned line, col;  /* of the first token */
};

struct lexer {
  const char *buf;
  size_t len, pos;
  unsigned line;       /* current physical line, 1-based */
  size_t line_start;   /* offset of the current physical line */
  const char *file;
  struct securer_diags *diags;
};

void lexer_init (struct lexer *lx, const char *file, const char *buf, size_t len,
                 struct securer_diags *diags);
/* Reads the next non-empty logical line.  Returns 1 with *out filled, 0 at
 * end of input.  Lexical errors are reported and the line is skipped. */
int lexer_next (struct lexer *lx, struct line *out);
void line_clear (struct line *l);

/* ---- numbers (parser.c) ------------------------------------------------- */
/* Parses an unsigned integer in C notation (decimal, 0x hex, 0 octal).  */
int parse_uint (const char *s, uint64_t *out);

/* ---- validators shared by the text and JSON readers (resolve.c) -------- */
/* Each returns NULL when fine, otherwise a static description of what is
 * expected. */
const char *check_abs_path (const char *s);
const char *check_env_name (const char *s);
const char *check_hostname (const char *s);
const char *check_link_target (const char *s);
const char *check_env_value (const char *s);

/* ---- the builder (resolve.c) -------------------------------------------- */
struct builder;

struct builder *builder_new (struct securer_diags *diags);
void builder_free (struct builder *b);
struct securer_policy *builder_policy (struct builder *b);

/* Seccomp rule for one target, with the override rules applied. */
int builder_add_rule (struct builder *b, const char *syscall, const char *group,
                      const struct securer_action *act, const struct securer_arg_cond *conds,
                      unsigned n_conds, const struct securer_loc *loc);
/* Group members, cached per load; NULL with a diagnostic reported. */
int builder_group (struct builder *b, const char *name, char ***members, size_t *n, char **why);

void builder_add_mount (struct builder *b, struct securer_mount *m);  /* takes ownership */
int builder_add_str (struct builder *b, char ***v, size_t *n, const char *s);  /* dedup */
int builder_env_set (struct builder *b, const char *name, const char *value);
void builder_env_unset (struct builder *b, const char *name);
int builder_add_port (struct builder *b, uint16_t **v, size_t *n, uint16_t port);
void builder_note_include (struct builder *b, const char *path);

/* What the policy said explicitly, to make defaults explicit afterwards and
 * to place consistency errors on the directive responsible. */
enum {
  SET_NAMESPACES, SET_NETWORK, SET_HOSTNAME, SET_CGROUP_MODE, SET_SECCOMP,
  SET_SECCOMP_DEFAULT, SET_LANDLOCK, SET_COUNT
};
void builder_mark (struct builder *b, int what, const char *file, unsigned line, unsigned col);
/* Where `what` was last set; false when it was not. */
bool builder_marked (struct builder *b, int what, const char **file, unsigned *line, unsigned *col);

/* Fills in defaults, drops redundant rules and checks consistency.  Problems
 * are reported to the diags passed to builder_new. */
void builder_finish (struct builder *b, const char *top_file);
/* The three steps of builder_finish, for a load that resolves the seccomp
 * rules later (defer.c): the defaults; the rules, into the policy (-1 when
 * out of memory); the consistency checks. */
void builder_finish_defaults (struct builder *b, const char *top_file);
int builder_finish_rules (struct builder *b, const char *top_file);
void builder_check (struct builder *b, const char *top_file);
/* True when builder_check would find nothing to report. */
bool builder_consistent (struct builder *b);
/* Points a builder whose policy was taken at that policy again, and at the
 * diagnostics of the step that goes on with it. */
void builder_attach (struct builder *b, struct securer_policy *p, struct securer_diags *diags);
/* Hands the finished policy to the caller. */
struct securer_policy *builder_take (struct builder *b);

/* Cross-field consistency of a resolved policy (network vs namespaces, …).
 * Calls report(ctx, what, message) for each problem, where `what` is one of
 * SET_*; returns the number of problems. */
int policy_check_consistency (const struct securer_policy *p,
                              void (*report) (void *ctx, int what, const char *msg), void *ctx);

/* ---- helpers ------------------------------------------------------------ */
/* Length of a NULL-terminated list (0 for NULL). */
static inline size_t
strv_len (const char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}
void *xcalloc_array (size_t n, size_t size);
int grow (void **v, size_t *cap, size_t n, size_t size);
char *loc_file_dup (const char *file);

/* Reading policy files; replaceable so the fuzzer never touches the disk. */
typedef int (*policy_reader_fn) (const char *path, char **buf, size_t *len, securer_err_t *err);
void policy_set_reader (policy_reader_fn fn);
int policy_read_file (const char *path, char **buf, size_t *len, securer_err_t *err);

/* Finds and reads the file `include "name"` in base_file names, as the
 * parser does (parser.c). */
int policy_read_include (const char *base_file, const char *name, char **path_out, char **buf, size_t *len,
                         securer_err_t *err);

/* A word of policy text (or of an expectation file), in quotes when
 * `quoted` or when the lexer would otherwise read it differently (text.c). */
void policy_put_word (FILE *f, const char *s, bool quoted);

/* Parser entry point (parser.c); flags are SECURER_POLICY_* load options. */
int policy_parse (const char *name, const char *text, size_t len, unsigned flags,
                  struct securer_policy **out, struct securer_diags *diags);

/* ---- seccomp rule lines resolved after the load (defer.c) --------------- */
struct deferred_line {
  const char *file;   /* one of the store's files */
  struct line ln;     /* the tokens as read */
  size_t diag_at;     /* diagnostics kept before it when it was read */
};

struct securer_policy_deferred {
  struct builder *b;  /* the load's builder, its policy taken */
  char *top;          /* the file loaded, for diagnostics without a place */
  struct deferred_line *lines;
  size_t n, cap;
  char **files;
  size_t n_files, cap_files;
};

struct securer_policy_deferred *policy_deferred_new (const char *top);
void policy_deferred_free (struct securer_policy_deferred *df);
/* Keeps a rule line read from file; takes ln's tokens (ln is left empty). */
int policy_defer_line (struct securer_policy_deferred *df, const char *file, struct line *ln,
                       size_t diag_at);
/* Ends a load that kept its rule lines (parser.c).  Returns 1 when they are
 * left for securer_policy_complete; 0 when the load had to resolve them at
 * once (errors so far, seccomp off, nothing kept), in which case every
 * diagnostic is where a full load puts it. */
int policy_defer_finish (struct securer_policy_deferred *df, struct builder *b, struct securer_diags *diags,
                         size_t errors_before);
/* Applies the kept rule lines to b in order, as the parser does when it
 * reads them (parser.c); starts[k] receives diags->n before line k. */
void policy_apply_deferred (struct securer_policy_deferred *df, struct builder *b,
                            struct securer_diags *diags, size_t *starts);

/* JSON reader with full diagnostics (json.c). */
int policy_from_json (const char *name, const char *text, size_t len, struct securer_policy **out,
                      struct securer_diags *diags);

/* Names tables (policy.c). */
extern const char *const policy_ns_names[7];
extern const char *const policy_session_template_names[3];
const char *policy_mount_type_name (enum securer_mount_type t);
int policy_mount_type_lookup (const char *s, enum securer_mount_type *t);
const char *policy_enforce_name (enum securer_enforce e);
int policy_enforce_lookup (const char *s, enum securer_enforce *e);
const char *policy_net_name (enum securer_net_mode m);
int policy_net_lookup (const char *s, enum securer_net_mode *m);
const char *policy_cmp_name (enum securer_cmp c);
int policy_rlimit_lookup (const char *s, enum securer_rlimit_id *id);
/* Limits that count things (processes, files, signals) rather than bytes
 * or seconds: written and read as plain numbers. */
bool policy_rlimit_is_count (enum securer_rlimit_id id);
int policy_action_lookup (const char *s, enum securer_action_type *t);

#endif
