#!/usr/bin/env python3
"""Writes the string, bytes and %reject'ed terminals of grammars/python.lark
(STRING, LONG_STRING, BYTES, LONG_BYTES, UNTERMINATED_TRIPLE, INCOMPLETE_NUMBER,
NUMBER_THEN_KEYWORD) from the pieces below, in place. `--check`: only verify.
`--grammar FILE`: rewrite FILE instead of GRAMMAR below (scripts/gen/check.sh
rewrites a copy and compares).

  python3 scripts/gen/python_strings.py [--check] [--grammar FILE]
"""
import os
import re
import sys

# The checked-in output.
GRAMMAR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "grammars", "python.lark")
if '--grammar' in sys.argv:
    GRAMMAR = sys.argv[sys.argv.index('--grammar') + 1]

# Escapes: checked ones (CPython 3.11: \x + 2 hex, \u + 4, \U + 8 up to 10FFFF,
# \N{...}; any other character is kept as is), raw (anything but NUL), and bytes.
ESC_STR = r'\\(?:\r\n|[^\x00NuUx]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U(?:000[0-9a-fA-F]{5}|0010[0-9a-fA-F]{4})|N\{[A-Za-z0-9 \-]+\})'
ESC_RAW = r'\\(?:\r\n|[^\x00])'
ESC_BYTES = r'\\(?:\r\n|[\x01-wyz{-\x7f]|x[0-9a-fA-F]{2})'
ESC_RAW_BYTES = r'\\(?:\r\n|[\x01-\x7f])'
STR_PREFIX, STR_RAW_PREFIX = '[uUfF]?', '(?:[rR]|[fF][rR]|[rR][fF])'
F_RAW_PREFIX = '(?:[fF][rR]|[rR][fF])'
BYTES_PREFIX, BYTES_RAW_PREFIX = '[bB]', '(?:[bB][rR]|[rR][bB])'
ANY_PREFIX = '(?:[uUfFrRbB]|[fF][rR]|[rR][fF]|[bB][rR]|[rR][bB])?'


def plain(q, ascii_only, multiline):
    """A body character other than the quote, a backslash and NUL (and a newline on one line)."""
    if ascii_only:
        c = {'"': r'\x01-!#-\[\]-\x7f', "'": r'\x01-&(-\[\]-\x7f'}[q]
        return '[' + (c if multiline else c.replace(r'\x01-', r'\x01-\t\x0b\x0c\x0e-', 1)) + ']'
    return '[^' + q + r'\\' + ('' if multiline else r'\r\n') + r'\x00]'


def one_line(q, ascii_only, esc):
    return f'{q}(?:{plain(q, ascii_only, False)}|{esc})*{q}'


def triple_body(q, ascii_only, esc):
    u = f'(?:{plain(q, ascii_only, True)}|{esc})'
    return f'{q * 3}(?:{u}|{q}{q}?{u})*'


def triple(q, ascii_only, esc):
    return triple_body(q, ascii_only, esc) + q * 3


def f_one_line(q, _ascii_only, esc):
    """A one-line f-string body. Literal text: `{` and `}` only doubled, escapes
    that do not take a brace (a backslash before a brace stands alone). A
    replacement field whose expression is simple (no string, no nested `{`, no
    `: ! =`) is checked: it starts an expression (not `} ! : = #` or a space),
    holds only printable characters that can appear outside a string (no
    backslash, `#` or control character), and ends at the first `}`; then literal
    text again. The first field that is not simple only needs a closing `}`
    somewhere; after it nothing is checked."""
    other = "'" if q == '"' else '"'
    plain = '[^' + q + r'\\\r\n\x00'
    ws = r'[ \t\f]'
    no_brace = esc.replace(r'[^\x00', r'[^\x00{}', 1)
    assert no_brace != esc
    lit = '(?:' + plain + r'{}]|\{\{|\}\}|' + no_brace + r'|\\\{\{|\\\}\})*'
    # printable ASCII but " # ' : ! = \ { }; any non-ASCII
    e0 = r'(?:[\t\f $%&(-9;<>-\[\]-z|~]|[^\x00-\x7f])'
    first = r'(?:[$%&(-9;<>-\[\]-z|~]|[^\x00-\x7f])'
    open_ = r'\\?\{'
    simple = open_ + ws + '*' + first + e0 + r'*\}'
    inner = '(?:' + plain + '}]|' + esc + ')*'
    tail = inner + r'\\?\}' + '(?:' + plain + ']|' + esc + ')*'
    heads = [ws + '*' + first + e0 + '*[:!={' + other + ']', ws + r'+\{', ws + '*' + other]
    complex_ = open_ + '(?:' + '|'.join(heads) + ')' + tail
    return q + lit + '(?:' + simple + lit + ')*(?:' + complex_ + ')?' + q


def f_triple(q, _ascii_only, esc):
    """A triple-quoted f-string body, checked as `f_one_line` (a run of one or two
    quotes may precede any other unit; the expression of the first field may
    start with a quote)."""
    quotes_ = '(?:' + q + q + '?)?'
    plain = '[^' + q + r'\\\x00'
    ws = r'[ \t\f\r\n]'
    no_brace = esc.replace(r'[^\x00', r'[^\x00{}', 1)
    assert no_brace != esc
    pre = '(?:' + quotes_ + '(?:' + plain + r'{}]|\{\{|\}\}|' + no_brace + r'|\\\{\{|\\\}\}))*'
    first = plain + r'{}!:=# \t\f\r\n]'
    inner_u = '(?:' + plain + '}]|' + esc + ')'
    open_ = quotes_ + r'\\?\{'
    close = quotes_ + r'\\?\}'
    field = (open_ + '(?:(?:' + ws + '*' + first + '|' + ws + r'+\{|' + ws + '*' + q + q + '?' + inner_u + ')'
             + '(?:' + quotes_ + inner_u + ')*' + close + '|' + ws + '*' + q + q + r'?\\?\})')
    rest = '(?:' + quotes_ + '(?:' + plain + ']|' + esc + '))*'
    return q * 3 + pre + '(?:' + field + rest + ')?' + q * 3


def quotes(f, ascii_only, esc):
    return '(?:' + f('"', ascii_only, esc) + '|' + f("'", ascii_only, esc) + ')'


def terminals(number):
    return {
        'STRING': f'[rR]{quotes(one_line, False, ESC_RAW)}|[uU]?{quotes(one_line, False, ESC_STR)}'
                  f'|{F_RAW_PREFIX}{quotes(f_one_line, False, ESC_RAW)}|[fF]{quotes(f_one_line, False, ESC_STR)}',
        'LONG_STRING': f'[rR]{quotes(triple, False, ESC_RAW)}|[uU]?{quotes(triple, False, ESC_STR)}'
                       f'|{F_RAW_PREFIX}{quotes(f_triple, False, ESC_RAW)}|[fF]{quotes(f_triple, False, ESC_STR)}',
        'BYTES': f'{BYTES_RAW_PREFIX}{quotes(one_line, True, ESC_RAW_BYTES)}|{BYTES_PREFIX}{quotes(one_line, True, ESC_BYTES)}',
        'LONG_BYTES': f'{BYTES_RAW_PREFIX}{quotes(triple, True, ESC_RAW_BYTES)}|{BYTES_PREFIX}{quotes(triple, True, ESC_BYTES)}',
        # every unterminated prefix of a triple-quoted literal (the body without its closing quotes)
        'UNTERMINATED_TRIPLE': f'{ANY_PREFIX}{quotes(triple_body, False, ESC_RAW)}',
        'INCOMPLETE_NUMBER': '0[oObBxX]',
        'NUMBER_THEN_KEYWORD': f'(?:{number})(?:as|from)',
    }


def main():
    text = open(GRAMMAR, encoding='utf-8').read()
    number = re.search(r'^NUMBER: /(.*)/$', text, re.M).group(1)
    new = text
    for name, rx in terminals(number).items():
        new, n = re.subn(rf'^{name}: /.*/$', lambda _: f'{name}: /{rx}/', new, flags=re.M)
        if n != 1:
            sys.exit(f'{name}: expected one definition line in {GRAMMAR}, found {n}')
    if '--check' in sys.argv:
        sys.exit(0 if new == text else f'{GRAMMAR}: string terminals are not up to date (run {sys.argv[0]})')
    if new != text:
        open(GRAMMAR, 'w', encoding='utf-8').write(new)


if __name__ == '__main__':
    main()
