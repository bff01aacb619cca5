"""The HTML report of the computed casino sample, written by ``histeg report`` and opened in headless Chromium: the DOM
after the page's scripts ran shows the ranked targets in order, the untested and noise sections, escaped text, and
refers to nothing outside the report."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest

from histeg.report.model import load_version
from tests.conftest import run_histeg

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.slow  # the casino sample is traced and compared once per process
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (CI installs it)")
URL_ATTRIBUTES = {"src", "href", "action", "srcset", "poster", "data", "xlink:href", "formaction", "background"}
VOID_TAGS = {"meta", "link", "img", "br", "hr", "input", "source", "track", "area", "base", "col", "embed", "wbr"}
LOADING_TAGS = {"link", "img", "iframe", "object", "embed", "audio", "video", "source", "track", "image", "use", "base"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    sections: tuple[str, ...]
    """Ids of the <section> elements it is in, outermost first."""
    text: str = ""


@dataclass
class Dom(HTMLParser):
    """Every element of a page with its attributes, enclosing sections and own text."""

    elements: list[Element] = field(default_factory=list)
    open: list[Element] = field(default_factory=list)
    style: str = ""

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        sections = self.open[-1].sections if self.open else ()
        values = {name: value or "" for name, value in attrs}
        if tag == "section":
            sections = (*sections, values.get("id", ""))
        element = Element(tag, values, sections)
        self.elements.append(element)
        if tag not in VOID_TAGS:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            if self.open.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1].text += data
            if self.open[-1].tag == "style":
                self.style += data

    def select(self, tag: str, css_class: str | None = None, section: str | None = None) -> list[Element]:
        return [e for e in self.elements if e.tag == tag and (css_class is None or css_class in e.attrs.get("class", "").split())
                and (section is None or section in e.sections)]


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=True,
    )


def browser_dom(page: Path, profile: Path) -> Dom:
    """The page's DOM as Chromium has it after its scripts ran."""
    dom = Dom()
    dom.feed(chromium("--dump-dom", page.as_uri(), profile=profile).stdout)
    return dom


@pytest.fixture(scope="module")
def report(casino: tuple[Path, Path]) -> Path:
    _, out = casino
    result = run_histeg("report", "--out", str(out))
    assert result.code == 0, result.stderr
    index = Path(result.stdout.strip())
    assert index == out / "report" / "index.html"
    return index


def compared_indices(out: Path) -> list[int]:
    return sorted(int(p.name) for p in out.iterdir() if p.name.isdigit() and (p / "testingTargets.json").is_file())


def assert_nothing_external(dom: Dom, folder: Path) -> None:
    """Only links to other pages of the report and to anchors; nothing a browser would fetch."""
    assert not [e.tag for e in dom.elements if e.tag in LOADING_TAGS]
    assert not [e for e in dom.elements if e.tag == "script" and "src" in e.attrs]
    for element in dom.elements:
        for name in URL_ATTRIBUTES & element.attrs.keys():
            value = element.attrs[name]
            assert value.startswith("#") or (value.endswith(".html") and "/" not in value and (folder / value).is_file()), (element, value)
    assert "url(" not in dom.style and "@import" not in dom.style
    policy = [e.attrs["content"] for e in dom.select("meta") if e.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert policy and policy[0].startswith("default-src 'none'")


@needs_chromium
def test_the_index_lists_every_version_and_links_the_compared_ones(casino: tuple[Path, Path], report: Path, tmp_path: Path) -> None:
    _, out = casino
    dom = browser_dom(report, tmp_path / "profile")
    assert dom.elements[0].attrs.get("data-ready") == "1"
    rows = dom.select("tr", "version", section="versions")
    assert [int(r.attrs["data-index"]) for r in rows] == sorted(int(p.name) for p in out.iterdir() if p.name.isdigit())
    links = {e.attrs["href"] for e in dom.select("a", section="versions")}
    assert links == {f"{index}.html" for index in compared_indices(out)}
    assert len(dom.select("figure", "sparkline", section="trend")) == 3
    assert_nothing_external(dom, report.parent)


@needs_chromium
def test_each_version_page_shows_the_ranked_targets_in_order_with_untested_and_noise(casino: tuple[Path, Path], report: Path,
                                                                                     tmp_path: Path) -> None:
    _, out = casino
    for index in compared_indices(out):
        page = report.parent / f"{index}.html"
        dom = browser_dom(page, tmp_path / "profile")
        document = orjson.loads((out / str(index) / "testingTargets.json").read_bytes())
        shown = [(e.attrs["data-rank"], e.attrs["data-identifier"]) for e in dom.select("li", "target", section="targets")]
        assert shown == [(str(t["rank"]), t["identifier"]) for t in document["targets"]], index
        assert {e.attrs.get("id") for e in dom.select("section")} >= {"targets", "untested", "map", "noise", "diff"}
        untested = [e.attrs["data-identifier"] for e in dom.select("tr", "untested", section="untested")]
        assert untested == [u["identifier"] for u in document["untestedChanges"]]
        tiles = sorted(e.attrs["data-identifier"] for e in dom.select("g", "tile", section="map"))
        assert tiles == sorted(c["identifier"] for c in document["changedCode"])
        noise = [e for e in dom.select("tr", "noise", section="noise")]
        assert len(noise) == len(document["noise"]["unstable"])
        assert_nothing_external(dom, report.parent)


@needs_chromium
def test_source_and_names_reach_the_page_as_text(casino: tuple[Path, Path], report: Path, tmp_path: Path) -> None:
    """The casino's code has '<', '>' and '->': each diff line's text in the DOM is the source line itself."""
    _, out = casino
    model = load_version(out, 4)
    dom = browser_dom(report.parent / "4.html", tmp_path / "profile")
    cells = [e for e in dom.select("td", section="diff") if "no" not in e.attrs.get("class", "") and "sign" not in e.attrs.get("class", "")]
    shown = [cell.text for cell in cells if not cell.text.startswith("⋯")]
    expected = [line.text for diff in model.files for line in diff.lines if line.kind != "gap"]
    assert shown == expected
    assert any("<" in line or ">" in line for line in expected)
    assert [e.attrs["data-identifier"] for e in dom.select("li", "target")] == [t.identifier for t in model.targets]


@needs_chromium
def test_a_screenshot_of_a_version_page(casino: tuple[Path, Path], report: Path, tmp_path: Path) -> None:
    picture = tmp_path / "page.png"
    chromium(f"--screenshot={picture}", "--window-size=1280,2000", (report.parent / "6.html").as_uri(), profile=tmp_path / "profile")
    payload = picture.read_bytes()
    assert payload.startswith(b"\x89PNG") and len(payload) > 20_000


def test_versions_choose_the_pages_and_a_bad_revision_is_one_line(casino: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = casino
    result = run_histeg("report", "--out", str(out), "--versions", "HEAD~1")
    assert result.code == 0, result.stderr
    index = Path(result.stdout.strip()).read_text()
    assert 'data-index="7"' in index and 'data-index="6"' in index and 'data-index="5"' not in index
    bad = run_histeg("report", "--out", str(out), "--versions", "no-such-revision")
    assert bad.code == 2 and bad.stderr.count("\n") == 1 and "no-such-revision" in bad.stderr
    empty = run_histeg("report", "--out", str(tmp_path / "nothing"))
    assert empty.code == 2 and "no histeg results" in empty.stderr
