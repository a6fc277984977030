"""The built site as a reader sees it (slow tier; .ci/run runs it).

The site is built (``mkdocs build --strict``), served on 127.0.0.1 by a thread of this process, and every page is
opened in Debian's headless Chromium with the network off (a proxy that refuses every connection; loopback goes
around it), so that a page needing anything from outside shows it as a console error.  Each page: no console
error, nothing fetched from outside the site, no raw markup in its visible text; each measure family's page shows
its formulas as MathML that the browser draws, and lists every registered measure and alias with every parameter.
A count over the built HTML (no browser) finds no raw role or directive and no parameter entry naming several
parameters.

Needs the ``test`` extra (mkdocs and its plug-ins, selenium) and Debian's ``chromium`` and ``chromium-driver``
(.ci/run installs them).  Without the browser the test fails; a developer may skip it, never in CI, with
``IRMEASURES_MARKOV_SKIP_BROWSER=1``.
"""
import functools
import html
import http.server
import os
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from mkdocs_families import family_pages  # noqa: E402

#: Debian's packages chromium and chromium-driver
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SKIP_VARIABLE = "IRMEASURES_MARKOV_SKIP_BROWSER"
#: what a reader must never see: reST/Sphinx roles and directives, LaTeX source
RAW_MARKUP = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj|math|ref|doc):|\.\. [a-z-]+::|\\frac\b|\$\$")
#: the text of an element, in the HTML, that a reader does not read as text
NOT_TEXT = re.compile(r"<script.*?</script>|<style.*?</style>|<math.*?</math>", re.S)
#: an mkdocstrings table of named entries (Parameters, Other parameters, Attributes ...), and the name of an entry
NAMED_TABLE = re.compile(r"<table>\s*<thead>\s*<tr>\s*<th>Name</th>.*?</table>", re.S)
ENTRY_NAME = re.compile(r'<tr class="doc-section-item">\s*<td>\s*<code>(.*?)</code>', re.S)
ONE_NAME = re.compile(r"\*{0,2}[A-Za-z_]\w*")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                           env=env, capture_output=True, text=True)
    assert build.returncode == 0, f"mkdocs build --strict failed (pip install '.[test]'):\n{build.stderr[-3000:]}"
    return out


def pages(site: pathlib.Path) -> list[str]:
    """Every page of the built site, as its path below the site's root."""
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))


def visible_html_text(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", NOT_TEXT.sub(" ", page)))


@pytest.mark.slow  # builds the site
def test_the_built_html_has_no_raw_markup_and_one_entry_per_parameter(site):
    """The "done when" of issue 35, counted over the HTML: 0 raw roles/directives, 0 combined entries."""
    found = pages(site)
    assert len(found) >= 40 and "api/experiments/index.html" in found
    raw, combined, entries = [], [], 0
    for name in found:
        text = (site / name).read_text(encoding="utf-8")
        visible = visible_html_text(text)
        raw += [f"{name}: ...{visible[max(m.start() - 40, 0):m.end() + 20]}..." for m in RAW_MARKUP.finditer(visible)]
        names = [re.sub(r"<[^>]+>", "", cell) for table in NAMED_TABLE.findall(text)
                 for cell in ENTRY_NAME.findall(table)]
        entries += len(names)
        # "a, b" (several parameters), or prose that the docstring parser read as an entry
        combined += [f"{name}: {cell}" for cell in names if not ONE_NAME.fullmatch(cell)]
    assert entries > 500  # the pattern still finds the API pages' entries
    assert raw == [] and combined == [], (raw, combined)


def test_the_rules_catch_what_they_are_for():
    shown = ['See :func:<code>evaluate</code>', '.. math::', r'\frac{a}{b}', '$$ x $$', ':class:Run']
    assert all(RAW_MARKUP.search(visible_html_text(s)) for s in shown)
    assert not RAW_MARKUP.search(visible_html_text('<p>ratio: 3, <code>MP@10</code></p><math><mi>$$</mi></math>'))
    row = '<tr class="doc-section-item">\n<td>\n<code>ties, unjudged</code>'
    table = f"<table>\n<thead>\n<tr>\n<th>Name</th><th>Type</th></tr></thead><tbody>{row}</td></tr></tbody></table>"
    assert [ENTRY_NAME.findall(t) for t in NAMED_TABLE.findall(table)] == [["ties, unjudged"]]
    assert NAMED_TABLE.findall(table.replace("<th>Name</th>", "<th>Type</th>")) == []


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        """The server's request log would fill the test's output."""


@pytest.fixture(scope="module")
def server(site):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def _browser_missing() -> str | None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install '.[test]')")
    return ", ".join(missing) or None


def no_browser() -> tuple[str, str] | None:
    """What to do without the browser: ``('fail', why)``, or ``('skip', why)`` where a developer asked for it
    outside CI; None when it is there."""
    if not (missing := _browser_missing()):
        return None
    message = f"no browser to check the site: {missing} missing (apt-get install chromium chromium-driver)"
    if os.environ.get(SKIP_VARIABLE) and not os.environ.get("CI"):
        return "skip", f"{message}; skipped as {SKIP_VARIABLE} asks"
    return "fail", f"{message}; a developer may skip this test with {SKIP_VARIABLE}=1, never in CI"


def test_without_the_browser_the_check_fails_unless_a_developer_skips_it(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CHROMEDRIVER", "/nonexistent/chromedriver")
    for ci, skip, action in [(None, None, "fail"), ("true", "1", "fail"), (None, "1", "skip"), ("true", None, "fail")]:
        for name, value in (("CI", ci), (SKIP_VARIABLE, skip)):
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
        assert no_browser()[0] == action and "/nonexistent/chromedriver" in no_browser()[1]


def test_ci_installs_the_browser_before_the_tests():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    install = next(i for i, line in enumerate(lines) if "apt-get install -y -qq chromium chromium-driver" in line)
    tests = next(i for i, line in enumerate(lines) if "python -m pytest" in line and "--runslow tests" in line)
    assert install < tests


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if outcome := no_browser():
        (pytest.skip if outcome[0] == "skip" else pytest.fail)(outcome[1])
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # the network off: every connection goes to a proxy port that refuses it; Chromium sends loopback around it
    refuse = socket.socket()
    refuse.bind(("127.0.0.1", 0))  # bound, never listening: a connection to it is refused
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
                 f"--proxy-server=http://127.0.0.1:{refuse.getsockname()[1]}", "--window-size=1280,1024"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        # the driver's path given: selenium looks for (and downloads) nothing
        driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
        driver.set_page_load_timeout(60)
        yield driver
        driver.quit()
    finally:
        refuse.close()


#: run in the page: what the reader sees, what the page fetched, and its formulas as drawn
PAGE_STATE = """
const main = document.querySelector("article") || document.body;
const sections = [];
let current = null;
for (const el of main.querySelectorAll("h2, h3")) {
  const title = el.innerText.replace(/\\u00b6/g, "").trim();
  if (el.tagName === "H2") { current = title; continue; }
  sections.push({reference: current, title: title, text: ""});
}
// each h3's text: what follows it up to the next heading
for (const [i, h] of [...main.querySelectorAll("h3")].entries()) {
  let text = "";
  for (let el = h.nextElementSibling; el && !/^H[1-3]$/.test(el.tagName); el = el.nextElementSibling) {
    text += el.innerText + "\\n";
  }
  sections[i].text = text;
}
const math = [...document.getElementsByTagName("math")];
return {
  text: document.body.innerText,
  resources: performance.getEntriesByType("resource").map(e => e.name),
  math: math.length,
  math_drawn: math.filter(m => { const r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
  sections: sections,
};
"""


@pytest.mark.slow  # builds the site and opens every page in Chromium
def test_every_page_in_a_browser(site, server, browser):
    """Every page opened as a reader would, offline; the family pages against the registry."""
    import irmeasures_markov as imm

    started = time.perf_counter()
    names = pages(site)
    family = {page.removesuffix(".md") + "/index.html" for page in family_pages()}
    assert family <= set(names)
    problems, states = [], {}
    for name in names:
        browser.get(server + name.removesuffix("index.html"))
        state = browser.execute_script(PAGE_STATE)
        errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        problems += [f"{name}: console error: {e}" for e in errors]
        problems += [f"{name}: fetched from outside the site: {url}" for url in state["resources"]
                     if not url.startswith(server) and not url.startswith("data:")]
        problems += [f"{name}: shows {m.group()!r}: ...{state['text'][max(m.start() - 40, 0):m.end() + 20]}..."
                     for m in RAW_MARKUP.finditer(state["text"])]
        if name in family and (state["math"] == 0 or state["math_drawn"] < state["math"]):
            problems.append(f"{name}: {state['math_drawn']} of {state['math']} formulas drawn as MathML")
        states[name] = state
    for info in imm.list_measures():
        where = [(name, s) for name in sorted(family) for s in states[name]["sections"]
                 if s["title"].split(" (alias")[0] == info.name and (s["reference"] or "").startswith("Reference")]
        if len(where) != 1:
            problems.append(f"{info.name}: a reference section on {len(where)} family pages, not 1")
            continue
        name, section = where[0]
        reference = states[name]["text"][states[name]["text"].index("Reference: every measure"):]
        problems += [f"{name}: {info.name}'s alias {alias} missing" for alias in info.aliases
                     if alias not in section["title"] + "\n" + section["text"]]
        problems += [f"{name}: {info.name}'s parameter {p.name} missing" for p in info.parameters
                     if not re.search(rf"(?<![\w@]){re.escape(p.name)}\b", reference)]
    print(f"\n{len(names)} pages opened in Chromium in {time.perf_counter() - started:.1f} s")
    assert problems == [], "\n".join(problems)
