/* The text step of the "tweet" rule set of shingle.rules (its Lua function
 * rules.tweet_text is the reference): the retweet markers, @mentions and
 * URLs that differ between copies of the same message are dropped, after
 * the 2009 shingling post on Twitter duplicates. In C, the dropped spans
 * become as many spaces (the Lua function puts one space for each), so every
 * byte keeps its offset; the tokens are the same, since the tokenizer takes
 * any run of white space as one separator. */
#ifndef SHINGLE_TWEET_H
#define SHINGLE_TWEET_H

#include <stddef.h>

/* Blank, in place, what rules.tweet_text replaces in s[0..n), in its order:
 *   https?://%S+          URLs
 *   %f[%w]RT%f[%W]:?      retweet markers
 *   @[%w_]+:?             @mentions
 *   ^%s*[%w_]+:%s         a leading "user: " as timelines print it
 * (Lua patterns, C locale: %w is ASCII letters and digits, %s is space,
 * \t, \n, \v, \f, \r; each later pattern sees the earlier ones' output). */
void sh_tweet_blank(char *s, size_t n);

#endif
