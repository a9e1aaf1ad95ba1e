/* A session's work directory: a host directory mounted read-write at
 * SERVE_WORKDIR in the sandbox, and the files a client puts there and
 * takes back (`upload`, `download`).  The sandbox writes in it, so the
 * host never follows a name there: every path is resolved by the kernel
 * beneath the directory with no symbolic link on the way. */
#ifndef SECURER_SERVE_FILES_H
#define SECURER_SERVE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "securer/error.h"
#include "securer/policy.h"

#define SERVE_WORKDIR "/work"

struct serve_workdir {
  int fd;              /* O_PATH of the directory, held while the session lives */
  uid_t uid;           /* its owner, whom the sandbox writes as */
  gid_t gid;
};

/* Checks dir (absolute, no symbolic link on the way, a directory that
 * neither group nor others may write, owned by the caller; a root caller
 * needs an owner other than root, whose ids the sandbox then writes
 * with) and sets p to mount it at SERVE_WORKDIR, R's working directory.
 * Fills *w (w->fd to be closed by the caller). */
int serve_workdir_apply (struct securer_policy *p, const char *dir, struct serve_workdir *w, securer_err_t *err);

/* A client's name for a file in the work directory: relative, each
 * component neither empty, "." nor "..". */
int serve_file_name_check (const char *name, securer_err_t *err);

/* Writes data to name (replacing what is there, a symbolic link too,
 * never through one) as a new file owned by the directory's owner; the
 * directories on the way must exist.  With append, adds data to the end
 * of the regular file name instead (how a file larger than one request
 * arrives).  The file may have at most max bytes. */
int serve_file_write (const struct serve_workdir *w, const char *name, const void *data, size_t len, bool append,
                      size_t max, securer_err_t *err);

/* Reads at most chunk bytes from offset of name, a regular file of at
 * most max bytes, into *data (malloc'd, *len bytes); *size is the whole
 * file's. */
int serve_file_read (const struct serve_workdir *w, const char *name, uint64_t offset, size_t chunk, size_t max,
                     char **data, size_t *len, uint64_t *size, securer_err_t *err);

#endif
