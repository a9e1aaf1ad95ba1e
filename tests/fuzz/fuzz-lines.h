/* Shared by the fuzz targets whose input arrives as JSON lines. */
#ifndef SECURER_FUZZ_LINES_H
#define SECURER_FUZZ_LINES_H

#include <stddef.h>
#include <stdint.h>

typedef void (*fuzz_line_fn) (const char *line, size_t len);

/* Writes data into a non-blocking pipe in uneven chunks and reads it back
 * through the channel framing the host uses (src/lib/session/channel.c),
 * handing every complete line to fn, until end of input or until the
 * channel refuses a line longer than max_message. */
void fuzz_feed_lines (const uint8_t *data, size_t size, size_t max_message, fuzz_line_fn fn);

#endif
