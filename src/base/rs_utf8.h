/* SPDX-License-Identifier: Apache-2.0 */
/* rs_utf8.h - UTF-8 validation, one sequence at a time. */
#ifndef RS_UTF8_H
#define RS_UTF8_H

/* Length of the valid UTF-8 sequence at s (1..4), 0 when s does not start
 * one: a stray continuation byte, an overlong form, a surrogate, a code
 * point past U+10FFFF, or a sequence cut short (s is NUL-terminated, and
 * a NUL is never a continuation byte, so nothing past it is read). */
int rs_utf8_seq(const unsigned char *s);

#endif
