test_that("values round-trip exactly through the tagged encoding", {
  vals <- list(NULL, c(TRUE, NA), c(1L, NA), c(0.1 + 0.2, NA, NaN, Inf, -Inf, 1e300, pi),
               c(a = "x", b = NA), factor(c("b", "a", NA)), factor(c("lo", "hi"), levels = c("lo", "hi"), ordered = TRUE),
               as.Date("2024-01-02"), as.POSIXct(1.7e9, tz = "UTC", origin = "1970-01-01"),
               list(1, list("a", NULL)), data.frame(x = 1:2, y = c("a", "b")), matrix(1:6, 2))
  for (v in vals) {
    j <- jsonlite::parse_json(securer:::encode_value(v), simplifyVector = FALSE)
    if (is.ordered(v)) j$class <- list("ordered", "factor")
    expect_identical(securer:::decode_value(j), v)
  }
  z <- securer:::decode_value(jsonlite::parse_json(securer:::encode_value(-0), simplifyVector = FALSE))
  expect_identical(1 / z, -Inf)
})

test_that("the decoder refuses what is not a value", {
  dec <- function(s) securer:::decode_value(jsonlite::parse_json(s, simplifyVector = FALSE))
  expect_error(dec('{"t":"closure","v":[]}'), "unknown tag")
  expect_error(dec('{"t":"dbl","v":["x"]}'), "not a number")
  expect_error(dec('{"t":"int","v":[1.5]}'), "not an integer")
  expect_error(dec('{"t":"int","v":[1],"attr":1}'), "unexpected key")
  expect_error(dec('{"t":"fct","v":[3],"levels":["a"]}'), "out of range")
  expect_error(dec('{"t":"dbl","v":[1,2],"dim":[3]}'), "dim")
  expect_error(dec('{"t":"df","n":["a"],"nrow":2,"v":[{"t":"int","v":[1]}]}'), "wrong length")
})

test_that("values the host cannot send are refused", {
  expect_error(securer:::encode_value(function() 1), "cannot be sent")
  expect_error(securer:::encode_value(new.env()), "cannot be sent")
})
