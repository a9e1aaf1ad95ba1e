png_magic <- as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a))

# Width and height from a PNG's IHDR chunk.
png_dim <- function(bytes) {
  be32 <- function(b) sum(as.integer(b) * 256^(3:0))
  c(be32(bytes[17:20]), be32(bytes[21:24]))
}

test_that("every page drawn comes back in order, and execute() still returns the value", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  r <- s$run("plot(1:10); hist(c(1, 2, 2, 3, 3, 3)); library(grid); grid.newpage(); grid.rect(); 42")
  expect_identical(r$value, 42)
  expect_length(r$plots, 3)
  expect_identical(r$plots_dropped, 0)
  for (p in r$plots) {
    expect_s3_class(p, "securer_plot")
    expect_identical(p$format, "png")
    expect_identical(p$data[1:8], png_magic)
    expect_identical(png_dim(p$data), c(480, 480))
  }
  # Three different pages: three different images.
  expect_length(unique(lapply(r$plots, `[[`, "data")), 3)
  expect_match(format(r), "^\\[plot 2: <securer_plot: png 480x480, [0-9]+ bytes>\\]$", all = FALSE)
  # An untouched page is not sent again; a line drawn on it is.
  expect_length(s$run("1")$plots, 0)
  expect_length(s$run("grid.circle()")$plots, 1)
  expect_identical(s$execute("plot(1); 7"), 7)
  # What execute() drew was not rendered and does not come back later.
  expect_length(s$run("2")$plots, 0)
})

test_that("plots come back before an error, in SVG and at the size asked for", {
  skip_if_no_securer()
  s <- SecureSession$new(plots = plot_options(width = 640, height = 360, res = 96))
  on.exit(s$close())
  r <- s$run("plot(1:3); stop('after the plot')")
  expect_identical(r$status, "error")
  expect_length(r$plots, 1)
  expect_identical(png_dim(r$plots[[1]]$data), c(640, 360))
  r <- s$run("plot(3:1)", plots = plot_options("svg", width = 300, height = 300))
  expect_identical(r$plots[[1]]$format, "svg")
  expect_match(rawToChar(r$plots[[1]]$data), "<svg", fixed = TRUE)
  expect_length(s$run("plot(2)", plots = FALSE)$plots, 0)
  f <- tempfile(fileext = ".png")
  on.exit(unlink(f), add = TRUE)
  p <- s$run("plot(5)")$plots[[1]]
  save_plot(p, f)
  expect_identical(readBin(f, "raw", file.size(f)), p$data)
})

test_that("a flood of pages is counted, not kept, and the session goes on", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  r <- s$run("for (i in 1:200) plot(i); 'done'")
  expect_identical(r$value, "done")
  expect_length(r$plots, 50)
  expect_identical(r$plots_dropped, 150)
  expect_match(format(r), "[150 plots not kept: over the execution's limits on plots]", fixed = TRUE, all = FALSE)
  r <- s$run("for (i in 1:5) plot(i)", plots = plot_options(max_plots = 2))
  expect_length(r$plots, 2)
  expect_identical(r$plots_dropped, 3)
  # Asking for more than serve allows is refused, and says which option.
  expect_error(s$run("plot(1)", plots = plot_options(max_plots = 51)), "--max-plots")
  expect_identical(s$execute("1 + 1"), 2)
})

test_that("bad plot options are refused before anything runs", {
  skip_if_no_securer()
  expect_error(plot_options("gif"), "\"png\" or \"svg\"")
  expect_error(plot_options(width = 0), "plot width must be a whole number from 1 to 10,000")
  expect_error(plot_options(height = 20000), "plot height")
  expect_error(plot_options(res = 1.5), "plot res")
  expect_error(SecureSession$new(plots = "png"), "plots must be TRUE, FALSE or plot_options")
  expect_error(save_plot(list(), tempfile()), "securer_plot")
})

test_that("text on plots is drawn with the sandbox's fonts", {
  skip_if_no_securer()
  if (!dir.exists("/usr/share/fonts")) skip("the host has no /usr/share/fonts")
  s <- SecureSession$new()
  on.exit(s$close())
  r <- s$run("plot.new(); text(0.5, 0.5, 'Hello', cex = 4)", plots = plot_options("svg"))
  expect_false(any(grepl("Fontconfig", r$stderr)))
  # cairo's SVG defines each glyph it draws once: H, e, l, o.
  svg <- rawToChar(r$plots[[1]]$data)
  glyphs <- unique(regmatches(svg, gregexpr("id=\"glyph[0-9]+-[0-9]+\"", svg))[[1]])
  expect_gte(length(glyphs), 4)
  blank <- s$run("plot.new()")$plots[[1]]
  text <- s$run("plot.new(); text(0.5, 0.5, 'Hello', cex = 4)")$plots[[1]]
  expect_gt(length(text$data), length(blank$data) + 300)
})

test_that("raw vectors cross both ways", {
  skip_if_no_securer()
  echo <- securer_tool("echo", "returns its argument", fn = function(x) x, args = list(x = "any"))
  s <- SecureSession$new(tools = list(echo))
  on.exit(s$close())
  x <- s$execute("x <- as.raw(c(0, 1, 127, 255)); names(x) <- letters[1:4]; x")
  expect_identical(x, c(a = as.raw(0), b = as.raw(1), c = as.raw(127), d = as.raw(255)))
  expect_identical(s$execute("raw(0)"), raw(0))
  expect_identical(s$execute("identical(echo(x), x)"), TRUE)
  expect_identical(s$execute("typeof(echo(charToRaw('abc')))"), "raw")
  # As large as any value may be, and no larger.
  r <- s$run("as.raw(rep(0:255, 5000))")
  expect_identical(r$status, "too_large")
  expect_identical(length(s$execute("as.raw(rep(0:255, 1000))")), 256000L)
  expect_error(dec('{"t":"raw","v":"AQ"}'), "not base64")
  expect_error(dec('{"t":"raw","v":[1,2]}'), "base64 string")
})

test_that("a pool's results carry their plots", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 2)
  on.exit(pool$close())
  rs <- pool$map(c("plot(1)", "1", "plot(1); plot(2)"))
  expect_identical(vapply(rs, function(r) length(r$plots), 1L), c(1L, 0L, 2L))
  expect_length(pool$run("plot(3)", plots = FALSE)$plots, 0)
})
