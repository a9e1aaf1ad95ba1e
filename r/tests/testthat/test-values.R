# Values that R <-> R round trips must keep: base vectors, attributes and
# the classes the host restores (docs/protocol.md, "Values").
value_exprs <- c(
  "NULL", "c(TRUE, NA)", "c(1L, NA)", "c(0.1 + 0.2, NA, NaN, Inf, -Inf, 1e300, pi, -0)",
  "c(a = 'x', b = NA)", "'quote \" backslash \\\\ newline \\n tab \\t bell \\a'", "factor(c('b', 'a', NA))",
  "factor(c('lo', 'hi'), levels = c('lo', 'hi'), ordered = TRUE)",
  "as.Date(c('2024-01-02', NA))", "as.POSIXct(1.7e9, tz = 'America/New_York', origin = '1970-01-01')",
  "structure(1.7e9, class = c('POSIXct', 'POSIXt'))", "as.POSIXlt('2024-01-01 10:00:00', tz = 'UTC')",
  "list(1, list('a', NULL))", "data.frame(x = 1:2, y = c('a', 'b'))", "matrix(1:6, 2)",
  "matrix(1:4, 2, dimnames = list(c('a', 'b'), c('x', 'y')))",
  "array(1:8, c(2, 2, 2), dimnames = list(A = c('a', 'b'), NULL, C = c('u', 'v')))",
  "as.difftime(c(90, 30), units = 'mins')", "table(c('a', 'b', 'a'))", "noquote(c('a', 'b'))",
  "structure(c(a = 1.5), comment = 'note')",
  "data.frame(x = 1:3, row.names = c('r1', 'r2', 'r3'))", "data.frame(x = 1:5)[c(2, 4), , drop = FALSE]",
  "data.frame()", "data.frame(x = 1, row.names = 'a')[0, , drop = FALSE]")
# Values whose classes the host keeps as data: what comes back is the value
# without them (or with the allowed class they end in), its class in
# attr(, "securer_class").
data_exprs <- c(
  "ts(1:10, start = 2000, frequency = 4)", "structure(1:3, myattr = 'hello', class = 'myclass')",
  "structure(list(a = 1, b = list(c = 'x')), class = c('foo', 'bar'))", "summary(c(1, 2, 3))", "I(1:3)",
  "structure(list(x = 1:2), class = c('tbl_df', 'tbl', 'data.frame'), row.names = 1:2)")
as_data <- function(v) {
  cls <- class(v)
  keep <- c("table", "data.frame")[c("table", "data.frame") %in% cls]
  v <- unclass(v)
  if (length(keep)) class(v) <- keep
  attr(v, "securer_class") <- cls
  v
}
value_cases <- function(exprs = value_exprs) lapply(exprs, function(e) eval(parse(text = e)))

test_that("values round-trip exactly through the tagged encoding", {
  for (v in value_cases()) {
    j <- jsonlite::parse_json(securer:::encode_value(v), simplifyVector = FALSE)
    expect_identical(securer:::decode_value(j), v)
  }
  z <- securer:::decode_value(jsonlite::parse_json(securer:::encode_value(-0), simplifyVector = FALSE))
  expect_identical(1 / z, -Inf)
})

test_that("classes the host does not restore come back as data", {
  for (v in value_cases(data_exprs)) {
    j <- jsonlite::parse_json(securer:::encode_value(v), simplifyVector = FALSE)
    expect_identical(securer:::decode_value(j), as_data(v))
  }
})

test_that("the decoder refuses what is not a value", {
  expect_error(dec('{"t":"closure","v":[]}'), "unknown tag")
  expect_error(dec('{"t":"dbl","v":["x"]}'), "not a number")
  expect_error(dec('{"t":"int","v":[1.5]}'), "not an integer")
  expect_error(dec('{"t":"int","v":[1],"evil":1}'), "unexpected key")
  expect_error(dec('{"t":"int","v":[1],"v":[2]}'), "given twice")
  expect_error(dec('{"t":"fct","v":[3],"levels":["a"]}'), "out of range")
  expect_error(dec('{"t":"dbl","v":[1,2],"dim":[3]}'), "dim")
  expect_error(dec('{"t":"df","n":["a"],"nrow":2,"v":[{"t":"int","v":[1]}]}'), "wrong length")
})

test_that("the decoder refuses hostile attributes and classes with a clear error", {
  expect_error(dec('{"t":"dbl","v":[1],"attr":{"class":{"t":"dbl","v":[1]}}}'), "attribute 'class' must be given by its own key")
  expect_error(dec('{"t":"dbl","v":[1],"class":[1]}'), "chr element that is not a string")
  expect_error(dec('{"t":"dbl","v":[1],"class":[]}'), "1 to 64")
  expect_error(dec('{"t":"dbl","v":[1],"class":["factor"]}'), "class 'factor' on a dbl value")
  expect_error(dec('{"t":"list","v":[],"class":["data.frame"]}'), "class 'data.frame' on a list value")
  expect_error(dec('{"t":"fct","v":[1],"levels":["a"],"attr":{"levels":{"t":"chr","v":["b"]}}}'), "own key")
  expect_error(dec('{"t":"dbl","v":[1],"attr":{"a":null}}'), "is NULL")
  expect_error(dec('{"t":"dbl","v":[1],"attr":{"":{"t":"dbl","v":[1]}}}'), "without a name")
  expect_error(dec('{"t":"dbl","v":[1],"attr":{"a":{"t":"int","v":[1]},"a":{"t":"int","v":[2]}}}'), "given twice")
  expect_error(dec('{"t":"int","v":[1,2],"dim":[2],"attr":{"dimnames":{"t":"list","v":[{"t":"chr","v":["a"]}]}}}'),
               "attribute 'dimnames'")
  expect_error(dec('{"t":"dbl","v":[1],"attr":{"comment":{"t":"dbl","v":[1]}}}'), "attribute 'comment'")
  expect_error(dec('{"t":"dbl","v":[1],"attr":{"f":{"t":"closure","v":[]}}}'), "unknown tag")
  many <- paste0('"a', 1:65, '":{"t":"int","v":[1]}', collapse = ",")
  expect_error(dec(paste0('{"t":"dbl","v":[1],"attr":{', many, '}}')), "65 attributes, at most 64")
  deep <- '{"t":"int","v":[1]}'
  for (i in 1:70) deep <- paste0('{"t":"int","v":[1],"attr":{"a":', deep, '}}')
  expect_error(dec(deep), "nested over 64 levels")
})

test_that("values the host cannot send are refused", {
  expect_error(securer:::encode_value(function() 1), "cannot be sent")
  expect_error(securer:::encode_value(new.env()), "cannot be sent")
  expect_error(securer:::encode_value(quote(x + 1)), "cannot be sent")
  expect_error(securer:::encode_value(structure(1, f = function() 1)), "cannot be sent")
})

test_that("values cross from the sandbox and back through a tool unchanged", {
  skip_if_no_securer()
  echo <- securer_tool("echo", "Returns its argument", function(x) x, list(x = "any"), classes = TRUE)
  s <- SecureSession$new(tools = list(echo))
  on.exit(s$close())
  for (code in value_exprs) {
    v <- eval(parse(text = code))
    expect_identical(s$execute(code), v, info = code)
    s$execute(paste0("x <- ", code))
    expect_true(s$execute("identical(echo(x), x)"), info = code)
  }
  for (code in data_exprs) expect_identical(s$execute(code), as_data(eval(parse(text = code))), info = code)
})

test_that("an lm fit comes back as data; code objects as placeholders", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  fit <- s$execute("lm(mpg ~ wt, data = mtcars)")
  expect_null(oldClass(fit))
  expect_identical(attr(fit, "securer_class"), "lm")
  expect_equal(coef(fit), coef(lm(mpg ~ wt, data = mtcars)))
  expect_identical(attr(fit$qr, "securer_class"), "qr")
  expect_s3_class(fit$terms, "securer_other")
  expect_s3_class(s$execute("function(x) x"), "securer_other")
  expect_s3_class(s$execute("new.env()"), "securer_other")
  # An attribute that could not cross is left out, not a placeholder.
  expect_identical(s$execute("structure(1, env = globalenv())"), 1)
})
