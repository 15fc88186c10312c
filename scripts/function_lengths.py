#!/usr/bin/env python3
"""Lengths of the function bodies in C++ files, longest first.

A function is a brace block that opens after a `)` (possibly followed by
`const`, `override`, an initializer list, or `-> type`) at namespace or
class level, or a lambda; nested blocks count toward the function that
holds them. Good enough for the project's style (clang-format'ed LLVM):

  scripts/function_lengths.py lib/Transforms/Zero.cpp ... [--max 150]

exits 1 when a function is longer than --max lines (counting its first
and last line).
"""
import re
import sys


def strip(text):
    """Text with comments, strings and characters blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (j + 1 - i)); i = j + 1
        else:
            out.append(c); i += 1
    return ''.join(out)


def functions(path):
    text = strip(open(path).read())
    stack = []  # (is_function_start, line, name)
    result = []
    line = 1
    for i, c in enumerate(text):
        if c == '\n':
            line += 1
        elif c == '{':
            head = text[max(0, i - 1000):i]
            inside = any(f for f, _, _ in stack)
            is_fn = not inside and re.search(
                r'\)\s*(const\s*)?(override\s*)?(noexcept\s*)?'
                r'(->\s*[\w:<>,\s*&]+)?(:\s*[^;{}]*)?$', head) is not None
            name = ''
            if is_fn:
                m = re.findall(r'([\w:~]+)\s*\(', head)
                name = m[0] if m else '?'
                # the name of the outermost call on the head line
                hl = head.rsplit(';', 1)[-1].rsplit('}', 1)[-1]
                m = re.findall(r'([\w:~]+)\s*\(', hl)
                name = m[0] if m else name
            stack.append((is_fn, line, name))
        elif c == '}' and stack:
            is_fn, start, name = stack.pop()
            if is_fn:
                result.append((line - start + 1, path, start, name))
    return result


def main(argv):
    limit = None
    if '--max' in argv:
        k = argv.index('--max'); limit = int(argv[k + 1]); del argv[k:k + 2]
    found = sorted((f for p in argv for f in functions(p)), reverse=True)
    for length, path, start, name in found[:10]:
        print(f'{length:5d} {path}:{start} {name}')
    if limit is not None and found and found[0][0] > limit:
        print(f'longest function is over {limit} lines')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
