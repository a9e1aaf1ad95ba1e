#!/bin/sh
# Runs a session suite, named NAME-template.tpl by make check for its second
# run, with every session started from its policy's template: the same
# suite, the same assertions, the other way of starting R.
# SECURER_SESSION_TEMPLATE=on refuses rather than starting cold, so a
# session that cannot have a template fails the run.
test=${1%-template.tpl}
[ -x "$test" ] || test=$test.sh
SECURER_SESSION_TEMPLATE=on
export SECURER_SESSION_TEMPLATE
exec "$test"
