"""mkdocs hook: the formulas of the pages and docstrings become MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the pages and in the docstrings that
mkdocstrings renders; this hook turns each mark into MathML with latex2mathml, which browsers draw themselves:
the site needs no script and no network to show a formula.  A formula latex2mathml cannot read fails the build,
naming the page and the formula.
"""
import html
import re

from latex2mathml.converter import convert

MARKED = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.S)


def to_mathml(match: re.Match, page: str) -> str:
    display = "block" if match.group(2) == "[" else "inline"
    latex = html.unescape(match.group(3)).strip()
    try:
        return convert(latex, display=display)
    except Exception as e:  # noqa: BLE001 - name the formula whatever latex2mathml raises
        raise ValueError(f"{page}: latex2mathml cannot read the formula {latex!r}: {e}") from e


def on_post_page(output, page, config):
    return MARKED.sub(lambda m: to_mathml(m, page.file.src_uri), output)
