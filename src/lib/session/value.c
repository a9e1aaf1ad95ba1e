/* The tagged value encoding shared with the R runtime (docs/protocol.md,
 * "Values"): validation, and conversion to and from ordinary JSON. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/internal.h"

enum vkind { K_LGL, K_INT, K_DBL, K_CHR, K_FCT, K_DATE, K_TIME, K_LIST, K_DF, K_OTHER, K_RAW, K_NONE };

static const char *const tags[] = { "lgl", "int", "dbl", "chr", "fct", "date", "time",
                                    "list", "df", "other", "raw" };

static enum vkind
kind_of (const json_t *v)
{
  const char *t = json_string_value (json_object_get (v, "t"));
  if (t == NULL)
    return K_NONE;
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (strcmp (t, tags[i]) == 0)
      return (enum vkind) i;
  return K_NONE;
}

const char *
securer_value_tag (const json_t *v)
{
  if (v == NULL || json_is_null (v))
    return "NULL";
  enum vkind k = kind_of (v);
  return k == K_NONE ? "?" : tags[k];
}

static bool
is_int32 (const json_t *e)
{
  if (!json_is_integer (e))
    return false;
  json_int_t x = json_integer_value (e);
  /* INT_MIN is R's NA_integer_, which travels as null. */
  return x > INT_MIN && x <= INT_MAX;
}

static int
check_elems (const json_t *arr, enum vkind k, const char *what, securer_err_t *err)
{
  if (!json_is_array (arr))
    return securer_error_set (err, EINVAL, "%s: \"v\" must be an array", what);
  size_t i;
  const json_t *e;
  json_array_foreach (arr, i, e)
  {
    if (json_is_null (e))
      continue;
    bool ok = false;
    switch (k)
      {
      case K_LGL: ok = json_is_boolean (e); break;
      case K_INT: case K_FCT: ok = is_int32 (e); break;
      case K_DBL: case K_DATE: case K_TIME:
        if (json_is_number (e))
          ok = true;
        else if (json_is_string (e))
          {
            const char *s = json_string_value (e);
            ok = strcmp (s, "NaN") == 0 || strcmp (s, "Inf") == 0 || strcmp (s, "-Inf") == 0;
          }
        break;
      case K_CHR: ok = json_is_string (e); break;
      default: break;
      }
    if (!ok)
      return securer_error_set (err, EINVAL, "%s: element %zu has the wrong type", what, i + 1);
  }
  return 0;
}

static int
check_strings (const json_t *arr, bool allow_null, const char *what, securer_err_t *err)
{
  if (!json_is_array (arr))
    return securer_error_set (err, EINVAL, "%s must be an array of strings", what);
  size_t i;
  const json_t *e;
  json_array_foreach (arr, i, e)
    if (!(json_is_string (e) || (allow_null && json_is_null (e))))
      return securer_error_set (err, EINVAL, "%s must be an array of strings", what);
  return 0;
}

static bool
key_allowed (const char *key, const char *const *allowed)
{
  for (; *allowed; allowed++)
    if (strcmp (key, *allowed) == 0)
      return true;
  return false;
}

static int validate (const json_t *v, int depth, securer_err_t *err);

/* ---- base64 (raw vectors, plots) ------------------------------------------- */

static int
b64_digit (unsigned char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

char *
securer_base64_encode (const void *data, size_t len, size_t *out_len)
{
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
    return NULL;
  size_t n = (len + 2) / 3 * 4;
  char *out = malloc (n + 1);
  if (out == NULL)
    return NULL;
  const unsigned char *in = data;
  char *o = out;
  for (size_t i = 0; i < len; i += 3)
    {
      unsigned v = (unsigned) in[i] << 16 | (i + 1 < len ? (unsigned) in[i + 1] << 8 : 0)
                   | (i + 2 < len ? in[i + 2] : 0);
      *o++ = digits[v >> 18 & 63];
      *o++ = digits[v >> 12 & 63];
      *o++ = i + 1 < len ? digits[v >> 6 & 63] : '=';
      *o++ = i + 2 < len ? digits[v & 63] : '=';
    }
  *o = '\0';
  if (out_len != NULL)
    *out_len = n;
  return out;
}

/* One spelling per byte string (RFC 4648 with padding, no line breaks,
 * the unused bits of the last digit zero), so that what the host checked
 * is what any decoder reads. */
int
securer_base64_check (const char *s, size_t len, size_t *decoded, unsigned char *head, size_t head_len)
{
  if (len % 4 != 0)
    return -1;
  size_t pad = len >= 1 && s[len - 1] == '=' ? (len >= 2 && s[len - 2] == '=' ? 2 : 1) : 0;
  size_t out = 0;
  for (size_t i = 0; i < len; i += 4)
    {
      int d[4];
      bool last = i + 4 == len;
      for (int k = 0; k < 4; k++)
        {
          bool padded = last && k >= 4 - (int) pad;
          d[k] = padded ? 0 : b64_digit ((unsigned char) s[i + k]);
          if (d[k] < 0)
            return -1;
        }
      if (last && ((pad == 1 && (d[2] & 3) != 0) || (pad == 2 && (d[1] & 15) != 0)))
        return -1;
      unsigned char b[3] = { (unsigned char) (d[0] << 2 | d[1] >> 4), (unsigned char) (d[1] << 4 | d[2] >> 2),
                             (unsigned char) (d[2] << 6 | d[3]) };
      size_t n = last ? 3 - pad : 3;
      for (size_t k = 0; k < n; k++, out++)
        if (out < head_len)
          head[out] = b[k];
    }
  *decoded = out;
  return 0;
}

/* Row names that are not 1..nrow: all strings, or all integers (what R
 * keeps after subsetting rows, df[c(2, 5), ]). */
static int
check_rownames (const json_t *rn, securer_err_t *err)
{
  if (check_strings (rn, false, "df: row names", NULL) == 0)
    return 0;
  if (!json_is_array (rn))
    return securer_error_set (err, EINVAL, "df: row names must be an array");
  size_t i;
  const json_t *e;
  json_array_foreach (rn, i, e)
    if (!is_int32 (e))
      return securer_error_set (err, EINVAL, "df: row names must be all strings or all integers");
  return 0;
}

static int
check_common (const json_t *v, size_t length, const char *const *allowed, const char *what,
              securer_err_t *err)
{
  const char *key;
  const json_t *x;
  json_object_foreach ((json_t *) v, key, x)
    if (!key_allowed (key, allowed))
      return securer_error_set (err, EINVAL, "%s: unexpected key \"%s\"", what, key);
  const json_t *n = json_object_get (v, "n");
  if (n != NULL)
    {
      if (check_strings (n, true, "names", err) < 0)
        return -1;
      if (json_array_size (n) != length)
        return securer_error_set (err, EINVAL, "%s: %zu names for %zu elements", what,
                                  json_array_size (n), length);
    }
  const json_t *dim = json_object_get (v, "dim");
  if (dim != NULL)
    {
      if (!json_is_array (dim) || json_array_size (dim) == 0)
        return securer_error_set (err, EINVAL, "%s: \"dim\" must be a non-empty array", what);
      /* Multiplied only while the product stays within the length, so it
       * never wraps: on LP64 c(2^30, 2^30, 2^30) would wrap to 0 and pass
       * for an empty vector.  A zero dimension makes the product 0 however
       * large the others are. */
      size_t prod = 1;
      bool zero = false, over = false;
      size_t i;
      json_array_foreach (dim, i, x)
      {
        if (!json_is_integer (x) || json_integer_value (x) < 0 || json_integer_value (x) > INT_MAX)
          return securer_error_set (err, EINVAL, "%s: bad \"dim\"", what);
        size_t d = (size_t) json_integer_value (x);
        if (d == 0)
          zero = true;
        else if (prod > length / d)
          over = true;
        else
          prod *= d;
      }
      if (zero ? length != 0 : over || prod != length)
        return securer_error_set (err, EINVAL, "%s: \"dim\" does not match the length", what);
    }
  return 0;
}

static bool
has_string (const json_t *arr, const char *s)
{
  size_t i;
  const json_t *e;
  json_array_foreach (arr, i, e)
    if (strcmp (json_string_value (e), s) == 0)
      return true;
  return false;
}

/* "class" is applied on the host, so it must agree with the tag: R's
 * methods for factors and data frames trust the layout those classes
 * imply, and a "factor" that is really a double is no factor. */
static int
check_class (const json_t *v, enum vkind k, const char *what, securer_err_t *err)
{
  const json_t *cls = json_object_get (v, "class");
  if (cls == NULL)
    return 0;
  if (check_strings (cls, false, "class", err) < 0)
    return securer_error_prefix (err, "%s", what);
  if (json_array_size (cls) == 0)
    return securer_error_set (err, EINVAL, "%s: \"class\" may not be empty", what);
  if (json_array_size (cls) > SECURER_VALUE_MAX_ATTRS)
    return securer_error_set (err, EINVAL, "%s: more than %d classes", what, SECURER_VALUE_MAX_ATTRS);
  if (k == K_OTHER)
    return 0;  /* informational: nothing is built from it */
  if ((k == K_FCT) != has_string (cls, "factor"))
    return securer_error_set (err, EINVAL, "%s: class \"factor\" belongs to the fct tag alone", what);
  if ((k == K_DF) != has_string (cls, "data.frame"))
    return securer_error_set (err, EINVAL, "%s: class \"data.frame\" belongs to the df tag alone", what);
  return 0;
}

/* Attributes with keys of their own ("n", "dim", "class", and the tag's
 * "levels", "tz", "rownames") may not come again in "attr": one value,
 * one way to say each thing. */
static bool
attr_reserved (const json_t *v, const char *name, enum vkind k)
{
  static const char *const always[] = { "names", "dim", "class", NULL };
  if (key_allowed (name, always))
    return true;
  /* A time zone that is not one string (POSIXlt's three) travels in
   * "attr"; "tz" holds the usual single one. */
  bool tz = json_object_get (v, "tz") != NULL;
  return (k == K_FCT && strcmp (name, "levels") == 0) || (k == K_TIME && tz && strcmp (name, "tzone") == 0)
         || (k == K_DF && strcmp (name, "row.names") == 0);
}

/* dimnames: a list with one entry per dimension, each NULL or a
 * character vector as long as its dimension (R refuses anything else). */
static int
check_dimnames (const json_t *v, const json_t *dn, const char *what, securer_err_t *err)
{
  const json_t *dim = json_object_get (v, "dim");
  if (dim == NULL)
    return securer_error_set (err, EINVAL, "%s: \"dimnames\" without \"dim\"", what);
  if (kind_of (dn) != K_LIST || json_array_size (json_object_get (dn, "v")) != json_array_size (dim)
      || json_object_get (dn, "attr") != NULL || json_object_get (dn, "class") != NULL
      || json_object_get (dn, "dim") != NULL)
    return securer_error_set (err, EINVAL, "%s: \"dimnames\" must be a plain list with one entry per dimension",
                              what);
  size_t i;
  const json_t *e;
  json_array_foreach (json_object_get (dn, "v"), i, e)
  {
    if (json_is_null (e))
      continue;
    if (kind_of (e) != K_CHR || json_object_size (e) != 2
        || json_array_size (json_object_get (e, "v")) != (size_t) json_integer_value (json_array_get (dim, i)))
      return securer_error_set (err, EINVAL, "%s: dimnames %zu must be NULL or as many strings as the dimension",
                                what, i + 1);
  }
  return 0;
}

/* Attributes that point somewhere instead of holding data: base R's
 * methods follow them on whichever host decodes the value (a "srcfile"'s
 * file name is read by as.character.srcref; "conn_id" and the dot-names
 * of data.table and others hold external pointers).  The runtime leaves
 * them out, so one that arrives anyway was written by the code in the
 * sandbox and is refused.  Other attributes R could not transfer arrive
 * as "other" placeholders, which are text. */
static bool
attr_is_reference (const char *name)
{
  static const char *const refs[] = { "srcfile", "srcref", "wholeSrcref", "conn_id", NULL };
  return name[0] == '.' || key_allowed (name, refs);
}

static int
check_attrs (const json_t *v, enum vkind k, int depth, const char *what, securer_err_t *err)
{
  const json_t *attr = json_object_get (v, "attr");
  if (attr == NULL)
    return 0;
  if (!json_is_object (attr))
    return securer_error_set (err, EINVAL, "%s: \"attr\" must be an object", what);
  if (json_object_size (attr) > SECURER_VALUE_MAX_ATTRS)
    return securer_error_set (err, EINVAL, "%s: %zu attributes, at most %d", what, json_object_size (attr),
                              SECURER_VALUE_MAX_ATTRS);
  const char *name;
  const json_t *a;
  json_object_foreach ((json_t *) attr, name, a)
  {
    if (name[0] == '\0')
      return securer_error_set (err, EINVAL, "%s: an attribute without a name", what);
    if (attr_reserved (v, name, k))
      return securer_error_set (err, EINVAL, "%s: attribute \"%s\" must be given by its own key, not in \"attr\"",
                                what, name);
    if (json_is_null (a))
      return securer_error_set (err, EINVAL, "%s: attribute \"%s\" is NULL (R has no such attribute)", what,
                                name);
    if (attr_is_reference (name))
      return securer_error_set (err, EINVAL, "%s: attribute \"%s\" is a reference, not data", what, name);
    if (validate (a, depth + 1, err) < 0)
      return securer_error_prefix (err, "%s: attribute \"%s\"", what, name);
    if (strcmp (name, "dimnames") == 0 && check_dimnames (v, a, what, err) < 0)
      return -1;
  }
  return 0;
}

static int
validate (const json_t *v, int depth, securer_err_t *err)
{
  if (v == NULL || json_is_null (v))
    return 0;
  if (depth > SECURER_VALUE_MAX_DEPTH)
    return securer_error_set (err, EINVAL, "value nested deeper than %d levels",
                              SECURER_VALUE_MAX_DEPTH);
  if (!json_is_object (v))
    return securer_error_set (err, EINVAL, "value must be null or an object with a \"t\" tag");
  enum vkind k = kind_of (v);
  if (k == K_NONE)
    return securer_error_set (err, EINVAL, "value has no known \"t\" tag");
  const json_t *arr = json_object_get (v, "v");
  static const char *const vec_keys[] = { "t", "v", "n", "dim", "class", "attr", NULL };
  static const char *const fct_keys[] = { "t", "v", "n", "dim", "class", "attr", "levels", NULL };
  static const char *const time_keys[] = { "t", "v", "n", "dim", "class", "attr", "tz", NULL };
  static const char *const df_keys[] = { "t", "v", "n", "nrow", "rownames", "class", "attr", NULL };
  static const char *const other_keys[] = { "t", "class", "text", NULL };
  const char *what = tags[k];
  if (check_class (v, k, what, err) < 0 || check_attrs (v, k, depth, what, err) < 0)
    return -1;
  switch (k)
    {
    case K_LGL: case K_INT: case K_DBL: case K_CHR: case K_DATE:
      if (check_elems (arr, k, what, err) < 0)
        return -1;
      return check_common (v, json_array_size (arr), vec_keys, what, err);
    case K_TIME:
      if (check_elems (arr, k, what, err) < 0)
        return -1;
      {
        const json_t *tz = json_object_get (v, "tz");
        if (tz != NULL && !json_is_string (tz))
          return securer_error_set (err, EINVAL, "time: \"tz\" must be a string");
      }
      return check_common (v, json_array_size (arr), time_keys, what, err);
    case K_FCT:
      {
        if (check_elems (arr, k, what, err) < 0)
          return -1;
        const json_t *lv = json_object_get (v, "levels");
        if (check_strings (lv, false, "factor levels", err) < 0)
          return -1;
        size_t i;
        const json_t *e;
        json_array_foreach (arr, i, e)
          if (json_is_integer (e)
              && (json_integer_value (e) < 1 || (size_t) json_integer_value (e) > json_array_size (lv)))
            return securer_error_set (err, EINVAL, "factor code %zu out of range", i + 1);
        return check_common (v, json_array_size (arr), fct_keys, what, err);
      }
    case K_LIST:
      {
        if (!json_is_array (arr))
          return securer_error_set (err, EINVAL, "list: \"v\" must be an array");
        size_t i;
        const json_t *e;
        json_array_foreach (arr, i, e)
          if (validate (e, depth + 1, err) < 0)
            return securer_error_prefix (err, "list element %zu", i + 1);
        return check_common (v, json_array_size (arr), vec_keys, what, err);
      }
    case K_DF:
      {
        if (!json_is_array (arr))
          return securer_error_set (err, EINVAL, "df: \"v\" must be an array of columns");
        const json_t *nrow = json_object_get (v, "nrow");
        if (!json_is_integer (nrow) || json_integer_value (nrow) < 0
            || json_integer_value (nrow) > INT_MAX)
          return securer_error_set (err, EINVAL, "df: \"nrow\" must be a non-negative integer");
        if (json_object_get (v, "n") == NULL)
          return securer_error_set (err, EINVAL, "df: column names \"n\" are required");
        const json_t *rn = json_object_get (v, "rownames");
        if (rn != NULL && check_rownames (rn, err) < 0)
          return -1;
        if (rn != NULL && json_array_size (rn) != (size_t) json_integer_value (nrow))
          return securer_error_set (err, EINVAL, "df: row names do not match nrow");
        size_t i;
        const json_t *e;
        json_array_foreach (arr, i, e)
        {
          if (validate (e, depth + 1, err) < 0)
            return securer_error_prefix (err, "df column %zu", i + 1);
          /* Every column but an "other" one carries its nrow rows, so
           * the rows a data frame claims are backed by what was sent. */
          enum vkind ck = kind_of (e);
          size_t rows = ck == K_DF ? (size_t) json_integer_value (json_object_get (e, "nrow"))
                                   : json_array_size (json_object_get (e, "v"));
          if (ck != K_OTHER && rows != (size_t) json_integer_value (nrow))
            return securer_error_set (err, EINVAL, "df column %zu has %zu rows, expected %lld",
                                      i + 1, rows, (long long) json_integer_value (nrow));
        }
        return check_common (v, json_array_size (arr), df_keys, what, err);
      }
    case K_RAW:
      {
        /* Bytes as one base64 string: a quarter of an array of numbers. */
        size_t n;
        if (!json_is_string (arr)
            || securer_base64_check (json_string_value (arr), json_string_length (arr), &n, NULL, 0) < 0)
          return securer_error_set (err, EINVAL, "raw: \"v\" must be a base64 string");
        return check_common (v, n, vec_keys, what, err);
      }
    case K_OTHER:
      if (!json_is_string (json_object_get (v, "text")))
        return securer_error_set (err, EINVAL, "other: \"text\" must be a string");
      return check_common (v, 0, other_keys, what, err);
    case K_NONE:
      break;
    }
  return securer_error_set (err, EINVAL, "unknown value");
}

int
securer_value_validate (const json_t *v, securer_err_t *err)
{
  return validate (v, 0, err);
}

/* ---- to plain JSON ---------------------------------------------------------- */

static json_t *
plain_elem (enum vkind k, const json_t *e, const json_t *levels)
{
  if (json_is_null (e))
    return json_null ();
  switch (k)
    {
    case K_FCT:
      return json_incref (json_array_get (levels, (size_t) json_integer_value (e) - 1));
    case K_DATE:
      if (json_is_number (e))
        {
          double d = json_number_value (e);
          if (d > -1e8 && d < 1e8)
            {
              long long days = (long long) d;
              if ((double) days > d)
                days--;  /* floor, without libm */
              time_t t = (time_t) days * 86400;
              struct tm tm;
              char buf[32];
              if (gmtime_r (&t, &tm) != NULL && strftime (buf, sizeof buf, "%Y-%m-%d", &tm) > 0)
                return json_string (buf);
            }
        }
      return json_incref ((json_t *) e);
    default:
      return json_incref ((json_t *) e);
    }
}

json_t *
securer_value_to_plain (const json_t *v)
{
  if (v == NULL || json_is_null (v))
    return json_null ();
  enum vkind k = kind_of (v);
  const json_t *arr = json_object_get (v, "v");
  const json_t *names = json_object_get (v, "n");
  switch (k)
    {
    case K_OTHER:
      return json_incref (json_object_get (v, "text"));
    case K_RAW:
      return json_incref ((json_t *) arr);  /* the base64 text */
    case K_DF:
      {
        /* The rows are made of the columns that carry them: an "other"
         * column (values R could not transfer) shows its text in a one-row
         * data frame and is left out of longer ones, and a data frame with
         * no column left has no rows.  So the rows never outnumber the
         * values R sent, whatever "nrow" claims. */
        json_t *rows = json_array ();
        size_t nrow = (size_t) json_integer_value (json_object_get (v, "nrow"));
        json_t *cols = json_array ();
        bool carried = false;
        size_t i;
        const json_t *c;
        json_array_foreach (arr, i, c)
        {
          json_array_append_new (cols, securer_value_to_plain (c));
          if (nrow == 1 || kind_of (c) != K_OTHER)
            carried = true;
        }
        for (size_t r = 0; carried && r < nrow; r++)
          {
            json_t *row = json_object ();
            json_array_foreach (cols, i, c)
            {
              if (nrow != 1 && kind_of (json_array_get (arr, i)) == K_OTHER)
                continue;
              const char *nm = json_string_value (json_array_get (names, i));
              json_t *cell = json_is_array (c) ? json_array_get (c, r) : (nrow == 1 ? (json_t *) c : NULL);
              json_object_set (row, nm ? nm : "", cell ? cell : json_null ());
            }
            json_array_append_new (rows, row);
          }
        json_decref (cols);
        return rows;
      }
    case K_LIST:
      {
        size_t n = json_array_size (arr);
        bool named = names != NULL;
        json_t *out = named ? json_object () : json_array ();
        for (size_t i = 0; i < n; i++)
          {
            json_t *e = securer_value_to_plain (json_array_get (arr, i));
            if (named)
              {
                const char *nm = json_string_value (json_array_get (names, i));
                json_object_set_new (out, nm ? nm : "", e);
              }
            else
              json_array_append_new (out, e);
          }
        return out;
      }
    case K_NONE:
      return json_null ();
    default:
      {
        const json_t *levels = json_object_get (v, "levels");
        size_t n = json_array_size (arr);
        if (names != NULL)
          {
            json_t *out = json_object ();
            for (size_t i = 0; i < n; i++)
              {
                const char *nm = json_string_value (json_array_get (names, i));
                json_object_set_new (out, nm ? nm : "", plain_elem (k, json_array_get (arr, i), levels));
              }
            return out;
          }
        if (n == 1 && json_object_get (v, "dim") == NULL)
          return plain_elem (k, json_array_get (arr, 0), levels);
        json_t *out = json_array ();
        for (size_t i = 0; i < n; i++)
          json_array_append_new (out, plain_elem (k, json_array_get (arr, i), levels));
        return out;
      }
    }
}

/* ---- the size of the plain form, before building it ---------------------- */

/* The plain form can be far larger than the tagged value it comes from:
 * each row of a data frame repeats every column name, each factor code
 * becomes its level's text, and a data frame without vector columns may
 * claim any number of rows.  A bound on the tagged message is therefore
 * no bound on the plain one, so its compact JSON size is estimated (from
 * above, escapes aside) without building anything, and conversion is
 * refused past a limit. */

static size_t
sat_add (size_t a, size_t b)
{
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t
sat_mul (size_t a, size_t b)
{
  return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/* A scalar as ordinary JSON; numbers as jansson prints them (at most 24). */
static size_t
scalar_size (const json_t *e)
{
  if (json_is_string (e))
    return json_string_length (e) + 2;
  if (json_is_number (e))
    return 24;
  return 5;  /* null, true, false */
}

static size_t
name_size (const json_t *names, size_t i)
{
  return scalar_size (json_array_get (names, i)) + 1;  /* "name": */
}

static size_t
plain_size (const json_t *v, size_t limit)
{
  if (v == NULL || json_is_null (v))
    return 4;
  enum vkind k = kind_of (v);
  const json_t *arr = json_object_get (v, "v");
  const json_t *names = json_object_get (v, "n");
  size_t n = json_array_size (arr), total = 2;
  switch (k)
    {
    case K_OTHER:
      return scalar_size (json_object_get (v, "text"));
    case K_RAW:
      return scalar_size (arr);
    case K_NONE:
      return 4;
    case K_DF:
      {
        /* Every cell appears at most once; every row repeats the names. */
        size_t row = 2;
        for (size_t i = 0; i < n; i++)
          row = sat_add (row, name_size (names, i) + 1);
        size_t nrow = (size_t) json_integer_value (json_object_get (v, "nrow"));
        total = sat_add (total, sat_mul (nrow, row + 1));
        for (size_t i = 0; i < n && total <= limit; i++)
          total = sat_add (total, plain_size (json_array_get (arr, i), limit));
        return total;
      }
    case K_LIST:
      for (size_t i = 0; i < n && total <= limit; i++)
        {
          total = sat_add (total, plain_size (json_array_get (arr, i), limit) + 1);
          if (names != NULL)
            total = sat_add (total, name_size (names, i));
        }
      return total;
    default:
      {
        const json_t *levels = json_object_get (v, "levels");
        for (size_t i = 0; i < n && total <= limit; i++)
          {
            const json_t *e = json_array_get (arr, i);
            size_t es;
            if (json_is_null (e))
              es = 4;
            else if (k == K_FCT)
              es = scalar_size (json_array_get (levels, (size_t) json_integer_value (e) - 1));
            else if (k == K_DATE)
              es = 24;
            else
              es = scalar_size (e);
            total = sat_add (total, es + 1);
            if (names != NULL)
              total = sat_add (total, name_size (names, i));
          }
        return total;
      }
    }
}

json_t *
securer_value_to_plain_max (const json_t *v, size_t max_bytes, securer_err_t *err)
{
  size_t size = plain_size (v, max_bytes);
  if (size > max_bytes)
    {
      securer_error_set (err, E2BIG, "the value as plain JSON would exceed %zu bytes", max_bytes);
      return NULL;
    }
  json_t *p = securer_value_to_plain (v);
  if (p == NULL)
    securer_error_set (err, ENOMEM, "plain value");
  return p;
}

/* ---- from plain JSON ------------------------------------------------------ */

static json_t *
vector_of (const char *tag, json_t *elems)
{
  return json_pack ("{s:s, s:o}", "t", tag, "v", elems);
}

static json_t *from_plain (const json_t *p, int depth, securer_err_t *err);

static json_t *
from_plain_array (const json_t *p, int depth, securer_err_t *err)
{
  size_t n = json_array_size (p), i;
  const json_t *e;
  int seen_bool = 0, seen_num = 0, seen_str = 0, seen_other = 0, all_int = 1;
  json_array_foreach (p, i, e)
  {
    if (json_is_null (e))
      continue;
    if (json_is_boolean (e))
      seen_bool = 1;
    else if (json_is_number (e))
      {
        seen_num = 1;
        if (!is_int32 (e))
          all_int = 0;
      }
    else if (json_is_string (e))
      seen_str = 1;
    else
      seen_other = 1;
  }
  if (n > 0 && !seen_other && seen_bool + seen_num + seen_str == 1)
    {
      const char *tag = seen_bool ? "lgl" : seen_str ? "chr" : all_int ? "int" : "dbl";
      json_t *elems = json_array ();
      json_array_foreach (p, i, e)
      {
        if (seen_num && !all_int && json_is_integer (e))
          json_array_append_new (elems, json_real ((double) json_integer_value (e)));
        else
          json_array_append (elems, (json_t *) e);
      }
      return vector_of (tag, elems);
    }
  json_t *elems = json_array ();
  json_array_foreach (p, i, e)
  {
    json_t *x = from_plain (e, depth + 1, err);
    if (x == NULL)
      {
        json_decref (elems);
        return NULL;
      }
    json_array_append_new (elems, x);
  }
  return vector_of ("list", elems);
}

static json_t *
from_plain (const json_t *p, int depth, securer_err_t *err)
{
  if (depth > SECURER_VALUE_MAX_DEPTH)
    {
      securer_error_set (err, EINVAL, "value nested deeper than %d levels", SECURER_VALUE_MAX_DEPTH);
      return NULL;
    }
  if (p == NULL || json_is_null (p))
    return json_null ();
  if (json_is_boolean (p) || json_is_number (p) || json_is_string (p))
    {
      json_t *a = json_array ();
      json_array_append (a, (json_t *) p);
      json_t *r = from_plain_array (a, depth, err);
      json_decref (a);
      return r;
    }
  if (json_is_array (p))
    return from_plain_array (p, depth, err);
  /* object -> named list */
  json_t *elems = json_array (), *names = json_array ();
  const char *key;
  const json_t *x;
  json_object_foreach ((json_t *) p, key, x)
  {
    json_t *e = from_plain (x, depth + 1, err);
    if (e == NULL)
      {
        json_decref (elems);
        json_decref (names);
        return NULL;
      }
    json_array_append_new (elems, e);
    json_array_append_new (names, json_string (key));
  }
  return json_pack ("{s:s, s:o, s:o}", "t", "list", "v", elems, "n", names);
}

json_t *
securer_value_from_plain (const json_t *plain, securer_err_t *err)
{
  return from_plain (plain, 0, err);
}
