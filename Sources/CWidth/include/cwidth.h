#ifndef SYNCHAT_CWIDTH_H
#define SYNCHAT_CWIDTH_H
#include <stdint.h>

/// The C library's wcwidth for one Unicode scalar: columns it takes in a terminal
/// (0 for combining marks, 2 for wide characters, -1 for non-printable).
int synchat_wcwidth(uint32_t scalar);

/// Makes the C library use a UTF-8 locale (the environment's, else C.UTF-8), so that
/// wcwidth answers for non-ASCII text. Returns 1 when a UTF-8 locale is active.
int synchat_use_utf8_locale(void);

#endif
