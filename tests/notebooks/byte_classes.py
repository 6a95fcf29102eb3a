"""The near misses' byte classes as the catalogue tests of 00's and 01's checkers see them: each
class a test on one character of a value decoded with surrogateescape (a byte that is not UTF-8
is one character of its own). Written apart from trafikey_lab.near_misses, so that the tests do
not take the generator's own word for what each class holds."""

WHITESPACE = " \t\n\r\x0b\x0c"
IN_CLASS = {
    "ASCII whitespace": lambda c: c in WHITESPACE,
    "a NUL or another control byte": lambda c: (c < " " and c not in WHITESPACE) or c == "\x7f",
    "a byte at or above 0x80": lambda c: not c.isascii() and not c.isdigit(),
    "an upper-case hex digit": lambda c: c in "ABCDEF",
    "a letter past f": lambda c: c.isascii() and c.isalpha() and c.lower() > "f",
    "a digit of another script (UTF-8)": lambda c: not c.isascii() and c.isdigit(),
}
