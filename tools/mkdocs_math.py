"""mkdocs hook: the formulas of the pages and docstrings become MathML, and no raw markup reaches a page.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the pages and in the docstrings that
mkdocstrings renders; this hook turns each mark into MathML with latex2mathml, which browsers draw themselves:
the site needs no script and no network to show a formula.  A formula latex2mathml cannot read fails the build,
naming the page and the formula.  So does a page whose text (outside formulas and code) still shows reST/Sphinx
markup or LaTeX source: a role (``:func:```), a directive (``.. math::``), a ``\\frac``, a ``$`` pair.
"""
import html
import re

from latex2mathml.converter import convert

MARKED = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.S)
HIDDEN = re.compile(r"<math.*?</math>|<script.*?</script>|<style.*?</style>|<code.*?</code>|<pre.*?</pre>", re.S)
RAW = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj|math):`|\.\. (?:math|note|warning)::|\.\. \[\d+\]"
                 r"|\\(?:frac|sum|prod|int|mathrm|mathcal|alpha|beta|gamma|lambda|mu|pi|theta|le|ge|cdot|infty)\b"
                 r"|\$\$|\$[^$\s][^$]*\$")


def to_mathml(match: re.Match, page: str) -> str:
    display = "block" if match.group(2) == "[" else "inline"
    latex = html.unescape(match.group(3)).strip()
    try:
        return convert(latex, display=display)
    except Exception as e:  # noqa: BLE001 - name the formula whatever latex2mathml raises
        raise ValueError(f"{page}: latex2mathml cannot read the formula {latex!r}: {e}") from e


def raw_markup(output: str) -> list[str]:
    """Pieces of a page's visible text that are markup the site should have rendered."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", HIDDEN.sub(" ", output)))
    return [" ".join(text[max(0, m.start() - 50):m.end() + 30].split()) for m in RAW.finditer(text)]


def on_post_page(output, page, config):
    output = MARKED.sub(lambda m: to_mathml(m, page.file.src_uri), output)
    if found := raw_markup(output):
        raise ValueError(f"{page.file.src_uri} shows raw markup: " + " | ".join(found[:5]))
    return output
