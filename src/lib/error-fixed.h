/* Errors in the sandbox's child (error.c): not installed. */
#ifndef SECURER_ERROR_FIXED_H
#define SECURER_ERROR_FIXED_H

/* From here on, in this process, securer_error_set/prefix format into
 * static buffers instead of allocating.  Called first thing in the child
 * of clone (one thread, reports at most one error, then exits); never in
 * the caller's process. */
void securer_error_use_fixed_storage (void);

#endif
