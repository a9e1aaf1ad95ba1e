/* "Did you mean …?" for misspelled keywords, syscalls, groups, constants. */
#ifndef SECURER_SUGGEST_H
#define SECURER_SUGGEST_H

#include <stddef.h>

/* Returns the candidate closest to `word` by edit distance (case-insensitive),
 * or NULL when none is close enough to be a plausible typo. */
const char *securer_suggest (const char *word, const char *const *candidates, size_t n);

#endif
