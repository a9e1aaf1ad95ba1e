/* Closest-candidate suggestions by Damerau-Levenshtein (optimal string
 * alignment) distance, so a swapped pair of letters costs one edit. */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

#define MAXLEN 64

static size_t
distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  if (la >= MAXLEN || lb >= MAXLEN)
    return (size_t) -1;
  size_t d[MAXLEN + 1][MAXLEN + 1];
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++)
      {
        size_t cost = tolower ((unsigned char) a[i - 1]) != tolower ((unsigned char) b[j - 1]);
        size_t v = d[i - 1][j] + 1;
        if (d[i][j - 1] + 1 < v)
          v = d[i][j - 1] + 1;
        if (d[i - 1][j - 1] + cost < v)
          v = d[i - 1][j - 1] + cost;
        if (i > 1 && j > 1 && tolower ((unsigned char) a[i - 1]) == tolower ((unsigned char) b[j - 2])
            && tolower ((unsigned char) a[i - 2]) == tolower ((unsigned char) b[j - 1])
            && d[i - 2][j - 2] + 1 < v)
          v = d[i - 2][j - 2] + 1;
        d[i][j] = v;
      }
  return d[la][lb];
}

const char *
securer_suggest (const char *word, const char *const *candidates, size_t n)
{
  if (word == NULL || *word == '\0')
    return NULL;
  /* Allow about one edit per three characters, at least one, at most three. */
  size_t len = strlen (word);
  size_t limit = len / 3;
  if (limit < 1)
    limit = 1;
  if (limit > 3)
    limit = 3;
  const char *best = NULL;
  size_t best_d = (size_t) -1;
  for (size_t i = 0; i < n; i++)
    {
      if (candidates[i] == NULL)
        continue;
      size_t dd = distance (word, candidates[i]);
      if (dd < best_d)
        {
          best_d = dd;
          best = candidates[i];
        }
    }
  return best_d <= limit && best_d > 0 ? best : NULL;
}
