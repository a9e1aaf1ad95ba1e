library(testthat)
library(securer)

test_check("securer")
