/* Plots and raw vectors against a real sandboxed R: every page drawn on
 * R's default device comes back as an image, in drawing order, within the
 * execution's caps; text on them is drawn with the fonts the r policy
 * mounts. */
#include <config.h>

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "securer/session.h"
#include "session/internal.h"

static struct securer_session *
open_session (void)
{
  struct securer_session_opts o = { 0 };
  securer_err_t err = NULL;
  struct securer_session *s = NULL;
  cr_assert_eq (securer_session_open (&o, &s, &err), 0, "open: %s", err ? securer_error_message (err) : "");
  return s;
}

static void
run (struct securer_session *s, const char *code, const struct securer_exec_opts *xo, struct securer_result *r)
{
  securer_err_t err = NULL;
  securer_session_execute (s, code, xo, r, &err);
  securer_error_free (&err);
}

/* The image's bytes, decoded (the host checked its base64). */
static unsigned char *
decode (const struct securer_plot *p, size_t *n)
{
  size_t len = strlen (p->data);
  unsigned char *buf = malloc (len);
  cr_assert_eq (securer_base64_check (p->data, len, n, buf, len), 0);
  cr_assert_eq (*n, p->bytes);
  return buf;
}

static bool
is_png (const struct securer_plot *p)
{
  size_t n;
  unsigned char *b = decode (p, &n);
  bool ok = p->format == SECURER_PLOT_PNG && n > 8 && memcmp (b, "\x89PNG\r\n\x1a\n", 8) == 0;
  free (b);
  return ok;
}

/* The width and height an IHDR chunk gives (bytes 16..23). */
static void
png_size (const struct securer_plot *p, unsigned *w, unsigned *h)
{
  size_t n;
  unsigned char *b = decode (p, &n);
  cr_assert (n > 24);
  *w = (unsigned) b[16] << 24 | b[17] << 16 | b[18] << 8 | b[19];
  *h = (unsigned) b[20] << 24 | b[21] << 16 | b[22] << 8 | b[23];
  free (b);
}

Test (plots, pages_come_back_in_drawing_order)
{
  struct securer_session *s = open_session ();
  struct securer_result r;
  /* Three pages: two of base graphics (four panels on the second, one
   * page), one of grid; the value is still the value. */
  run (s, "plot(1:10); par(mfrow = c(2, 2)); for (i in 1:4) plot(i); library(grid); grid.newpage(); "
          "grid.rect(); 42", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK, "%s", r.error ? r.error : "");
  cr_assert_eq (json_number_value (json_array_get (json_object_get (r.value, "v"), 0)), 42);
  cr_assert_eq (r.n_plots, 3, "%zu pages", r.n_plots);
  cr_assert_eq (r.plots_dropped, 0);
  for (size_t i = 0; i < r.n_plots; i++)
    {
      cr_assert (is_png (&r.plots[i]), "page %zu is no PNG", i + 1);
      unsigned w, h;
      png_size (&r.plots[i], &w, &h);
      cr_assert (w == 480 && h == 480 && r.plots[i].width == 480, "page %zu is %ux%u", i + 1, w, h);
    }
  /* Four panels draw more than one scatter plot, a rectangle less. */
  cr_assert_gt (r.plots[1].bytes, r.plots[0].bytes);
  cr_assert_lt (r.plots[2].bytes, r.plots[0].bytes);
  securer_result_clear (&r);
  /* An untouched page is not sent again; a line added to it is a new image. */
  run (s, "1", NULL, &r);
  cr_assert_eq (r.n_plots, 0);
  securer_result_clear (&r);
  run (s, "grid.circle()", NULL, &r);
  cr_assert_eq (r.n_plots, 1);
  securer_result_clear (&r);
  /* The pages drawn before an error come back with it, and the page of
   * an execution that closed the device itself too. */
  run (s, "plot(1); stop('late')", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_ERROR);
  cr_assert_eq (r.n_plots, 1);
  securer_result_clear (&r);
  run (s, "plot(2)\ndev.off()", NULL, &r);
  cr_assert_eq (r.n_plots, 1);
  securer_result_clear (&r);
  securer_session_close (s);
}

Test (plots, format_size_and_off)
{
  struct securer_session *s = open_session ();
  struct securer_result r;
  struct securer_exec_opts xo = { .plot_width = 600, .plot_height = 400, .plot_res = 144 };
  run (s, "plot(1:3)", &xo, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK, "%s", r.error ? r.error : "");
  cr_assert_eq (r.n_plots, 1);
  unsigned w, h;
  png_size (&r.plots[0], &w, &h);
  cr_assert (w == 600 && h == 400, "%ux%u", w, h);
  securer_result_clear (&r);
  xo = (struct securer_exec_opts) { .plot_format = SECURER_PLOT_SVG };
  run (s, "plot(1:3)", &xo, &r);
  cr_assert_eq (r.n_plots, 1);
  cr_assert_eq (r.plots[0].format, SECURER_PLOT_SVG);
  size_t n;
  unsigned char *b = decode (&r.plots[0], &n);
  cr_assert (memmem (b, n, "<svg", 4) != NULL);
  free (b);
  securer_result_clear (&r);
  /* Off: nothing rendered, and the page is not sent by a later execution. */
  xo = (struct securer_exec_opts) { .plot_format = SECURER_PLOT_NONE };
  run (s, "plot(1:5)", &xo, &r);
  cr_assert_eq (r.n_plots, 0);
  cr_assert_eq (r.plots_dropped, 0);
  securer_result_clear (&r);
  run (s, "plot(1:6)", NULL, &r);
  cr_assert_eq (r.n_plots, 1, "%zu pages: the one drawn with plots off came back", r.n_plots);
  securer_result_clear (&r);
  xo = (struct securer_exec_opts) { .plot_width = 10001 };
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_execute (s, "1", &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_REJECTED);
  cr_assert (strstr (r.error, "1..10000 pixels") != NULL, "%s", r.error);
  securer_error_free (&err);
  securer_result_clear (&r);
  securer_session_close (s);
}

/* A flood of pages is counted, never lost silently, and the session
 * stays usable. */
Test (plots, caps_count_what_is_not_kept, .timeout = 120)
{
  struct securer_session *s = open_session ();
  struct securer_result r;
  struct securer_exec_opts xo = { .max_plots = 3 };
  run (s, "for (i in 1:10) plot(i); 'done'", &xo, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK);
  cr_assert_eq (r.n_plots, 3);
  cr_assert_eq (r.plots_dropped, 7);
  securer_result_clear (&r);
  /* Bytes: the first page of ~4 KB fits 6000, the second does not. */
  xo = (struct securer_exec_opts) { .max_plot_bytes = 6000 };
  run (s, "plot(1:10); plot(10:1)", &xo, &r);
  cr_assert_eq (r.n_plots, 1);
  cr_assert_eq (r.plots_dropped, 1);
  securer_result_clear (&r);
  /* The default caps: 50 pages. */
  run (s, "for (i in 1:200) plot(i)", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK, "%s", r.error ? r.error : "");
  cr_assert_eq (r.n_plots, SECURER_DEFAULT_MAX_PLOTS);
  cr_assert_eq (r.plots_dropped, 200 - SECURER_DEFAULT_MAX_PLOTS);
  securer_result_clear (&r);
  run (s, "sum(1:10)", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK);
  securer_result_clear (&r);
  securer_session_close (s);
}

/* Text is drawn: with no fonts in the sandbox fontconfig complains on
 * stderr and cairo draws no glyph at all. */
Test (plots, text_is_drawn_with_fonts)
{
  if (access ("/usr/share/fonts", R_OK) != 0)
    cr_skip_test ("the host has no /usr/share/fonts to mount");
  struct securer_session *s = open_session ();
  struct securer_result r;
  struct securer_exec_opts xo = { .plot_format = SECURER_PLOT_SVG };
  run (s, "plot.new(); text(0.5, 0.5, 'AHA', cex = 3)", &xo, &r);
  cr_assert_eq (r.n_plots, 1);
  for (size_t i = 0; i < r.n_output; i++)
    cr_assert_null (strstr (r.output[i].text, "Fontconfig"), "%s", r.output[i].text);
  size_t n;
  unsigned char *b = decode (&r.plots[0], &n);
  /* cairo's SVG draws each distinct glyph once, as a symbol. */
  cr_assert (memmem (b, n, "id=\"glyph0-1\"", 13) != NULL, "no glyph was drawn");
  free (b);
  securer_result_clear (&r);
  securer_session_close (s);
}

Test (plots, raw_vectors_cross)
{
  struct securer_session *s = open_session ();
  struct securer_result r;
  run (s, "x <- as.raw(c(0, 1, 255)); names(x) <- c('a', 'b', 'c'); x", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK, "%s", r.error ? r.error : "");
  char *j = json_dumps (r.value, JSON_COMPACT | JSON_SORT_KEYS);
  cr_assert_str_eq (j, "{\"n\":[\"a\",\"b\",\"c\"],\"t\":\"raw\",\"v\":\"AAH/\"}");
  free (j);
  securer_result_clear (&r);
  run (s, "raw(0)", NULL, &r);
  cr_assert_str_eq (json_string_value (json_object_get (r.value, "v")), "");
  securer_result_clear (&r);
  /* Bounded like any value: a raw vector over the message size is refused
   * by R itself, which keeps its state. */
  run (s, "big <- as.raw(rep(1:255, 5000)); big", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_TOO_LARGE, "%s", securer_exec_status_name (r.status));
  securer_result_clear (&r);
  run (s, "length(big)", NULL, &r);
  cr_assert_eq (r.status, SECURER_EXEC_OK);
  securer_result_clear (&r);
  securer_session_close (s);
}
